//! The absolute-error criteria (scikit-learn's `"absolute_error"`): a node predicts the
//! weighted median `m` of its targets and its impurity is the weighted mean absolute
//! deviation `Σ w |y − m| / Σ w` ([`AbsoluteError`]); with several outputs
//! ([`MultiAbsoluteError`]) each output has its median and the impurity is the mean of the
//! outputs' deviations, `Σ_k Σ w |y_k − m_k| / (m Σ w)` (scikit-learn's `MAE` over
//! `n_outputs`).
//!
//! A median is not a function of additive sums, so these criteria do not fit the contract
//! the sorted scans rely on: their statistics vector holds the weight `[w]` only (for the
//! leaf-size rules), their node value and impurity are computed from the node's rows
//! ([`Criterion::node_value`], [`Criterion::node_impurity`]), and they hand their targets
//! to the order-statistic split search (`split::median`) through
//! [`Criterion::order_statistic`] ([`OrderTargets`]). The sums-only methods (`impurity`,
//! `proxy`, `value`) have no meaning here: they return NaN or a refused proxy, so a search
//! that forgot the hook would find no split rather than a wrong one (the fit refuses the
//! splitters without the hook). Monotonic constraints compare medians: the middle value of
//! a cut is the mean of its children's medians ([`Criterion::middle_value`]).
//!
//! Invariant: [`weighted_median`] is scikit-learn's weighted median (1.8+,
//! `_criterion.pyx::precompute_absolute_errors`): the smallest target whose cumulative
//! weight exceeds half the total, or the mid-point of the two targets around the half when
//! a cumulative weight equals it exactly (the usual median of an even count).

use super::{by_lanes, merge, Criterion, LANES};

/// Weighted mean absolute deviation from the weighted median (regression).
pub struct AbsoluteError<'a> {
    /// Output of every sample.
    pub y: &'a [f64],
}

/// scikit-learn's weighted median of `pairs` `(y, w)` sorted by `y`, all `w > 0`; 0 for no
/// pair. `total` is their total weight.
pub(crate) fn weighted_median(pairs: &[(f64, f64)], total: f64) -> f64 {
    let half = 0.5 * total;
    let mut cumulative = 0.0;
    for (k, &(y, w)) in pairs.iter().enumerate() {
        let before = cumulative;
        cumulative += w;
        if cumulative > half {
            return match (before == half, k.checked_sub(1)) {
                (true, Some(prev)) => (pairs[prev].0 + y) / 2.0,
                _ => y,
            };
        }
    }
    pairs.last().map_or(0.0, |p| p.0)
}

/// `(median, Σ w |y − median| / Σ w)` of the targets `ys` with weights `ws` (sorted into
/// `pairs`, a scratch buffer); `(0, 0)` for no row.
pub(crate) fn median_and_deviation(
    ys: &[f64],
    ws: &[f64],
    pairs: &mut Vec<(f64, f64)>,
) -> (f64, f64) {
    let (m, error, total) = median_and_error(ys, ws, pairs);
    match total > 0.0 {
        true => (m, error / total),
        false => (0.0, 0.0),
    }
}

/// `(median, Σ w |y − median|, Σ w)` of the targets `ys` with weights `ws` (sorted into
/// `pairs`); `(0, 0, 0)` for no row (or weights that do not sum to a positive number).
fn median_and_error(ys: &[f64], ws: &[f64], pairs: &mut Vec<(f64, f64)>) -> (f64, f64, f64) {
    pairs.clear();
    pairs.extend(ys.iter().copied().zip(ws.iter().copied()));
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = pairs.iter().map(|p| p.1).sum();
    if total <= 0.0 || total.is_nan() {
        return (0.0, 0.0, 0.0);
    }
    let m = weighted_median(pairs, total);
    let error: f64 = pairs.iter().map(|&(y, w)| w * (y - m).abs()).sum();
    (m, error, total)
}

/// A node's targets as the order-statistic search (`split::median`) reads them, output by
/// output ([`OrderTargets::gather`]).
#[derive(Clone, Copy)]
pub enum OrderTargets<'a> {
    /// One output: the node's targets, aligned with its rows.
    One(&'a [f64]),
    /// Several outputs: the node's row ids and the `n × n_outputs` row-major targets.
    Rows {
        /// The node's row ids.
        rows: &'a [u32],
        /// Every row's targets, row-major.
        y: &'a [f64],
        /// Targets per row.
        n_outputs: usize,
    },
}

impl OrderTargets<'_> {
    /// The number of outputs (targets per row).
    pub(crate) fn n_outputs(self) -> usize {
        match self {
            OrderTargets::One(_) => 1,
            OrderTargets::Rows { n_outputs, .. } => n_outputs,
        }
    }

    /// The node's rows.
    pub(crate) fn len(self) -> usize {
        match self {
            OrderTargets::One(ys) => ys.len(),
            OrderTargets::Rows { rows, .. } => rows.len(),
        }
    }

    /// Output `k`'s targets of the node's rows into `out`, aligned with the rows.
    pub(crate) fn gather(self, k: usize, out: &mut Vec<f64>) {
        out.clear();
        match self {
            OrderTargets::One(ys) => out.extend_from_slice(ys),
            OrderTargets::Rows { rows, y, n_outputs } => {
                out.extend(rows.iter().map(|&r| y[r as usize * n_outputs + k]));
            }
        }
    }
}

impl Criterion for AbsoluteError<'_> {
    type Y = f64;
    #[inline(always)]
    fn target(&self, i: usize) -> f64 {
        self.y[i]
    }
    /// The weight only: no sum of the targets determines a median.
    fn stats_len(&self) -> usize {
        1
    }
    #[inline(always)]
    fn add(&self, _stats: &mut [f64], _y: f64, _w: f64) {}
    #[inline(always)]
    fn accumulate_weighted(
        &self,
        stats: &mut [f64],
        ys: &[f64],
        ws: &[f64],
        weight: impl Fn(usize, f64) -> f64,
    ) {
        stats[0] = weight_sum(ys, ws, weight);
    }
    /// Never: the median search sorts, it sums no bins.
    fn whole_sums(&self, _ys: &[f64], _ws: &[f64]) -> bool {
        false
    }
    /// Undefined from the weight alone (NaN); nodes use [`Criterion::node_impurity`].
    fn impurity(&self, _stats: &[f64]) -> f64 {
        f64::NAN
    }
    /// `Σ w |y − m| / Σ w` from the rows.
    fn node_impurity(&self, _stats: &[f64], ys: &[f64], ws: &[f64]) -> f64 {
        median_and_deviation(ys, ws, &mut Vec::new()).1
    }
    /// Refused (`−∞`): cuts are ranked by `split::median`, which reads the rows.
    #[inline(always)]
    fn proxy(&self, _total: &[f64], _left: &[f64]) -> f64 {
        f64::NEG_INFINITY
    }
    #[inline(always)]
    fn allows(proxy: f64) -> bool {
        proxy > f64::NEG_INFINITY
    }
    /// Undefined from the weight alone (NaN); nodes use [`Criterion::node_value`].
    fn value(&self, _stats: &[f64], out: &mut [f64]) {
        out[0] = f64::NAN;
    }
    /// The weighted median of the rows.
    fn node_value(&self, _stats: &[f64], ys: &[f64], ws: &[f64], out: &mut [f64]) {
        out[0] = median_and_deviation(ys, ws, &mut Vec::new()).0;
    }
    #[inline(always)]
    fn order_statistic<'s>(&'s self, ys: &'s [f64]) -> Option<OrderTargets<'s>> {
        Some(OrderTargets::One(ys))
    }
    /// scikit-learn's `MAE.middle_value`: `(m_L + m_R) / 2`, the children's medians.
    fn middle_value(
        &self,
        _left: &[f64],
        _right: &[f64],
        ys: &[f64],
        ws: &[f64],
        n_left: usize,
    ) -> f64 {
        let mut pairs = Vec::new();
        let (l, _) = median_and_deviation(&ys[..n_left], &ws[..n_left], &mut pairs);
        let (r, _) = median_and_deviation(&ys[n_left..], &ws[n_left..], &mut pairs);
        (l + r) / 2.0
    }
}

/// Weighted mean absolute deviation from the weighted median of each output, averaged over
/// the outputs (multi-output regression). A sample's target ([`Criterion::Y`]) is its row
/// id, as in `multi`: the split machinery moves row ids and the criterion reads the
/// `n × m` targets through them.
pub struct MultiAbsoluteError<'a> {
    /// `n × n_outputs` targets, row-major.
    y: &'a [f64],
    n_outputs: usize,
}

impl<'a> MultiAbsoluteError<'a> {
    /// Criterion over the `n × n_outputs` row-major targets `y`.
    pub fn new(y: &'a [f64], n_outputs: usize) -> Self {
        MultiAbsoluteError { y, n_outputs }
    }

    /// Output `k`'s targets of the rows `rows` into `out`.
    fn column(&self, rows: &[u32], k: usize, out: &mut Vec<f64>) {
        let targets = OrderTargets::Rows {
            rows,
            y: self.y,
            n_outputs: self.n_outputs,
        };
        targets.gather(k, out);
    }
}

impl Criterion for MultiAbsoluteError<'_> {
    /// The row id.
    type Y = u32;
    #[inline(always)]
    fn target(&self, i: usize) -> u32 {
        i as u32
    }
    /// The weight only, as [`AbsoluteError`]'s.
    fn stats_len(&self) -> usize {
        1
    }
    #[inline(always)]
    fn add(&self, _stats: &mut [f64], _y: u32, _w: f64) {}
    fn accumulate_weighted(
        &self,
        stats: &mut [f64],
        ys: &[u32],
        ws: &[f64],
        weight: impl Fn(usize, f64) -> f64,
    ) {
        stats[0] = weight_sum(ys, ws, weight);
    }
    fn whole_sums(&self, _ys: &[u32], _ws: &[f64]) -> bool {
        false
    }
    fn impurity(&self, _stats: &[f64]) -> f64 {
        f64::NAN
    }
    /// `Σ_k Σ w |y_k − m_k| / (m Σ w)`, summed over the outputs in order as scikit-learn
    /// sums its errors before dividing.
    fn node_impurity(&self, _stats: &[f64], ys: &[u32], ws: &[f64]) -> f64 {
        let (mut column, mut pairs) = (Vec::new(), Vec::new());
        let (mut error, mut total) = (0.0, 0.0);
        for k in 0..self.n_outputs {
            self.column(ys, k, &mut column);
            let (_, e, t) = median_and_error(&column, ws, &mut pairs);
            (error, total) = (error + e, t);
        }
        match total > 0.0 {
            true => error / (total * self.n_outputs as f64),
            false => 0.0,
        }
    }
    #[inline(always)]
    fn proxy(&self, _total: &[f64], _left: &[f64]) -> f64 {
        f64::NEG_INFINITY
    }
    #[inline(always)]
    fn allows(proxy: f64) -> bool {
        proxy > f64::NEG_INFINITY
    }
    fn value(&self, _stats: &[f64], out: &mut [f64]) {
        out.fill(f64::NAN);
    }
    /// The weighted median of each output.
    fn node_value(&self, _stats: &[f64], ys: &[u32], ws: &[f64], out: &mut [f64]) {
        let (mut column, mut pairs) = (Vec::new(), Vec::new());
        for (k, o) in out.iter_mut().enumerate().take(self.n_outputs) {
            self.column(ys, k, &mut column);
            *o = median_and_deviation(&column, ws, &mut pairs).0;
        }
    }
    #[inline(always)]
    fn order_statistic<'s>(&'s self, ys: &'s [u32]) -> Option<OrderTargets<'s>> {
        Some(OrderTargets::Rows {
            rows: ys,
            y: self.y,
            n_outputs: self.n_outputs,
        })
    }
    /// Never asked: the fit refuses monotonic constraints with several outputs, as
    /// scikit-learn does (NaN bounds would admit no constrained cut).
    fn middle_value(
        &self,
        _left: &[f64],
        _right: &[f64],
        _ys: &[u32],
        _ws: &[f64],
        _n_left: usize,
    ) -> f64 {
        f64::NAN
    }
}

/// The weight that [`Criterion::accumulate_weighted`] sums for a criterion keeping the
/// weight only (both absolute errors), in the lanes every criterion sums in.
#[inline(always)]
fn weight_sum<Y: Copy>(ys: &[Y], ws: &[f64], weight: impl Fn(usize, f64) -> f64) -> f64 {
    let mut w0 = [0.0; LANES];
    by_lanes(ys, ws, |lane, j, _, w| w0[lane] += weight(j, w));
    merge(&w0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn median(ys: &[f64], ws: &[f64]) -> f64 {
        median_and_deviation(ys, ws, &mut Vec::new()).0
    }

    /// Medians of odd and even counts, of ties, and of weights whose cumulative sum hits
    /// half the total exactly (the mid-point) or not (the crossing target), as NumPy's
    /// `np.median` and scikit-learn's `_py_precompute_absolute_errors` give them.
    #[test]
    fn the_weighted_median_follows_scikit_learn() {
        assert_eq!(median(&[3.0, 1.0, 2.0], &[1.0; 3]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0], &[1.0; 4]), 2.5);
        assert_eq!(median(&[1.0, 1.0, 5.0, 5.0], &[1.0; 4]), 3.0);
        assert_eq!(median(&[2.0, 2.0, 2.0, 7.0], &[1.0; 4]), 2.0);
        // Cumulative 1, then 3, of total 4: the second crosses the half → its target.
        assert_eq!(median(&[1.0, 3.0, 8.0], &[1.0, 2.0, 1.0]), 3.0);
        // Cumulative 2 of total 4 after the first: the mid-point of the first two.
        assert_eq!(median(&[1.0, 3.0, 8.0], &[2.0, 1.0, 1.0]), 2.0);
        assert_eq!(median(&[5.0], &[0.25]), 5.0);
        assert_eq!(median(&[], &[]), 0.0);
    }

    /// The deviation is the definition, and no other constant has a smaller one.
    #[test]
    fn the_deviation_is_the_smallest_mean_absolute_error() {
        let ys: Vec<f64> = (0..31)
            .map(|i| ((i * 17) % 13) as f64 * 0.37 - 1.0)
            .collect();
        let ws: Vec<f64> = (0..31).map(|i| 0.5 + (i % 4) as f64).collect();
        let (m, d) = median_and_deviation(&ys, &ws, &mut Vec::new());
        let w: f64 = ws.iter().sum();
        let mae = |c: f64| {
            ys.iter()
                .zip(&ws)
                .map(|(y, w)| w * (y - c).abs())
                .sum::<f64>()
                / w
        };
        assert!((d - mae(m)).abs() < 1e-14);
        for k in 0..200 {
            let c = -2.0 + k as f64 * 0.025;
            assert!(mae(c) >= d - 1e-12, "c = {c}");
        }
        let c = AbsoluteError { y: &ys };
        let mut stats = [0.0];
        c.accumulate(&mut stats, &ys, &ws);
        assert_eq!(stats[0], w);
        assert_eq!(c.node_impurity(&stats, &ys, &ws), d);
        let mut out = [0.0];
        c.node_value(&stats, &ys, &ws, &mut out);
        assert_eq!(out[0], m);
    }

    /// Several outputs: each output's median, and the mean of the outputs' deviations
    /// (scikit-learn's `Σ_k AE_k / (W m)`), from the rows' ids.
    #[test]
    fn several_outputs_are_the_outputs_medians_and_mean_deviation() {
        let n = 23;
        let a: Vec<f64> = (0..n).map(|i| ((i * 7) % 11) as f64 - 3.0).collect();
        let b: Vec<f64> = (0..n).map(|i| ((i * 5) % 13) as f64 * 0.3).collect();
        let y: Vec<f64> = (0..n).flat_map(|i| [a[i], b[i]]).collect();
        let ws: Vec<f64> = (0..n).map(|i| 0.5 + (i % 3) as f64).collect();
        // Every other row, in reverse: the criterion reads the targets through the ids.
        let rows: Vec<u32> = (0..n as u32).rev().step_by(2).collect();
        let w: Vec<f64> = rows.iter().map(|&r| ws[r as usize]).collect();
        let pick = |t: &[f64]| -> Vec<f64> { rows.iter().map(|&r| t[r as usize]).collect() };
        let (ma, da) = median_and_deviation(&pick(&a), &w, &mut Vec::new());
        let (mb, db) = median_and_deviation(&pick(&b), &w, &mut Vec::new());
        let c = MultiAbsoluteError::new(&y, 2);
        let mut stats = [0.0];
        c.accumulate(&mut stats, &rows, &w);
        assert_eq!(stats[0], w.iter().sum::<f64>());
        let mut out = [0.0; 2];
        c.node_value(&stats, &rows, &w, &mut out);
        assert_eq!(out, [ma, mb]);
        let impurity = c.node_impurity(&stats, &rows, &w);
        assert!((impurity - (da + db) / 2.0).abs() < 1e-14, "{impurity}");
    }
}

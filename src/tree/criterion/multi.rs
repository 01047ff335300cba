//! Multi-output criteria (Louppe 2014 §3.7, scikit-learn's semantics): one tree for all
//! outputs, whose impurity is the mean of the outputs' impurities,
//! `i(t) = (1/m) Σ_k i_k(t)`, so that a split's decrease is the mean of its decreases per
//! output and MDI decomposes over outputs.
//!
//! The statistics vector keeps slot 0 for the weight and then each output's statistics in
//! turn: `[w, c_{0,0}, …, c_{0,C_0−1}, c_{1,0}, …]` for class counts (output `k`'s counts
//! start at slot `offsets[k]`) and `[w, Σ w·y_0, Σ w·y_0², Σ w·y_1, …]` for regression.
//! A sample's "target" ([`Criterion::Y`]) is its row id: the split machinery moves row ids
//! with the rows and the criterion reads the `n × m` targets through them. This is the
//! generic path; the single-output criteria (`classes`, `regression`) keep their own
//! register-sized sums and are never routed here, so single-output trees are unchanged.

use super::classes::{ClassImpurity, GiniIndex, ShannonEntropy};
use super::{whole_terms, xlog2x, Criterion};

/// The proxy of a class impurity summed over outputs (a strictly increasing function of
/// the mean decrease for a fixed parent).
pub trait OutputsProxy: ClassImpurity {
    /// `Σ_k proxy_k` for `n_outputs` outputs whose counts fill `total[1..]`, `left[1..]`.
    fn proxy_of_outputs(total: &[f64], left: &[f64], n_outputs: usize) -> f64;
}

impl OutputsProxy for GiniIndex {
    /// `Σ_k (Σ_c c_L²/w_L + Σ_c c_R²/w_R)`: the weights are shared, so it is the
    /// single-output proxy over every slot.
    #[inline(always)]
    fn proxy_of_outputs(total: &[f64], left: &[f64], _n_outputs: usize) -> f64 {
        <GiniIndex as ClassImpurity>::proxy(total, left)
    }
}

impl OutputsProxy for ShannonEntropy {
    /// `Σ_k (Σ_c c log₂ c − w_L log₂ w_L − w_R log₂ w_R)` over both children.
    #[inline(always)]
    fn proxy_of_outputs(total: &[f64], left: &[f64], n_outputs: usize) -> f64 {
        let (wl, wr) = (left[0], total[0] - left[0]);
        let mut s = -(n_outputs as f64) * (xlog2x(wl) + xlog2x(wr));
        for k in 1..total.len() {
            s += xlog2x(left[k]) + xlog2x(total[k] - left[k]);
        }
        s
    }
}

/// Multi-output classification statistics scored by the mean of the impurity `M` over
/// outputs.
pub struct MultiClassCounts<'a, M> {
    /// `n × m` class codes, row-major.
    y: &'a [u32],
    /// Slot of output `k`'s first class count; `offsets[m]` is the statistics length.
    offsets: Vec<usize>,
    measure: std::marker::PhantomData<M>,
}

impl<'a, M> MultiClassCounts<'a, M> {
    /// Criterion over the `n × n_classes.len()` row-major codes `y` (checked by
    /// [`crate::Targets::multi_classes`]).
    pub fn new(y: &'a [u32], n_classes: &[usize]) -> Self {
        let mut offsets = Vec::with_capacity(n_classes.len() + 1);
        let mut slot = 1;
        offsets.push(slot);
        for &c in n_classes {
            slot += c;
            offsets.push(slot);
        }
        MultiClassCounts {
            y,
            offsets,
            measure: std::marker::PhantomData,
        }
    }

    fn n_outputs(&self) -> usize {
        self.offsets.len() - 1
    }
}

impl<M: OutputsProxy> Criterion for MultiClassCounts<'_, M> {
    /// The row id.
    type Y = u32;
    #[inline(always)]
    fn target(&self, i: usize) -> u32 {
        i as u32
    }
    fn stats_len(&self) -> usize {
        self.offsets[self.n_outputs()]
    }
    #[inline(always)]
    fn add(&self, stats: &mut [f64], row: u32, w: f64) {
        let m = self.n_outputs();
        let codes = &self.y[row as usize * m..(row as usize + 1) * m];
        for (&c, &o) in codes.iter().zip(&self.offsets) {
            stats[o + c as usize] += w;
        }
    }
    fn accumulate_weighted(
        &self,
        stats: &mut [f64],
        ys: &[u32],
        ws: &[f64],
        weight: impl Fn(usize, f64) -> f64,
    ) {
        stats.fill(0.0);
        let mut total = 0.0;
        for (j, (&row, &w)) in ys.iter().zip(ws).enumerate() {
            let w = weight(j, w);
            total += w;
            self.add(stats, row, w);
        }
        stats[0] = total;
    }
    fn impurity(&self, stats: &[f64]) -> f64 {
        let w = stats[0];
        if w <= 0.0 {
            return 0.0;
        }
        let sum: f64 = self
            .offsets
            .windows(2)
            .map(|o| M::impurity(&stats[o[0]..o[1]], w))
            .sum();
        sum / self.n_outputs() as f64
    }
    #[inline(always)]
    fn proxy(&self, total: &[f64], left: &[f64]) -> f64 {
        M::proxy_of_outputs(total, left, self.n_outputs())
    }
    const ORDERED_SHARE: f64 = 1.0;
    /// The outputs' sum, as the proxy's.
    fn independent_gain(&self, total: &[f64]) -> f64 {
        let w = total[0];
        let outputs = self.offsets.windows(2);
        match w > 0.0 {
            true => outputs
                .map(|o| M::independent_gain(&total[o[0]..o[1]], w))
                .sum(),
            false => 0.0,
        }
    }
    /// Per output, the class frequencies (as the single-output criteria store them).
    fn value(&self, stats: &[f64], out: &mut [f64]) {
        let w = stats[0];
        for (o, c) in out.iter_mut().zip(&stats[1..]) {
            *o = if w > 0.0 { c / w } else { 0.0 };
        }
    }
    /// The sums are of weights only.
    fn whole_sums(&self, _ys: &[u32], ws: &[f64]) -> bool {
        whole_terms(ws.iter().copied())
    }
}

/// Multi-output squared error: the mean over outputs of the weighted variances,
/// `i(t) = (1/m) Σ_k Σ w (y_k − ȳ_k)² / Σ w` (scikit-learn's `MSE` with `n_outputs > 1`).
pub struct MultiSquaredError<'a> {
    /// `n × n_outputs` values, row-major.
    y: &'a [f64],
    n_outputs: usize,
}

impl<'a> MultiSquaredError<'a> {
    /// Criterion over the `n × n_outputs` row-major values `y`.
    pub fn new(y: &'a [f64], n_outputs: usize) -> Self {
        MultiSquaredError { y, n_outputs }
    }

    #[inline(always)]
    fn row(&self, row: u32) -> &[f64] {
        let m = self.n_outputs;
        &self.y[row as usize * m..(row as usize + 1) * m]
    }
}

impl Criterion for MultiSquaredError<'_> {
    /// The row id.
    type Y = u32;
    #[inline(always)]
    fn target(&self, i: usize) -> u32 {
        i as u32
    }
    fn stats_len(&self) -> usize {
        1 + 2 * self.n_outputs
    }
    #[inline(always)]
    fn add(&self, stats: &mut [f64], row: u32, w: f64) {
        for (s, &y) in stats[1..].chunks_exact_mut(2).zip(self.row(row)) {
            s[0] += w * y;
            s[1] += w * y * y;
        }
    }
    fn accumulate_weighted(
        &self,
        stats: &mut [f64],
        ys: &[u32],
        ws: &[f64],
        weight: impl Fn(usize, f64) -> f64,
    ) {
        stats.fill(0.0);
        let mut total = 0.0;
        for (j, (&row, &w)) in ys.iter().zip(ws).enumerate() {
            let w = weight(j, w);
            total += w;
            self.add(stats, row, w);
        }
        stats[0] = total;
    }
    /// The proxy's sums: of `w` and of every `w·y_k`.
    fn whole_sums(&self, ys: &[u32], ws: &[f64]) -> bool {
        whole_terms(ws.iter().copied())
            && whole_terms(
                ys.iter()
                    .zip(ws)
                    .flat_map(|(&row, &w)| self.row(row).iter().map(move |&y| (w * y).abs())),
            )
    }
    fn impurity(&self, stats: &[f64]) -> f64 {
        let w = stats[0];
        if w <= 0.0 {
            return 0.0;
        }
        let sum: f64 = stats[1..]
            .chunks_exact(2)
            .map(|s| {
                let mean = s[0] / w;
                (s[1] / w - mean * mean).max(0.0)
            })
            .sum();
        sum / self.n_outputs as f64
    }
    /// The outputs' sum of variances, as the proxy sums over outputs.
    fn independent_gain(&self, total: &[f64]) -> f64 {
        self.impurity(total) * self.n_outputs as f64
    }
    /// `Σ_k ((Σ_L w y_k)²/w_L + (Σ_R w y_k)²/w_R)`: the sums of squares cancel between
    /// candidates, as for one output.
    #[inline(always)]
    fn proxy(&self, total: &[f64], left: &[f64]) -> f64 {
        let (wl, wr) = (left[0], total[0] - left[0]);
        let mut s = 0.0;
        for k in 0..self.n_outputs {
            let (sl, sr) = (left[1 + 2 * k], total[1 + 2 * k] - left[1 + 2 * k]);
            s += sl * sl / wl + sr * sr / wr;
        }
        s
    }
    fn value(&self, stats: &[f64], out: &mut [f64]) {
        let w = stats[0];
        for (o, s) in out.iter_mut().zip(stats[1..].chunks_exact(2)) {
            *o = if w > 0.0 { s[0] / w } else { 0.0 };
        }
    }
}

/// The multi-output Gini criterion.
pub type MultiGini<'a> = MultiClassCounts<'a, GiniIndex>;
/// The multi-output entropy criterion, in bits.
pub type MultiEntropy<'a> = MultiClassCounts<'a, ShannonEntropy>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Impurity and value by hand: two outputs, four samples.
    #[test]
    fn hand_computed_multi_output_statistics() {
        // Output 0: classes 0,0,1,1 (Gini 0.5); output 1: 0,1,2,2 (Gini 1 − 1/16·(1+1+4)).
        let y = [0u32, 0, 0, 1, 1, 2, 1, 2];
        let g = MultiGini::new(&y, &[2, 3]);
        let mut s = vec![0.0; g.stats_len()];
        g.accumulate(&mut s, &[0, 1, 2, 3], &[1.0; 4]);
        assert_eq!(s, vec![4.0, 2.0, 2.0, 1.0, 1.0, 2.0]);
        let want = (0.5 + (1.0 - 6.0 / 16.0)) / 2.0;
        assert!((g.impurity(&s) - want).abs() < 1e-15);
        let mut v = vec![0.0; 5];
        g.value(&s, &mut v);
        assert_eq!(v, vec![0.5, 0.5, 0.25, 0.25, 0.5]);
        let yr = [1.0, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0];
        let r = MultiSquaredError::new(&yr, 2);
        let mut s = vec![0.0; r.stats_len()];
        r.accumulate(&mut s, &[0, 1, 2, 3], &[1.0; 4]);
        // Variances 1.25 and 125.
        assert!((r.impurity(&s) - (1.25 + 125.0) / 2.0).abs() < 1e-9);
        let mut v = vec![0.0; 2];
        r.value(&s, &mut v);
        assert_eq!(v, vec![2.5, 25.0]);
    }

    /// The proxies rank every cut as the mean decrease over outputs does.
    #[test]
    fn proxies_rank_like_the_mean_decrease() {
        let n = 30;
        let y: Vec<u32> = (0..2 * n).map(|j| ((j * 7 + j / 5) % 3) as u32).collect();
        let yr: Vec<f64> = (0..3 * n).map(|j| ((j * 13) % 11) as f64 * 0.7).collect();
        fn check<C: Criterion<Y = u32>>(c: &C, n: usize) {
            let rows: Vec<u32> = (0..n as u32).collect();
            let ws = vec![1.0; n];
            let mut total = vec![0.0; c.stats_len()];
            c.accumulate(&mut total, &rows, &ws);
            let it = c.impurity(&total);
            let mut cands = Vec::new();
            for pos in 1..n {
                let mut left = vec![0.0; c.stats_len()];
                c.accumulate(&mut left, &rows[..pos], &ws[..pos]);
                let right: Vec<f64> = total.iter().zip(&left).map(|(t, l)| t - l).collect();
                let dec =
                    it - (left[0] * c.impurity(&left) + right[0] * c.impurity(&right)) / total[0];
                cands.push((c.proxy(&total, &left), dec));
            }
            for a in &cands {
                for b in &cands {
                    if a.0 > b.0 + 1e-9 {
                        assert!(a.1 >= b.1 - 1e-9, "{a:?} vs {b:?}");
                    }
                }
            }
        }
        check(&MultiGini::new(&y, &[3, 3]), n);
        check(&MultiEntropy::new(&y, &[3, 3]), n);
        check(&MultiSquaredError::new(&yr, 3), n);
    }
}

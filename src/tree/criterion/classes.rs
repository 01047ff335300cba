//! Classification criteria: weighted class counts `[w, c_0, …, c_{C−1}]` ([`ClassCounts`])
//! scored by an impurity of class frequencies ([`ClassImpurity`]: [`GiniIndex`],
//! [`ShannonEntropy`]).
//!
//! Invariant: slot 0 is the total weight and slot `1 + k` the weight of class `k`, whichever
//! path summed them (lane sums, `add`, or the integer counts of two classes), so that every
//! path gives the same sums bit for bit (tested in the parent module).

use super::{by_lanes, merge, whole_terms, xlog2x, Criterion, LANES};

/// Longest statistics vector summed in registers (15 classes); longer ones use `add`.
const MAX_LANE_STATS: usize = 16;

/// Weighted class counts (slots `1..`) and weight (slot 0) of `stats`, `K ≥ stats.len()`,
/// summed over [`LANES`] register-sized arrays.
#[inline(always)]
fn class_sums<const K: usize, F: Fn(usize, f64) -> f64>(
    stats: &mut [f64],
    ys: &[u32],
    ws: &[f64],
    weight: F,
) {
    let mut lanes = [[0.0; K]; LANES];
    let mut total = [0.0; LANES];
    by_lanes(ys, ws, |lane, j, y, w| {
        let w = weight(j, w);
        total[lane] += w;
        lanes[lane][1 + y as usize] += w;
    });
    for (c, s) in stats.iter_mut().enumerate() {
        *s = merge(&std::array::from_fn(|lane| lanes[lane][c]));
    }
    stats[0] = merge(&total);
}

/// An impurity of class frequencies; with [`ClassCounts`] it makes a [`Criterion`].
pub trait ClassImpurity: Sync {
    /// `i(t)` from the weighted class counts `counts` of total weight `w > 0`.
    fn impurity(counts: &[f64], w: f64) -> f64;
    /// Larger is better, monotone in `Δi` for a fixed parent split into `left` and
    /// `total − left` (statistics vectors, slot 0 the weight).
    fn proxy(total: &[f64], left: &[f64]) -> f64;
    /// [`Criterion::may_beat`].
    #[inline(always)]
    fn may_beat(_total: &[f64], _left: &[f64], _bar: f64) -> bool {
        true
    }
    /// [`Criterion::independent_gain`] of the node's `counts` (total weight `w`): `i(t)`,
    /// exact for the Gini index (`E[Σ_l w_l (p_l − p)²] = i(t)` per extra group).
    fn independent_gain(counts: &[f64], w: f64) -> f64 {
        Self::impurity(counts, w)
    }
}

/// Classification statistics `[w, c_0, …, c_{C−1}]` scored by the impurity `M`.
pub struct ClassCounts<'a, M> {
    /// Class code of every sample.
    pub y: &'a [u32],
    /// Number of classes.
    pub n_classes: usize,
    measure: std::marker::PhantomData<M>,
}

impl<'a, M> ClassCounts<'a, M> {
    /// Criterion over the class codes `y` in `0..n_classes`.
    pub fn new(y: &'a [u32], n_classes: usize) -> Self {
        ClassCounts {
            y,
            n_classes,
            measure: std::marker::PhantomData,
        }
    }
}

/// Gini index `i(t) = 1 − Σ_k p_k²`.
pub struct GiniIndex;
/// Shannon entropy `i(t) = −Σ_k p_k log₂ p_k`, in bits, so importances are in bits.
pub struct ShannonEntropy;

/// The Gini criterion.
pub type Gini<'a> = ClassCounts<'a, GiniIndex>;
/// The entropy (log-loss) criterion, in bits.
pub type Entropy<'a> = ClassCounts<'a, ShannonEntropy>;

impl ClassImpurity for GiniIndex {
    fn impurity(counts: &[f64], w: f64) -> f64 {
        1.0 - counts.iter().map(|c| (c / w) * (c / w)).sum::<f64>()
    }
    /// `Σ c_L²/w_L + Σ c_R²/w_R`, i.e. `−(w_L·i_L + w_R·i_R)` up to the constant `w_t`.
    #[inline(always)]
    fn proxy(total: &[f64], left: &[f64]) -> f64 {
        let (wl, wr, sl, sr) = squared_counts(total, left);
        sl / wl + sr / wr
    }
    /// `proxy > bar` times `w_L·w_R > 0`, as for [`SquaredError`](super::SquaredError).
    #[inline(always)]
    fn may_beat(total: &[f64], left: &[f64], bar: f64) -> bool {
        let (wl, wr, sl, sr) = squared_counts(total, left);
        sl * wr + sr * wl > bar * (wl * wr)
    }
}

/// The weights of the two sides and the sums of their squared class counts.
#[inline(always)]
fn squared_counts(total: &[f64], left: &[f64]) -> (f64, f64, f64, f64) {
    let (wl, wr) = (left[0], total[0] - left[0]);
    let (mut sl, mut sr) = (0.0, 0.0);
    for k in 1..total.len() {
        let (l, r) = (left[k], total[k] - left[k]);
        sl += l * l;
        sr += r * r;
    }
    (wl, wr, sl, sr)
}

impl ClassImpurity for ShannonEntropy {
    fn impurity(counts: &[f64], w: f64) -> f64 {
        -counts.iter().map(|c| xlog2x(c / w)).sum::<f64>()
    }
    /// `(K − 1) / (2 ln 2)` bits for the `K` classes present: the mean of the information
    /// gain of an independent variable, `Γ(½(L−1)(K−1), 1/(N_t ln 2))` (Goebel et al.
    /// 2005; Louppe 2014, Eq. 7.19), per extra group and row.
    fn independent_gain(counts: &[f64], _w: f64) -> f64 {
        let present = counts.iter().filter(|&&c| c > 0.0).count();
        present.saturating_sub(1) as f64 / (2.0 * std::f64::consts::LN_2)
    }
    /// `−(w_L·i_L + w_R·i_R) = Σ c log₂ c − w_L log₂ w_L` over both children.
    #[inline(always)]
    fn proxy(total: &[f64], left: &[f64]) -> f64 {
        let (wl, wr) = (left[0], total[0] - left[0]);
        let mut s = -xlog2x(wl) - xlog2x(wr);
        for k in 1..total.len() {
            s += xlog2x(left[k]) + xlog2x(total[k] - left[k]);
        }
        s
    }
}

impl<M: ClassImpurity> Criterion for ClassCounts<'_, M> {
    type Y = u32;
    const WEIGHT_IS_SUM: bool = true;
    #[inline(always)]
    fn target(&self, i: usize) -> u32 {
        self.y[i]
    }
    fn stats_len(&self) -> usize {
        1 + self.n_classes
    }
    #[inline(always)]
    fn add(&self, stats: &mut [f64], y: u32, w: f64) {
        stats[1 + y as usize] += w;
    }
    #[inline(always)]
    fn accumulate_weighted(
        &self,
        stats: &mut [f64],
        ys: &[u32],
        ws: &[f64],
        weight: impl Fn(usize, f64) -> f64,
    ) {
        // Lanes as wide as the statistics (they are zeroed on every call, which small nodes
        // make frequent).
        match stats.len() {
            0..=4 => class_sums::<4, _>(stats, ys, ws, weight),
            5..=8 => class_sums::<8, _>(stats, ys, ws, weight),
            9..=MAX_LANE_STATS => class_sums::<MAX_LANE_STATS, _>(stats, ys, ws, weight),
            _ => {
                let mut total = [0.0; LANES];
                stats.fill(0.0);
                by_lanes(ys, ws, |lane, j, y, w| {
                    let w = weight(j, w);
                    total[lane] += w;
                    self.add(stats, y, w);
                });
                stats[0] = merge(&total);
            }
        }
    }
    /// Two classes: the left count and the left count of class 1 are integer sums without
    /// a class-indexed store, which the compiler vectorizes. (Counting more classes with
    /// one compare each ran more instructions than the lane sums from 3 classes on.)
    #[inline(always)]
    fn count_left(&self, stats: &mut [f64], ys: &[u32], ws: &[f64], left: impl Fn(usize) -> bool) {
        if self.n_classes != 2 {
            self.accumulate_weighted(stats, ys, ws, |j, _| f64::from(u8::from(left(j))));
            return;
        }
        // u32 sums: a node has fewer than 2³² samples.
        let (mut n, mut ones) = (0u32, 0u32);
        for (j, &y) in ys.iter().enumerate() {
            let l = u32::from(left(j));
            n += l;
            ones += l & y;
        }
        stats[0] = f64::from(n);
        stats[1] = f64::from(n - ones);
        stats[2] = f64::from(ones);
    }
    fn impurity(&self, stats: &[f64]) -> f64 {
        if stats[0] <= 0.0 {
            return 0.0;
        }
        M::impurity(&stats[1..], stats[0])
    }
    /// The sums are of weights only.
    fn whole_sums(&self, _ys: &[u32], ws: &[f64]) -> bool {
        whole_terms(ws.iter().copied())
    }
    #[inline(always)]
    fn proxy(&self, total: &[f64], left: &[f64]) -> f64 {
        M::proxy(total, left)
    }
    const ORDERED_SHARE: f64 = 1.0;
    fn independent_gain(&self, total: &[f64]) -> f64 {
        match total[0] > 0.0 {
            true => M::independent_gain(&total[1..], total[0]),
            false => 0.0,
        }
    }
    #[inline(always)]
    fn may_beat(&self, total: &[f64], left: &[f64], bar: f64) -> bool {
        M::may_beat(total, left, bar)
    }
    fn value(&self, stats: &[f64], out: &mut [f64]) {
        let w = stats[0];
        for (o, c) in out.iter_mut().zip(&stats[1..]) {
            *o = if w > 0.0 { c / w } else { 0.0 };
        }
    }
}

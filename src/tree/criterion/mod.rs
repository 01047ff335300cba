//! Impurity criteria, as sufficient statistics that can be updated one sample at a time.
//!
//! A statistics vector is a flat `[f64]` whose slot 0 is the total sample weight `w`:
//! `[w, c_0, …, c_{C−1}]` (weighted class counts) for classification and
//! `[w, Σ w·y, Σ w·y²]` for regression. Sweeping sorted samples from the right child into the
//! left child is one [`Criterion::add`] per sample, and the right child's statistics are
//! `total − left`, so evaluating every threshold of a feature costs `O(N_t · C)`.
//!
//! Splits are ranked by a cheap *proxy* that is a strictly increasing function of the true
//! impurity decrease for a fixed parent (scikit-learn's trick): it drops the parent terms
//! and the divisions that are the same for every candidate.
//!
//! This module owns the [`Criterion`] contract and what every criterion shares: the lane
//! sums of [`Criterion::accumulate_weighted`], the branch-free `weight_if_le` (the
//! routing rule in SSE2), [`xlog2x`] and the impurities derived from stored frequencies.
//! Its tests check the contract on every criterion: the proxy ranks splits as the true
//! decrease, `may_beat` never rejects a better proxy, the counting paths equal the weighted
//! sums bit for bit. The criteria live in `classes` (Gini, entropy), `regression`
//! (squared error) and `poisson` (half Poisson deviance); `multi` generalizes the first two
//! to several outputs (the mean impurity over outputs). `absolute` (absolute error, one output
//! or several) is the exception: a median is no function of sums, so it keeps the weight
//! only and hands its rows to the order-statistic search ([`Criterion::order_statistic`]).

mod absolute;
mod classes;
mod multi;
mod poisson;
mod regression;

#[cfg(test)]
pub(crate) use absolute::median_and_deviation;
pub use absolute::{AbsoluteError, MultiAbsoluteError, OrderTargets};
pub use classes::{ClassCounts, ClassImpurity, Entropy, Gini, GiniIndex, ShannonEntropy};
pub use multi::{MultiClassCounts, MultiEntropy, MultiGini, MultiSquaredError, OutputsProxy};
pub use poisson::Poisson;
pub use regression::SquaredError;

use super::Word;
use crate::params::CriterionKind;

/// Independent accumulators of [`Criterion::accumulate_weighted`] (and of the bins of
/// whole sums, `split::scan::bins`).
pub(crate) const LANES: usize = 4;

/// Runs `body(lane, j, y, w)` for every sample `j` (target `y`, weight `w`), on lane
/// `j % LANES`, unrolled so that the lanes' sums are independent. The values come from
/// fixed-size chunks, loaded before any test on them, which keeps selects branch-free.
#[inline(always)]
pub(crate) fn by_lanes<Y: Copy>(ys: &[Y], ws: &[f64], mut body: impl FnMut(usize, usize, Y, f64)) {
    let n = ys.len().min(ws.len());
    let (y4, w4) = (ys[..n].chunks_exact(LANES), ws[..n].chunks_exact(LANES));
    let (y_rest, w_rest) = (y4.remainder(), w4.remainder());
    for (c, (y, w)) in y4.zip(w4).enumerate() {
        for lane in 0..LANES {
            body(lane, c * LANES + lane, y[lane], w[lane]);
        }
    }
    let full = n - y_rest.len();
    for (lane, (&y, &w)) in y_rest.iter().zip(w_rest).enumerate() {
        body(lane, full + lane, y, w);
    }
}

/// `w` if `v ≤ t`, else 0, without a branch (the side of a sample is unpredictable). LLVM
/// turns a plain select of floats into a branch when an operand is a load; the SSE2
/// compare-and-mask is kept as written. It is [`crate::tree::goes_left`] with missing
/// values going right, in SSE2 ([`weight_if_not_gt`] is the rule with missing values going
/// left): a change of the routing rule must be made here too (a unit test compares them).
#[inline(always)]
pub(crate) fn weight_if_le(v: f64, t: f64, w: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_and_pd, _mm_cmple_sd, _mm_cvtsd_f64, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86_64 baseline; these touch registers only.
        unsafe {
            _mm_cvtsd_f64(_mm_and_pd(
                _mm_cmple_sd(_mm_set_sd(v), _mm_set_sd(t)),
                _mm_set_sd(w),
            ))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        if v <= t {
            w
        } else {
            0.0
        }
    }
}

/// `w` if `!(v > t)` (`v ≤ t`, or `v` is NaN), else 0: [`crate::tree::goes_left`] with
/// missing values going left, branch-free like [`weight_if_le`].
#[inline(always)]
pub(crate) fn weight_if_not_gt(v: f64, t: f64, w: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_and_pd, _mm_cmpngt_sd, _mm_cvtsd_f64, _mm_set_sd};
        // SAFETY: SSE2 is part of the x86_64 baseline; these touch registers only.
        unsafe {
            _mm_cvtsd_f64(_mm_and_pd(
                _mm_cmpngt_sd(_mm_set_sd(v), _mm_set_sd(t)),
                _mm_set_sd(w),
            ))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        if v > t {
            0.0
        } else {
            w
        }
    }
}

/// `Σ_lanes lanes[lane]`, in a fixed order.
#[inline(always)]
fn merge(lanes: &[f64; LANES]) -> f64 {
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// Below this impurity a node is pure (scikit-learn's `EPSILON`).
pub(crate) const EPSILON: f64 = f64::EPSILON;

/// Incremental impurity measure over the samples of a node.
pub trait Criterion: Sync {
    /// Target of one sample: a class code or a real value (a [`Word`] to be partitioned).
    type Y: Copy + Send + Sync + Word;
    /// Whether the split search may sum whole sums into several bins per code
    /// (`split::scan::bins::scan_occupied`): for criteria whose rows all add to the same
    /// slots. Class-indexed slots made the lanes slower than one bin (BENCHMARKS.md).
    const LANED_BINS: bool = false;
    /// Whether the weight (slot 0 of the statistics) is the sum of the other slots (class
    /// counts), so that a search of whole sums may add those only and sum them per bin.
    const WEIGHT_IS_SUM: bool = false;
    /// Target of sample `i`.
    fn target(&self, i: usize) -> Self::Y;
    /// Length of a statistics vector.
    fn stats_len(&self) -> usize;
    /// Adds a sample with target `y` and weight `w` to the slots `1..` of `stats`. Slot 0
    /// (the weight) is left to the caller, who keeps it in a register: a class-indexed
    /// store could alias it, which would chain every iteration through memory.
    fn add(&self, stats: &mut [f64], y: Self::Y, w: f64);
    /// [`Criterion::add`] for the sums of a split search, which only
    /// [`Criterion::proxy`] reads: slots the proxy ignores may be left out.
    #[inline(always)]
    fn add_for_proxy(&self, stats: &mut [f64], y: Self::Y, w: f64) {
        self.add(stats, y, w);
    }
    /// The leading slots of a statistics vector that [`Criterion::proxy`] reads (and
    /// [`Criterion::add_for_proxy`] adds to, with the weight), when fewer than all and
    /// fixed: a split search's sums and bins keep only these ([`Criterion::proxy_len`]).
    const PROXY_LEN: Option<usize> = None;
    /// The slots a split search's sums and bins keep: [`Criterion::PROXY_LEN`], or all.
    #[inline(always)]
    fn proxy_len(&self) -> usize {
        Self::PROXY_LEN.unwrap_or_else(|| self.stats_len())
    }
    /// Statistics of the samples with targets `ys` and weights `ws` into `stats`.
    #[inline]
    fn accumulate(&self, stats: &mut [f64], ys: &[Self::Y], ws: &[f64]) {
        self.accumulate_weighted(stats, ys, ws, |_, w| w);
    }
    /// Statistics into `stats` of the samples `j`, each counted with weight
    /// `weight(j, ws[j])` (which [`weight_if_le`] makes 0 for the samples to leave out).
    /// Sums run over [`LANES`] interleaved accumulators, so that consecutive samples of
    /// one class do not wait on each other's sum.
    fn accumulate_weighted(
        &self,
        stats: &mut [f64],
        ys: &[Self::Y],
        ws: &[f64],
        weight: impl Fn(usize, f64) -> f64,
    );
    /// [`Criterion::accumulate_weighted`] when every weight `ws` is 1 and `left(j)` says
    /// which samples count: the same sums, which are then whole numbers; at least those
    /// the proxy reads (as [`Criterion::add_for_proxy`], the others may be left 0).
    #[inline(always)]
    fn count_left(
        &self,
        stats: &mut [f64],
        ys: &[Self::Y],
        ws: &[f64],
        left: impl Fn(usize) -> bool,
    ) {
        self.accumulate_weighted(stats, ys, ws, |j, _| f64::from(u8::from(left(j))));
    }
    /// Impurity `i(t)` of a node with statistics `stats`.
    fn impurity(&self, stats: &[f64]) -> f64;
    /// Impurity of the node with statistics `stats` and rows `ys`, `ws`, as stored in the
    /// tree: [`Criterion::impurity`], unless a pass over the rows is more accurate.
    #[inline]
    fn node_impurity(&self, stats: &[f64], _ys: &[Self::Y], _ws: &[f64]) -> f64 {
        self.impurity(stats)
    }
    /// Whether the node is pure, so that it stays a leaf: its impurity is at most
    /// [`EPSILON`] (scikit-learn's rule), `impurity` being its [`Criterion::node_impurity`].
    /// A criterion whose one-pass sums can leave rounding noise above that in a node of
    /// equal targets checks them again without the cancellation.
    #[inline]
    fn is_pure(&self, _stats: &[f64], _ys: &[Self::Y], _ws: &[f64], impurity: f64) -> bool {
        impurity <= EPSILON
    }
    /// Whether a cut of proxy `proxy` may be chosen at all; a criterion that forbids some
    /// cuts (Poisson: a child with no positive target) gives them the proxy `−∞`. Always
    /// true otherwise, which the compiler folds away.
    #[inline(always)]
    fn allows(_proxy: f64) -> bool {
        true
    }
    /// Larger is better; monotone in `Δi` for a fixed parent `total` split into
    /// `left` and `total − left`.
    fn proxy(&self, total: &[f64], left: &[f64]) -> f64;
    /// False only when `proxy(total, left)` is surely not above `bar`, by a test cheaper
    /// than the proxy (no division, no logarithm), so that a scan can test every row
    /// without a branch and score only the few that pass. `true` when there is none.
    #[inline(always)]
    fn may_beat(&self, _total: &[f64], _left: &[f64], _bar: f64) -> bool {
        true
    }
    /// The expected rise of [`Criterion::proxy`], per group beyond the first, that a
    /// partition of the node `total` by a variable independent of the target brings, in the
    /// proxy's units for unit weights. The best cut of an ordered search over `L` groups
    /// gains about `(L − 2)·`[`Criterion::ORDERED_SHARE`] times this more than one cut of an
    /// ordered column by chance alone (the bias of impurity towards many values, Louppe
    /// 2014 §7.2). `i(t)` by default, exact for the
    /// squared error (`E[Σ_l w_l (ȳ_l − ȳ)²] = (L − 1)·σ²`) and the Gini index; the
    /// half deviances (Poisson) are `≈ ½` per group as is their `i(t)` for unit dispersion.
    fn independent_gain(&self, total: &[f64]) -> f64 {
        self.impurity(total)
    }
    /// The share of [`Criterion::independent_gain`] that the best cut of an order of many
    /// independent groups, sorted by their values, keeps: `2/π` for a continuous target
    /// (cutting sorted normal means at the median keeps `(E|Z|)² = 2/π` of their spread);
    /// 1 for class counts, whose few-row groups in the small nodes where noise wins sort
    /// into a cut that separates the classes whole.
    const ORDERED_SHARE: f64 = std::f64::consts::FRAC_2_PI;
    /// Node prediction: class frequencies, or the weighted mean.
    fn value(&self, stats: &[f64], out: &mut [f64]);
    /// Prediction of the node with statistics `stats` and rows `ys`, `ws`, as stored in the
    /// tree: [`Criterion::value`], unless it needs the rows (a median).
    #[inline]
    fn node_value(&self, stats: &[f64], _ys: &[Self::Y], _ws: &[f64], out: &mut [f64]) {
        self.value(stats, out);
    }
    /// The targets `ys` as real numbers, output by output, when the criterion ranks cuts
    /// by order statistics of the rows rather than by sums (absolute error): the exact and
    /// random searches then hand the candidate to `split::median`. `None` (folded away)
    /// for the others.
    #[inline(always)]
    fn order_statistic<'s>(&'s self, _ys: &'s [Self::Y]) -> Option<OrderTargets<'s>> {
        None
    }
    /// scikit-learn's `middle_value`: where a cut on a monotonically constrained feature
    /// splits the node's bounds between its children (`monotone::Bounds::children`), the
    /// mean of the children's values. From the sums, `v_L/2 + v_R/2` with `v = stats[1] /
    /// stats[0]` (a mean, or the first class's frequency), halved first as scikit-learn's;
    /// a criterion whose value needs the rows reads them: the node's `ys`, `ws`,
    /// partitioned with the left child's `n_left` first.
    fn middle_value(
        &self,
        left: &[f64],
        right: &[f64],
        _ys: &[Self::Y],
        _ws: &[f64],
        _n_left: usize,
    ) -> f64 {
        left[1] / (2.0 * left[0]) + right[1] / (2.0 * right[0])
    }
    /// Whether every sum a split search adds for the samples with targets `ys` and weights
    /// `ws` is a whole number below 2⁵³, so that the sums are the same in any order of
    /// addition (and bins may replace a sorted scan without changing a bit).
    fn whole_sums(&self, ys: &[Self::Y], ws: &[f64]) -> bool;
}

/// Whether the non-negative `terms` are whole numbers with a sum below 2⁵³ (every partial
/// sum is then exact).
fn whole_terms(terms: impl Iterator<Item = f64>) -> bool {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2⁵³
    let mut sum = 0.0;
    for t in terms {
        // A round trip through an integer rather than `fract`, which is a call to libm's
        // `trunc` per term on x86-64's baseline (SSE2): the booster tests every round.
        if t.is_nan() || t >= EXACT || (t as i64) as f64 != t {
            return false;
        }
        sum += t;
    }
    sum < EXACT
}

/// `x · log₂ x`, with the continuous extension `0 · log 0 = 0`.
#[inline]
pub fn xlog2x(x: f64) -> f64 {
    if x > 0.0 {
        x * x.log2()
    } else {
        0.0
    }
}

/// Impurity of a classification node from its class frequencies `p` (used to derive the
/// stored impurities from stored values, so a loaded model equals the fitted one bit for bit).
pub fn impurity_of_frequencies(kind: CriterionKind, p: &[f64]) -> f64 {
    match kind {
        CriterionKind::Gini => GiniIndex::impurity(p, 1.0),
        CriterionKind::Entropy => ShannonEntropy::impurity(p, 1.0),
        CriterionKind::SquaredError | CriterionKind::Poisson | CriterionKind::AbsoluteError => 0.0,
    }
}

/// Impurity of a regression node from its children's `(weight, impurity, mean)`, its
/// mean `vt` and weight `wt > 0`: the law of total variance, or its analogue for the
/// Poisson deviance (`poisson::deviance_of_children`). Used to derive internal impurities
/// from the stored leaves ([`crate::Tree::node_stats`]).
pub(crate) fn impurity_of_children(
    kind: CriterionKind,
    children: [(f64, f64, f64); 2],
    vt: f64,
    wt: f64,
) -> f64 {
    if kind == CriterionKind::Poisson {
        return poisson::deviance_of_children(children, vt, wt);
    }
    let [(wl, il, vl), (wr, ir, vr)] = children;
    (wl * (il + (vl - vt) * (vl - vt)) + wr * (ir + (vr - vt) * (vr - vt))) / wt
}

/// [`impurity_of_children`] of a multi-output squared-error node, whose impurity is the
/// mean over its `m` outputs: `i_t = (w_l i_l + w_r i_r)/w_t + (1/m) Σ_k (w_l (v_{l,k} −
/// v_{t,k})² + w_r (v_{r,k} − v_{t,k})²)/w_t`, from the children's `(weight, impurity)` and
/// the `values` (mean of each output) of the node and its children.
pub(crate) fn impurity_of_children_outputs(
    children: [(f64, f64); 2],
    values: [&[f64]; 3],
    wt: f64,
) -> f64 {
    let [(wl, il), (wr, ir)] = children;
    let [vt, vl, vr] = values;
    let mut between = 0.0;
    for k in 0..vt.len() {
        let (dl, dr) = (vl[k] - vt[k], vr[k] - vt[k]);
        between += wl * dl * dl + wr * dr * dr;
    }
    (wl * il + wr * ir) / wt + between / (vt.len().max(1) as f64 * wt)
}

#[cfg(test)]
mod tests;

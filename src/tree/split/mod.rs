//! Finding the split of one node: which candidate features, which threshold.
//!
//! Invariants kept for the builder:
//! * the node's samples are the contiguous slice `samples[start..end]`, with their targets
//!   and weights in the aligned slices `ys`, `ws` (so scans read memory sequentially); after
//!   a split all three are partitioned in place, left child (`x ≤ threshold`) first;
//! * `features[..n_constant]` are known to be constant in the node (so in all its
//!   descendants) and are never drawn. Candidates are drawn uniformly **without replacement
//!   among the features not constant in the node**: a drawn feature found constant joins the
//!   constant prefix and does not count towards K. With K = 1 this is exactly the totally
//!   randomized tree of Louppe et al. (2013, Thm 1): one variable chosen uniformly among
//!   those that can still split the node.
//! * ties between candidates (within a relative 1e-12) keep the first one drawn, so a fixed
//!   RNG stream gives a fixed tree, whatever the scale of the sample weights.

mod bin_scans;
pub(crate) mod code_lists;
mod gather;
pub(crate) mod histograms;
mod partition;
pub(crate) mod sort;

pub use self::partition::Word;

use self::bin_scans::scan_occupied;
use self::gather::{batch_len, gather_many, MAX_BATCH};
use self::partition::stable_partition;
use self::sort::sort_packed;
use crate::data::{Feature, Matrix, Packed};
use crate::rng::TreeRng;
use crate::tree::criterion::{weight_if_le, Criterion};

/// A chosen split of a node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split {
    pub feature: u32,
    pub threshold: f64,
    /// Samples in the left child (`x ≤ threshold`), counted from the node start.
    pub n_left: usize,
}

/// The samples of one node with their targets and weights, aligned position by position.
pub(crate) struct NodeRows<'s, Y> {
    pub samples: &'s mut [u32],
    pub ys: &'s mut [Y],
    pub ws: &'s mut [f64],
}

/// The threshold a search chose for one candidate feature.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cut {
    /// The criterion's proxy: larger is better.
    pub proxy: f64,
    pub threshold: f64,
    /// Rows with `x ≤ threshold`, when the search counted them (the partition counts
    /// them otherwise).
    pub n_left: Option<usize>,
}

/// Threshold search for one candidate feature; zero-sized, chosen once per fit.
pub(crate) trait ThresholdRule: Sync {
    /// Whether small subtrees may be grown from code-ordered lists instead
    /// ([`super::code_lists`]): for the histogram search only, which reads bin codes.
    const LISTED: bool = false;
    /// Best cut of the gathered values `xf` of the node, or None when no threshold
    /// satisfies the leaf constraints. Searches that scan many cuts may skip those not
    /// above `bar` (see [`floor`]).
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        s: &mut SearchBufs<T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, C::Y>,
        bar: f64,
        lo: T,
        hi: T,
        rng: &mut TreeRng,
    ) -> Option<Cut>;
}

/// CART: every mid-point between consecutive distinct sorted values.
pub(crate) struct BestThreshold;
/// Extra-Trees: one threshold uniform in `[min, max)` of the node values.
pub(crate) struct RandomThreshold;
/// Histogram CART on bin codes (`u8`): one pass fills per-bin statistics, then every
/// boundary between non-empty bins is scored; the threshold is a code.
pub(crate) struct HistThreshold;

/// What a search needs about the node besides its rows.
pub(crate) struct NodeCtx<'a, C> {
    pub crit: &'a C,
    pub total: &'a [f64],
    pub min_samples_leaf: usize,
    pub min_weight_leaf: f64,
    /// Every weight of the tree is 1 (no bootstrap, no sample weights: Extra-Trees by
    /// default), so scans need not read them.
    pub unit_weights: bool,
}

impl<C: Criterion> NodeCtx<'_, C> {
    #[inline(always)]
    pub(crate) fn admissible(&self, n_left: usize, n: usize, left: &[f64]) -> bool {
        n_left >= self.min_samples_leaf
            && n - n_left >= self.min_samples_leaf
            && left[0] >= self.min_weight_leaf
            && self.total[0] - left[0] >= self.min_weight_leaf
    }
}

/// Per-tree buffers, allocated once and reused by every node.
pub(crate) struct Scratch<T: Feature> {
    /// Candidates gathered together (see [`gather_many`]), each scored where it lies.
    pub(crate) batch: Vec<Vec<T>>,
    /// 1 for each row of the node that goes left under the best cut so far, written only
    /// when a new gather is about to overwrite the best candidate's column. One byte a row,
    /// where keeping the values aside took another buffer of the root's size per thread
    /// (25 MB at 10M rows of f32).
    best_left: Vec<u8>,
    /// The partition's buffer (see [`stable_partition`]).
    pub(crate) partition_buf: Vec<u64>,
    pub(crate) search: SearchBufs<T>,
}

/// What the threshold searches reuse from node to node.
pub(crate) struct SearchBufs<T: Feature> {
    /// Packed sort keys (value, position), and the radix sort's second buffer.
    packed: Vec<T::Packed>,
    radix: Vec<T::Packed>,
    pub(crate) left: Vec<f64>,
    /// The 256 bins of the histogram search, zero between searches ([`scan_occupied`]).
    bins: Vec<f64>,
}

impl<T: Feature> Scratch<T> {
    pub fn new(n: usize, stats_len: usize) -> Self {
        Scratch {
            batch: (0..MAX_BATCH).map(|_| Vec::new()).collect(),
            best_left: Vec::new(),
            partition_buf: Vec::with_capacity(n / 2 + 1),
            search: SearchBufs {
                packed: Vec::new(),
                radix: Vec::new(),
                left: vec![0.0; stats_len],
                bins: Vec::new(),
            },
        }
    }
}

/// Whether a candidate beats the best so far. Candidates within a relative 1e-12 of each
/// other are ties (they usually are exact ties, e.g. two features inducing the same
/// partition, that rounding makes differ), and ties keep the earlier candidate. This keeps
/// the tree unchanged when all sample weights are scaled by a constant.
#[inline(always)]
pub(crate) fn better(proxy: f64, best: f64) -> bool {
    // The first test settles most candidates (they are not better) in one comparison.
    proxy > best && proxy - best > 1e-12 * best.abs().max(proxy.abs())
}

/// The bar below which a candidate's cuts cannot matter, when the node's best cut so far
/// has proxy `best`. A scan that skips the cuts below it finds the same best cut as one
/// that scores all of them whenever that cut beats `best`: the two can differ only while
/// their bests are within `better`'s tolerance (1e-12, relative) of each other, and so
/// climb by at most that much per cut, and 1e-3 leaves room for 10⁹ cuts.
pub(crate) fn floor(best: Option<f64>) -> f64 {
    match best {
        Some(b) if b.is_finite() => b - 1e-3 * b.abs(),
        _ => f64::NEG_INFINITY,
    }
}

/// The best cut of one candidate's scan, and the bar a cut must pass to be scored: the
/// best's proxy, or before any the node's [`floor`]. Scans test every cut with
/// [`BestCut::worth`], branch-free, and score only those that pass: whether a row ends a
/// run of equal values and whether a cut beats the last were coin tosses for the branch
/// predictor in nodes of a few rows (cachegrind: a quarter and a sixth of those branches
/// mispredicted in the listed scans).
pub(crate) struct BestCut {
    best: Option<Cut>,
    bar: f64,
}

impl BestCut {
    #[inline(always)]
    pub(crate) fn above(bar: f64) -> Self {
        BestCut { best: None, bar }
    }

    /// Whether the cut with `n_left` rows and sums `left` meets the leaf constraints and
    /// may beat the bar. The scans stop before the right side gets too few rows.
    #[inline(always)]
    pub(crate) fn worth<C: Criterion>(
        &self,
        ctx: &NodeCtx<'_, C>,
        n_left: usize,
        left: &[f64],
    ) -> bool {
        let min_w = ctx.min_weight_leaf;
        (n_left >= ctx.min_samples_leaf)
            & (left[0] >= min_w)
            & (ctx.total[0] - left[0] >= min_w)
            & ((self.bar == f64::NEG_INFINITY) | ctx.crit.may_beat(ctx.total, left, self.bar))
    }

    /// Scores a cut that is [`BestCut::worth`] it, and keeps it if better.
    #[inline(always)]
    pub(crate) fn offer<C: Criterion>(
        &mut self,
        ctx: &NodeCtx<'_, C>,
        left: &[f64],
        threshold: f64,
        n_left: usize,
    ) {
        let proxy = ctx.crit.proxy(ctx.total, left);
        if self.best.is_none_or(|b| better(proxy, b.proxy)) {
            self.bar = proxy;
            self.best = Some(Cut {
                proxy,
                threshold,
                n_left: Some(n_left),
            });
        }
    }

    #[inline(always)]
    pub(crate) fn cut(self) -> Option<Cut> {
        self.best
    }
}

/// Mid-point of two consecutive distinct values, never equal to the upper one.
#[inline]
fn midpoint(a: f64, b: f64) -> f64 {
    let m = a / 2.0 + b / 2.0;
    if m >= b || !m.is_finite() {
        a
    } else {
        m
    }
}

impl ThresholdRule for BestThreshold {
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        s: &mut SearchBufs<T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, C::Y>,
        bar: f64,
        _lo: T,
        _hi: T,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        best_sorted(xf, s, ctx, rows, bar)
    }
}

/// Sorts the gathered values and scores the cut between every two consecutive distinct
/// ones, at their [`midpoint`].
#[inline(never)] // inlined, its scan compiled to more instructions per row (callgrind)
fn best_sorted<T: Feature, C: Criterion>(
    xf: &[T],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    bar: f64,
) -> Option<Cut> {
    // Positions are distinct, so the order (value, position) is unique.
    s.packed.clear();
    s.packed
        .extend(xf.iter().enumerate().map(|(k, v)| v.pack(k as u32)));
    sort_packed(&mut s.packed, &mut s.radix);
    let packed = &s.packed;
    let at = |i: usize| {
        let k = packed[i].position() as usize;
        (xf[k], k)
    };
    let cut = |a: T, b: T| midpoint(a.to_f64(), b.to_f64());
    let n = xf.len();
    if s.left.len() == 3 {
        // Regression and two classes: the sums in a local array, kept in registers (see
        // `code_lists::search`).
        let mut left = [0.0; 3];
        return scan_sorted(n, at, rows.ys, rows.ws, &mut left, ctx, bar, cut);
    }
    scan_sorted(n, at, rows.ys, rows.ws, &mut s.left, ctx, bar, cut)
}

/// Scores the cut between every two consecutive distinct values of a node of `n` rows
/// given in increasing (value, position) order: `at(i)` is the `i`-th value and the index
/// of its row in `ys` and `ws`. Only cuts above `bar` are scored (see [`BestCut`]).
#[inline(always)]
fn scan_sorted<V: PartialOrd + Copy, C: Criterion>(
    n: usize,
    at: impl Fn(usize) -> (V, usize),
    ys: &[C::Y],
    ws: &[f64],
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(V, V) -> f64,
) -> Option<Cut> {
    left.fill(0.0);
    let mut best = BestCut::above(bar);
    let mut wl = 0.0;
    let mut current = at(0);
    // Cuts leave at least min_samples_leaf rows on the right.
    for i in 0..n.saturating_sub(ctx.min_samples_leaf.max(1)) {
        let (v, k) = current;
        let w = ws[k];
        wl += w;
        ctx.crit.add_for_proxy(left, ys[k], w);
        left[0] = wl;
        current = at(i + 1);
        let next = current.0;
        if (next > v) & best.worth(ctx, i + 1, left) {
            best.offer(ctx, left, cut(v, next), i + 1);
        }
    }
    best.cut()
}

impl ThresholdRule for RandomThreshold {
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        s: &mut SearchBufs<T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, C::Y>,
        _bar: f64,
        lo: T,
        hi: T,
        rng: &mut TreeRng,
    ) -> Option<Cut> {
        let (lo, hi) = (lo.to_f64(), hi.to_f64());
        let mut t = lo + rng.unit() * (hi - lo);
        if !t.is_finite() {
            t = lo / 2.0 + hi / 2.0;
        }
        if t >= hi {
            t = lo;
        }
        if ctx.unit_weights {
            // The same sums (w = 1 exactly), without loading the weights.
            ctx.crit
                .count_left(&mut s.left, rows.ys, rows.ws, |j| xf[j].to_f64() <= t);
        } else {
            ctx.crit
                .accumulate_weighted(&mut s.left, rows.ys, rows.ws, |j, w| {
                    weight_if_le(xf[j].to_f64(), t, w)
                });
        }
        // Unit weights sum to the left count exactly. Otherwise: t is in [min, max), so the
        // minimum goes left and the maximum right, and the count matters only when leaves
        // need more than one sample.
        let n_left = if ctx.unit_weights {
            Some(s.left[0] as usize)
        } else if ctx.min_samples_leaf > 1 {
            Some(xf.iter().filter(|v| v.to_f64() <= t).count())
        } else {
            None
        };
        if !ctx.admissible(n_left.unwrap_or(1), rows.samples.len(), &s.left) {
            return None;
        }
        Some(Cut {
            proxy: ctx.crit.proxy(ctx.total, &s.left),
            threshold: t,
            n_left,
        })
    }
}

impl ThresholdRule for HistThreshold {
    const LISTED: bool = true;
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        s: &mut SearchBufs<T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, C::Y>,
        bar: f64,
        _lo: T,
        _hi: T,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        scan_occupied(&mut s.bins, xf, rows.ys, rows.ws, &mut s.left, ctx, bar)
    }
}

/// The candidate draws of one node, in batches (see the module's invariants):
/// `features[..constant]` are constant in the node, `features[constant..undrawn]` are not
/// drawn yet, and the current batch is `features[undrawn..batch_end]`.
pub(crate) struct Draws<'f> {
    features: &'f mut [u32],
    constant: usize,
    undrawn: usize,
    batch_end: usize,
    visited: usize,
    max_features: usize,
}

impl<'f> Draws<'f> {
    pub fn new(features: &'f mut [u32], n_constant: usize, max_features: usize) -> Self {
        let undrawn = features.len();
        Draws {
            features,
            constant: n_constant,
            undrawn,
            batch_end: undrawn,
            visited: 0,
            max_features,
        }
    }

    /// Draws the candidates still needed, at most `cap`, into `drawn` and returns how many
    /// (0 once K were visited or every feature was drawn). Each draw is uniform among the
    /// features not drawn and not known constant, so the sequence is that of drawing one at
    /// a time; a constant one is only recognized later ([`Draws::constant`]).
    pub fn next_batch(
        &mut self,
        cap: usize,
        drawn: &mut [u32; MAX_BATCH],
        rng: &mut TreeRng,
    ) -> usize {
        if self.visited >= self.max_features || self.constant >= self.undrawn {
            return 0;
        }
        let b = (self.max_features - self.visited)
            .min(self.undrawn - self.constant)
            .min(cap);
        for d in &mut drawn[..b] {
            let j = self.constant + rng.below(self.undrawn - self.constant);
            self.undrawn -= 1;
            self.features.swap(j, self.undrawn);
            *d = self.features[self.undrawn];
        }
        self.batch_end = self.undrawn + b;
        b
    }

    /// Feature `f` of the current batch turned out constant: it leaves the batch for the
    /// constant prefix (it joins the undrawn range at its end, then swaps with the range's
    /// first feature), and does not count towards K.
    pub fn constant(&mut self, f: u32) {
        let batch = &self.features[self.undrawn..self.batch_end];
        let q = self.undrawn + batch.iter().position(|&g| g == f).unwrap_or(0);
        self.features.swap(q, self.undrawn);
        self.features.swap(self.undrawn, self.constant);
        self.undrawn += 1;
        self.constant += 1;
    }

    /// A drawn candidate that is not constant was searched.
    pub fn visited(&mut self) {
        self.visited += 1;
    }

    /// The length of the constant prefix, and the features after it (which may still
    /// split the node's descendants).
    pub fn varying(&self) -> (usize, &[u32]) {
        (self.constant, &self.features[self.constant..])
    }
}

/// Draws candidate features for the node and returns the best split found (already
/// applied to `rows`), with the new length of the constant prefix of `features`.
pub(crate) fn find_split<T: Feature, C: Criterion, R: ThresholdRule>(
    x: &Matrix<'_, T>,
    ctx: &NodeCtx<'_, C>,
    s: &mut Scratch<T>,
    rows: &mut NodeRows<'_, C::Y>,
    features: &mut [u32],
    n_constant: usize,
    max_features: usize,
    rng: &mut TreeRng,
) -> (Option<Split>, usize) {
    let mut draws = Draws::new(features, n_constant, max_features);
    let mut best: Option<(u32, Cut)> = None;
    // The batch column holding the best candidate's values, until a new gather would
    // overwrite them: they are then kept as flags in `best_left`.
    let mut best_in_batch: Option<usize> = None;
    let mut drawn = [0u32; MAX_BATCH];
    let mut bounds = [(T::default(), T::default()); MAX_BATCH];
    loop {
        let cap = batch_len::<T>(rows.samples.len());
        let b = draws.next_batch(cap, &mut drawn, rng);
        if b == 0 {
            break;
        }
        if let (Some(k), Some((_, cut))) = (best_in_batch.take(), best) {
            mark_left(&s.batch[k], cut.threshold, &mut s.best_left);
        }
        gather_many(x, &drawn[..b], rows.samples, &mut s.batch, &mut bounds);
        for k in 0..b {
            let (f, (lo, hi)) = (drawn[k], bounds[k]);
            if hi <= lo {
                draws.constant(f);
                continue;
            }
            draws.visited();
            let xf = &s.batch[k];
            let bar = floor(best.map(|(_, b)| b.proxy));
            let Some(cut) = R::search(xf, &mut s.search, ctx, rows, bar, lo, hi, rng) else {
                continue;
            };
            if best.is_none_or(|(_, b)| better(cut.proxy, b.proxy)) {
                best = Some((f, cut));
                best_in_batch = Some(k);
            }
        }
    }
    let split = best.map(|(feature, cut)| {
        let buf = &mut s.partition_buf;
        let n_left = match best_in_batch {
            Some(k) => {
                let (xf, t) = (&s.batch[k], cut.threshold);
                partition(cut.n_left, rows, buf, ctx.unit_weights, |r| {
                    xf[r].to_f64() <= t
                })
            }
            None => {
                let flags = &s.best_left;
                partition(cut.n_left, rows, buf, ctx.unit_weights, |r| flags[r] != 0)
            }
        };
        Split {
            feature,
            threshold: cut.threshold,
            n_left,
        }
    });
    (split, draws.varying().0)
}

/// Flags the rows that go left (`xf[k] ≤ threshold`).
fn mark_left<T: Feature>(xf: &[T], threshold: f64, flags: &mut Vec<u8>) {
    flags.clear();
    flags.extend(xf.iter().map(|v| u8::from(v.to_f64() <= threshold)));
}

/// Stable partition of the node rows, rows with `is_left` first, both sides in their
/// previous order. `n_left` is the search's count of them, counted here when None.
/// Returns the left count. Weights that are all 1 stay where they are.
pub(crate) fn partition<Y: Word>(
    n_left: Option<usize>,
    rows: &mut NodeRows<'_, Y>,
    buf: &mut Vec<u64>,
    unit_weights: bool,
    is_left: impl Fn(usize) -> bool + Copy,
) -> usize {
    let count = || (0..rows.samples.len()).filter(|&k| is_left(k)).count();
    let n_left = n_left.unwrap_or_else(count);
    debug_assert_eq!(n_left, count());
    Y::partition_with_samples(rows.samples, rows.ys, buf, n_left, is_left);
    if !unit_weights {
        stable_partition(&mut rows.ws[..], buf, n_left, |k, _| is_left(k));
    }
    n_left
}

//! Every use of the tree's RNG in the split search: the candidate draw of a node, written
//! once for every candidate source, and the random thresholds of Extra-Trees
//! ([`draw_threshold`], with [`draw_missing_left`] for the side of their NaN rows) and
//! categorical splits ([`draw_left`] for each category).
//!
//! [`draw_split`] owns the rule of the module ([`super`]): K candidates drawn uniformly
//! without replacement among the features not known constant in the node, a drawn feature
//! found constant joining the constant prefix without counting towards K, ties kept by the
//! first drawn. It draws in batches of [`batch_len`] candidates, set here for every source
//! from the node's rows and the size of its values (the gathered source reads a batch of
//! columns in one pass), so a constant feature is met at the same point of the draws
//! whichever source scores the node: the RNG stream, consumed by the draws and by the
//! searches in between (random thresholds), is the same.

use crate::rng::TreeRng;
use crate::tree::split::{better, floor, ChosenSplit, Cut};

/// Candidates gathered in one pass at most (each needs a node-sized buffer).
pub(crate) const MAX_BATCH: usize = 4;

/// Bytes of gathered values one pass may fill: nodes larger than that gather fewer
/// candidates per pass (one at least), so the batch buffers of a tree stay near this size
/// instead of four times its root. Only the first levels of trees on millions of rows
/// (over 2M for f32, 1M for f64) pass over X more often. The drawing rule is the same;
/// where such a node meets constant features, the batch size changes which features fill
/// the remaining draws (`find_split`), never with the number of threads.
const BATCH_BYTES: usize = 32 << 20;

/// Candidates to gather together at a node of `n` samples.
pub(crate) fn batch_len<T>(n: usize) -> usize {
    (BATCH_BYTES / (n * std::mem::size_of::<T>()).max(1)).clamp(1, MAX_BATCH)
}

/// A threshold uniform in `[lo, hi)` (one draw of `rng`), for `lo < hi`.
#[inline]
pub(in crate::tree::split) fn draw_threshold(lo: f64, hi: f64, rng: &mut TreeRng) -> f64 {
    let mut t = lo + rng.unit() * (hi - lo);
    if !t.is_finite() {
        t = lo / 2.0 + hi / 2.0;
    }
    if t >= hi {
        t = lo;
    }
    t
}

/// The side of a random threshold's missing values, when the node has some: left or right
/// by one more draw (scikit-learn's Extra-Trees rule, [`crate::tree::split::scan::missing`]).
#[inline]
pub(in crate::tree::split) fn draw_missing_left(rng: &mut TreeRng) -> bool {
    draw_left(rng)
}

/// One fair draw of a side, left or right: for NaN rows ([`draw_missing_left`]) and for
/// each category of an Extra-Trees categorical split.
#[inline]
pub(in crate::tree::split) fn draw_left(rng: &mut TreeRng) -> bool {
    rng.below(2) == 1
}

/// Where the candidates of one node are read and scored: gathered columns (the exact,
/// random-threshold and histogram searches), a node's kept bins, or code lists.
pub(crate) trait CandidateSource {
    /// What the bounds test learns about a candidate that its search needs.
    type Bounds: Copy;
    /// The type of the feature values the source reads; with [`Self::node_rows`], it sets
    /// the batch length ([`batch_len`]).
    type Value;
    /// The rows of the node (for the batch length).
    fn node_rows(&self) -> usize;
    /// Readies the batch `drawn` (the gathered source reads their columns).
    #[inline(always)]
    fn prepare(&mut self, _drawn: &[u32]) {}
    /// The bounds of candidate `k` of the batch (feature `f`), or None when it is constant
    /// in the node.
    fn bounds(&mut self, k: usize, f: u32) -> Option<Self::Bounds>;
    /// The best cut of candidate `k` (feature `f`), or None when no cut satisfies the leaf
    /// constraints. Cuts not above `bar` may be skipped (see [`floor`]).
    fn search(
        &mut self,
        k: usize,
        f: u32,
        bounds: Self::Bounds,
        bar: f64,
        rng: &mut TreeRng,
    ) -> Option<Cut>;
    /// Candidate `k` of the current batch is the best so far, with `cut`.
    #[inline(always)]
    fn new_best(&mut self, _k: usize, _cut: &Cut) {}
    /// Applies the best split (feature `f`, `cut`) to the node's rows; `unsettled` are the
    /// features not known constant before the node's draws (some may be found so there).
    fn apply(&mut self, f: u32, cut: Cut, unsettled: &[u32]) -> ChosenSplit;
}

/// What a node draws its candidates from: `features`, of which the first `n_constant` are
/// known constant in the node, `max_features` (K) of them at most, with the tree's `rng`.
pub(crate) struct NodeDraw<'a> {
    pub features: &'a mut [u32],
    pub n_constant: usize,
    pub max_features: usize,
    pub rng: &'a mut TreeRng,
}

impl NodeDraw<'_> {
    /// The features not known constant in the node.
    pub(crate) fn varying(&self) -> &[u32] {
        &self.features[self.n_constant..]
    }
}

/// Draws candidate features for the node (`draw`), scores each with `source`, and returns
/// the best split (already applied to the rows) with the new length of the constant
/// prefix.
#[inline(always)]
pub(crate) fn draw_split<S: CandidateSource>(
    source: &mut S,
    draw: NodeDraw<'_>,
) -> (Option<ChosenSplit>, usize) {
    let NodeDraw {
        features,
        n_constant,
        max_features,
        rng,
    } = draw;
    let mut draws = Draws::new(features, n_constant, max_features);
    let mut best: Option<(u32, Cut)> = None;
    let mut drawn = [0u32; MAX_BATCH];
    let cap = batch_len::<S::Value>(source.node_rows());
    loop {
        let b = draws.next_batch(cap, &mut drawn, rng);
        if b == 0 {
            break;
        }
        source.prepare(&drawn[..b]);
        for (k, &f) in drawn[..b].iter().enumerate() {
            let Some(bounds) = source.bounds(k, f) else {
                draws.constant(f);
                continue;
            };
            draws.visited();
            let bar = floor(best.map(|(_, b)| b.proxy));
            let Some(cut) = source.search(k, f, bounds, bar, rng) else {
                continue;
            };
            if best.is_none_or(|(_, b)| better(cut.proxy, b.proxy)) {
                best = Some((f, cut));
                source.new_best(k, &cut);
            }
        }
    }
    let split = best.map(|(f, cut)| source.apply(f, cut, draws.unsettled()));
    (split, draws.constant)
}

/// The candidate draws of one node, in batches (see the module's invariants):
/// `features[..constant]` are constant in the node, `features[constant..undrawn]` are not
/// drawn yet, and the current batch is `features[undrawn..batch_end]`.
struct Draws<'f> {
    features: &'f mut [u32],
    /// The constant prefix the draws started from.
    known: usize,
    constant: usize,
    undrawn: usize,
    batch_end: usize,
    visited: usize,
    max_features: usize,
}

impl<'f> Draws<'f> {
    fn new(features: &'f mut [u32], n_constant: usize, max_features: usize) -> Self {
        let undrawn = features.len();
        Draws {
            features,
            known: n_constant,
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
    fn next_batch(&mut self, cap: usize, drawn: &mut [u32; MAX_BATCH], rng: &mut TreeRng) -> usize {
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
    fn constant(&mut self, f: u32) {
        let batch = &self.features[self.undrawn..self.batch_end];
        let q = self.undrawn + batch.iter().position(|&g| g == f).unwrap_or(0);
        self.features.swap(q, self.undrawn);
        self.features.swap(self.undrawn, self.constant);
        self.undrawn += 1;
        self.constant += 1;
    }

    /// A drawn candidate that is not constant was searched.
    fn visited(&mut self) {
        self.visited += 1;
    }

    /// The features after the constant prefix the draws started from.
    fn unsettled(&self) -> &[u32] {
        &self.features[self.known..]
    }
}

#[cfg(test)]
mod tests {
    use crate::tree::split::draw::*;

    #[test]
    fn batches_shrink_only_for_nodes_beyond_the_byte_budget() {
        assert_eq!(batch_len::<f32>(0), MAX_BATCH);
        assert_eq!(batch_len::<f32>(100_000), MAX_BATCH);
        assert_eq!(batch_len::<u8>(8_000_000), MAX_BATCH);
        // 32 MiB hold 2 columns of 4M f32 values, 1 of 8M, and never fewer than one.
        assert_eq!(batch_len::<f32>(4 << 20), 2);
        assert_eq!(batch_len::<f32>(8 << 20), 1);
        assert_eq!(batch_len::<f64>(100 << 20), 1);
    }
}

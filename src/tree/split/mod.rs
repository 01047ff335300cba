//! Finding the split of one node: which candidate features, which threshold.
//!
//! A node's split is found in three hops, one folder each:
//!
//! ```text
//! route.rs   which candidate source splits the node: THE route table (and the tree's plan)
//!   source/  where the candidates are read: gathered from X, code or rank lists, kept
//!            bins, X in place, the codes of 2 to 4 rows; each drawn by draw.rs
//!     rules/ how a candidate's threshold is searched: exact (CART), random, histogram
//!       scan/  the scans that offer its cuts: one over rows in order, one over bins,
//!              NaN on either side, medians for absolute error
//! ```
//! beside what they share: [`draw`] (the one draw loop, which owns the batch size, and
//! every other draw of the RNG), `read/` (gathering a node's values, a sparse X's entries,
//! the stable partition of its rows) and `state/` (the buffers, lists and bins kept from
//! node to node, held by the [`Splitter`]). A file imports only from its own layer or
//! those below it: route, sources, rules, state, scans, reads, then this file, `draw.rs`
//! and the criteria; no source imports another (`tests/python/test_rust_layout.py`).
//!
//! So the best split of a dense float column for a Random Forest is: route `Gathered` →
//! `source/gathered.rs` (values gathered by `read/gather.rs`) → `rules/exact.rs` (sorted)
//! → `scan/rows.rs` (the one row scan). A column with at most 256 distinct values is read
//! as its lossless codes ([`crate::data::Levels`]): binned or counted instead of sorted, with the
//! same cuts, bit for bit. Values with NaN in the node go to `scan/missing.rs`
//! (scikit-learn's rules); absolute error ([`Criterion::order_statistic`]) to
//! `scan/median/`.
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
//!   RNG stream gives a fixed tree, whatever the scale of the sample weights;
//! * under monotonic constraints ([`crate::tree::monotone`]) every cut of a constrained
//!   candidate passes its test where cuts are admitted ([`BestCut::offer`],
//!   [`NodeCtx::admissible`], and on the children's medians in [`scan::median`] through
//!   [`NodeCtx::constraint`]): each source searches a constrained candidate with the
//!   context of [`NodeCtx::for_feature`], so no search path can skip it.

mod draw;
mod read;
mod route;
mod rules;
mod scan;
mod source;
mod splitter;
mod state;

pub(crate) use self::draw::NodeDraw;
pub(crate) use self::read::partition::NodeRows;
pub use self::read::partition::Word;
pub(crate) use self::route::Planning;
pub(crate) use self::rules::exact::BestThreshold;
pub(crate) use self::rules::histogram::HistThreshold;
pub(crate) use self::rules::random::RandomThreshold;
pub(crate) use self::rules::ThresholdRule;
pub(crate) use self::scan::bufs::SearchBufs;
pub(crate) use self::source::gathered::find_split;
pub(crate) use self::splitter::Splitter;
pub(crate) use self::state::bufs::SplitBufs;
pub(crate) use self::state::node_bins::SpareBins;

use crate::data::{Feature, Levels, Matrix};
use crate::tree::criterion::Criterion;
use crate::tree::monotone::Bounds;
use crate::tree::{goes_left, Missing};

/// The last code of a column of increasing `levels` whose level goes left under threshold
/// `t` (its codes up to it go left): how rows read by their codes are routed.
#[inline]
pub(crate) fn last_code_left(levels: &[f64], t: f64) -> usize {
    levels
        .partition_point(|&v| goes_left(v, t, false))
        .saturating_sub(1)
}

/// The columns a node's candidates are read from: X, and the lossless codes of those of
/// its columns that have them.
#[derive(Clone, Copy)]
pub(crate) struct Columns<'a, T> {
    pub x: &'a Matrix<'a, T>,
    pub levels: Option<&'a Levels>,
    /// Per feature, whether its column holds NaN; None when X holds none. Only those
    /// columns are searched for NaN at a node ([`scan::missing`]).
    pub missing: Option<&'a [bool]>,
    /// Per feature, whether it is categorical (its values category codes, split by sets:
    /// [`scan::categories`]); None when none is.
    pub categorical: Option<&'a [bool]>,
}

impl<'a, T: Feature> Columns<'a, T> {
    /// Whether feature `f` is categorical.
    #[inline(always)]
    pub(crate) fn is_categorical(self, f: u32) -> bool {
        self.categorical.is_some_and(|c| c[f as usize])
    }

    /// The increasing levels of feature `f`, when it is coded.
    #[inline(always)]
    pub(crate) fn levels(self, f: u32) -> &'a [f64] {
        let coded = self.levels.and_then(|l| l.column(f as usize));
        coded.map_or(&[], |c| &c.values)
    }

    /// The increasing levels of feature `f`, when it has wide codes.
    #[inline(always)]
    pub(crate) fn wide_levels(self, f: u32) -> &'a [f64] {
        let wide = self.levels.and_then(|l| l.wide(f as usize));
        wide.map_or(&[], |c| &c.values)
    }
}

/// A chosen split of a node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ChosenSplit {
    pub feature: u32,
    pub threshold: f64,
    /// Samples in the left child (`x ≤ threshold`), counted from the node start.
    pub n_left: usize,
    /// Where the node's NaN rows went, if it had any.
    pub missing: Missing,
}

/// The threshold of a chosen categorical split, whose set the split search holds
/// ([`Splitter::chosen_categories`]) until the tree stores it ([`crate::tree::categories`]).
pub(crate) const CATEGORY_SET: f64 = f64::NAN;

/// Whether values unseen at a categorical split's node go left: the side with more of its
/// `n` rows (`n_left` on the left), ties right, as for NaN never seen
/// ([`ChosenSplit::missing_side`]).
#[inline]
pub(crate) fn unseen_go_left(n_left: usize, n: usize) -> bool {
    2 * n_left > n
}

impl ChosenSplit {
    /// Whether the split sends a set of categories left ([`CATEGORY_SET`]).
    pub(crate) fn is_categorical(&self) -> bool {
        self.threshold.is_nan()
    }

    /// The side NaN goes to, for a node of `n` samples: the learned one, else the child
    /// with more samples, ties to the right (scikit-learn's rule; `crate::tree::missing`
    /// derives the same side from the leaf counts of a loaded tree).
    pub(crate) fn missing_side(&self, n: usize) -> Missing {
        match self.missing {
            Missing::Unseen => Missing::side(self.n_left > n - self.n_left),
            learned => learned,
        }
    }
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
    /// Where the node's NaN rows go, if it has any ([`scan::missing`]).
    pub missing: Missing,
}
/// What a search needs about the node besides its rows.
pub(crate) struct NodeCtx<'a, C> {
    pub crit: &'a C,
    pub total: &'a [f64],
    pub min_samples_leaf: usize,
    pub min_weight_leaf: f64,
    /// Every weight of the tree is 1 (no bootstrap, no sample weights: Extra-Trees by
    /// default), so scans need not read them.
    pub unit_weights: bool,
    /// Every sum of the search is exact in any order ([`Criterion::whole_sums`]), or the
    /// tree's owner accepts sums in any order (the booster:
    /// `Grower::with_sums_in_any_order`), so a coded column may be summed in bins instead
    /// of sorted.
    pub whole_sums: bool,
    /// The tree's monotonic constraints (`None`: unconstrained) and the node's bounds.
    pub mono: Option<(&'a [i8], Bounds)>,
    /// The sign of the candidate being searched ([`NodeCtx::for_feature`]); 0 (free) in
    /// the node's own context, so that only a constrained candidate's cuts are tested.
    pub sign: i8,
}

impl<'a, C: Criterion> NodeCtx<'a, C> {
    /// Whether the cut with `n_left` of the node's `n` rows and sums `left` meets the leaf
    /// constraints and the candidate's monotonic constraint.
    #[inline(always)]
    pub(crate) fn admissible(&self, n_left: usize, n: usize, left: &[f64]) -> bool {
        self.leaves_fit(n_left, n, left[0]) && self.monotone(left)
    }

    /// Whether the cut with `n_left` of the node's `n` rows and left weight `w_left` leaves
    /// both children enough rows and weight.
    #[inline(always)]
    pub(crate) fn leaves_fit(&self, n_left: usize, n: usize, w_left: f64) -> bool {
        n_left >= self.min_samples_leaf
            && n - n_left >= self.min_samples_leaf
            && w_left >= self.min_weight_leaf
            && self.total[0] - w_left >= self.min_weight_leaf
    }

    /// Whether the cut with sums `left` keeps the candidate's monotonic constraint: always
    /// for a free candidate, in one test of the sign (a constant 0 unless the tree is
    /// constrained).
    #[inline(always)]
    pub(crate) fn monotone(&self, left: &[f64]) -> bool {
        if self.sign == 0 {
            return true; // one test of the sign, the only one on a free candidate
        }
        self.mono
            .is_none_or(|(_, bounds)| bounds.admits(self.sign, self.total, left))
    }

    /// The candidate's sign and the node's bounds when the candidate is constrained;
    /// `None` for a free candidate or an unconstrained tree.
    #[inline(always)]
    pub(crate) fn constraint(&self) -> Option<(i8, Bounds)> {
        match (self.sign, self.mono) {
            (0, _) | (_, None) => None,
            (sign, Some((_, bounds))) => Some((sign, bounds)),
        }
    }

    /// The context of a search of candidate `f` when the tree constrains it: the node's,
    /// with `f`'s sign. `None` when `f` is free (the node's own context serves), so an
    /// unconstrained fit never builds one.
    #[inline(always)]
    pub(crate) fn for_feature(&self, f: u32) -> Option<NodeCtx<'a, C>> {
        let (cst, _) = self.mono?;
        let sign = cst.get(f as usize).copied().unwrap_or(0);
        (sign != 0).then_some(NodeCtx { sign, ..*self })
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

/// `with_left_sums!(crit, left, … => scan)` runs `scan` with its sums buffers (`left`,
/// …) cut to `crit`'s [`Criterion::proxy_len`] (the sums bins hold), or replaced by local
/// arrays when the sums are few (regression's two, two classes' three): the compiler keeps
/// those in registers, where sums in a slice made every row's addition wait on the
/// previous store. A macro, so that each arm's scan is compiled in place (a closure was
/// compiled once, apart, and took the arrays by address); a fixed length
/// ([`Criterion::PROXY_LEN`]) leaves one arm.
macro_rules! with_left_sums {
    ($crit:expr, $($sums:ident),+ => $scan:expr) => {{
        let crit = $crit;
        match ($crate::tree::split::fixed_proxy_len(crit), crit.proxy_len()) {
            (Some(2), _) => {
                $(let mut $sums = [0.0; 2]; let $sums = &mut $sums[..];)+
                $scan
            }
            (None, 3) => {
                $(let mut $sums = [0.0; 3]; let $sums = &mut $sums[..];)+
                $scan
            }
            (_, len) => {
                $(let $sums = &mut $sums[..len];)+
                $scan
            }
        }
    }};
}
pub(crate) use with_left_sums;

/// `C`'s [`Criterion::PROXY_LEN`], for [`with_left_sums!`].
#[inline(always)]
pub(crate) fn fixed_proxy_len<C: Criterion>(_: &C) -> Option<usize> {
    C::PROXY_LEN
}

/// The best cut of one candidate's scan, and the bar a cut must pass to be scored: the
/// best's proxy, or before any the node's [`floor`]. Scans test every cut with
/// [`BestCut::worth`], branch-free, and score only those that pass: whether a row ends a
/// run of equal values and whether a cut beats the last were coin tosses for the branch
/// predictor in nodes of a few rows.
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
        if !ctx.monotone(left) {
            return;
        }
        let proxy = ctx.crit.proxy(ctx.total, left);
        if C::allows(proxy) && self.best.is_none_or(|b| better(proxy, b.proxy)) {
            self.bar = proxy;
            self.best = Some(Cut {
                proxy,
                threshold,
                n_left: Some(n_left),
                missing: Missing::Unseen,
            });
        }
    }

    #[inline(always)]
    pub(crate) fn cut(self) -> Option<Cut> {
        self.best
    }
}

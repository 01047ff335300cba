//! The exact search's kept bins: when every sum of a tree is whole and K ≥ p/2, the
//! columns with lossless codes keep their bins with the node ([`crate::tree::split::state::node_bins`]), so a
//! split gathers only its smaller child's codes and the larger child's bins are its
//! parent's minus its sibling's (LightGBM's subtraction, which the histogram search does
//! too). Whole sums subtract exactly, so the bins are those the gathered search sums
//! ([`crate::tree::split::scan::bins::scan_occupied`]), and [`scan_kept`] scores the same cuts in the
//! same order at the same thresholds: the trees are the gathered search's, bit for bit.
//! The booster, which accepts sums in any order (`Grower::with_sums_in_any_order`), keeps
//! them too: its subtracted sums round otherwise, as its bins already do.
//!
//! Both code widths keep bins: a byte-coded column one bin per level, a wide-coded one
//! (257 to 65 535 levels, [`crate::data::Wide`]) too. A node with kept bins still draws its
//! candidates in one loop ([`crate::tree::split::source::gathered`]): the kept columns are read from the bins,
//! the others (values) gathered, and so is a kept column whose node spans many more codes
//! than rows ([`KEPT_LEVELS_PER_ROW`]). Nodes of at most [`KEPT_MIN_ROWS`] rows keep
//! none: their gathers are cheap.

use crate::data::midpoint;
use crate::data::Levels;
use crate::tree::criterion::Criterion;
use crate::tree::split::scan::bins::{dense, scan_codes};
use crate::tree::split::state::code_lists::lists_pay;
use crate::tree::split::state::node_bins::{BinStack, NodeBins};
use crate::tree::split::{with_left_sums, Cut, NodeCtx};

/// Rows above which a child keeps its bins in the exact search.
pub(crate) const KEPT_MIN_ROWS: usize = 32;

/// A node's kept bins of a column are scanned only while the codes between its first and
/// last outnumber its rows at most this many times; beyond, gathering and searching its
/// rows costs less than visiting every code.
const KEPT_LEVELS_PER_ROW: usize = 2;

/// The bins of the exact search for a tree over `features` (of X's `n_cols`) with the
/// criterion's `proxy_len` sums, drawing `max_features` candidates a node: for the
/// columns with lossless codes, when K ≥ p/2 (below it, most bins would never be read) and
/// some column has codes. The caller asks only when every sum of the tree is whole.
pub(crate) fn kept_stack(
    levels: &Levels,
    features: &[u32],
    n_cols: usize,
    proxy_len: usize,
    max_features: usize,
) -> Option<BinStack> {
    if !lists_pay(max_features, features.len()) {
        return None;
    }
    let (coded, widths): (Vec<u32>, Vec<usize>) = (features.iter())
        .filter_map(|&f| Some((f, kept_levels(levels, f as usize)?.len())))
        .unzip();
    if coded.is_empty() {
        return None;
    }
    BinStack::with_widths(&coded, &widths, n_cols, proxy_len, KEPT_MIN_ROWS)
}

/// The increasing levels of feature `f`, when it has lossless codes (bytes or wide).
pub(in crate::tree::split) fn kept_levels(levels: &Levels, f: usize) -> Option<&[f64]> {
    match levels.column(f) {
        Some(c) => Some(&c.values),
        None => levels.wide(f).map(|w| &w.values[..]),
    }
}

/// A node's kept bins, as the gathered candidate source reads them.
pub(crate) struct Kept<'a> {
    stack: &'a BinStack,
    nb: &'a mut NodeBins,
}

impl<'a> Kept<'a> {
    pub(in crate::tree::split) fn new(stack: &'a BinStack, nb: &'a mut NodeBins) -> Self {
        Kept { stack, nb }
    }

    /// The bin slot of feature `f`, when its bins are kept.
    #[inline(always)]
    pub(in crate::tree::split) fn slot(&self, f: u32) -> Option<u32> {
        let sl = self.stack.slot[f as usize];
        (sl != u32::MAX).then_some(sl)
    }

    /// The first and last codes of slot `sl` with rows in the node of `n` rows, or None
    /// when the codes between them outnumber the rows too many times to scan them all
    /// (the gathered search then sorts the node's wide codes, as `exact` decides).
    #[inline(always)]
    pub(in crate::tree::split) fn bounds(&mut self, sl: u32, n: usize) -> Option<(u16, u16)> {
        let (lo, hi) = self.stack.trimmed(self.nb, sl as usize);
        (hi - lo <= KEPT_LEVELS_PER_ROW * n).then_some((lo as u16, hi as u16))
    }

    /// The best cut of slot `sl` (codes `lo..=hi`, of increasing `levels`) of a node of
    /// `n` rows, at the exact search's thresholds.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(in crate::tree::split) fn search<C: Criterion>(
        &self,
        (sl, lo, hi): (u32, u16, u16),
        levels: &[f64],
        n: usize,
        left: &mut [f64],
        ctx: &NodeCtx<'_, C>,
        bar: f64,
    ) -> Option<Cut> {
        let stride = self.stack.stride;
        let (lo, hi) = (usize::from(lo), usize::from(hi));
        let bins = &self.stack.bins_of(self.nb, sl as usize)[lo * stride..(hi + 1) * stride];
        let cut = |a: usize, b: usize| midpoint(levels[a], levels[b]);
        with_left_sums!(ctx.crit, left => {
            scan_kept(bins, lo, n, left, ctx, bar, cut)
        })
    }
}

/// The best cut between the non-empty bins `bins` (codes from `lo`) of a node of `n` rows:
/// before each non-empty code but the first, the cut below it, at `cut(a, b)` between the
/// last code added `a` and it, scored as [`crate::tree::split::scan::bins::scan_occupied`] scores it.
/// The bins are read, never cleared: they belong to the node.
#[inline(always)]
fn scan_kept<C: Criterion>(
    bins: &[f64],
    lo: usize,
    n: usize,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    let stride = left.len() + 1;
    let codes = dense(bins, lo, stride);
    let add = |stats: &[f64], left: &mut [f64]| {
        for (l, h) in left.iter_mut().zip(stats) {
            *l += *h;
        }
        stats[stride - 1] as usize
    };
    scan_codes::<C, &[f64], true>(codes, n, left, ctx, bar, cut, add)
}

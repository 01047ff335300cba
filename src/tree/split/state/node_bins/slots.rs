//! A kept slot's bins scanned for its best cut: by the histogram search ([`crate::tree::split::source::binned`]), or
//! as a split's children keep them ([`ChildScans`]).

use crate::data::NAN_CODE;
use crate::tree::criterion::Criterion;
use crate::tree::split::scan::bins::scan_bins;
use crate::tree::split::scan::nan_bins::{nan_in_node, scan_missing};
use crate::tree::split::{Cut, NodeCtx};

/// The non-empty codes of a slot's `bins` (from code 0) within `range`, which is trimmed to
/// them (a subtraction can empty the ends).
pub(super) fn trim(bins: &[f64], range: &mut (usize, usize), stride: usize) -> (usize, usize) {
    let (mut lo, mut hi) = *range;
    let count = |c: usize| bins[c * stride + stride - 1];
    while lo < hi && count(lo) == 0.0 {
        lo += 1;
    }
    while hi > lo && count(hi) == 0.0 {
        hi -= 1;
    }
    *range = (lo, hi);
    (lo, hi)
}

/// A split's two children (left, right) as their searches will see them: their contexts
/// and rows, and per feature whether its code [`NAN_CODE`] is the missing-values bin.
/// Their bins may then be scanned as soon as they are kept
/// ([`super::BinStack::keep_children`]), in the parallel task that makes them, instead of one
/// candidate after another when each child is split: the search of a node whose bins were
/// scanned returns those cuts ([`super::NodeBins::scanned`]).
///
/// Those scans skip no cut (no bar): where the draws' bar would have skipped a cut, that
/// cut cannot beat the node's best (see [`crate::tree::split::floor`]), so the split is the same.
pub(crate) struct ChildScans<'a, C> {
    pub ctx: [NodeCtx<'a, C>; 2],
    pub n: [usize; 2],
    pub nan: Option<&'a [bool]>,
}

impl<C: Criterion> ChildScans<'_, C> {
    /// The best cut of feature `f` in child `c` (0: left), from its slot's `bins` (from
    /// code 0) over their `range`, which is trimmed.
    pub(in crate::tree::split) fn cut(
        &self,
        c: usize,
        f: u32,
        (bins, range): (&[f64], &mut (usize, usize)),
        stride: usize,
        left: &mut [f64],
    ) -> Option<Cut> {
        let nan = self.nan.is_some_and(|m| m[f as usize]);
        let bounds = slot_bounds(bins, range, stride, nan)?;
        let (ctx, n) = (&self.ctx[c], self.n[c]);
        slot_cut(bins, bounds, stride, ctx, n, f, f64::NEG_INFINITY, left)
    }
}

/// A candidate's non-empty non-missing codes and whether its missing-values bin (with
/// `nan`) is not empty, from its slot's `bins` (from code 0) over their `range`, which is
/// trimmed; None when it is constant in the node.
#[inline(always)]
pub(crate) fn slot_bounds(
    bins: &[f64],
    range: &mut (usize, usize),
    stride: usize,
    nan: bool,
) -> Option<(usize, usize, bool)> {
    let (lo, hi) = trim(bins, range, stride);
    let (lo, hi, nan) = match nan {
        true => {
            let top =
                || (lo..usize::from(NAN_CODE)).rfind(|&c| bins[c * stride + stride - 1] > 0.0);
            nan_in_node(lo, hi, top)
        }
        false => (lo, hi, false),
    };
    (hi > lo).then_some((lo, hi, nan))
}

/// A categorical candidate's first and last non-empty codes, the missing-values bin
/// included (one more category: [`crate::tree::split::scan::categories::best_of_bins`]),
/// from its slot's `bins` over their `range`, which is trimmed; None when it holds one code.
#[inline(always)]
pub(crate) fn category_slot_bounds(
    bins: &[f64],
    range: &mut (usize, usize),
    stride: usize,
) -> Option<(usize, usize)> {
    let (lo, hi) = trim(bins, range, stride);
    (hi > lo).then_some((lo, hi))
}

/// The best cut above `bar` of feature `f` of a node of `n` rows, from its slot's `bins`
/// (from code 0) between its codes `lo` and `hi`, and its missing-values bin with `nan`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn slot_cut<C: Criterion>(
    feature: &[f64],
    (lo, hi, nan): (usize, usize, bool),
    stride: usize,
    ctx: &NodeCtx<'_, C>,
    n: usize,
    f: u32,
    bar: f64,
    left: &mut [f64],
) -> Option<Cut> {
    let bins = &feature[lo * stride..(hi + 1) * stride];
    let left = &mut left[..stride - 1];
    let constrained = ctx.for_feature(f);
    let ctx = constrained.as_ref().unwrap_or(ctx);
    if nan {
        let nan_at = usize::from(NAN_CODE) * stride;
        let nan = &feature[nan_at..nan_at + stride];
        return scan_missing(bins, lo, nan, n, left, ctx, bar);
    }
    scan_bins(bins, lo, hi - lo + 1, n, left, ctx, bar)
}

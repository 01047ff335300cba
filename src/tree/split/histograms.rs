//! The histogram splitter's candidate source for a node with kept bins ([`NodeBins`]):
//! every candidate scored from the node's own bins by [`scan_bins`].
//!
//! A candidate of a node above the list size ([`super::code_lists`]) is scored from its
//! bins (`super::bin_scans`): the bins of the codes its gathered rows occupy, or the node's
//! own bins. When K ≥ p/2 ([`super::code_lists::lists_pay`]: most features are read at
//! every node anyway) the bins of *every* varying feature are kept with the node
//! ([`super::node_bins`]), and a split gathers only its smaller child's rows.

use super::bin_scans::scan_bins;
use super::draw::{draw_split, CandidateSource};
use super::gather::gather;
use super::nan_bins::{code_value, nan_in_node, scan_missing};
use super::node_bins::{trim, BinStack, NodeBins};
use super::partition::{partition_rows, partition_rows_by_sample};
use super::{ChosenSplit, Cut, NodeCtx, NodeRows, SplitBufs};
use crate::data::{Feature, Matrix, NAN_CODE};
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::{goes_left, Missing};

/// A node's candidates scored from its kept bins by [`scan_bins`].
struct Binned<'a, 'r, T: Feature, C: Criterion> {
    x: &'a Matrix<'a, T>,
    stack: &'a BinStack,
    nb: &'a mut NodeBins,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
    /// The node's rows.
    n: usize,
    /// Per feature, whether code [`NAN_CODE`] is its missing-values bin (None: no feature's).
    nan: Option<&'a [bool]>,
}

impl<T: Feature, C: Criterion> CandidateSource for Binned<'_, '_, T, C> {
    /// The candidate's bin slot, its first and last non-empty non-missing codes, and
    /// whether its missing-values bin is not empty.
    type Bounds = (usize, usize, usize, bool);

    type Value = T;

    #[inline(always)]
    fn node_rows(&self) -> usize {
        self.n
    }

    #[inline(always)]
    fn bounds(&mut self, _k: usize, f: u32) -> Option<Self::Bounds> {
        let sl = self.stack.slot[f as usize] as usize;
        let (bins, range) = self.stack.slot_of(self.nb, sl);
        let nan = self.nan.is_some_and(|m| m[f as usize]);
        let (lo, hi, nan) = slot_bounds(bins, range, self.stack.stride, nan)?;
        Some((sl, lo, hi, nan))
    }

    #[inline(always)]
    fn search(
        &mut self,
        _k: usize,
        f: u32,
        (sl, lo, hi, nan): Self::Bounds,
        bar: f64,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        if let Some(cut) = self.nb.scanned(sl) {
            return cut;
        }
        let bins = self.stack.bins_of(self.nb, sl);
        let left = &mut self.s.search.left;
        let stride = self.stack.stride;
        slot_cut(bins, (lo, hi, nan), stride, self.ctx, self.n, f, bar, left)
    }

    fn apply(&mut self, feature: u32, cut: Cut, _unsettled: &[u32]) -> ChosenSplit {
        let s = &mut *self.s;
        let (buf, t, unit) = (&mut s.partition_buf, cut.threshold, self.ctx.unit_weights);
        if let (Some(column), Some(n_left)) = (self.x.column(feature as usize), cut.n_left) {
            // The column read at each row's sample id as the row moves: no gathered copy.
            let side = cut.missing;
            match side {
                Missing::Unseen => partition_rows_by_sample(n_left, self.rows, buf, unit, |i| {
                    goes_left(column[i as usize].to_f64(), t, false)
                }),
                _ => partition_rows_by_sample(n_left, self.rows, buf, unit, |i| {
                    goes_left(code_value(column[i as usize]), t, side == Missing::Left)
                }),
            }
            return ChosenSplit {
                feature,
                threshold: t,
                n_left,
                missing: side,
            };
        }
        // A column that is not a slice (row-major or sparse X): gathered first.
        gather(self.x, feature as usize, self.rows.samples, &mut s.batch[0]);
        let col = &s.batch[0];
        let n_left = match cut.missing {
            Missing::Unseen => partition_rows(cut.n_left, self.rows, buf, unit, |r| {
                goes_left(col[r].to_f64(), t, false)
            }),
            // The node's rows include the missing-values bin.
            side => partition_rows(cut.n_left, self.rows, buf, unit, |r| {
                goes_left(code_value(col[r]), t, side == Missing::Left)
            }),
        };
        ChosenSplit {
            feature,
            threshold: t,
            n_left,
            missing: cut.missing,
        }
    }
}

/// A split's two children (left, right) as their searches will see them: their contexts
/// and rows, and per feature whether its code [`NAN_CODE`] is the missing-values bin.
/// Their bins may then be scanned as soon as they are kept
/// ([`BinStack::keep_children`]), in the parallel task that makes them, instead of one
/// candidate after another when each child is split: the search of a node whose bins were
/// scanned returns those cuts ([`NodeBins::scanned`]).
///
/// Those scans skip no cut (no bar): where the draws' bar would have skipped a cut, that
/// cut cannot beat the node's best (see [`super::floor`]), so the split is the same.
pub(crate) struct ChildScans<'a, C> {
    pub ctx: [NodeCtx<'a, C>; 2],
    pub n: [usize; 2],
    pub nan: Option<&'a [bool]>,
}

impl<C: Criterion> ChildScans<'_, C> {
    /// The best cut of feature `f` in child `c` (0: left), from its slot's `bins` (from
    /// code 0) over their `range`, which is trimmed.
    pub(super) fn cut(
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
fn slot_bounds(
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

/// The best cut above `bar` of feature `f` of a node of `n` rows, from its slot's `bins`
/// (from code 0) between its codes `lo` and `hi`, and its missing-values bin with `nan`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn slot_cut<C: Criterion>(
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

/// [`super::find_split`] for a node with bins `nb`: the same draws, every candidate
/// scored from its bins by [`scan_bins`]. Applies the split to the rows.
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_split_binned<T: Feature, C: Criterion>(
    x: &Matrix<'_, T>,
    stack: &BinStack,
    nb: &mut NodeBins,
    ctx: &NodeCtx<'_, C>,
    s: &mut SplitBufs<T>,
    rows: &mut NodeRows<'_, C::Y>,
    features: &mut [u32],
    n_constant: usize,
    max_features: usize,
    nan: Option<&[bool]>,
    rng: &mut TreeRng,
) -> (Option<ChosenSplit>, usize) {
    let mut source = Binned {
        x,
        stack,
        nb,
        ctx,
        s,
        n: rows.samples.len(),
        rows,
        nan,
    };
    draw_split(&mut source, features, n_constant, max_features, rng)
}

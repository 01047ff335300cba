//! Where each gathered candidate lies ([`Span`]): values in a batch column, codes, wide
//! codes, a sparse candidate's entries, a column without entries, or kept bins.

use crate::data::{Feature, Wide};
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::MAX_BATCH;
use crate::tree::split::last_code_left;
use crate::tree::split::read::side::{
    mark_categories_left, mark_codes_left, mark_entries_left, mark_kept_left, mark_left,
};
use crate::tree::split::read::sparse_gather::gather_entries;
use crate::tree::split::scan::nan_bins::code_value;
use crate::tree::split::{Columns, NodeCtx, SplitBufs};

/// Where a gathered candidate lies, with its bounds in the node.
#[derive(Clone, Copy)]
pub(super) enum Span<T> {
    /// Values in batch column `column`, between `lo` and `hi`; with `nan`, some are NaN
    /// and the bounds are those of the others.
    Values {
        column: usize,
        lo: T,
        hi: T,
        nan: bool,
    },
    /// Category codes in batch column `column`, between `lo` and `hi`; with `nan`, some
    /// are NaN ([`crate::tree::split::scan::categories`]).
    Categories {
        column: usize,
        lo: T,
        hi: T,
        nan: bool,
    },
    /// Codes in the candidate's own place of the code batch, between `lo` and `hi`.
    Codes { lo: u8, hi: u8 },
    /// Wide codes in the candidate's own place of the wide batch, between `lo` and `hi`.
    Wide { lo: u16, hi: u16 },
    /// A sparse candidate's entries in its own place of the entries batch, the node's
    /// values (zeros included) between `lo` and `hi`.
    Entries { lo: T, hi: T },
    /// A sparse column without an entry in the node: constant 0, never gathered.
    Zero,
    /// Codes whose bins the node keeps, in bin slot `slot`, between `lo` and `hi`: never
    /// gathered ([`crate::tree::split::state::kept_codes`]).
    Kept { slot: u32, lo: u16, hi: u16 },
}

impl<T: Feature> Span<T> {
    /// Flags the rows of the node (`samples`) that go left under the cut `(t,
    /// missing_left)` of this span's candidate `f`, in place `k` of the batch (with
    /// `nan_code`, its values are bin codes whose missing-values bin is the NaN rows'), into
    /// `s.best_left`: before a new gather overwrites the candidate's column.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mark_left(
        self,
        k: usize,
        f: u32,
        (t, missing_left): (f64, bool),
        nan_code: bool,
        cols: Columns<'_, T>,
        s: &mut SplitBufs<T>,
        samples: &[u32],
    ) {
        let (flags, ml) = (&mut s.best_left, missing_left);
        match self {
            Span::Values { column, .. } if nan_code => {
                mark_left(&s.batch[column], code_value, t, ml, flags)
            }
            Span::Values { column, .. } => mark_left(&s.batch[column], T::to_f64, t, ml, flags),
            Span::Categories { column, .. } => {
                let xf = &s.batch[column];
                mark_categories_left(xf, nan_code, &s.best_categories, ml, flags)
            }
            Span::Codes { .. } => {
                let last = last_code_left(cols.levels(f), t) as u8;
                mark_codes_left(&s.codes[k], last, flags);
            }
            Span::Wide { .. } => {
                let last = last_code_left(cols.wide_levels(f), t) as u16;
                mark_codes_left(&s.wide[k], last, flags);
            }
            Span::Entries { .. } => mark_entries_left(&s.entries[k], samples.len(), t, flags),
            Span::Kept { .. } => {
                if let Some(levels) = cols.levels {
                    mark_kept_left(levels, f as usize, t, samples, flags);
                }
            }
            Span::Zero => {} // constant: never the best
        }
    }
}

/// The span of an uncoded candidate `f` of a sparse X: all zeros when the node has none
/// of its entries, else its entries gathered into place `k`. None for a shadow column
/// (stored dense: gathered as values).
#[inline(always)]
pub(super) fn sparse_span<T: Feature>(
    cols: Columns<'_, T>,
    f: u32,
    samples: &[u32],
    s: &mut SplitBufs<T>,
    k: usize,
) -> Option<Span<T>> {
    if s.node_features.absent(f) {
        return Some(Span::Zero);
    }
    let (rows, vals) = cols.x.sparse_column(f as usize)?;
    let (node, out) = (&s.node_rows, &mut s.entries[k]);
    let (lo, hi) = gather_entries(rows, vals, samples, node, out);
    Some(Span::Entries { lo, hi })
}

/// Queues candidate `f` for the batch gather of values: its span, whose bounds the
/// gather fills in.
#[inline(always)]
pub(super) fn values_span<T: Feature>(
    f: u32,
    values: &mut [u32; MAX_BATCH],
    n_values: &mut usize,
) -> Span<T> {
    values[*n_values] = f;
    *n_values += 1;
    let lo = T::default();
    Span::Values {
        column: *n_values - 1,
        lo,
        hi: lo,
        nan: false,
    }
}

/// The wide codes of feature `f`, when it has them and the tree's sums are whole (bins
/// then keep them bit for bit; [`crate::tree::split::ThresholdRule::search_wide`] chooses between bins and a
/// sort of the codes).
#[inline(always)]
pub(super) fn wide_at<'a, T: Feature, C: Criterion>(
    cols: Columns<'a, T>,
    f: u32,
    ctx: &NodeCtx<'_, C>,
) -> Option<&'a Wide> {
    let wide = cols.levels?.wide(f as usize)?;
    ctx.whole_sums.then_some(wide)
}

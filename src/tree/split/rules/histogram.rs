//! The histogram rule: X read as bin codes, a candidate's rows summed into the bins of
//! the codes they occupy and every boundary between occupied codes scored
//! ([`crate::tree::split::scan::bins`]); NaN rows hold the missing-values bin
//! ([`crate::tree::split::scan::nan_bins`]).

use crate::data::Feature;
use crate::tree::criterion::Criterion;
use crate::tree::split::rules::{RuleKind, Scoring, ThresholdRule};
use crate::tree::split::scan::bins::scan_occupied;
use crate::tree::split::scan::nan_bins::search_gathered;
use crate::tree::split::Cut;

/// Histogram CART on bin codes (`u8`): one pass fills per-bin statistics, then every
/// boundary between non-empty bins is scored; the threshold is a code.
pub(crate) struct HistThreshold;

impl ThresholdRule for HistThreshold {
    const KIND: RuleKind = RuleKind::Histogram;
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        (lo, hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, bar, ..
        } = q;
        let (ys, ws) = (&*rows.ys, &*rows.ws);
        let code_below = |a: usize, _| a as f64;
        let bounds = (lo.code(), hi.code());
        // (The histogram search's partition would count the left rows from values.)
        scan_occupied::<T, C, false>(
            &mut s.bins,
            xf,
            bounds,
            ys,
            ws,
            &mut s.left,
            ctx,
            bar,
            code_below,
        )
    }

    /// The node's NaN rows hold the missing-values bin ([`crate::tree::split::scan::nan_bins`]).
    fn search_missing<T: Feature, C: Criterion>(
        xf: &[T],
        (lo, hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, bar, ..
        } = q;
        let (ys, ws) = (&*rows.ys, &*rows.ws);
        let bounds = (lo.code(), hi.code());
        search_gathered(&mut s.bins, &mut s.left, xf, bounds, ys, ws, ctx, bar)
    }
}

//! The gathered candidate source: each drawn candidate's values at the node's rows are
//! copied into a column ([`gather_many`]) and searched there by a [`ThresholdRule`]
//! (exact, random threshold, or histogram codes). A candidate with lossless codes
//! ([`crate::data::Levels`]) is gathered and searched as codes instead ([`ThresholdRule::search_coded`]).
//!
//! Columns are gathered a batch at a time into the per-tree [`SplitBufs`]. The best
//! candidate's column is needed again to partition the rows, so before a new gather
//! overwrites it, its rows' sides are kept as one flag a row.

use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::Criterion;
use crate::tree::split::draw::MAX_BATCH;
use crate::tree::split::draw::{draw_split, CandidateSource, NodeDraw};
use crate::tree::split::last_code_left;
use crate::tree::split::read::gather::{gather_codes, gather_few_codes, gather_many};
use crate::tree::split::read::partition::partition_rows;
use crate::tree::split::read::side::{
    category_left, category_value, mark_entries_left, mark_kept_left,
};
use crate::tree::split::rules::Scoring;
use crate::tree::split::scan::missing;
use crate::tree::split::scan::nan_bins;
use crate::tree::split::source::Node;
use crate::tree::split::state::kept_codes::{kept_levels, Kept};
use crate::tree::split::CATEGORY_SET;
use crate::tree::split::{ChosenSplit, Columns, Cut, NodeCtx, NodeRows, SplitBufs, ThresholdRule};
use crate::tree::{goes_left, Missing};
use span::{sparse_span, values_span, wide_at, Span};

mod span;

/// A node's candidates gathered into columns and searched by `R`.
struct Gathered<'a, 'r, T: Feature, C: Criterion, R, const KEPT: bool> {
    cols: Columns<'a, T>,
    ctx: &'a NodeCtx<'a, C>,
    s: &'a mut SplitBufs<T>,
    rows: &'a mut NodeRows<'r, C::Y>,
    spans: [Span<T>; MAX_BATCH],
    /// The candidates of the batch.
    drawn: [u32; MAX_BATCH],
    /// The batch place of the best candidate, until a new gather would overwrite its
    /// column: its sides are then kept as flags in `best_left`.
    best_in_batch: Option<usize>,
    best_threshold: f64,
    best_missing_left: bool,
    /// The best candidate's codes route the missing-values bin as NaN.
    best_nan_code: bool,
    /// The best candidate is categorical: its set is `s.best_categories`.
    best_categorical: bool,
    /// The node's kept bins, if any (only the exact search keeps them).
    kept: Option<Kept<'a>>,
    rule: std::marker::PhantomData<R>,
}

impl<T: Feature, C: Criterion, R: ThresholdRule, const KEPT: bool> CandidateSource
    for Gathered<'_, '_, T, C, R, KEPT>
{
    type Bounds = Span<T>;

    type Value = T;

    #[inline(always)]
    fn node_rows(&self) -> usize {
        self.rows.samples.len()
    }

    #[inline(always)]
    fn prepare(&mut self, drawn: &[u32]) {
        let (cols, s) = (self.cols, &mut *self.s);
        if let Some(k) = self.best_in_batch.take() {
            let best = (self.best_threshold, self.best_missing_left);
            let (f, nan_code) = (self.drawn[k], self.best_nan_code);
            self.spans[k].mark_left(k, f, best, nan_code, cols, s, self.rows.samples);
        }
        let samples = &*self.rows.samples;
        let mut values = [0u32; MAX_BATCH];
        let mut n_values = 0;
        // Decided once a batch: a dense X (every fit but the sparse ones) never tests its
        // candidates for entries.
        let sparse = cols.x.is_sparse();
        for (k, &f) in drawn.iter().enumerate() {
            self.drawn[k] = f;
            // (Compiled out of the nodes without kept bins: most.)
            if let Some(kept) = self.kept.as_mut().filter(|_| KEPT) {
                let n = samples.len();
                let span = kept
                    .slot(f)
                    .and_then(|slot| Some((slot, kept.bounds(slot, n)?)));
                if let Some((slot, (lo, hi))) = span {
                    self.spans[k] = Span::Kept { slot, lo, hi };
                    continue;
                }
            }
            if cols.is_categorical(f) {
                self.spans[k] = match values_span(f, &mut values, &mut n_values) {
                    Span::Values {
                        column,
                        lo,
                        hi,
                        nan,
                    } => Span::Categories {
                        column,
                        lo,
                        hi,
                        nan,
                    },
                    span => span,
                };
                continue;
            }
            let coded = cols.levels.and_then(|l| l.column(f as usize));
            self.spans[k] = match coded {
                Some(coded) => {
                    let (column, out) = (&coded.codes, &mut s.codes[k]);
                    let (lo, hi) = match coded.values.len() <= 64 {
                        true => gather_few_codes(column, samples, out),
                        false => gather_codes(column, samples, out),
                    };
                    Span::Codes { lo, hi }
                }
                None => match sparse
                    .then(|| sparse_span(cols, f, samples, s, k))
                    .flatten()
                {
                    Some(span) => span,
                    None => match wide_at(cols, f, self.ctx) {
                        Some(wide) => {
                            let (lo, hi) = gather_codes(&wide.codes, samples, &mut s.wide[k]);
                            Span::Wide { lo, hi }
                        }
                        None => values_span(f, &mut values, &mut n_values),
                    },
                },
            };
        }
        if n_values == 0 {
            return;
        }
        let mut bounds = [(T::default(), T::default()); MAX_BATCH];
        gather_many(
            cols.x,
            &values[..n_values],
            samples,
            &mut s.batch,
            &mut bounds,
        );
        for (span, &f) in self.spans[..drawn.len()].iter_mut().zip(drawn) {
            // (A categorical candidate's codes are all categories, the missing-values
            // bin's too.)
            let ordered = !matches!(span, Span::Categories { .. });
            if let Span::Values {
                column,
                lo,
                hi,
                nan,
            }
            | Span::Categories {
                column,
                lo,
                hi,
                nan,
            } = span
            {
                (*lo, *hi) = bounds[*column];
                if cols.missing.is_some_and(|m| m[f as usize]) {
                    // The gather's bounds see NaN as neither small nor large (and the
                    // missing-values bin as the largest code).
                    (*lo, *hi, *nan) = match R::KIND.nan_bin() && ordered {
                        true => nan_bins::code_bounds(&s.batch[*column]),
                        false => missing::bounds(&s.batch[*column]),
                    };
                }
            }
        }
    }

    #[inline(always)]
    fn bounds(&mut self, k: usize, _f: u32) -> Option<Span<T>> {
        let span = self.spans[k];
        let constant = match span {
            Span::Values { lo, hi, .. } => hi <= lo,
            // NaN is one more category.
            Span::Categories { lo, hi, nan, .. } => hi <= lo && !nan,
            Span::Codes { lo, hi } => hi <= lo,
            Span::Wide { lo, hi } => hi <= lo,
            Span::Entries { lo, hi } => hi <= lo,
            Span::Kept { lo, hi, .. } => hi <= lo,
            Span::Zero => true,
        };
        (!constant).then_some(span)
    }

    #[inline(always)]
    fn search(
        &mut self,
        k: usize,
        f: u32,
        span: Span<T>,
        bar: f64,
        rng: &mut TreeRng,
    ) -> Option<Cut> {
        let (s, rows) = (&mut *self.s, &*self.rows);
        // An unconstrained tree (most) builds no constrained context at all.
        let constrained;
        let ctx = match self.ctx.mono {
            None => self.ctx,
            Some(_) => {
                constrained = self.ctx.for_feature(f);
                constrained.as_ref().unwrap_or(self.ctx)
            }
        };
        if let Span::Kept { slot, lo, hi } = span {
            let levels = kept_levels(self.cols.levels?, f as usize)?;
            let (kept, n) = (self.kept.as_ref()?, rows.samples.len());
            return kept.search((slot, lo, hi), levels, n, &mut s.search.left, ctx, bar);
        }
        let q = Scoring {
            s: &mut s.search,
            ctx,
            rows,
            bar,
            rng,
        };
        match span {
            Span::Values {
                column,
                lo,
                hi,
                nan: false,
            } => R::search(&s.batch[column], (lo, hi), q),
            Span::Values { column, lo, hi, .. } => R::search_missing(&s.batch[column], (lo, hi), q),
            Span::Categories { column, .. } => {
                let nan_bin = R::KIND.nan_bin() && self.cols.missing.is_some_and(|m| m[f as usize]);
                R::search_categories(&s.batch[column], nan_bin, q)
            }
            Span::Codes { lo, hi } => {
                R::search_coded(&s.codes[k], self.cols.levels(f), (lo, hi), q)
            }
            Span::Wide { lo, hi } => {
                R::search_wide(&s.wide[k], self.cols.wide_levels(f), (lo, hi), q)
            }
            Span::Entries { lo, hi } => R::search_entries(&s.entries[k], (lo, hi), q),
            // Constant (Zero: never searched), or read from the kept bins above.
            Span::Zero | Span::Kept { .. } => None,
        }
    }

    #[inline(always)]
    fn new_best(&mut self, k: usize, cut: &Cut) {
        self.best_categorical = matches!(self.spans[k], Span::Categories { .. });
        if self.best_categorical {
            let s = &mut *self.s;
            s.best_categories.clone_from(&s.search.categories.left);
        }
        self.best_in_batch = Some(k);
        self.best_threshold = cut.threshold;
        self.best_missing_left = cut.missing == Missing::Left;
        self.best_nan_code = R::KIND.nan_bin() && cut.missing != Missing::Unseen;
    }

    #[inline(always)]
    fn apply(&mut self, feature: u32, cut: Cut, _unsettled: &[u32]) -> ChosenSplit {
        let (s, unit) = (&mut *self.s, self.ctx.unit_weights);
        let (buf, t, rows) = (&mut s.partition_buf, cut.threshold, &mut *self.rows);
        let ml = cut.missing == Missing::Left;
        let n_left = match self.best_in_batch.map(|k| (k, self.spans[k])) {
            Some((_, Span::Values { column, .. }))
                if R::KIND.nan_bin() && cut.missing != Missing::Unseen =>
            {
                // Codes whose node rows include the missing-values bin.
                let xf = &s.batch[column];
                partition_rows(cut.n_left, rows, buf, unit, |r| {
                    goes_left(nan_bins::code_value(xf[r]), t, ml)
                })
            }
            Some((_, Span::Values { column, .. })) => {
                let xf = &s.batch[column];
                // The side made a constant, so that the loop compares once per row.
                if ml {
                    partition_rows(cut.n_left, rows, buf, unit, |r| {
                        goes_left(xf[r].to_f64(), t, true)
                    })
                } else {
                    partition_rows(cut.n_left, rows, buf, unit, |r| {
                        goes_left(xf[r].to_f64(), t, false)
                    })
                }
            }
            Some((_, Span::Categories { column, .. })) => {
                let (xf, set) = (&s.batch[column], &s.best_categories);
                let nan_bin = self.best_nan_code;
                partition_rows(cut.n_left, rows, buf, unit, |r| {
                    category_left(category_value(xf[r], nan_bin), set, ml)
                })
            }
            Some((k, Span::Codes { .. })) => {
                // The codes that go left: those of the levels that do.
                let last = last_code_left(self.cols.levels(feature), t) as u8;
                let codes = &s.codes[k];
                partition_rows(cut.n_left, rows, buf, unit, |r| codes[r] <= last)
            }
            Some((k, Span::Wide { .. })) => {
                let last = last_code_left(self.cols.wide_levels(feature), t) as u16;
                let codes = &s.wide[k];
                partition_rows(cut.n_left, rows, buf, unit, |r| codes[r] <= last)
            }
            Some((_, Span::Kept { .. })) => {
                let flags = &mut s.best_left;
                if let Some(levels) = self.cols.levels {
                    mark_kept_left(levels, feature as usize, t, rows.samples, flags);
                }
                partition_rows(cut.n_left, rows, buf, unit, |r| flags[r] != 0)
            }
            Some((k, Span::Entries { .. })) => {
                let flags = &mut s.best_left;
                mark_entries_left(&s.entries[k], rows.samples.len(), t, flags);
                partition_rows(cut.n_left, rows, buf, unit, |r| flags[r] != 0)
            }
            // A Zero span is constant, so never the best: the flags are the best's.
            Some((_, Span::Zero)) | None => {
                let flags = &s.best_left;
                partition_rows(cut.n_left, rows, buf, unit, |r| flags[r] != 0)
            }
        };
        ChosenSplit {
            feature,
            threshold: match self.best_categorical {
                true => CATEGORY_SET,
                false => cut.threshold,
            },
            n_left,
            missing: cut.missing,
        }
    }
}

/// Draws candidate features for the node, gathers and searches them with `R` (reading
/// those whose bins the node keeps from `kept`), and returns the best split found (already
/// applied to `rows`), with the new length of the constant prefix of `features`.
pub(crate) fn find_split<T: Feature, C: Criterion, R: ThresholdRule>(
    cols: Columns<'_, T>,
    node: Node<'_, '_, T, C>,
    draw: NodeDraw<'_>,
    kept: Option<Kept<'_>>,
) -> (Option<ChosenSplit>, usize) {
    node.s.node_features.mark(cols.x, node.rows.samples);
    if cols.x.is_sparse() {
        node.s.node_rows.mark(cols.x.n_rows(), node.rows.samples);
    }
    match kept {
        // Two sources, so that the nodes without kept bins search as if none existed.
        Some(_) => draw_gathered::<T, C, R, true>(cols, node, kept, draw),
        None => draw_gathered::<T, C, R, false>(cols, node, None, draw),
    }
}

/// [`find_split`]'s draw, from the source with (`KEPT`) or without kept bins.
pub(in crate::tree::split) fn draw_gathered<
    T: Feature,
    C: Criterion,
    R: ThresholdRule,
    const KEPT: bool,
>(
    cols: Columns<'_, T>,
    node: Node<'_, '_, T, C>,
    kept: Option<Kept<'_>>,
    draw: NodeDraw<'_>,
) -> (Option<ChosenSplit>, usize) {
    let Node { ctx, s, rows } = node;
    let lo = T::default();
    let mut source = Gathered::<T, C, R, KEPT> {
        cols,
        ctx,
        s,
        rows,
        spans: [Span::Values {
            column: 0,
            lo,
            hi: lo,
            nan: false,
        }; MAX_BATCH],
        drawn: [0; MAX_BATCH],
        best_in_batch: None,
        best_threshold: 0.0,
        best_missing_left: false,
        best_nan_code: false,
        best_categorical: false,
        kept,
        rule: std::marker::PhantomData,
    };
    draw_split(&mut source, draw)
}

//! The Extra-Trees search: one threshold drawn uniformly in `[min, max)` of a candidate's
//! values in the node, from the tree's RNG between the draws of the candidates.

use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::{weight_if_le, Criterion};
use crate::tree::split::draw::draw_threshold;
use crate::tree::split::read::sparse_gather::{sums_left, Entries};
use crate::tree::split::rules::search_written_out;
use crate::tree::split::rules::{RuleKind, Scoring, ThresholdRule};
use crate::tree::split::SearchBufs;
use crate::tree::split::{Cut, NodeCtx, NodeRows};
use crate::tree::{goes_left, Missing};

/// Extra-Trees: one threshold uniform in `[min, max)` of the node values.
pub(crate) struct RandomThreshold;

/// The Extra-Trees cut of a candidate whose value at the node's row `j` is `value(j)`,
/// between `lo` and `hi`: one threshold drawn, the left sums, the leaf constraints and the
/// proxy. Values gathered into a column ([`RandomThreshold::search`]) and values read
/// straight from X ([`crate::tree::split::source::direct`]) share it, so both draw and sum alike.
#[inline(always)]
pub(in crate::tree::split) fn random_cut<T: Feature, C: Criterion>(
    value: impl Fn(usize) -> f64,
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    (lo, hi): (f64, f64),
    rng: &mut TreeRng,
) -> Option<Cut> {
    let t = draw_threshold(lo, hi, rng);
    if ctx.unit_weights {
        // The same sums (w = 1 exactly), without loading the weights.
        ctx.crit.count_left(&mut s.left, rows.ys, rows.ws, |j| {
            goes_left(value(j), t, false)
        });
    } else {
        ctx.crit
            .accumulate_weighted(&mut s.left, rows.ys, rows.ws, |j, w| {
                weight_if_le(value(j), t, w)
            });
    }
    // Unit weights sum to the left count exactly. Otherwise: t is in [min, max), so the
    // minimum goes left and the maximum right, and the count matters only when leaves need
    // more than one sample.
    let n = rows.samples.len();
    let n_left = if ctx.unit_weights {
        Some(s.left[0] as usize)
    } else if ctx.min_samples_leaf > 1 {
        Some((0..n).filter(|&j| goes_left(value(j), t, false)).count())
    } else {
        None
    };
    if !ctx.admissible(n_left.unwrap_or(1), n, &s.left) {
        return None;
    }
    let proxy = ctx.crit.proxy(ctx.total, &s.left);
    C::allows(proxy).then_some(Cut {
        proxy,
        threshold: t,
        n_left,
        missing: Missing::Unseen,
    })
}

impl ThresholdRule for RandomThreshold {
    const KIND: RuleKind = RuleKind::Random;

    // LLVM stopped inlining it into the draw loop once the impl grew the sparse and
    // absolute-error searches (BENCHMARKS.md, issue #20 guard rail).
    #[inline(always)]
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        (lo, hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, rng, ..
        } = q;
        if let Some(ys) = ctx.crit.order_statistic(rows.ys) {
            return crate::tree::split::scan::median::random(
                xf,
                ys,
                rows.ws,
                s,
                ctx,
                (lo, hi, false),
                rng,
            );
        }
        let value = |j: usize| xf[j].to_f64();
        random_cut(value, s, ctx, rows, (lo.to_f64(), hi.to_f64()), rng)
    }

    /// A random set of the categories present (Geurts et al. 2006).
    fn search_categories<T: Feature, C: Criterion>(
        xf: &[T],
        nan_bin: bool,
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, rng, ..
        } = q;
        let values = (xf, nan_bin);
        crate::tree::split::scan::categories::random_categories(
            values,
            &mut s.categories,
            ctx,
            rows,
            rng,
        )
    }

    /// Reads only the entries when every sum is whole: the zeros' sums are the node's
    /// total minus the entries' (`sparse_gather::sums_left`), exactly the dense sums.
    fn search_entries<T: Feature, C: Criterion>(
        entries: &Entries<T>,
        (lo, hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        if !q.ctx.whole_sums {
            return search_written_out::<Self, T, C>(entries, (lo, hi), q);
        }
        let Scoring {
            s, ctx, rows, rng, ..
        } = q;
        let t = draw_threshold(lo.to_f64(), hi.to_f64(), rng);
        let sums = (&mut s.left[..], &mut s.stored[..]);
        let n_left = sums_left(entries, t, ctx.crit, (rows.ys, rows.ws), ctx.total, sums);
        if !ctx.admissible(n_left, rows.samples.len(), &s.left) {
            return None;
        }
        let proxy = ctx.crit.proxy(ctx.total, &s.left);
        C::allows(proxy).then_some(Cut {
            proxy,
            threshold: t,
            n_left: Some(n_left),
            missing: Missing::Unseen,
        })
    }

    fn search_missing<T: Feature, C: Criterion>(
        xf: &[T],
        (lo, hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, rng, ..
        } = q;
        if let Some(ys) = ctx.crit.order_statistic(rows.ys) {
            return crate::tree::split::scan::median::random(
                xf,
                ys,
                rows.ws,
                s,
                ctx,
                (lo, hi, true),
                rng,
            );
        }
        crate::tree::split::scan::missing::random_with_missing(xf, s, ctx, rows, lo, hi, rng)
    }
}

//! The searches of a gathered candidate whose values at the node include missing values
//! (NaN), with scikit-learn 1.9's rules. They run only for such candidates: a fit on data
//! without NaN never reaches this module, so its trees and its RNG stream are unchanged.
//!
//! * Exact ([`best_with_missing`]): the non-missing values are sorted and every cut between
//!   two consecutive distinct ones is scored twice, first with every NaN row on the right,
//!   then on the left; then the split "non-missing left, missing right" (threshold +∞).
//!   Thresholds are mid-points of non-missing values. Candidates are scored in that order
//!   and ties keep the first ([`crate::tree::split::better`]), as scikit-learn's strict `>` does.
//! * Random ([`random_with_missing`]): the threshold is drawn exactly as without NaN,
//!   uniformly between the min and max of the non-missing values, and then one more draw
//!   (`rng.below(2) == 1`: left) sends every NaN row to one side. scikit-learn draws the
//!   side first; drawing it second keeps the stream of a node without NaN untouched.
//!
//! A candidate constant on its non-missing values (or all NaN) is constant, as in
//! scikit-learn: "missing or not" alone is never a split.

use crate::data::midpoint;
use crate::data::sort::sort_packed;
use crate::data::widen;
use crate::data::{Feature, Packed};
use crate::rng::TreeRng;
use crate::tree::criterion::{weight_if_le, weight_if_not_gt, Criterion};
use crate::tree::split::draw::{draw_missing_left, draw_threshold};
use crate::tree::split::scan::rows::{scan_rows_after, Start};
use crate::tree::split::SearchBufs;
use crate::tree::split::{better, with_left_sums, BestCut, Cut, NodeCtx, NodeRows};
use crate::tree::{goes_left, Missing};

/// Min and max of the non-missing values of `xf`, and whether any is missing. With no
/// non-missing value the bounds are equal (a constant candidate).
pub(in crate::tree::split) fn bounds<T: Feature>(xf: &[T]) -> (T, T, bool) {
    let mut it = xf.iter().copied().filter(|v| !v.to_f64().is_nan());
    let Some(first) = it.next() else {
        return (T::default(), T::default(), !xf.is_empty());
    };
    let (mut lo, mut hi) = (first, first);
    for v in it {
        widen(&mut lo, &mut hi, v);
    }
    let any = xf.iter().any(|v| v.to_f64().is_nan());
    (lo, hi, any)
}

/// The exact search of a candidate with NaN at the node (see the module docs).
pub(in crate::tree::split) fn best_with_missing<T: Feature, C: Criterion>(
    xf: &[T],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    bar: f64,
) -> Option<Cut> {
    let (ys, ws, n) = (&*rows.ys, &*rows.ws, xf.len());
    let packed = &mut s.packed;
    packed.clear();
    let present = xf.iter().enumerate().filter(|(_, v)| !v.to_f64().is_nan());
    packed.extend(present.map(|(k, v)| v.pack(k as u32)));
    sort_packed(packed, &mut s.radix);
    let m = packed.len();
    // The NaN rows' statistics, added to the left side in the second pass.
    let mut miss = vec![0.0; s.left.len()];
    let mut w_miss = 0.0;
    for (k, v) in xf.iter().enumerate() {
        if v.to_f64().is_nan() {
            ctx.crit.add_for_proxy(&mut miss, ys[k], ws[k]);
            w_miss += ws[k];
        }
    }
    miss[0] = w_miss;
    let n_miss = n - m;
    let packed = &*packed;
    let at = |i: usize| {
        let k = packed[i].position() as usize;
        (xf[k], k)
    };
    let cut = |a: T, b: T| midpoint(a.to_f64(), b.to_f64());
    let pass = |left: &mut [f64], missing_left: bool, bar: f64| {
        let start = match missing_left {
            true => Start {
                rows: n_miss,
                sums: Some(&miss),
            },
            false => Start::EMPTY,
        };
        with_left_sums!(ctx.crit, left => {
            scan_rows_after::<T, C>(start, (m, n), at, (ys, ws), left, ctx, bar, cut)
        })
    };
    // Every non-missing row left, every NaN row right: summed in the rows' order.
    let apart = |left: &mut [f64], bar: f64| {
        let mut scan = BestCut::above(bar);
        left.fill(0.0);
        let mut wl = 0.0;
        for (k, v) in xf.iter().enumerate() {
            if !v.to_f64().is_nan() {
                ctx.crit.add_for_proxy(left, ys[k], ws[k]);
                wl += ws[k];
            }
        }
        left[0] = wl;
        if n_miss >= ctx.min_samples_leaf && scan.worth(ctx, m, left) {
            scan.offer(ctx, left, f64::INFINITY, m);
        }
        scan.cut()
    };
    three_way(&mut s.left, bar, pass, apart)
}

/// The best of the three searches of a candidate with NaN rows at the node, in
/// scikit-learn's order, ties keeping the first ([`better`]): `pass(left, false, bar)`
/// with every NaN row on the right, `pass(left, true, bar)` on the left, then
/// `apart(left, bar)`, the cut "non-missing left, missing right" (threshold +∞); each is
/// asked only for cuts above the best so far, with `left` as its sums' scratch. The exact
/// search of values and the histogram search of bins share it.
#[inline(always)]
pub(crate) fn three_way(
    left: &mut [f64],
    bar: f64,
    mut pass: impl FnMut(&mut [f64], bool, f64) -> Option<Cut>,
    apart: impl FnOnce(&mut [f64], f64) -> Option<Cut>,
) -> Option<Cut> {
    let mut best: Option<Cut> = None;
    let keep = |cut: Option<Cut>, missing: Missing, best: &mut Option<Cut>| {
        if let Some(c) = cut {
            if best.is_none_or(|b| better(c.proxy, b.proxy)) {
                *best = Some(Cut { missing, ..c });
            }
        }
    };
    for missing_left in [false, true] {
        let found = pass(left, missing_left, best.map_or(bar, |b| b.proxy));
        keep(found, Missing::side(missing_left), &mut best);
    }
    let found = apart(left, best.map_or(bar, |b| b.proxy));
    keep(found, Missing::Right, &mut best);
    best
}

/// The Extra-Trees search of a candidate with NaN at the node (see the module docs):
/// `lo < hi` are the bounds of its non-missing values.
#[allow(clippy::too_many_arguments)]
pub(in crate::tree::split) fn random_with_missing<T: Feature, C: Criterion>(
    xf: &[T],
    s: &mut SearchBufs<T>,
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    lo: T,
    hi: T,
    rng: &mut TreeRng,
) -> Option<Cut> {
    let t = draw_threshold(lo.to_f64(), hi.to_f64(), rng);
    let missing_left = draw_missing_left(rng);
    let side = |v: f64, w: f64| {
        if missing_left {
            weight_if_not_gt(v, t, w)
        } else {
            weight_if_le(v, t, w)
        }
    };
    ctx.crit
        .accumulate_weighted(&mut s.left, rows.ys, rows.ws, |j, w| {
            side(xf[j].to_f64(), w)
        });
    let n_left = xf
        .iter()
        .filter(|v| goes_left(v.to_f64(), t, missing_left))
        .count();
    if !ctx.admissible(n_left, rows.samples.len(), &s.left) {
        return None;
    }
    Some(Cut {
        proxy: ctx.crit.proxy(ctx.total, &s.left),
        threshold: t,
        n_left: Some(n_left),
        missing: Missing::seen(true, missing_left),
    })
}

//! The one row scan: a candidate's rows in increasing order of their key (a value, a code
//! or a rank), added one by one to the left side's sums, and at the end of each run of
//! equal keys the cut before the next key offered to [`BestCut`].
//!
//! Every search that reads rows in order calls it: the sorted values and counted codes of
//! the exact rule ([`crate::tree::split::rules::exact`]), its passes over the values
//! present beside NaN rows ([`crate::tree::split::scan::missing`]), the code and rank lists
//! ([`crate::tree::split::source::listed`], [`crate::tree::split::source::few`]) and the
//! nodes of two rows ([`crate::tree::split::source::pair`]). So they all sum the same rows
//! in the same order, and their cuts agree bit for bit.

use crate::tree::criterion::Criterion;
use crate::tree::split::{BestCut, Cut, NodeCtx};

/// What is on the left side before the scan's first row: nothing, or the NaN rows of a
/// pass that sends them left, with their sums.
#[derive(Clone, Copy)]
pub(crate) struct Start<'a> {
    /// Rows already on the left.
    pub rows: usize,
    /// Their sums (as [`Criterion::add_for_proxy`] writes them, the weight first); None:
    /// zeros.
    pub sums: Option<&'a [f64]>,
}

impl Start<'_> {
    /// An empty left side.
    pub(crate) const EMPTY: Start<'static> = Start {
        rows: 0,
        sums: None,
    };
}

/// Scores the cut between every two consecutive distinct keys of the `n` rows of a node,
/// given in increasing (key, position) order: `at(i)` is the `i`-th row's key and its
/// index in `ys` and `ws`. The rows are summed into `left` one by one, or (`BY_BIN`) run
/// by run into `run`, each run joining `left` at its last row (the histogram search's
/// order). Cuts leave at least `min_samples_leaf` rows on the right, and only those above
/// `bar` are scored (see [`BestCut`]); `cut(a, b)` is the threshold between keys `a` and
/// `b`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn scan_rows<K: PartialOrd + Copy, C: Criterion, const BY_BIN: bool>(
    n: usize,
    at: impl Fn(usize) -> (K, usize),
    rows: (&[C::Y], &[f64]),
    (left, run): (&mut [f64], &mut [f64]),
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(K, K) -> f64,
) -> Option<Cut> {
    left.fill(0.0);
    run.fill(0.0);
    // Cuts leave at least min_samples_leaf rows on the right.
    let last = n.saturating_sub(ctx.min_samples_leaf.max(1));
    scan::<K, C, BY_BIN>((last, 0, 0.0), at, rows, (left, run), ctx, bar, cut)
}

/// [`scan_rows`] of the `m` rows with a key among the node's `n`, after `start`: the rows
/// already on the left and their sums (the NaN rows of a pass that sends them left). The
/// rows after the scan's count on the right.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn scan_rows_after<K: PartialOrd + Copy, C: Criterion>(
    start: Start<'_>,
    (m, n): (usize, usize),
    at: impl Fn(usize) -> (K, usize),
    rows: (&[C::Y], &[f64]),
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(K, K) -> f64,
) -> Option<Cut> {
    match start.sums {
        Some(sums) => left.copy_from_slice(&sums[..left.len()]),
        None => left.fill(0.0),
    }
    let room = (n - start.rows).saturating_sub(ctx.min_samples_leaf);
    let last = m.saturating_sub(1).min(room);
    if m == 0 {
        return None;
    }
    let first = (last, start.rows, left[0]);
    scan::<K, C, false>(first, at, rows, (left, &mut []), ctx, bar, cut)
}

/// The loop of [`scan_rows`]: rows `0..last` of the order, after `n0` rows of weight `w0`
/// already on the left.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn scan<K: PartialOrd + Copy, C: Criterion, const BY_BIN: bool>(
    (last, n0, w0): (usize, usize, f64),
    at: impl Fn(usize) -> (K, usize),
    (ys, ws): (&[C::Y], &[f64]),
    (left, run): (&mut [f64], &mut [f64]),
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(K, K) -> f64,
) -> Option<Cut> {
    let mut best = BestCut::above(bar);
    let mut wl = w0;
    let mut current = at(0);
    for i in 0..last {
        let (v, k) = current;
        if BY_BIN {
            let (y, w) = (ys[k], ws[k]);
            current = at(i + 1);
            run[0] += w;
            ctx.crit.add_for_proxy(run, y, w);
            // The run joins the left side at its last row: `r · 1` or `r · 0`, exactly.
            let joins = f64::from(u8::from(current.0 > v));
            for (l, r) in left.iter_mut().zip(run.iter_mut()) {
                *l += *r * joins;
                *r -= *r * joins;
            }
        } else {
            // The row's sums first, then the next key: in this order the sorted scan of
            // values compiled to 9 % fewer instructions (callgrind, BENCHMARKS.md #51).
            let w = ws[k];
            wl += w;
            ctx.crit.add_for_proxy(left, ys[k], w);
            left[0] = wl;
            current = at(i + 1);
        }
        let next = current.0;
        let n_left = n0 + i + 1;
        if (next > v) & best.worth(ctx, n_left, left) {
            best.offer(ctx, left, cut(v, next), n_left);
        }
    }
    best.cut()
}

//! Scoring one feature's cuts from bins of its codes: [`add_rows`] sums rows into bins
//! (the summing passes are in [`sums`]), [`scan_occupied`] scores a gathered candidate
//! from the bins its rows occupy, and [`scan_bins`] scans a node's own bins
//! ([`crate::tree::split::state::node_bins::NodeBins`]). A bin is the weight, the
//! criterion's sums that its proxy reads ([`Criterion::proxy_len`] slots with the weight)
//! and the row count of the rows with one code; every boundary between non-empty bins is a
//! cut.
//!
//! Two scans serve every bin search: [`scan_codes`] visits the non-empty codes ([`Bitmap`]
//! of a gathered candidate's codes, or [`dense`] kept bins) and offers the cut below each
//! at `cut(a, b)`, the threshold the rule chooses between the codes (a mid-point of
//! levels, or the code below); [`scan_dense`] walks every bin of a range, the code below
//! each cut its threshold, folding empty bins in branch-free (a node's subtracted bins) or
//! skipping them (the NaN passes). Their cuts are the same where both apply (a range's
//! ends are non-empty); they differ in what they cost on which bins.

use crate::data::Feature;
use crate::tree::criterion::{Criterion, LANES};
use crate::tree::split::scan::rows::Start;
use crate::tree::split::{with_left_sums, BestCut, Cut, NodeCtx};

mod codes;
mod sums;

pub(crate) use self::codes::{dense, Bitmap};
pub(crate) use self::sums::{add_row, add_rows, add_rows_at, add_whole_rows};
use self::sums::{add_rows_laned, add_rows_marked, LANED_ROWS_PER_CODE};

/// Bin codes are bytes: a feature has at most this many bins.
pub(crate) const N_CODES: usize = 256;

/// [`scan_occupied`] of codes between `lo` and `lo + 63` (`rows`: codes, targets,
/// weights), the bitmap made in the pass that fills the bins; without `COUNTED`, the bins
/// hold the criterion's sums only ([`add_rows_marked`]).
#[inline(always)]
fn scan_marked<T: Feature, C: Criterion, const COUNTED: bool>(
    table: &mut [f64],
    lo: usize,
    (xf, ys, ws): (&[T], &[C::Y], &[f64]),
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    let bits = [add_rows_marked::<T, C, COUNTED>(
        table, lo, xf, ys, ws, ctx.crit,
    )];
    let (occupied, n) = ((&bits[..], lo), xf.len());
    with_left_sums!(ctx.crit, left => {
        scan_occupied_into::<C, 1, COUNTED>(table, occupied, n, left, ctx, bar, cut)
    })
}

/// The best cut between the `n_bins` bins of one feature (codes `lo..`) of a node of `n`
/// rows: every boundary between non-empty bins is scored, and the threshold is the code
/// below it.
pub(crate) fn scan_bins<C: Criterion>(
    bins: &[f64],
    lo: usize,
    n_bins: usize,
    n: usize,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
) -> Option<Cut> {
    with_left_sums!(ctx.crit, left => {
        scan_dense::<C, true>((bins, lo, n_bins), n, Start::EMPTY, left, ctx, bar)
    })
}

/// The best cut of one feature of a node from its gathered codes `xf`: the rows are summed
/// into the bins of the codes they occupy, which a bitmap then visits in code order, so
/// the work is linear in the rows and the occupied bins, whatever the bin count, and needs
/// no sort. The cut between occupied codes `a < b` has threshold `cut(a, b)`. `table`
/// holds zeroed bins between calls: each occupied bin is cleared as it is scanned.
///
/// This replaced two searches: a sort of the codes for nodes with fewer rows than bins
/// between their min and max code, and a scan of every one of those bins for the others.
/// The cuts are the same; the sums are the dense scan's, and the sort's for counts and
/// integer weights (other sums differ from the sort's by rounding only), with fewer
/// mispredicted branches.
///
/// When every sum is whole ([`NodeCtx::whole_sums`]), the rows are several per code and
/// the criterion allows it ([`Criterion::LANED_BINS`]), each code has [`LANES`] bins, row
/// `j` summed into lane `j % LANES`: consecutive rows of one code (most rows, on a column
/// of few values) then add to different bins instead of each waiting for the previous
/// row's store. Whole sums are exact in any order, so the lanes merged give the one bin's
/// sums, bit for bit.
///
/// With `PARTITION_COUNTS` (the caller's partition counts the left rows of a cut whose
/// [`Cut::n_left`] is None), whole class counts ([`Criterion::WEIGHT_IS_SUM`]) with
/// leaves of one row allowed add each row's class count only: no weight, no row count.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_occupied<T: Feature, C: Criterion, const PARTITION_COUNTS: bool>(
    table: &mut Vec<f64>,
    xf: &[T],
    (lo, hi): (usize, usize),
    ys: &[C::Y],
    ws: &[f64],
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    let n = xf.len();
    let left = &mut left[..ctx.crit.proxy_len()];
    if !C::LANED_BINS && hi - lo < 64 {
        // Never laned (classification), codes within one word: the bitmap is made in the
        // pass that fills the bins.
        let size = N_CODES * (left.len() + 1);
        if table.len() < size {
            table.resize(size, 0.0);
        }
        // Each row adds to its class's count only; a code's weight is then the sum of its
        // counts (exact, being whole). The exact search's partition counts the left rows
        // in a pass over one column's codes.
        let counts_only =
            PARTITION_COUNTS && C::WEIGHT_IS_SUM && ctx.whole_sums && ctx.min_samples_leaf <= 1;
        let rows = (xf, ys, ws);
        return match counts_only {
            true => scan_marked::<T, C, false>(table, lo, rows, left, ctx, bar, cut),
            false => scan_marked::<T, C, true>(table, lo, rows, left, ctx, bar, cut),
        };
    }
    // The bitmap of codes `lo..=hi`, bit `c - lo` for code `c`.
    let mut occupied = [0u64; N_CODES / 64];
    if hi - lo < 64 {
        // One word (most nodes of columns with few levels), kept in a register: in memory,
        // each row's OR waited for the previous row's store to the same word.
        let mut bits = 0u64;
        for v in xf {
            bits |= 1 << (v.code() - lo);
        }
        occupied[0] = bits;
    } else {
        for v in xf {
            let c = v.code() - lo;
            occupied[c / 64] |= 1 << (c % 64);
        }
    }
    let n_occupied: usize = occupied.iter().map(|w| w.count_ones() as usize).sum();
    let laned = C::LANED_BINS && ctx.whole_sums && n >= LANED_ROWS_PER_CODE * n_occupied;
    let lanes = if laned { LANES } else { 1 };
    let size = N_CODES * lanes * (left.len() + 1);
    if table.len() < size {
        table.resize(size, 0.0);
    }
    let occupied = (&occupied[..], lo);
    match laned {
        true => {
            add_rows_laned::<T, C, false>(table, 0, xf, ys, ws, ctx.crit);
            with_left_sums!(ctx.crit, left => {
                scan_occupied_into::<C, LANES, true>(table, occupied, n, left, ctx, bar, cut)
            })
        }
        false => {
            add_rows(table, 0, xf, ys, ws, ctx.crit);
            with_left_sums!(ctx.crit, left => {
                scan_occupied_into::<C, 1, true>(table, occupied, n, left, ctx, bar, cut)
            })
        }
    }
}

/// [`scan_occupied`] of wide codes (`u16`, see [`crate::data::Wide`]) between `lo` and `hi`,
/// for sums that are whole ([`NodeCtx::whole_sums`]): the bitmap `bitmap` covers only
/// `lo..=hi`, and `table` (zero between calls) grows to `hi + 1` codes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_occupied_wide<C: Criterion>(
    table: &mut Vec<f64>,
    bitmap: &mut Vec<u64>,
    xf: &[u16],
    (lo, hi): (u16, u16),
    ys: &[C::Y],
    ws: &[f64],
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    let left = &mut left[..ctx.crit.proxy_len()];
    let first = usize::from(lo);
    bitmap.clear();
    bitmap.resize((usize::from(hi) - first) / 64 + 1, 0);
    for &v in xf {
        let c = usize::from(v) - first;
        bitmap[c / 64] |= 1 << (c % 64);
    }
    let n_occupied: usize = bitmap.iter().map(|w| w.count_ones() as usize).sum();
    let n = xf.len();
    let laned = C::LANED_BINS && ctx.whole_sums && n >= LANED_ROWS_PER_CODE * n_occupied;
    let lanes = if laned { LANES } else { 1 };
    let size = (usize::from(hi) + 1) * lanes * (left.len() + 1);
    if table.len() < size {
        table.resize(size, 0.0);
    }
    let occupied = (&bitmap[..], first);
    match laned {
        true => {
            add_rows_laned::<u16, C, false>(table, 0, xf, ys, ws, ctx.crit);
            with_left_sums!(ctx.crit, left => {
                scan_occupied_into::<C, LANES, true>(table, occupied, n, left, ctx, bar, cut)
            })
        }
        false => {
            add_rows(table, 0, xf, ys, ws, ctx.crit);
            with_left_sums!(ctx.crit, left => {
                scan_occupied_into::<C, 1, true>(table, occupied, n, left, ctx, bar, cut)
            })
        }
    }
}

/// [`scan_occupied`] with the left sums in `left`, from `L` lanes of bins per code: the
/// occupied codes of the bitmap `occupied` (from code `base` on) scanned by [`scan_codes`],
/// the lanes of each added to the left sums and cleared. Without `COUNTED`, the bins hold
/// the criterion's sums only: a code's weight is their sum ([`Criterion::WEIGHT_IS_SUM`]),
/// and the partition counts the cut's left rows.
#[inline(always)]
fn scan_occupied_into<C: Criterion, const L: usize, const COUNTED: bool>(
    table: &mut [f64],
    (occupied, base): (&[u64], usize),
    n: usize,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
) -> Option<Cut> {
    let k = left.len();
    let stride = k + 1;
    let codes = Bitmap::new(occupied, base);
    let add = |code: usize, left: &mut [f64]| {
        let mut rows = 0;
        let lanes = &mut table[code * L * stride..(code + 1) * L * stride];
        for stats in lanes.chunks_exact_mut(stride) {
            if !COUNTED {
                let mut w = 0.0;
                for (l, h) in left[1..].iter_mut().zip(&mut stats[1..k]) {
                    w += *h;
                    *l += *h;
                    *h = 0.0;
                }
                left[0] += w;
                continue;
            }
            rows += stats[k] as usize;
            // Added and cleared in one pass (a `fill` was a call to memset per bin).
            for (l, h) in left.iter_mut().zip(stats.iter_mut()) {
                *l += *h;
                *h = 0.0;
            }
            stats[k] = 0.0;
        }
        rows
    };
    scan_codes::<C, usize, COUNTED>(codes, n, left, ctx, bar, cut, add)
}

/// The one scan of bins by code: before each non-empty code of `codes` (with where its bins
/// are, `B`) but the first, the cut below it, at `cut(a, b)` between the last code added
/// `a` and it; then `add(bins, left)` adds the code's bins to the left sums and returns
/// their rows. Only cuts above
/// `bar` are scored (see [`BestCut`]). Without `COUNTED`, `add` counts no rows: every cut
/// leaves a row on each side (all a `min_samples_leaf` of 1 asks), and the cut's
/// [`Cut::n_left`] is None (the partition counts them).
#[inline(always)]
pub(crate) fn scan_codes<C: Criterion, B, const COUNTED: bool>(
    codes: impl Iterator<Item = (usize, B)>,
    n: usize,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
    cut: impl Fn(usize, usize) -> f64,
    mut add: impl FnMut(B, &mut [f64]) -> usize,
) -> Option<Cut> {
    left.fill(0.0);
    let mut n_left = 0;
    let mut best = BestCut::above(bar);
    let right_rows = ctx.min_samples_leaf.max(1);
    // The last code added to the left (none yet).
    let mut below = usize::MAX;
    for (code, bins) in codes {
        // Uncounted, both sides have rows: all that `min_samples_leaf` (1) asks.
        let (rows_left, rows_right) = match COUNTED {
            true => (n_left, n - n_left),
            false => (ctx.min_samples_leaf, right_rows),
        };
        if (below != usize::MAX) & (rows_right >= right_rows) & best.worth(ctx, rows_left, left) {
            best.offer(ctx, left, cut(below, code), n_left);
        }
        n_left += add(bins, left);
        below = code;
    }
    best.cut().map(|c| Cut {
        n_left: c.n_left.filter(|_| COUNTED),
        ..c
    })
}

/// The one scan of dense bins: the `n_bins` bins of one feature (codes `lo..`) of a node
/// of `n` rows, added to the left side in code order after `start` (the rows and sums
/// already on the left), and after each non-empty bin but the last the cut above it
/// (threshold: its code). Only cuts above `bar` are scored (see [`BestCut`]).
///
/// `MASKED` (a node's own bins, [`scan_bins`]): empty bins are folded in times 0 rather
/// than skipped, without a branch: a node's bins are often sparse, and whether the next one
/// is empty was a coin toss for the branch predictor (a subtracted empty bin may hold
/// rounding residue, which the 0 cancels). Otherwise they are skipped (the scans of a
/// candidate with NaN rows, [`crate::tree::split::scan::nan_bins`]).
#[inline(always)]
pub(crate) fn scan_dense<C: Criterion, const MASKED: bool>(
    (bins, lo, n_bins): (&[f64], usize, usize),
    n: usize,
    start: Start<'_>,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
) -> Option<Cut> {
    let k = left.len();
    let stride = k + 1;
    match start.sums {
        Some(sums) => left.copy_from_slice(&sums[..k]),
        None => left.fill(0.0),
    }
    let mut n_left = start.rows;
    let mut best = BestCut::above(bar);
    for (b, stats) in bins.chunks_exact(stride).take(n_bins - 1).enumerate() {
        let count = stats[k] as usize;
        if MASKED {
            let m = f64::from(u8::from(count > 0));
            n_left += count;
            for (l, h) in left.iter_mut().zip(stats) {
                *l += h * m;
            }
        } else {
            if count == 0 {
                continue;
            }
            n_left += count;
            for (l, h) in left.iter_mut().zip(stats) {
                *l += h;
            }
        }
        // The right side only loses rows from here.
        if n - n_left < ctx.min_samples_leaf {
            break;
        }
        if (count > 0) & best.worth(ctx, n_left, left) {
            best.offer(ctx, left, (lo + b) as f64, n_left);
        }
    }
    best.cut()
}

#[cfg(test)]
mod tests;

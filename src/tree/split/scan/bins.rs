//! Scoring one feature's cuts from bins of its codes: [`add_rows`] sums rows into bins
//! (the summing passes are in [`sums`]), [`scan_occupied`] scores a gathered candidate
//! from the bins its rows occupy, and [`scan_bins`] scans a node's own bins
//! ([`crate::tree::split::state::node_bins::NodeBins`]). A bin is the weight, the criterion's sums that its
//! proxy reads ([`Criterion::proxy_len`] slots with the weight) and the row count of the
//! rows with one code; every boundary between non-empty bins is a cut, and its threshold
//! is the code below it.

use crate::data::Feature;
use crate::rng::TreeRng;
use crate::tree::criterion::{Criterion, LANES};
use crate::tree::split::rules::{RuleKind, ThresholdRule};
use crate::tree::split::SearchBufs;
use crate::tree::split::{with_left_sums, BestCut, Cut, NodeCtx, NodeRows};

mod sums;

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
        scan_bins_into(bins, lo, n_bins, n, left, ctx, bar)
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
/// occupied codes in order, the lanes of each added to the left sums and cleared; the cut
/// below each code but the first is scored as [`scan_bins`] does, once the code above it
/// is known. `occupied` is a bitmap of the codes from `base` on. Without `COUNTED`, the
/// bins hold the criterion's sums only: a code's weight is their sum
/// ([`Criterion::WEIGHT_IS_SUM`]), every cut leaves a row on each side (which is all a
/// `min_samples_leaf` of 1 asks), and the partition counts the cut's left rows.
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
    left.fill(0.0);
    let mut n_left = 0;
    let mut best = BestCut::above(bar);
    let right_rows = ctx.min_samples_leaf.max(1);
    // The last code added to the left (none yet).
    let mut below = usize::MAX;
    for (word, &bits) in occupied.iter().enumerate() {
        let mut bits = bits;
        while bits != 0 {
            let code = base + word * 64 + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            // Uncounted, both sides have rows: all that `min_samples_leaf` (1) asks.
            let (rows_left, rows_right) = match COUNTED {
                true => (n_left, n - n_left),
                false => (ctx.min_samples_leaf, right_rows),
            };
            if (below != usize::MAX) & (rows_right >= right_rows) & best.worth(ctx, rows_left, left)
            {
                best.offer(ctx, left, cut(below, code), n_left);
            }
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
                n_left += stats[k] as usize;
                // Added and cleared in one pass (a `fill` was a call to memset per bin).
                for (l, h) in left.iter_mut().zip(stats.iter_mut()) {
                    *l += *h;
                    *h = 0.0;
                }
                stats[k] = 0.0;
            }
            below = code;
        }
    }
    best.cut().map(|c| Cut {
        n_left: c.n_left.filter(|_| COUNTED),
        ..c
    })
}

/// [`scan_bins`] with the left sums in `left`. Empty bins are folded in times 0 rather
/// than skipped, without a branch: a node's bins are often sparse, and whether the next
/// one is empty was a coin toss for the branch predictor (a subtracted empty bin may
/// hold rounding residue, which the 0 cancels).
#[inline(always)]
fn scan_bins_into<C: Criterion>(
    bins: &[f64],
    lo: usize,
    n_bins: usize,
    n: usize,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
) -> Option<Cut> {
    let k = left.len();
    let stride = k + 1;
    left.fill(0.0);
    let mut n_left = 0;
    let mut best = BestCut::above(bar);
    for (b, stats) in bins.chunks_exact(stride).take(n_bins - 1).enumerate() {
        let count = stats[k] as usize;
        let m = f64::from(u8::from(count > 0));
        n_left += count;
        for (l, h) in left.iter_mut().zip(stats) {
            *l += h * m;
        }
        if n - n_left < ctx.min_samples_leaf {
            break;
        }
        if (count > 0) & best.worth(ctx, n_left, left) {
            best.offer(ctx, left, (lo + b) as f64, n_left);
        }
    }
    best.cut()
}

/// Histogram CART on bin codes (`u8`): one pass fills per-bin statistics, then every
/// boundary between non-empty bins is scored; the threshold is a code.
pub(crate) struct HistThreshold;

impl ThresholdRule for HistThreshold {
    const KIND: RuleKind = RuleKind::Histogram;
    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        s: &mut SearchBufs<T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, C::Y>,
        bar: f64,
        lo: T,
        hi: T,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
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
        s: &mut SearchBufs<T>,
        ctx: &NodeCtx<'_, C>,
        rows: &NodeRows<'_, C::Y>,
        bar: f64,
        lo: T,
        hi: T,
        _rng: &mut TreeRng,
    ) -> Option<Cut> {
        let (ys, ws) = (&*rows.ys, &*rows.ws);
        let bounds = (lo.code(), hi.code());
        crate::tree::split::scan::nan_bins::search_gathered(
            &mut s.bins,
            &mut s.left,
            xf,
            bounds,
            ys,
            ws,
            ctx,
            bar,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::rng::TreeRng;
    use crate::tree::criterion::{Gini, SquaredError};
    use crate::tree::split::better;
    use crate::tree::split::scan::bins::*;

    /// The best cut by brute force: every code but the largest, the rows at or below it
    /// summed in position order, the first best in code order kept.
    fn best_cut_by_brute_force<C: Criterion>(
        codes: &[u8],
        ys: &[C::Y],
        ws: &[f64],
        ctx: &NodeCtx<'_, C>,
    ) -> Option<(f64, f64, usize)> {
        let mut distinct = codes.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let mut best: Option<(f64, f64, usize)> = None;
        for &c in &distinct[..distinct.len() - 1] {
            let mut left = vec![0.0; ctx.total.len()];
            let mut n_left = 0;
            for ((&v, &y), &w) in codes.iter().zip(ys).zip(ws) {
                if v <= c {
                    left[0] += w;
                    ctx.crit.add_for_proxy(&mut left, y, w);
                    n_left += 1;
                }
            }
            if !ctx.admissible(n_left, codes.len(), &left) {
                continue;
            }
            let proxy = ctx.crit.proxy(ctx.total, &left);
            if best.is_none_or(|(b, _, _)| better(proxy, b)) {
                best = Some((proxy, f64::from(c), n_left));
            }
        }
        best
    }

    /// Checks [`scan_occupied`] against the brute force on nodes of 1 to 1 000 rows over 3
    /// to 256 codes, through one table (which must come back zeroed), with sums declared
    /// whole or not (they are: the lanes of whole sums must not change a bit).
    fn check_occupied_scan<C: Criterion>(crit: &C, ys_of: impl Fn(&mut TreeRng) -> C::Y) {
        let mut rng = TreeRng::new(11);
        let mut table = Vec::new();
        for n in [1, 2, 3, 7, 40, 255, 256, 1000] {
            for spread in [3, 40, 256] {
                for (msl, min_w, whole_sums) in [
                    (1, 0.0, false),
                    (3, 0.0, false),
                    (1, 5.0, false),
                    (1, 0.0, true),
                    (3, 5.0, true),
                ] {
                    let codes: Vec<u8> = (0..n).map(|_| rng.below(spread) as u8).collect();
                    let ys: Vec<C::Y> = (0..n).map(|_| ys_of(&mut rng)).collect();
                    // Integer weights: every sum is exact in either order.
                    let ws: Vec<f64> = (0..n).map(|_| (1 + rng.below(3)) as f64).collect();
                    let mut total = vec![0.0; crit.stats_len()];
                    for (&y, &w) in ys.iter().zip(&ws) {
                        total[0] += w;
                        crit.add_for_proxy(&mut total, y, w);
                    }
                    let ctx = NodeCtx {
                        crit,
                        total: &total,
                        min_samples_leaf: msl,
                        min_weight_leaf: min_w,
                        unit_weights: false,
                        whole_sums,
                        mono: None,
                        sign: 0,
                    };
                    let mut left = vec![0.0; total.len()];
                    let lo = usize::from(*codes.iter().min().unwrap());
                    let hi = usize::from(*codes.iter().max().unwrap());
                    let mut scan = |partition_counts: bool| {
                        let scan = match partition_counts {
                            true => scan_occupied::<u8, C, true>,
                            false => scan_occupied::<u8, C, false>,
                        };
                        let (bounds, no_bar) = ((lo, hi), f64::NEG_INFINITY);
                        scan(
                            &mut table,
                            &codes,
                            bounds,
                            &ys,
                            &ws,
                            &mut left,
                            &ctx,
                            no_bar,
                            |a, _| a as f64,
                        )
                        .map(|c| (c.proxy, c.threshold, c.n_left))
                    };
                    let (got, counted) = (scan(true), scan(false));
                    let want = best_cut_by_brute_force(&codes, &ys, &ws, &ctx);
                    let case =
                        format!("n {n} spread {spread} msl {msl} min_w {min_w} whole {whole_sums}");
                    assert_eq!(counted, want.map(|(p, t, n)| (p, t, Some(n))), "{case}");
                    // The left rows are counted unless the partition may count them.
                    let uncounted = whole_sums && msl == 1 && C::WEIGHT_IS_SUM && hi - lo < 64;
                    let want = want.map(|(p, t, n)| (p, t, (!uncounted).then_some(n)));
                    assert_eq!(got, want, "{case}");
                    assert!(table.iter().all(|&b| b == 0.0), "bins left behind");
                }
            }
        }
    }

    #[test]
    fn occupied_bins_score_the_cuts_of_the_brute_force() {
        // The targets are passed to the scan directly, so the criteria hold none.
        let none: Vec<u32> = Vec::new();
        check_occupied_scan(&Gini::new(&none, 2), |r| r.below(2) as u32);
        check_occupied_scan(&Gini::new(&none, 5), |r| r.below(5) as u32);
        // Integer targets, so the sums of squares are exact too.
        check_occupied_scan(&SquaredError { y: &[] }, |r| r.below(50) as f64 - 20.0);
    }
}

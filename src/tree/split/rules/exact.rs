//! The exact (CART) search: a candidate's gathered values sorted, and the cut between
//! every two consecutive distinct values scored at their [`midpoint`].
//!
//! A candidate with lossless codes is not sorted by value: its rows are summed into one
//! bin per code when every sum is a whole number ([`NodeCtx::whole_sums`]: counts, or
//! integer weights and targets), whose sums are then those of the sorted scan in any
//! order; otherwise its codes are ordered by a counting pass over the node's code range
//! (sorted in tiny nodes), and the rows scanned in the order of the value sort. Either
//! way the cuts, their scores and thresholds are the value search's, bit for bit. With
//! whole sums and K ≥ p/2, larger nodes keep those bins, and subtract them
//! ([`crate::tree::split::state::kept_codes`]); with other sums, K ≥ p/2 and every column coded, small
//! subtrees are grown from lists of the codes, in the order of these scans
//! ([`crate::tree::split::source::listed`]).

use crate::data::sort::sort_packed;
use crate::data::{midpoint, Feature, Packed};
use crate::tree::criterion::Criterion;
use crate::tree::split::rules::{RuleKind, Scoring, ThresholdRule};
use crate::tree::split::scan::bins::{scan_occupied, scan_occupied_wide};
use crate::tree::split::scan::rows::scan_rows;
use crate::tree::split::{with_left_sums, Cut, NodeCtx, NodeRows};

/// CART: every mid-point between consecutive distinct sorted values.
pub(crate) struct BestThreshold;

impl ThresholdRule for BestThreshold {
    const KIND: RuleKind = RuleKind::Best;

    fn search<T: Feature, C: Criterion>(
        xf: &[T],
        (_lo, _hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, bar, ..
        } = q;
        if let Some(ys) = ctx.crit.order_statistic(rows.ys) {
            return crate::tree::split::scan::median::best(xf, ys, rows.ws, s, ctx);
        }
        let cut = |a: T, b: T| midpoint(a.to_f64(), b.to_f64());
        let keys = (&mut s.packed, &mut s.radix);
        best_sorted(xf, keys, &mut s.left, ctx, rows, bar, cut)
    }

    fn search_coded<T: Feature, C: Criterion>(
        codes: &[u8],
        levels: &[f64],
        (lo, hi): (u8, u8),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, bar, ..
        } = q;
        let cut = |a: usize, b: usize| midpoint(levels[a], levels[b]);
        if ctx.whole_sums {
            let (ys, ws) = (&*rows.ys, &*rows.ws);
            let bounds = (usize::from(lo), usize::from(hi));
            return scan_occupied::<u8, C, true>(
                &mut s.bins,
                codes,
                bounds,
                ys,
                ws,
                &mut s.left,
                ctx,
                bar,
                cut,
            );
        }
        let keys = (&mut s.code_keys, &mut s.code_radix);
        let cut = |a: u8, b: u8| cut(usize::from(a), usize::from(b));
        let (n, range) = (codes.len(), usize::from(hi - lo));
        if n >= COUNTING_MIN_ROWS && range < COUNTING_LEVELS_PER_ROW * n {
            let counts = (usize::from(lo), usize::from(hi), &mut s.counts);
            return best_counted(codes, counts, keys.0, &mut s.left, ctx, rows, bar, cut);
        }
        best_sorted(codes, keys, &mut s.left, ctx, rows, bar, cut)
    }

    fn search_wide<T: Feature, C: Criterion>(
        codes: &[u16],
        levels: &[f64],
        (lo, hi): (u16, u16),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, bar, ..
        } = q;
        // Wide codes are gathered only when every sum is whole (`gathered::wide_at`).
        let cut = |a: usize, b: usize| midpoint(levels[a], levels[b]);
        if usize::from(hi - lo) > WIDE_LEVELS_PER_ROW * codes.len() {
            // Few rows over many levels: scattered over bins, they cost more than a sort.
            let keys = (&mut s.wide_keys, &mut s.wide_radix);
            let cut = |a: u16, b: u16| cut(usize::from(a), usize::from(b));
            return best_sorted(codes, keys, &mut s.left, ctx, rows, bar, cut);
        }
        let (ys, ws) = (&*rows.ys, &*rows.ws);
        let (bins, bitmap) = (&mut s.bins, &mut s.occupied);
        scan_occupied_wide(
            bins,
            bitmap,
            codes,
            (lo, hi),
            ys,
            ws,
            &mut s.left,
            ctx,
            bar,
            cut,
        )
    }

    fn search_missing<T: Feature, C: Criterion>(
        xf: &[T],
        (_lo, _hi): (T, T),
        q: Scoring<'_, T, C>,
    ) -> Option<Cut> {
        let Scoring {
            s, ctx, rows, bar, ..
        } = q;
        if let Some(ys) = ctx.crit.order_statistic(rows.ys) {
            return crate::tree::split::scan::median::best_with_missing(xf, ys, rows.ws, s, ctx);
        }
        crate::tree::split::scan::missing::best_with_missing(xf, s, ctx, rows, bar)
    }
}

/// A node's wide codes are sorted instead of binned when the levels of their range
/// outnumber its rows this many times (ranger switches alike, at 50). Measured on RF
/// classification, 8 columns of `L` levels and `4 L` rows: with 600 and 3 000 levels the
/// bins at 16 were faster than at 1 and than the sort, with 15 000 no faster than the sort
/// at any ratio (BENCHMARKS.md, issue #20).
const WIDE_LEVELS_PER_ROW: usize = 16;

/// Sorts the gathered values (with the key buffers `keys`) and scores the cut between
/// every two consecutive distinct ones, at `cut(a, b)`.
#[inline(never)] // inlined, its scan compiled to more instructions per row (callgrind)
fn best_sorted<V: Feature, C: Criterion>(
    xf: &[V],
    (packed, radix): (&mut Vec<V::Packed>, &mut Vec<V::Packed>),
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    bar: f64,
    cut: impl Fn(V, V) -> f64,
) -> Option<Cut> {
    // Positions are distinct, so the order (value, position) is unique.
    packed.clear();
    packed.extend(xf.iter().enumerate().map(|(k, v)| v.pack(k as u32)));
    sort_packed(packed, radix);
    let packed = &*packed;
    let at = |i: usize| {
        let k = packed[i].position() as usize;
        (xf[k], k)
    };
    let n = xf.len();
    with_left_sums!(ctx.crit, left => {
        let ys_ws = (&*rows.ys, &*rows.ws);
        scan_rows::<V, C, false>(n, at, ys_ws, (left, &mut []), ctx, bar, cut)
    })
}

/// [`best_sorted`] of codes between `lo` and `hi`, ordered by [`counting_sort`] (with
/// its buffer `counts`) instead of sorted. A function of its own: sharing `best_sorted`'s
/// body changed how the sort's scan compiled (+2 % instructions on continuous columns).
#[inline(never)]
fn best_counted<V: Feature, C: Criterion>(
    xf: &[V],
    (lo, hi, counts): (usize, usize, &mut Vec<u32>),
    packed: &mut Vec<V::Packed>,
    left: &mut [f64],
    ctx: &NodeCtx<'_, C>,
    rows: &NodeRows<'_, C::Y>,
    bar: f64,
    cut: impl Fn(V, V) -> f64,
) -> Option<Cut> {
    counting_sort(xf, lo, hi, counts, packed);
    let packed = &*packed;
    let at = |i: usize| {
        let k = packed[i].position() as usize;
        (xf[k], k)
    };
    let n = xf.len();
    with_left_sums!(ctx.crit, left => {
        let ys_ws = (&*rows.ys, &*rows.ws);
        scan_rows::<V, C, false>(n, at, ys_ws, (left, &mut []), ctx, bar, cut)
    })
}

/// Codes whose sums are not whole are ordered by a counting pass over the node's code
/// range ([`counting_sort`]) from this many rows on, when the range spans fewer than
/// `COUNTING_LEVELS_PER_ROW` levels per row; otherwise (tiny nodes, or few rows over many
/// levels, where the pass over the range would dominate) by [`sort_packed`]. On
/// `quantized-reg` (RF, 60 trees, one thread) counting from 0, 4, 8, 16 and 32 rows took
/// 0.186-0.187, 0.182-0.185, 0.185-0.187, 0.197-0.198 and 0.205-0.206 s against the sort's
/// 0.212-0.215 (BENCHMARKS.md, issue #20).
const COUNTING_MIN_ROWS: usize = 4;
const COUNTING_LEVELS_PER_ROW: usize = 8;

/// The packed keys of codes `xf` (between `lo` and `hi`) in (code, position) order, which
/// [`sort_packed`] would give, by one counting pass over the codes' range (`counts`: its
/// buffer).
fn counting_sort<V: Feature>(
    xf: &[V],
    lo: usize,
    hi: usize,
    counts: &mut Vec<u32>,
    out: &mut Vec<V::Packed>,
) {
    counts.clear();
    counts.resize(hi - lo + 2, 0);
    for v in xf {
        counts[v.code() - lo + 1] += 1;
    }
    for c in 1..counts.len() {
        counts[c] += counts[c - 1];
    }
    out.clear();
    out.resize(xf.len(), xf[0].pack(0));
    for (k, v) in xf.iter().enumerate() {
        let slot = &mut counts[v.code() - lo];
        out[*slot as usize] = v.pack(k as u32);
        *slot += 1;
    }
}

#[cfg(test)]
mod tests {
    //! The coded searches ([`ThresholdRule::search_coded`]) against the value searches.
    use crate::rng::TreeRng;
    use crate::tree::criterion::{Gini, SquaredError};
    use crate::tree::split::rules::exact::*;
    use crate::tree::split::{RandomThreshold, SearchBufs};

    /// Searches one candidate as values and as codes, with the same RNG stream, and
    /// checks that both find the same cut, bit for bit.
    fn same_cut<C: Criterion, R: ThresholdRule>(
        crit: &C,
        ys: &[C::Y],
        ws: &[f64],
        rng: &mut TreeRng,
    ) {
        let n = ys.len();
        let spread = if rng.below(2) == 0 { 4 } else { 256 };
        let n_levels = 1 + rng.below(spread);
        let mut distinct: Vec<f32> = (0..n_levels)
            .map(|_| (rng.unit() * 20.0 - 10.0) as f32)
            .collect();
        distinct.sort_by(f32::total_cmp);
        distinct.dedup();
        let codes: Vec<u8> = (0..n).map(|_| rng.below(distinct.len()) as u8).collect();
        let values: Vec<f32> = codes.iter().map(|&c| distinct[c as usize]).collect();
        // Levels as the fit computes them: the f64 of each distinct value.
        let levels: Vec<f64> = distinct.iter().map(|&v| f64::from(v)).collect();
        let (lo, hi) = (*codes.iter().min().unwrap(), *codes.iter().max().unwrap());
        if hi == lo {
            return;
        }
        let mut total = vec![0.0; crit.stats_len()];
        crit.accumulate(&mut total, ys, ws);
        for (msl, whole) in [(1, false), (1, true), (3, false)] {
            let whole_sums = whole && crit.whole_sums(ys, ws);
            let ctx = NodeCtx {
                crit,
                total: &total,
                min_samples_leaf: msl,
                min_weight_leaf: 0.0,
                unit_weights: ws.iter().all(|&w| w == 1.0),
                whole_sums,
                mono: None,
                sign: 0,
            };
            let (mut samples, mut ys, mut ws) =
                ((0..n as u32).collect::<Vec<_>>(), ys.to_vec(), ws.to_vec());
            let rows = NodeRows {
                samples: &mut samples,
                ys: &mut ys,
                ws: &mut ws,
            };
            let seed = rng.next_u64();
            let mut s = SearchBufs::<f32>::new(total.len());
            let (vlo, vhi) = (
                values[codes.iter().position(|&c| c == lo).unwrap()],
                values[codes.iter().position(|&c| c == hi).unwrap()],
            );
            let bar = f64::NEG_INFINITY;
            let (mut rng_values, mut rng_codes) = (TreeRng::new(seed), TreeRng::new(seed));
            let (ctx, rows) = (&ctx, &rows);
            let q = Scoring {
                s: &mut s,
                ctx,
                rows,
                bar,
                rng: &mut rng_values,
            };
            let by_values = R::search(&values, (vlo, vhi), q);
            let q = Scoring {
                s: &mut s,
                ctx,
                rows,
                bar,
                rng: &mut rng_codes,
            };
            let by_codes = R::search_coded(&codes, &levels, (lo, hi), q);
            let bits = |c: Option<Cut>| c.map(|c| (c.proxy.to_bits(), c.threshold.to_bits()));
            let case = format!("n {n} levels {} msl {msl} whole {whole_sums}", levels.len());
            assert_eq!(bits(by_values), bits(by_codes), "{case}");
            // The coded search may leave the left rows for the partition to count.
            if let (
                Some(v),
                Some(Cut {
                    n_left: Some(k), ..
                }),
            ) = (by_values, by_codes)
            {
                assert_eq!(v.n_left, Some(k), "{case}");
            }
        }
    }

    #[test]
    fn codes_and_values_give_the_same_cut() {
        let mut rng = TreeRng::new(21);
        let none_u32: Vec<u32> = Vec::new();
        let gini = Gini::new(&none_u32, 3);
        let squared = SquaredError { y: &[] };
        for _ in 0..300 {
            let n = 2 + rng.below(600);
            let classes: Vec<u32> = (0..n).map(|_| rng.below(3) as u32).collect();
            let real: Vec<f64> = (0..n).map(|_| rng.unit() * 7.0 - 2.0).collect();
            let whole: Vec<f64> = (0..n).map(|_| rng.below(30) as f64 - 10.0).collect();
            let unit = vec![1.0; n];
            let counts: Vec<f64> = (0..n).map(|_| (1 + rng.below(3)) as f64).collect();
            let fractions: Vec<f64> = (0..n).map(|_| 0.1 + rng.unit()).collect();
            for ws in [&unit, &counts, &fractions] {
                same_cut::<_, BestThreshold>(&gini, &classes, ws, &mut rng);
                same_cut::<_, BestThreshold>(&squared, &real, ws, &mut rng);
                same_cut::<_, BestThreshold>(&squared, &whole, ws, &mut rng);
                same_cut::<_, RandomThreshold>(&gini, &classes, ws, &mut rng);
                same_cut::<_, RandomThreshold>(&squared, &real, ws, &mut rng);
            }
        }
    }
}

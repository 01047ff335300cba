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

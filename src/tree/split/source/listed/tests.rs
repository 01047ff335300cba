use crate::tree::criterion::{Gini, SquaredError};
use crate::tree::split::source::listed::*;
use crate::tree::split::state::code_lists::Item;
use crate::tree::split::{better, floor};

/// Random lists of `n` rows over `codes` codes, by weights drawn from `wmax` values.
fn lists(rng: &mut TreeRng, n: usize, codes: usize, wmax: usize) -> (Vec<Item>, Vec<f64>) {
    let mut items: Vec<Item> = (0..n).map(|k| Item::new(rng.below(codes), k)).collect();
    items.sort();
    let ws = (0..n).map(|_| (1 + rng.below(wmax)) as f64).collect();
    (items, ws)
}

/// The best cut of a scan of `items` that scores only cuts above `bar`.
fn run<C: Criterion>(
    items: &[Item],
    ys: &[C::Y],
    ws: &[f64],
    ctx: &NodeCtx<'_, C>,
    bar: f64,
) -> Option<Cut> {
    let (lo, hi) = (items[0].code(), items[items.len() - 1].code());
    let (mut left, mut run) = (vec![0.0; ctx.total.len()], vec![0.0; ctx.total.len()]);
    let by_row = items.len() < hi - lo + 1;
    let sums = (&mut left[..], &mut run[..]);
    search(items, by_row, ys, ws, sums, ctx, bar, |a, _| a as f64)
}

/// A list written into the other copy: its rows going left first, each side in list
/// order, whichever copy comes first in the buffer.
#[test]
fn partitions_into_the_other_copy_stably() {
    let mut rng = TreeRng::new(3);
    for trial in 0..200 {
        let (n, codes) = (1 + rng.below(60), 1 + rng.below(9));
        let (items, _) = lists(&mut rng, n, codes, 1);
        let goes_left: Vec<u8> = (0..n).map(|_| rng.below(2) as u8).collect();
        let side = |it: &&Item| goes_left[it.local()] == 1;
        let want: Vec<Item> = (items.iter().filter(side))
            .chain(items.iter().filter(|it| !side(it)))
            .copied()
            .collect();
        let n_left = items.iter().filter(side).count();
        let mut all = [items.clone(), vec![Item::new(0, 0); n]].concat();
        let (from, to) = match trial % 2 {
            0 => (0..n, n..2 * n),
            _ => {
                all.rotate_left(n);
                (n..2 * n, 0..n)
            }
        };
        let (src, dst) = read_write(&mut all, from.clone(), to.clone());
        partition_into(src, dst, n_left, &goes_left);
        assert_eq!(all[to], want[..], "trial {trial}");
        assert_eq!(all[from], items[..], "trial {trial}: the source is kept");
    }
}

/// The exact search's scan of a list (row by row, cuts at the levels' mid-points)
/// against its sorted scan of the values: the same cut, bit for bit, with real
/// targets and fractional weights, whose sums round by their order.
#[test]
fn exact_lists_scan_as_the_sorted_values() {
    use crate::data::midpoint;
    use crate::tree::split::rules::Scoring;
    use crate::tree::split::{BestThreshold, NodeRows};
    use crate::tree::split::{SearchBufs, ThresholdRule};
    let mut rng = TreeRng::new(8);
    for trial in 0..300 {
        let n = 2 + rng.below(if trial % 2 == 0 { 30 } else { 700 });
        let codes = 2 + rng.below(40);
        let (items, _) = lists(&mut rng, n, codes, 1);
        let levels: Vec<f64> = (0..256).map(|c| f64::from((c * c) as f32 * 0.37)).collect();
        let mut values = vec![0f32; n];
        for it in &items {
            values[it.local()] = levels[it.code()] as f32;
        }
        let ys: Vec<f64> = (0..n).map(|_| rng.unit() * 9.0 - 3.0).collect();
        let ws: Vec<f64> = (0..n).map(|_| 0.1 + rng.unit()).collect();
        let crit = SquaredError { y: &[] };
        let mut total = vec![0.0; crit.stats_len()];
        crit.accumulate(&mut total, &ys, &ws);
        let ctx = NodeCtx {
            crit: &crit,
            total: &total,
            min_samples_leaf: 1 + trial % 3,
            min_weight_leaf: 0.0,
            unit_weights: false,
            whole_sums: false,
            mono: None,
            sign: 0,
        };
        let cut = |a: usize, b: usize| midpoint(levels[a], levels[b]);
        let (mut left, mut run) = (vec![0.0; 3], vec![0.0; 3]);
        let sums = (&mut left[..], &mut run[..]);
        let listed = search(&items, true, &ys, &ws, sums, &ctx, f64::NEG_INFINITY, cut);
        let (mut samples, mut ys2, mut ws2) =
            ((0..n as u32).collect::<Vec<_>>(), ys.clone(), ws.clone());
        let rows = NodeRows {
            samples: &mut samples,
            ys: &mut ys2,
            ws: &mut ws2,
        };
        let (lo, hi) = (levels[items[0].code()], levels[items[n - 1].code()]);
        let q = Scoring {
            s: &mut SearchBufs::<f32>::new(3),
            ctx: &ctx,
            rows: &rows,
            bar: f64::NEG_INFINITY,
            rng: &mut TreeRng::new(0),
        };
        let sorted = BestThreshold::search(&values, (lo as f32, hi as f32), q);
        let bits = |c: Option<Cut>| c.map(|c| (c.proxy.to_bits(), c.threshold.to_bits(), c.n_left));
        assert_eq!(bits(listed), bits(sorted), "trial {trial}");
    }
}

/// A scan that skips the cuts below the floor of the node's best `g` finds the same
/// cut as a full scan whenever that cut beats `g`, and none that beats it otherwise:
/// with `g` at, just below and just above the full scan's best, and far from it.
#[test]
fn floored_scans_agree_with_full_scans_where_it_matters() {
    let mut rng = TreeRng::new(5);
    for trial in 0..400 {
        let n = 2 + rng.below(if trial % 2 == 0 { 40 } else { 600 });
        let codes = 2 + rng.below(255);
        let (items, ws) = lists(&mut rng, n, codes, 1 + trial % 3);
        let yr: Vec<f64> = (0..n).map(|_| (rng.unit() * 8.0).round() - 2.0).collect();
        let yc: Vec<u32> = (0..n).map(|_| rng.below(2 + trial % 3) as u32).collect();
        let (m, g) = (SquaredError { y: &yr }, Gini::new(&yc, 2 + trial % 3));
        check(&m, &items, &yr, &ws, trial);
        check(&g, &items, &yc, &ws, trial);
    }
    fn check<C: Criterion>(c: &C, items: &[Item], ys: &[C::Y], ws: &[f64], trial: usize) {
        let mut total = vec![0.0; c.stats_len()];
        c.accumulate(&mut total, ys, ws);
        let ctx = NodeCtx {
            crit: c,
            total: &total,
            min_samples_leaf: 1 + trial % 4,
            min_weight_leaf: (trial % 5) as f64,
            unit_weights: false,
            whole_sums: false,
            mono: None,
            sign: 0,
        };
        let Some(full) = run(items, ys, ws, &ctx, f64::NEG_INFINITY) else {
            return;
        };
        let p = full.proxy;
        for g in [
            p,
            p * (1.0 - 1e-13),
            p * (1.0 - 1e-11),
            p * (1.0 + 1e-13),
            p * 0.9,
            p * 1.1,
            0.0,
        ] {
            let floored = run(items, ys, ws, &ctx, floor(Some(g)));
            if better(p, g) {
                let f = floored.expect("the full scan's cut passes the floor");
                assert_eq!((f.proxy.to_bits(), f.n_left), (p.to_bits(), full.n_left));
            } else if let Some(f) = floored {
                assert!(
                    !better(f.proxy, g),
                    "{trial}: {f:?} beats {g} but {full:?} does not"
                );
            }
        }
    }
}

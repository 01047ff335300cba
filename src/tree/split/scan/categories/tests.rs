use super::*;
use crate::data::NAN_CODE;
use crate::params::CategoryGuards;
use crate::tree::criterion::SquaredError;

/// The three readings of a categorical candidate of histogram codes: gathered values
/// ([`best_categories`]), the lists' rows by code ([`best_of_codes`]) and a node's bins
/// ([`best_of_bins`]) find the same cut and set, bit for bit, NaN's bin included.
#[test]
fn gathered_listed_and_binned_readings_agree() {
    let mut rng = TreeRng::new(21);
    for trial in 0..300 {
        let n = 2 + rng.below(if trial % 2 == 0 { 40 } else { 500 });
        let codes = 2 + rng.below(30);
        let nan = trial % 3 == 0;
        let xf: Vec<u8> = (0..n)
            .map(|_| match nan && rng.below(6) == 0 {
                true => NAN_CODE,
                false => (3 * rng.below(codes)) as u8,
            })
            .collect();
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
        let (mut samples, mut ys2, mut ws2) =
            ((0..n as u32).collect::<Vec<_>>(), ys.clone(), ws.clone());
        let rows = NodeRows {
            samples: &mut samples,
            ys: &mut ys2,
            ws: &mut ws2,
        };
        let bar = f64::NEG_INFINITY;
        let mut b = CategoryBufs::default();
        let gathered = best_categories((&xf[..], nan), &mut b, &ctx, &rows, bar);
        let gathered_set = b.left.clone();
        // The lists: rows in code order, each code's in position order.
        let mut by_code: Vec<usize> = (0..n).collect();
        by_code.sort_by_key(|&i| xf[i]);
        let (lo, hi) = (xf[by_code[0]] as usize, xf[by_code[n - 1]] as usize);
        let listed_rows = by_code.iter().map(|&i| (xf[i] as usize, ys[i], ws[i]));
        let listed = best_of_codes(listed_rows, (lo, hi, nan), &mut b, &ctx, n, bar);
        let listed_set = b.left.clone();
        // A node's bins: every code's rows summed in position order.
        let stride = 1 + crit.proxy_len();
        let mut slot = vec![0.0; 256 * stride];
        for i in 0..n {
            let c = xf[i] as usize;
            add_row::<SquaredError, false>(&mut slot[c * stride..][..stride], ys[i], ws[i], &crit);
        }
        let binned = best_of_bins((&slot, stride), (lo, hi, nan), &mut b, &ctx, n, bar);
        let bits = |c: Option<Cut>| c.map(|c| (c.proxy.to_bits(), c.n_left, c.missing));
        assert_eq!(bits(listed), bits(gathered), "trial {trial}");
        assert_eq!(bits(binned), bits(gathered), "trial {trial}");
        // The sets send every code the same way (past a set's words: the unseen side).
        if let Some(cut) = gathered {
            let unseen_left = unseen_go_left(cut.n_left.unwrap(), n);
            let side = |set: &[u64], c: usize| {
                set.get(c / 64)
                    .map_or(unseen_left, |w| w >> (c % 64) & 1 == 1)
            };
            for c in 0..usize::from(NAN_CODE) {
                let want = side(&gathered_set, c);
                assert_eq!(side(&listed_set, c), want, "trial {trial} code {c}");
                assert_eq!(side(&b.left, c), want, "trial {trial} code {c}");
            }
        }
    }
}

/// A regression node of `n` rows over `codes` categories, category `c` of mean `c` and its
/// own frequency (category `c` holds about `c + 1` times the rows of category 0).
fn skewed(rng: &mut TreeRng, n: usize, codes: usize) -> (Vec<f32>, Vec<f64>) {
    let total: usize = (1..=codes).sum();
    let xf: Vec<f32> = (0..n)
        .map(|_| {
            let mut r = rng.below(total);
            (0..codes)
                .find(|&c| {
                    r < c + 1 || {
                        r -= c + 1;
                        false
                    }
                })
                .unwrap() as f32
        })
        .collect();
    let ys = xf.iter().map(|&c| f64::from(c) + rng.unit()).collect();
    (xf, ys)
}

/// The guards: the penalty keeps the set and lowers the proxy by the chance gain, rare
/// categories go together, a cut's smaller side holds at most `max_side` groups, and
/// smoothing orders a category of few rows nearer the node's mean.
#[test]
fn guards_pool_rare_categories_and_bound_the_smaller_side() {
    let mut rng = TreeRng::new(4);
    let (xf, ys) = skewed(&mut rng, 2000, 60);
    let n = xf.len();
    let ws = vec![1.0; n];
    let crit = SquaredError { y: &[] };
    let mut total = vec![0.0; crit.stats_len()];
    crit.accumulate(&mut total, &ys, &ws);
    let ctx = NodeCtx {
        crit: &crit,
        total: &total,
        min_samples_leaf: 1,
        min_weight_leaf: 0.0,
        unit_weights: true,
        whole_sums: false,
        mono: None,
        sign: 0,
    };
    let (mut samples, mut ys2, mut ws2) = ((0..n as u32).collect::<Vec<_>>(), ys.clone(), ws);
    let rows = NodeRows {
        samples: &mut samples,
        ys: &mut ys2,
        ws: &mut ws2,
    };
    let count = |c: usize| xf.iter().filter(|&&v| v as usize == c).count();
    let goes_left = |set: &[u64], c: usize| set[c / 64] >> (c % 64) & 1 == 1;
    let search = |guards: CategoryGuards| {
        let mut b = CategoryBufs {
            guards,
            ..CategoryBufs::default()
        };
        let cut = best_categories((&xf[..], false), &mut b, &ctx, &rows, f64::NEG_INFINITY);
        (cut.expect("a cut"), b.left)
    };
    // No guard: the order of the means, cut where the sums say.
    let (exact, exact_set) = search(CategoryGuards::NONE);
    // The penalty: the same set, offered net of (L − 2)·(2/π)·i(t) (unit weights).
    let (net, set) = search(CategoryGuards {
        penalty: 1.0,
        ..CategoryGuards::NONE
    });
    let present = (0..60).filter(|&c| count(c) > 0).count();
    let chance = (present - 2) as f64 * std::f64::consts::FRAC_2_PI * crit.impurity(&total);
    assert_eq!(set, exact_set);
    assert!((exact.proxy - net.proxy - chance).abs() <= 1e-9 * exact.proxy.abs());
    // Pooled: the categories of fewer than 40 rows all take one side.
    let (_, set) = search(CategoryGuards {
        min_samples: 40,
        ..CategoryGuards::NONE
    });
    let rare: Vec<usize> = (0..60).filter(|&c| count(c) > 0 && count(c) < 40).collect();
    assert!(rare.len() > 5, "{rare:?}");
    assert!(rare
        .iter()
        .all(|&c| goes_left(&set, c) == goes_left(&set, rare[0])));
    // At most 3 categories on the smaller side.
    let (bounded, set) = search(CategoryGuards {
        max_side: 3,
        ..CategoryGuards::NONE
    });
    let left = (0..60)
        .filter(|&c| count(c) > 0 && goes_left(&set, c))
        .count();
    assert!(left.min(present - left) <= 3, "{left} of {present}");
    assert!(bounded.proxy <= exact.proxy);
    // Smoothing keeps the cut a cut of the present categories (a proper subset).
    let (_, set) = search(CategoryGuards {
        smoothing: 50.0,
        ..CategoryGuards::NONE
    });
    let left = (0..60)
        .filter(|&c| count(c) > 0 && goes_left(&set, c))
        .count();
    assert!(left > 0 && left < present);
}

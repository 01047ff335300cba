use super::*;
use crate::data::NAN_CODE;
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

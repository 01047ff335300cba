//! The criterion contract, checked on every criterion.

use crate::tree::criterion::*;

#[test]
fn whole_terms_are_integers_summing_below_2_pow_53() {
    let whole = |t: &[f64]| whole_terms(t.iter().copied());
    assert!(whole(&[0.0, 1.0, 3.0, 4_503_599_627_370_496.0]));
    assert!(whole(&[]));
    for bad in [0.5, 1e-300, 3.0 + 2f64.powi(-40), f64::NAN, f64::INFINITY] {
        assert!(!whole(&[1.0, bad]), "{bad}");
    }
    // Whole, but the sum (or a term) reaches 2⁵³, where sums stop being exact.
    assert!(!whole(&[2f64.powi(52), 2f64.powi(52)]));
    assert!(!whole(&[2f64.powi(60)]));
}

#[test]
fn the_sse_select_follows_the_routing_rule() {
    let values = [
        -1.5,
        -0.0,
        0.0,
        0.5,
        1.0,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for v in values {
        for t in [-1.5, 0.0, 0.5, 1.0, f64::INFINITY] {
            for missing_left in [false, true] {
                let want = if crate::tree::goes_left(v, t, missing_left) {
                    3.0
                } else {
                    0.0
                };
                let got = if missing_left {
                    weight_if_not_gt(v, t, 3.0)
                } else {
                    weight_if_le(v, t, 3.0)
                };
                assert_eq!(got, want, "v = {v}, t = {t}, missing left {missing_left}");
            }
        }
    }
}

fn stats<C: Criterion>(c: &C, idx: &[usize], w: f64) -> Vec<f64> {
    let mut s = vec![0.0; c.stats_len()];
    let ys: Vec<C::Y> = idx.iter().map(|&i| c.target(i)).collect();
    c.accumulate(&mut s, &ys, &vec![w; ys.len()]);
    s
}

#[test]
fn hand_computed_impurities() {
    let y = [0u32, 0, 1, 1];
    let g = Gini::new(&y, 2);
    let e = Entropy::new(&y, 2);
    let all = [0, 1, 2, 3];
    assert!((g.impurity(&stats(&g, &all, 1.0)) - 0.5).abs() < 1e-15);
    assert!((e.impurity(&stats(&e, &all, 2.0)) - 1.0).abs() < 1e-15);
    assert_eq!(e.impurity(&stats(&e, &[0, 1], 1.0)), 0.0);
    let yr = [1.0, 2.0, 3.0, 4.0];
    let m = SquaredError { y: &yr };
    assert!((m.impurity(&stats(&m, &all, 0.5)) - 1.25).abs() < 1e-12);
}

/// The proxy must rank candidate splits exactly as the true weighted impurity decrease.
#[test]
fn proxy_ranks_like_the_true_decrease() {
    let y: Vec<u32> = (0..40).map(|i| ((i * 7 + i / 3) % 3) as u32).collect();
    let yr: Vec<f64> = (0..40).map(|i| ((i * 13) % 11) as f64 * 0.7).collect();
    fn check<C: Criterion>(c: &C) {
        let order: Vec<usize> = (0..40).collect();
        let total = stats(c, &order, 1.0);
        let it = c.impurity(&total);
        let mut cands = Vec::new();
        for pos in 1..40 {
            let left = stats(c, &order[..pos], 1.0);
            let right: Vec<f64> = total.iter().zip(&left).map(|(t, l)| t - l).collect();
            let dec = it - (left[0] * c.impurity(&left) + right[0] * c.impurity(&right)) / total[0];
            cands.push((c.proxy(&total, &left), dec));
        }
        for a in &cands {
            for b in &cands {
                if a.0 > b.0 + 1e-9 {
                    assert!(a.1 >= b.1 - 1e-9, "{a:?} vs {b:?}");
                }
            }
        }
    }
    check(&Gini::new(&y, 3));
    check(&Entropy::new(&y, 3));
    check(&SquaredError { y: &yr });
}

/// `may_beat` may let through a proxy that is not better, never reject one that is:
/// random sums and weights over many magnitudes, bars just below and above the proxy.
#[test]
fn may_beat_never_rejects_a_better_proxy() {
    let mut rng = crate::rng::TreeRng::new(11);
    let y = [0u32; 1];
    let (g, m) = (Gini::new(&y, 3), SquaredError { y: &[] });
    for _ in 0..20_000 {
        let scale = 10f64.powi(rng.below(13) as i32 - 6);
        let mut draw = |k: usize| {
            let total: Vec<f64> = (0..k).map(|_| (0.01 + rng.unit()) * scale).collect();
            let mut left: Vec<f64> = total.iter().map(|t| t * rng.unit()).collect();
            left[0] = total[0] * (0.001 + 0.998 * rng.unit());
            (total, left, (rng.unit() - 0.5) * 4e-12)
        };
        fn check<C: Criterion>(c: &C, (total, left, shift): (Vec<f64>, Vec<f64>, f64)) {
            let proxy = c.proxy(&total, &left);
            let bar = proxy * (1.0 + shift);
            if crate::tree::split::better(proxy, bar) {
                assert!(c.may_beat(&total, &left, bar), "{total:?} {left:?} {bar}");
            }
        }
        check(&g, draw(4));
        check(&m, draw(2));
        let (mut total, mut left, shift) = draw(3);
        // Regression sums may be negative.
        total[1] -= scale;
        left[1] -= 0.5 * scale;
        check(&m, (total, left, shift));
    }
}

/// The unit-weight counts (the integer path of two classes included) are the 0/1
/// weighted sums bit for bit, at every length around the lane width: all of them, or
/// regression's first two (the proxy's; the sum of squares is left 0).
#[test]
fn left_counts_equal_the_weighted_sums() {
    fn check<C: Criterion>(c: &C, n: usize) {
        check_first(c, n, c.stats_len());
    }
    fn check_first<C: Criterion>(c: &C, n: usize, k: usize) {
        let ys: Vec<C::Y> = (0..n).map(|i| c.target(i)).collect();
        let ws = vec![1.0; n];
        let left = |j: usize| (j * 5 + j / 4) % 3 != 0;
        let mut got = vec![f64::NAN; c.stats_len()];
        c.count_left(&mut got, &ys, &ws, left);
        let mut want = vec![0.0; c.stats_len()];
        c.accumulate_weighted(&mut want, &ys, &ws, |j, w| if left(j) { w } else { 0.0 });
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got[..k]), bits(&want[..k]), "n={n}");
        assert!(got[k..].iter().all(|&v| v == 0.0), "n={n}");
    }
    let y: Vec<u32> = (0..50).map(|i| (i * 7 + i / 3) as u32).collect();
    let binary: Vec<u32> = y.iter().map(|v| v % 2).collect();
    let three: Vec<u32> = y.iter().map(|v| v % 3).collect();
    let six: Vec<u32> = y.iter().map(|v| v % 6).collect();
    let many: Vec<u32> = y.iter().map(|v| v % 11).collect();
    let yr: Vec<f64> = (0..50).map(|i| ((i * 13) % 11) as f64 * 0.7).collect();
    for n in [0, 1, 3, 4, 5, 9, 50] {
        check(&Gini::new(&binary, 2), n);
        check(&Entropy::new(&binary, 2), n);
        check(&Gini::new(&three, 3), n);
        check(&Gini::new(&six, 6), n);
        check(&Gini::new(&many, 11), n);
        check_first(&SquaredError { y: &yr }, n, 2);
        check(&Poisson { y: &yr }, n);
    }
}

/// `independent_gain` is the mean decrease, per group beyond one, of a partition of the
/// node into `L` groups drawn independently of the target: exact for the Gini index and
/// the squared error, asymptotic for the entropy (Louppe 2014, Eq. 7.19).
#[test]
fn independent_gain_is_the_mean_decrease_of_a_random_partition() {
    const N: usize = 600;
    const L: usize = 12;
    let mut rng = crate::rng::TreeRng::new(3);
    let y: Vec<u32> = (0..N).map(|_| (rng.below(10) % 3) as u32).collect();
    let yr: Vec<f64> = (0..N).map(|_| (rng.unit() * 4.0).powi(2)).collect();
    fn mean_decrease<C: Criterion>(c: &C, rng: &mut crate::rng::TreeRng) -> (f64, f64) {
        let all: Vec<usize> = (0..N).collect();
        let total = stats(c, &all, 1.0);
        let (trials, mut sum) = (4000, 0.0);
        for _ in 0..trials {
            let mut groups = vec![Vec::new(); L];
            for i in 0..N {
                groups[rng.below(L)].push(i);
            }
            let children: f64 = (groups.iter().filter(|g| !g.is_empty()))
                .map(|g| g.len() as f64 * c.impurity(&stats(c, g, 1.0)))
                .sum();
            sum += N as f64 * c.impurity(&total) - children;
        }
        (
            sum / trials as f64 / (L - 1) as f64,
            c.independent_gain(&total),
        )
    }
    for (name, (mean, want)) in [
        ("gini", mean_decrease(&Gini::new(&y, 3), &mut rng)),
        ("entropy", mean_decrease(&Entropy::new(&y, 3), &mut rng)),
        ("squared", mean_decrease(&SquaredError { y: &yr }, &mut rng)),
    ] {
        assert!(
            (mean / want - 1.0).abs() < 0.06,
            "{name}: {mean} against {want}"
        );
    }
}

/// `ORDERED_SHARE`: by chance, the best cut of independent groups sorted by their values
/// keeps about `2/π` of the whole partition's decrease for a continuous target (many groups
/// of many rows), and all of it for classes when the groups hold one row each.
#[test]
fn the_best_ordered_cut_keeps_the_ordered_share_of_the_chance_gain() {
    let mut rng = crate::rng::TreeRng::new(8);
    // `(best ordered cut's decrease, whole partition's decrease)` of groups `(n_l, Σ y)`
    // sorted by their means.
    let best_cut = |groups: &mut Vec<(f64, f64)>| {
        let (n, s): (f64, f64) = groups
            .iter()
            .fold((0.0, 0.0), |a, g| (a.0 + g.0, a.1 + g.1));
        groups.sort_by(|a, b| (a.1 / a.0).total_cmp(&(b.1 / b.0)));
        let whole: f64 = groups.iter().map(|g| g.1 * g.1 / g.0).sum::<f64>() - s * s / n;
        let (mut nl, mut sl, mut best) = (0.0, 0.0, 0.0f64);
        for g in &groups[..groups.len() - 1] {
            (nl, sl) = (nl + g.0, sl + g.1);
            let (nr, sr) = (n - nl, s - sl);
            best = best.max(sl * sl / nl + sr * sr / nr - s * s / n);
        }
        (best, whole)
    };
    let normal = |rng: &mut crate::rng::TreeRng| {
        let (u, v) = (rng.unit().max(1e-300), rng.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let (mut cut, mut whole) = (0.0, 0.0);
    for _ in 0..200 {
        let mut groups: Vec<(f64, f64)> = (0..300)
            .map(|_| (20.0, (0..20).map(|_| normal(&mut rng)).sum()))
            .collect();
        let (c, w) = best_cut(&mut groups);
        (cut, whole) = (cut + c, whole + w);
    }
    let share = cut / whole;
    let want = <SquaredError as Criterion>::ORDERED_SHARE;
    assert!((share / want - 1.0).abs() < 0.05, "{share} against {want}");
    // One row a group, two classes: the sorted rows cut the classes apart.
    let mut groups: Vec<(f64, f64)> = (0..40).map(|i| (1.0, f64::from(i % 3 == 0))).collect();
    let (c, w) = best_cut(&mut groups);
    assert!(
        (c / w - <Gini as Criterion>::ORDERED_SHARE).abs() < 1e-12,
        "{c} {w}"
    );
}

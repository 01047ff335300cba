use super::*;
use crate::data::Layout;
use crate::params::{CriterionKind, ForestParams};
use crate::rng::TreeRng;
use crate::Targets;

/// numpy's `quantile(a, q, method)` of an unweighted sample, for reference.
fn numpy_quantile(sorted: &[f64], q: f64, how: Interpolation) -> f64 {
    let g = q * (sorted.len() - 1) as f64;
    let (lo, frac) = (g.floor() as usize, g - g.floor());
    let hi = (lo + 1).min(sorted.len() - 1);
    match how {
        Interpolation::Linear => sorted[lo] + frac * (sorted[hi] - sorted[lo]),
        Interpolation::Lower => sorted[lo],
        Interpolation::Higher => sorted[if frac > 0.0 { hi } else { lo }],
        Interpolation::Midpoint if frac > 0.0 => 0.5 * (sorted[lo] + sorted[hi]),
        Interpolation::Midpoint => sorted[lo],
        Interpolation::Nearest if frac == 0.5 => sorted[if lo % 2 == 0 { lo } else { hi }],
        Interpolation::Nearest => sorted[if frac < 0.5 { lo } else { hi }],
    }
}

const ALL: [Interpolation; 5] = [
    Interpolation::Linear,
    Interpolation::Lower,
    Interpolation::Higher,
    Interpolation::Nearest,
    Interpolation::Midpoint,
];

/// Whole frequencies: the quantiles of the sample with each value repeated that often.
#[test]
fn whole_frequencies_give_numpys_quantiles_of_the_repeated_sample() {
    let mut rng = TreeRng::new(5);
    for trial in 0..200 {
        let m = 1 + rng.below(8);
        let mut values: Vec<(f64, f64)> = (0..m)
            .map(|_| ((rng.below(6) as f64) * 0.5, (1 + rng.below(3)) as f64))
            .collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let repeated: Vec<f64> = values
            .iter()
            .flat_map(|&(v, f)| std::iter::repeat_n(v, f as usize))
            .collect();
        let qs: Vec<f64> = (0..=20).map(|k| k as f64 / 20.0).collect();
        for how in ALL {
            let got = weighted_quantiles(&values, &qs, how);
            for (q, g) in qs.iter().zip(got) {
                let want = numpy_quantile(&repeated, *q, how);
                assert!(
                    (g - want).abs() < 1e-12,
                    "trial {trial} {how:?} q {q}: {g} vs {want}"
                );
            }
        }
    }
    assert!(weighted_quantiles(&[], &[0.5], Interpolation::Linear)[0].is_nan());
}

/// A forest's quantiles are those of the training targets under Meinshausen's weights,
/// computed here by brute force over trees and rows (bootstrap, sample weights).
#[test]
fn quantiles_follow_meinshausens_weights() {
    let (n, p) = (120, 3);
    let mut rng = TreeRng::new(9);
    let x: Vec<f64> = (0..n * p).map(|_| rng.unit()).collect();
    let y: Vec<f64> = (0..n).map(|i| x[i * p] * 4.0 + rng.unit()).collect();
    let sw: Vec<f64> = (0..n).map(|_| 0.5 + rng.unit()).collect();
    let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
    params.n_estimators = 7;
    params.min_samples_leaf = 5;
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let targets = Targets::regression(&y).unwrap();
    let forest = Forest::fit(&params, m, targets, Some(&sw)).unwrap();
    let leaves = forest.leaf_values(m, &y, Some(&sw)).unwrap();
    let qs = [0.0, 0.1, 0.5, 0.9, 1.0];
    let got = leaves
        .quantiles(&forest, m, &qs, Interpolation::Linear, false)
        .unwrap();
    for r in (0..n).step_by(7) {
        let values = brute_force(&forest, m, Some(&sw), &y, r);
        let want = weighted_quantiles(&values, &qs, Interpolation::Linear);
        for (k, want) in want.iter().enumerate() {
            let g = got[r * qs.len() + k];
            assert!(
                (g - want).abs() < 1e-9,
                "row {r} q {}: {g} vs {want}",
                qs[k]
            );
        }
        // q = 1 is the largest target with weight; q = 0 the smallest when it counts once
        // or more.
        assert_eq!(got[r * qs.len() + 4], values[values.len() - 1].0);
        if values[0].1 >= 1.0 {
            assert_eq!(got[r * qs.len()], values[0].0);
        }
    }
}

/// Row `r`'s `(target, frequency)` pairs by brute force over trees and training rows:
/// `w_i = Σ_t c_ti / W_t`, scaled by the mean number of draws per leaf; `y` one output.
fn brute_force(
    forest: &Forest,
    m: Matrix<'_, f64>,
    sw: Option<&[f64]>,
    y: &[f64],
    r: usize,
) -> Vec<(f64, f64)> {
    let n = y.len();
    let mut w = vec![0.0; n];
    let mut draws = 0.0;
    for (t, tree) in forest.trees().iter().enumerate() {
        let counts = in_bag_counts(forest.params(), t);
        let leaf = tree.leaf(&m, r);
        let members: Vec<usize> = (0..n)
            .filter(|&i| counts[i] > 0 && tree.leaf(&m, i) == leaf)
            .collect();
        let weight = |i: usize| f64::from(counts[i]) * sw.map_or(1.0, |sw| sw[i]);
        let total: f64 = members.iter().map(|&i| weight(i)).sum();
        for &i in &members {
            w[i] += weight(i) / total;
        }
        draws += members.iter().map(|&i| f64::from(counts[i])).sum::<f64>();
    }
    let scale = draws / forest.trees().len() as f64;
    let mut values: Vec<(f64, f64)> = (0..n)
        .filter(|&i| w[i] > 0.0)
        .map(|i| (y[i], w[i] * scale))
        .collect();
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    values
}

/// A multi-output forest's quantiles of each output are those of that output's targets
/// under the same weights; its out-of-bag and per-tree predictions are the forest's.
#[test]
fn each_output_has_its_quantiles_and_the_leaf_values_keep_the_oob_predictions() {
    let (n, p, k) = (90, 2, 2);
    let mut rng = TreeRng::new(5);
    let x: Vec<f64> = (0..n * p).map(|_| rng.unit()).collect();
    let y: Vec<f64> = (0..n * k)
        .map(|j| x[(j / k) * p] * (1.0 + j as f64 % 2.0) + rng.unit())
        .collect();
    let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
    params.n_estimators = 6;
    params.min_samples_leaf = 3;
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let targets = Targets::multi_regression(&y, k).unwrap();
    let forest = Forest::fit(&params, m, targets, None).unwrap();
    let leaves = forest.leaf_values(m, &y, None).unwrap();
    let qs = [0.1, 0.5, 0.9];
    let got = (leaves.quantiles(&forest, m, &qs, Interpolation::Linear, false)).unwrap();
    for o in 0..k {
        let y_o: Vec<f64> = (0..n).map(|i| y[i * k + o]).collect();
        for r in (0..n).step_by(11) {
            let want = weighted_quantiles(
                &brute_force(&forest, m, None, &y_o, r),
                &qs,
                Interpolation::Linear,
            );
            for (j, want) in want.iter().enumerate() {
                let g = got[(r * k + o) * qs.len() + j];
                assert!((g - want).abs() < 1e-9, "row {r} output {o}: {g} vs {want}");
            }
        }
    }
    let (oob, _) = forest.oob_predict(m).unwrap();
    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
    assert!(oob
        .iter()
        .zip(leaves.oob_prediction())
        .all(|(a, b)| same(*a, *b)));
    assert_eq!(leaves.y(), &y[..]);
    let per_tree = forest.tree_predictions(m).unwrap();
    let mean = forest.predict(m).unwrap();
    let t_count = forest.trees().len();
    for i in 0..n {
        for o in 0..k {
            let sum: f64 = (0..t_count)
                .map(|t| per_tree[(i * t_count + t) * k + o])
                .sum();
            assert!((sum / t_count as f64 - mean[i * k + o]).abs() < 1e-12);
        }
    }
}

#[test]
fn out_of_bag_quantiles_skip_the_trees_that_drew_the_row_and_bad_input_is_refused() {
    let (n, p) = (80, 2);
    let mut rng = TreeRng::new(2);
    let x: Vec<f64> = (0..n * p).map(|_| rng.unit()).collect();
    let y: Vec<f64> = (0..n).map(|i| x[i * p] + 0.1 * rng.unit()).collect();
    let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
    params.n_estimators = 5;
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let forest = Forest::fit(&params, m, Targets::regression(&y).unwrap(), None).unwrap();
    let leaves = forest.leaf_values(m, &y, None).unwrap();
    let oob = leaves
        .quantiles(&forest, m, &[0.5], Interpolation::Linear, true)
        .unwrap();
    for (i, q) in oob.iter().enumerate() {
        let out_of_bag = (0..5).any(|t| in_bag_counts(forest.params(), t)[i] == 0);
        assert_eq!(q.is_nan(), !out_of_bag, "row {i}");
    }
    let bad = |q: f64| leaves.quantiles(&forest, m, &[q], Interpolation::Linear, false);
    assert!(bad(f64::NAN).is_err() && bad(1.5).is_err() && bad(-0.1).is_err());
    assert!(forest.leaf_values(m, &y[1..], None).is_err());
    let mut nan_y = y.clone();
    nan_y[3] = f64::NAN;
    assert!(forest.leaf_values(m, &nan_y, None).is_err());
}

#[test]
fn parts_round_trip_and_damaged_parts_are_refused() {
    let (n, p) = (60, 2);
    let mut rng = TreeRng::new(4);
    let x: Vec<f64> = (0..n * p).map(|_| rng.unit()).collect();
    let y: Vec<f64> = (0..n).map(|i| x[i * p] + rng.unit()).collect();
    let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
    params.n_estimators = 4;
    params.min_samples_leaf = 5;
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let forest = Forest::fit(&params, m, Targets::regression(&y).unwrap(), None).unwrap();
    let leaves = forest.leaf_values(m, &y, None).unwrap();
    let back = LeafValues::from_parts(&forest, leaves.parts()).unwrap();
    // (Debug forms: the out-of-bag NaNs compare unequal.)
    assert_eq!(format!("{back:?}"), format!("{leaves:?}"));
    let damaged: [fn(&mut LeafParts); 8] = [
        |p| p.rows[0] = 10_000,
        |p| p.counts[1] = 0,
        |p| p.weights[2] = f64::NAN,
        |p| p.starts[1] += 1_000,
        |p| p.tree_starts.pop().map(drop).unwrap_or(()),
        |p| p.oob[0] = f64::INFINITY,
        |p| p.y.truncate(3),
        // A leaf's rows out of order (tree 0's first leaf: two or more rows).
        |p| {
            let end = p.starts[1] as usize;
            assert!(end >= 2);
            p.rows.swap(0, 1);
        },
    ];
    for (k, damage) in damaged.iter().enumerate() {
        let mut parts = leaves.parts();
        damage(&mut parts);
        assert!(
            LeafValues::from_parts(&forest, parts).is_err(),
            "damage {k}"
        );
    }
}

/// Many quantiles in any order, every interpolation, on leaves of many rows (several
/// quantiles in one coarse cell of the histogram): the brute force's.
#[test]
fn the_histogram_reads_every_interpolation_as_the_brute_force() {
    let (n, p) = (700, 2);
    let mut rng = TreeRng::new(11);
    let x: Vec<f64> = (0..n * p).map(|_| rng.unit()).collect();
    // Ties in the targets: the smallest and largest values' frequencies count them all.
    let y: Vec<f64> = (0..n)
        .map(|i| (x[i * p] * 8.0 + rng.unit()).round())
        .collect();
    let mut params = ForestParams::random_forest(CriterionKind::SquaredError);
    params.n_estimators = 5;
    params.min_samples_leaf = 40;
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let forest = Forest::fit(&params, m, Targets::regression(&y).unwrap(), None).unwrap();
    let leaves = forest.leaf_values(m, &y, None).unwrap();
    let qs: Vec<f64> = (0..=40).map(|j| ((j * 17) % 41) as f64 / 40.0).collect();
    let all = [
        Interpolation::Linear,
        Interpolation::Lower,
        Interpolation::Higher,
        Interpolation::Nearest,
        Interpolation::Midpoint,
    ];
    for how in all {
        let got = leaves.quantiles(&forest, m, &qs, how, false).unwrap();
        for r in (0..n).step_by(37) {
            let want = weighted_quantiles(&brute_force(&forest, m, None, &y, r), &qs, how);
            for (j, want) in want.iter().enumerate() {
                let g = got[r * qs.len() + j];
                assert!(
                    (g - want).abs() < 1e-9,
                    "{how:?} row {r} q {}: {g} vs {want}",
                    qs[j]
                );
            }
        }
    }
}

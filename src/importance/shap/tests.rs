//! TreeSHAP against its definition: the path-dependent expectation `E[f(x) | x_S]`
//! (Lundberg et al. 2018, Algorithm 1) and the Shapley formulas summed over every
//! coalition of a few features.

use super::*;
use crate::data::{Layout, Targets};
use crate::params::{CriterionKind, FeatureCount, ForestParams, SplitterKind};
use crate::rng::TreeRng;
use crate::tree::Tree;

/// `E[tree(x) | x_S]` the path-dependent way: a split on a feature of `S` follows `x`,
/// any other split averages its children by cover.
fn expectation(tree: &Tree, weight: &[f64], x: &[f64], s: usize, node: usize, out: &mut [f64]) {
    let Some((l, r)) = tree.children(node) else {
        out.iter_mut()
            .zip(tree.value(node))
            .for_each(|(o, v)| *o += v);
        return;
    };
    let f = tree.feature(node) as usize;
    if s >> f & 1 == 1 {
        let next = tree.next(node, x[f]);
        return expectation(tree, weight, x, s, next, out);
    }
    for c in [l, r] {
        if weight[c] > 0.0 {
            let mut part = vec![0.0; out.len()];
            expectation(tree, weight, x, s, c, &mut part);
            let share = weight[c] / weight[node];
            out.iter_mut().zip(part).for_each(|(o, v)| *o += share * v);
        }
    }
}

fn factorial(k: usize) -> f64 {
    (1..=k).map(|v| v as f64).product()
}

/// Shapley values (`p × width`) and interaction values (`p × p × width`) of one tree for
/// one row, by enumerating the `2^p` coalitions.
fn brute_force(tree: &Tree, x: &[f64], p: usize) -> (Vec<f64>, Vec<f64>) {
    let w = tree.width();
    let weight = tree.node_stats().weight;
    let f: Vec<Vec<f64>> = (0..1usize << p)
        .map(|s| {
            let mut out = vec![0.0; w];
            expectation(tree, &weight, x, s, 0, &mut out);
            out
        })
        .collect();
    let mut phi = vec![0.0; p * w];
    let mut pairs = vec![0.0; p * p * w];
    for i in 0..p {
        for s in (0..1usize << p).filter(|s| s >> i & 1 == 0) {
            let size = s.count_ones() as usize;
            let weight = factorial(size) * factorial(p - size - 1) / factorial(p);
            for k in 0..w {
                phi[i * w + k] += weight * (f[s | 1 << i][k] - f[s][k]);
            }
        }
        for j in (0..p).filter(|&j| j != i) {
            for s in (0..1usize << p).filter(|s| s >> i & 1 == 0 && s >> j & 1 == 0) {
                let size = s.count_ones() as usize;
                let weight = factorial(size) * factorial(p - size - 2) / (2.0 * factorial(p - 1));
                for k in 0..w {
                    let d =
                        f[s | 1 << i | 1 << j][k] - f[s | 1 << i][k] - f[s | 1 << j][k] + f[s][k];
                    pairs[(i * p + j) * w + k] += weight * d;
                }
            }
        }
    }
    for i in 0..p {
        for k in 0..w {
            let off: f64 = (0..p)
                .filter(|&j| j != i)
                .map(|j| pairs[(i * p + j) * w + k])
                .sum();
            pairs[(i * p + i) * w + k] = phi[i * w + k] - off;
        }
    }
    (phi, pairs)
}

/// Rows of small integer features (so features repeat along paths) and a class target
/// with interactions.
fn data(n: usize, p: usize, seed: u64) -> (Vec<f64>, Vec<u32>, Vec<f64>) {
    let mut rng = TreeRng::new(seed);
    let x: Vec<f64> = (0..n * p).map(|_| rng.below(5) as f64).collect();
    let y: Vec<u32> = (0..n)
        .map(|i| {
            let r = &x[i * p..(i + 1) * p];
            u32::from(r[0] + r[1] > 4.0) + u32::from(r[2] > 2.0 && r[0] < 2.0)
        })
        .collect();
    let yr: Vec<f64> = (0..n)
        .map(|i| x[i * p] * x[i * p + 1] - x[i * p + 2] + 0.1 * rng.below(10) as f64)
        .collect();
    (x, y, yr)
}

fn assert_close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (k, (u, v)) in a.iter().zip(b).enumerate() {
        assert!((u - v).abs() <= tol, "{what}[{k}]: {u} vs {v}");
    }
}

/// Checks a forest's TreeSHAP values and interactions on the rows of `x` against the
/// brute force, tree by tree, and additivity against the prediction.
fn check_forest(forest: &Forest, x: &[f64], n: usize, p: usize) {
    let m = Matrix::new(x, n, p, Layout::RowMajor).unwrap();
    let shap = forest.tree_shap(m, true).unwrap();
    let pairs = shap.interactions.as_ref().unwrap();
    let w = forest.width();
    let scale = 1.0 / forest.trees().len() as f64;
    for i in 0..n {
        let row = &x[i * p..(i + 1) * p];
        let (mut phi, mut inter) = (vec![0.0; p * w], vec![0.0; p * p * w]);
        for tree in forest.trees() {
            let (a, b) = brute_force(tree, row, p);
            phi.iter_mut().zip(a).for_each(|(s, v)| *s += scale * v);
            inter.iter_mut().zip(b).for_each(|(s, v)| *s += scale * v);
        }
        assert_close(&shap.values[i * p * w..(i + 1) * p * w], &phi, 1e-12, "phi");
        let got = &pairs[i * p * p * w..(i + 1) * p * p * w];
        assert_close(got, &inter, 1e-12, "interactions");
    }
    let prediction = forest.predict(m).unwrap();
    for i in 0..n {
        for k in 0..w {
            let sum: f64 = (0..p).map(|j| shap.values[(i * p + j) * w + k]).sum();
            let total = sum + shap.expected_value[k];
            assert!((total - prediction[i * w + k]).abs() < 1e-12, "additivity");
        }
    }
}

#[test]
fn classification_and_regression_match_the_brute_force() {
    let (n, p) = (150, 5);
    let (x, y, yr) = data(n, p, 3);
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let mut params = ForestParams::random_forest(CriterionKind::Gini);
    params.n_estimators = 4;
    params.max_features = FeatureCount::Count(2);
    let classes = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    check_forest(&classes, &x[..20 * p], 20, p);
    params.criterion = CriterionKind::SquaredError;
    let regression = Forest::fit(&params, m, Targets::Regression(&yr), None).unwrap();
    check_forest(&regression, &x[..20 * p], 20, p);
}

#[test]
fn repeated_features_and_multiway_chains_match_the_brute_force() {
    let (n, p) = (200, 4);
    let (x, y, _) = data(n, p, 8);
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    // Extra-Trees on 4 features grow deep: features recur on most paths.
    let mut params = ForestParams::extra_trees(CriterionKind::Entropy);
    params.n_estimators = 3;
    let binary = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    assert!(binary.trees().iter().any(|t| t.max_depth() > p));
    check_forest(&binary, &x[..15 * p], 15, p);
    let mut params = ForestParams::totally_randomized(CriterionKind::Entropy);
    params.splitter = SplitterKind::Multiway;
    params.n_estimators = 3;
    let multiway = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    check_forest(&multiway, &x[..15 * p], 15, p);
}

/// Rows with missing values follow each node's NaN side, in the brute force (through
/// `Tree::next`) as in TreeSHAP, and additivity holds against the prediction.
#[test]
fn rows_with_missing_values_match_the_brute_force() {
    let (n, p) = (200, 4);
    let (mut x, y, yr) = data(n, p, 12);
    let mut rng = TreeRng::new(4);
    x.iter_mut()
        .filter(|_| rng.below(5) == 0)
        .for_each(|v| *v = f64::NAN);
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let mut params = ForestParams::random_forest(CriterionKind::Gini);
    params.n_estimators = 3;
    let rf = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    let sides = |f: &Forest| {
        let t = &f.trees()[0];
        let splits = (0..t.len()).filter(|&k| !t.is_leaf(k));
        splits.map(|k| t.missing_left(k)).collect::<Vec<_>>()
    };
    let s = sides(&rf);
    assert!(
        s.contains(&true) && s.contains(&false),
        "NaN sent both ways"
    );
    check_forest(&rf, &x[..20 * p], 20, p);
    let mut params = ForestParams::extra_trees(CriterionKind::SquaredError);
    params.n_estimators = 3;
    let et = Forest::fit(&params, m, Targets::Regression(&yr), None).unwrap();
    check_forest(&et, &x[..20 * p], 20, p);
}

#[test]
fn a_stump_has_zero_values_and_its_mean_as_expected_value() {
    let x = [1.0, 1.0, 1.0];
    let y = [0u32, 1, 1];
    let m = Matrix::new(&x, 3, 1, Layout::RowMajor).unwrap();
    let mut params = ForestParams::random_forest(CriterionKind::Gini);
    params.n_estimators = 2;
    params.bootstrap = false;
    let f = Forest::fit(&params, m, Targets::classes(&y, 2).unwrap(), None).unwrap();
    let shap = f.tree_shap(m, true).unwrap();
    assert!(shap.values.iter().all(|&v| v == 0.0));
    assert_close(&shap.expected_value, &[1.0 / 3.0, 2.0 / 3.0], 1e-15, "E");
}

#[test]
fn same_bits_for_any_number_of_threads() {
    let (n, p) = (300, 5);
    let (x, y, _) = data(n, p, 5);
    let m = Matrix::new(&x, n, p, Layout::ColumnMajor).unwrap();
    let mut params = ForestParams::random_forest(CriterionKind::Gini);
    params.n_estimators = 6;
    let f = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    let one = crate::parallel::install(1, || f.tree_shap(m, true).unwrap());
    let three = crate::parallel::install(3, || f.tree_shap(m, true).unwrap());
    assert_eq!(one, three);
    // The values do not depend on whether interactions were asked for.
    let plain = crate::parallel::install(2, || f.tree_shap(m, false).unwrap());
    assert_eq!(plain.values, one.values);
}

#[test]
fn a_set_stop_flag_stops_with_an_error_and_a_clear_one_changes_nothing() {
    use std::sync::atomic::AtomicBool;
    let (n, p) = (100, 4);
    let (x, y, _) = data(n, p, 3);
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let params = ForestParams::random_forest(CriterionKind::Gini);
    let f = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    let stopped = f.tree_shap_until(m, true, &AtomicBool::new(true));
    assert!(matches!(stopped, Err(ForestError::Stopped)));
    let running = f.tree_shap_until(m, true, &AtomicBool::new(false)).unwrap();
    assert_eq!(running, f.tree_shap(m, true).unwrap());
}

#[test]
fn wrong_feature_count_and_non_finite_rows_are_errors() {
    let (x, y, _) = data(50, 3, 1);
    let m = Matrix::new(&x, 50, 3, Layout::RowMajor).unwrap();
    let params = ForestParams::random_forest(CriterionKind::Gini);
    let f = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    let narrow = Matrix::new(&x[..100], 50, 2, Layout::RowMajor).unwrap();
    assert!(matches!(
        f.tree_shap(narrow, false),
        Err(ForestError::Shape(_))
    ));
    let mut bad = x.clone();
    bad[7] = f64::INFINITY;
    let m = Matrix::new(&bad, 50, 3, Layout::RowMajor).unwrap();
    assert!(matches!(
        f.tree_shap(m, false),
        Err(ForestError::NonFinite { .. })
    ));
}

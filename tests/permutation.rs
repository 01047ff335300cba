//! Permutation importance against brute-force oracles built from explicitly permuted copies
//! of X (the same permutations), plus determinism across thread counts and error paths.

mod common;

use forestimp::importance::permutation::{oob_rows, permutation_indices};
use forestimp::importance::walk::{leaf_with, used_features};
use forestimp::parallel::install;
use forestimp::{CriterionKind, Forest, ForestError, ForestParams, Layout, Matrix, Targets};

const N: usize = 300;
const P: usize = 6;

fn fit(params: &ForestParams, x: &[f32], y: &[u32]) -> Forest {
    let m = Matrix::new(x, N, P, Layout::RowMajor).unwrap();
    Forest::fit(params, m, Targets::classes(y, 3).unwrap(), None).unwrap()
}

fn rf(n_estimators: usize, max_depth: Option<usize>) -> ForestParams {
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = n_estimators;
    p.max_depth = max_depth;
    p.seed = 3;
    p
}

/// `x` with column `m` of rows `rows` replaced by the values of rows `subst`.
fn permuted_copy(x: &[f32], m: usize, rows: &[u32], subst: &[u32]) -> Vec<f32> {
    let mut out = x.to_vec();
    for (&i, &j) in rows.iter().zip(subst) {
        out[i as usize * P + m] = x[j as usize * P + m];
    }
    out
}

fn argmax(v: &[f64]) -> u32 {
    let mut b = 0;
    for k in 0..v.len() {
        if v[k] > v[b] {
            b = k;
        }
    }
    b as u32
}

#[test]
fn leaf_with_equals_walking_a_modified_row() {
    let (x, y) = common::classification(N, P, 1);
    let forest = fit(&rf(3, None), &x, &y);
    let m = Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
    for tree in forest.trees() {
        for (i, j) in [(0, 5), (17, 200), (299, 1)] {
            for f in 0..P {
                let z = permuted_copy(&x, f, &[i as u32], &[j as u32]);
                let mz = Matrix::new(&z, N, P, Layout::RowMajor).unwrap();
                assert_eq!(leaf_with(tree, &m, i, f, j), tree.leaf(&mz, i));
            }
        }
    }
}

#[test]
fn oob_per_tree_equals_brute_force_and_unused_features_give_zero() {
    let (x, y) = common::classification(N, P, 2);
    let forest = fit(&rf(8, Some(3)), &x, &y);
    let m = Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
    let targets = Targets::classes(&y, 3).unwrap();
    let res = forest
        .oob_permutation_importance(m, targets, 2, 77)
        .unwrap();
    let mut n_unused = 0;
    for (t, tree) in forest.trees().iter().enumerate() {
        let rows = oob_rows(&forest, t);
        assert_eq!(res.n_oob[t], rows.len());
        let err = |z: &[f32]| {
            let mz = Matrix::new(z, N, P, Layout::RowMajor).unwrap();
            rows.iter()
                .filter(|&&i| argmax(tree.value(tree.leaf(&mz, i as usize))) != y[i as usize])
                .count() as f64
                / rows.len() as f64
        };
        let base = err(&x);
        assert_eq!(res.oob_error[t], base);
        let used = used_features(tree, P);
        for f in 0..P {
            for r in 0..2 {
                let perm = permutation_indices(77, rows.len(), f, r, Some(t));
                let subst: Vec<u32> = perm.iter().map(|&k| rows[k as usize]).collect();
                let want = err(&permuted_copy(&x, f, &rows, &subst)) - base;
                let got = res.per_tree[(r * 8 + t) * P + f];
                assert!(
                    (got - want).abs() < 1e-12,
                    "tree {t} feature {f}: {got} vs {want}"
                );
                if !used[f] {
                    assert_eq!(got, 0.0);
                    n_unused += 1;
                }
            }
        }
    }
    assert!(n_unused > 10, "depth-3 trees leave features unused");
}

#[test]
fn held_out_predictions_equal_predict_on_a_permuted_copy() {
    let (x, y) = common::classification(N, P, 3);
    let forest = fit(&rf(10, None), &x, &y);
    let m = Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
    let all: Vec<u32> = (0..N as u32).collect();
    for f in 0..P {
        let got = forest.permuted_predictions(m, f, 2, 5).unwrap();
        for r in 0..2 {
            let perm = permutation_indices(5, N, f, r, None);
            let z = permuted_copy(&x, f, &all, &perm);
            let mz = Matrix::new(&z, N, P, Layout::RowMajor).unwrap();
            let want = forest.predict(mz).unwrap();
            assert_eq!(&got[r * N * 3..(r + 1) * N * 3], &want[..]);
        }
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let (x, y) = common::classification(N, P, 4);
    let forest = fit(&rf(40, None), &x, &y);
    let m = Matrix::new(&x, N, P, Layout::ColumnMajor).unwrap();
    let t = Targets::classes(&y, 3).unwrap();
    let run = |threads| {
        install(threads, || {
            (
                forest.oob_permutation_importance(m, t, 2, 9).unwrap(),
                forest.local_permutation_importance(m, t, true, 9).unwrap(),
                forest.local_permutation_importance(m, t, false, 9).unwrap(),
                forest.permuted_predictions(m, 2, 2, 9).unwrap(),
            )
        })
    };
    assert_eq!(run(1), run(3));
}

#[test]
fn a_part_of_a_forest_draws_its_trees_permutations_and_a_stop_flag_stops() {
    use std::sync::atomic::AtomicBool;
    let (x, y) = common::classification(N, P, 5);
    let forest = fit(&rf(12, None), &x, &y);
    let m = Matrix::new(&x, N, P, Layout::ColumnMajor).unwrap();
    let t = Targets::classes(&y, 3).unwrap();
    let whole = forest.oob_permutation_importance(m, t, 2, 9).unwrap();
    // Trees 5..12 of the forest permute as they do in the whole forest (forestimp.dask).
    let part = forest.part(5..12).unwrap();
    let tail = part.oob_permutation_importance(m, t, 2, 9).unwrap();
    assert_eq!(tail.oob_error, whole.oob_error[5..]);
    for r in 0..2 {
        let rows =
            |res: &forestimp::importance::permutation::OobPermutation, m: usize, at: usize| {
                res.per_tree[(r * m + at) * P..(r * m + m) * P].to_vec()
            };
        assert_eq!(rows(&tail, 7, 0), rows(&whole, 12, 5));
    }
    let stopped = forest.oob_permutation_importance_until(m, t, 2, 9, &AtomicBool::new(true));
    assert!(matches!(stopped, Err(ForestError::Stopped)));
}

#[test]
fn casewise_oob_weighted_sum_equals_per_tree_sum() {
    // Σ_i |T_i| C[i, m] = Σ_t |O_t| VI_t(m), the same permutations (repeat 0).
    let (x, y) = common::classification(N, P, 5);
    let forest = fit(&rf(15, None), &x, &y);
    let m = Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
    let t = Targets::classes(&y, 3).unwrap();
    let res = forest.oob_permutation_importance(m, t, 1, 1).unwrap();
    let local = forest.local_permutation_importance(m, t, true, 1).unwrap();
    let mut k = vec![0.0; N];
    for tree in 0..15 {
        for i in oob_rows(&forest, tree) {
            k[i as usize] += 1.0;
        }
    }
    for f in 0..P {
        let lhs: f64 = (0..N)
            .filter(|&i| k[i] > 0.0)
            .map(|i| k[i] * local[i * P + f])
            .sum();
        let rhs: f64 = (0..15)
            .map(|tr| res.n_oob[tr] as f64 * res.per_tree[tr * P + f])
            .sum();
        assert!((lhs - rhs).abs() < 1e-9, "feature {f}: {lhs} vs {rhs}");
    }
}

#[test]
fn errors_instead_of_panics() {
    let (x, y) = common::classification(N, P, 6);
    let m = Matrix::new(&x, N, P, Layout::RowMajor).unwrap();
    let t = Targets::classes(&y, 3).unwrap();
    let forest = fit(&rf(3, None), &x, &y);
    assert!(matches!(
        forest.oob_permutation_importance(m, t, 0, 0),
        Err(ForestError::InvalidParameter {
            name: "n_repeats",
            ..
        })
    ));
    let short = Matrix::new(&x[..(N - 1) * P], N - 1, P, Layout::RowMajor).unwrap();
    let ts = Targets::classes(&y[..N - 1], 3).unwrap();
    assert!(matches!(
        forest.oob_permutation_importance(short, ts, 1, 0),
        Err(ForestError::Shape(_))
    ));
    assert!(forest.permuted_predictions(m, P, 1, 0).is_err());
    let mut et = ForestParams::extra_trees(CriterionKind::Gini);
    et.n_estimators = 2;
    let no_oob = fit(&et, &x, &y);
    assert!(matches!(
        no_oob.oob_permutation_importance(m, t, 1, 0),
        Err(ForestError::Unsupported(_))
    ));
    assert!(no_oob.local_permutation_importance(m, t, false, 0).is_ok());
    let yr: Vec<f64> = y.iter().map(|&c| f64::from(c)).collect();
    assert!(matches!(
        forest.local_permutation_importance(m, Targets::regression(&yr).unwrap(), false, 0),
        Err(ForestError::InvalidTarget(_))
    ));
}

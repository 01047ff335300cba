//! Prediction descends blocks of rows together (partitioned at each node); it must reach
//! the leaf a plain walk reaches for any layout, and sum the trees to the same bits for any
//! thread count.

mod common;

use forestimp::forest::sampling::in_bag_counts;
use forestimp::parallel::install;
use forestimp::{CriterionKind, Forest, ForestParams, Layout, Matrix, Shadows, Targets};

const N: usize = 2500;
const P: usize = 6;

/// Forests on `n × p` data: RF with pure leaves, and Extra-Trees with leaves of 3 rows or
/// more, whose fractional values sum to different bits in different orders.
fn forests_on(n: usize, p: usize) -> Vec<(Forest, Vec<f32>)> {
    let (x, y) = common::classification(n, p, 5);
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let mut rf = ForestParams::random_forest(CriterionKind::Gini);
    rf.n_estimators = 12;
    let mut et = ForestParams::extra_trees(CriterionKind::Entropy);
    et.n_estimators = 12;
    et.bootstrap = true;
    et.min_samples_leaf = 3;
    [rf, et]
        .iter()
        .map(|p| {
            let f = Forest::fit(p, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
            (f, x.clone())
        })
        .collect()
}

fn forests() -> Vec<(Forest, Vec<f32>)> {
    forests_on(N, P)
}

/// Rows whose values are the forest's own thresholds, so that `x == threshold` is common.
fn on_thresholds(forest: &Forest) -> Vec<f32> {
    let mut at: Vec<Vec<f32>> = vec![Vec::new(); P];
    for tree in forest.trees() {
        for t in (0..tree.len()).filter(|&t| !tree.is_leaf(t)) {
            at[tree.feature(t) as usize].push(tree.threshold(t) as f32);
        }
    }
    (0..N * P)
        .map(|k| {
            let ts = &at[k % P];
            ts.get((k * 7919) % ts.len().max(1)).copied().unwrap_or(0.0)
        })
        .collect()
}

#[test]
fn block_descent_reaches_the_walks_leaves() {
    for (forest, x) in forests() {
        let x = [x, on_thresholds(&forest)].concat();
        let n = 2 * N;
        let xt: Vec<f32> = (0..n * P).map(|k| x[(k % n) * P + k / n]).collect();
        for m in [
            Matrix::new(&x, n, P, Layout::RowMajor).unwrap(),
            Matrix::new(&xt, n, P, Layout::ColumnMajor).unwrap(),
        ] {
            for tree in forest.trees() {
                let (first, len) = (37, n - 100);
                let mut out = vec![0u32; len];
                tree.leaves(&m, first, &mut out);
                for (r, &leaf) in out.iter().enumerate() {
                    assert_eq!(leaf as usize, tree.leaf(&m, first + r));
                }
            }
        }
    }
}

/// Predictions and OOB estimates equal the sums of the trees' leaf values taken one row at a
/// time (to rounding), and are the same bits for 1 to 4 threads.
fn sums_match_a_plain_walk(forest: &Forest, m: Matrix<'_, f32>) {
    let n = m.n_rows();
    let w = forest.width();
    let scale = 1.0 / forest.trees().len() as f64;
    let mut expected = vec![0.0; n * w];
    let mut oob = vec![0.0; n * w];
    let mut oob_n = vec![0u32; n];
    for (t, tree) in forest.trees().iter().enumerate() {
        let bag = in_bag_counts(forest.params(), t);
        for i in 0..n {
            let v = tree.value(tree.leaf(&m, i));
            for k in 0..w {
                expected[i * w + k] += v[k];
                if bag[i] == 0 {
                    oob[i * w + k] += v[k];
                }
            }
            oob_n[i] += u32::from(bag[i] == 0);
        }
    }
    expected.iter_mut().for_each(|e| *e *= scale);
    for (i, &c) in oob_n.iter().enumerate() {
        for v in &mut oob[i * w..(i + 1) * w] {
            *v = if c > 0 { *v / f64::from(c) } else { f64::NAN };
        }
    }
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 || (a.is_nan() && b.is_nan());
    let one = forest.predict(m).unwrap();
    let one_oob = forest.oob_predict(m).unwrap();
    for (a, b) in one.iter().zip(&expected) {
        assert!(close(*a, *b), "{a} vs {b}");
    }
    assert_eq!(one_oob.1, oob_n);
    for (a, b) in one_oob.0.iter().zip(&oob) {
        assert!(close(*a, *b), "{a} vs {b}");
    }
    for threads in [1, 2, 3, 4] {
        let got = install(threads, || forest.predict(m).unwrap());
        let same_bits =
            |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same_bits(&got, &one), "{threads} threads");
        let (values, counts) = install(threads, || forest.oob_predict(m).unwrap());
        assert_eq!(counts, oob_n);
        assert!(same_bits(&values, &one_oob.0), "OOB, {threads} threads");
    }
}

#[test]
fn predictions_sum_the_trees_alike_for_any_thread_count() {
    for (forest, x) in forests() {
        sums_match_a_plain_walk(&forest, Matrix::new(&x, N, P, Layout::RowMajor).unwrap());
    }
}

/// Wide rows: 1 500 rows of 2 000 float32 features (12 MB) go down as two blocks of 8 MiB
/// at most.
#[test]
fn wide_rows_go_down_in_several_blocks() {
    let (n, p) = (1500, 2000);
    for (forest, x) in forests_on(n, p) {
        let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
        sums_match_a_plain_walk(&forest, m);
    }
}

/// Many classes: 300 classes shorten the blocks (their sums stay within a few MiB), so 4 000
/// narrow rows go down as three blocks.
#[test]
fn many_classes_go_down_in_several_blocks() {
    let (n, p, classes) = (4000, 4, 300);
    let (x, _) = common::classification(n, p, 11);
    let y: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) % classes)
        .collect();
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let mut params = ForestParams::random_forest(CriterionKind::Gini);
    params.n_estimators = 9;
    params.min_samples_leaf = 2;
    let targets = Targets::classes(&y, classes as usize).unwrap();
    let forest = Forest::fit(&params, m, targets, None).unwrap();
    sums_match_a_plain_walk(&forest, m);
}

/// A matrix with shadow columns (columns again, rows permuted; shared or independent) reads its values one at
/// a time instead of as strided columns: its descent must reach the walk's leaves too.
#[test]
fn shadow_columns_reach_the_walks_leaves() {
    let (x, y) = common::classification(N, P, 7);
    let perm: Vec<u32> = (0..N as u32).map(|i| (i * 7 + 3) % N as u32).collect();
    let shadows = [
        Shadows::shared_with(perm, P).unwrap(),
        Shadows::independent(N, (0..P as u32).rev().collect(), 5),
    ];
    for (layout, shadows) in [Layout::RowMajor, Layout::ColumnMajor]
        .into_iter()
        .flat_map(|layout| shadows.iter().map(move |s| (layout, s)))
    {
        let m = Matrix::new(&x, N, P, layout)
            .unwrap()
            .with_shadows(shadows)
            .unwrap();
        let mut params = ForestParams::random_forest(CriterionKind::Gini);
        params.n_estimators = 4;
        let forest = Forest::fit(&params, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
        for tree in forest.trees() {
            let mut out = vec![0u32; N - 10];
            tree.leaves(&m, 10, &mut out);
            for (r, &leaf) in out.iter().enumerate() {
                assert_eq!(leaf as usize, tree.leaf(&m, 10 + r));
            }
        }
        sums_match_a_plain_walk(&forest, m);
    }
}

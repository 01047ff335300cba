//! Multiway totally randomized trees (`SplitterKind::Multiway`) and MDI by depth, against
//! the exact theory: Thm 1 of Louppe et al. (2013) with its decomposition by interaction
//! degree, the K-columns of Louppe (2014) Table 6.2 as re-derived exactly (research digest
//! seed004 §4.8), and Example 5.2 of the thesis (multiway vs binary splits).

mod common;

use common::{led, LED_EXACT};

use forestimp::parallel::install;
use forestimp::tree::multiway::NO_OP_THRESHOLD;
use forestimp::{
    CriterionKind, FeatureCount, Forest, ForestError, ForestParams, Layout, Matrix, SplitterKind,
    Targets,
};

fn multiway(k: usize, n_estimators: usize, seed: u64) -> ForestParams {
    let mut p = ForestParams::totally_randomized(CriterionKind::Entropy);
    p.splitter = SplitterKind::Multiway;
    p.max_features = FeatureCount::Count(k);
    p.n_estimators = n_estimators;
    p.seed = seed;
    p
}

fn fit(params: &ForestParams, x: &[f64], p: usize, y: &[u32], n_classes: usize) -> Forest {
    let m = Matrix::new(x, y.len(), p, Layout::RowMajor).unwrap();
    Forest::fit(params, m, Targets::classes(y, n_classes).unwrap(), None).unwrap()
}

fn fit_led(params: &ForestParams) -> Forest {
    let (x, y) = led();
    fit(params, &x, 7, &y, 10)
}

/// `H(Y | X_S)` in bits on equally likely rows, `S` a bitmask of columns.
fn cond_entropy(x: &[f64], p: usize, y: &[u32], s: usize) -> f64 {
    let n = y.len();
    let key = |i: usize| -> Vec<i64> {
        (0..p)
            .filter(|j| s >> j & 1 == 1)
            .map(|j| x[i * p + j] as i64)
            .collect()
    };
    let mut h = 0.0;
    let mut seen = vec![false; n];
    for i in 0..n {
        if seen[i] {
            continue;
        }
        let group: Vec<usize> = (i..n).filter(|&r| key(r) == key(i)).collect();
        group.iter().for_each(|&r| seen[r] = true);
        let g = group.len() as f64;
        let mut labels: Vec<u32> = group.iter().map(|&r| y[r]).collect();
        labels.sort_unstable();
        labels.dedup();
        for c in labels {
            let q = group.iter().filter(|&&r| y[r] == c).count() as f64 / g;
            h -= g / n as f64 * q * q.log2();
        }
    }
    h
}

/// Thm 1 by degree: `[m][k] = Σ_{|B|=k, m ∉ B} I(X_m; Y | B) / (C(p,k) (p−k))`.
fn thm1_by_degree(x: &[f64], p: usize, y: &[u32]) -> Vec<Vec<f64>> {
    let binom = |n: usize, k: usize| (0..k).fold(1.0, |a, i| a * (n - i) as f64 / (i + 1) as f64);
    let mut out = vec![vec![0.0; p]; p];
    for b in 0usize..1 << p {
        let k = b.count_ones() as usize;
        let hb = cond_entropy(x, p, y, b);
        for (m, row) in out.iter_mut().enumerate() {
            if b >> m & 1 == 0 {
                let cmi = hb - cond_entropy(x, p, y, b | 1 << m);
                row[k] += cmi / (binom(p, k) * (p - k) as f64);
            }
        }
    }
    out
}

#[test]
fn led_multiway_trt_converges_to_thm1_degree_by_degree() {
    let (x, y) = led();
    let exact = thm1_by_degree(&x, 7, &y);
    let forest = fit_led(&multiway(1, 10_000, 7));
    let imp = forest.importances(false);
    let d = forest.mdi_depth_count();
    assert!(d <= 7, "a branch cannot use more than the 7 variables");
    let by_depth = forest.mdi_by_depth();
    for m in 0..7 {
        assert!(
            (imp[m] - LED_EXACT[m]).abs() < 0.01,
            "X{}: {}",
            m + 1,
            imp[m]
        );
        let row_sum: f64 = by_depth[m * d..(m + 1) * d].iter().sum();
        assert!((row_sum - imp[m]).abs() < 1e-12);
        for k in 0..7 {
            let got = if k < d { by_depth[m * d + k] } else { 0.0 };
            assert!(
                (got - exact[m][k]).abs() < 0.01,
                "X{} degree {k}: {got:.4} vs {:.4}",
                m + 1,
                exact[m][k]
            );
        }
    }
    // Per-degree sums printed in the seed (Louppe et al. 2013, Fig. 2 data).
    let degree_sums = [0.802, 0.692, 0.568, 0.450, 0.347, 0.262, 0.200];
    for (k, want) in degree_sums.iter().enumerate() {
        let got: f64 = (0..7)
            .map(|m| if k < d { by_depth[m * d + k] } else { 0.0 })
            .sum();
        let exact_k: f64 = (0..7).map(|m| exact[m][k]).sum();
        assert!(
            (exact_k - want).abs() < 1e-3,
            "oracle degree {k}: {exact_k}"
        );
        assert!((got - want).abs() < 0.01, "degree {k}: {got:.4} vs {want}");
    }
}

#[test]
fn led_k_columns_of_table_6_2_with_the_not_yet_used_rule() {
    // Exact expected MDI for K = 2..7 (research digest seed004 §4.8).
    let table = [
        [0.3625, 0.6652, 0.5126, 0.5252, 0.7302, 0.1397, 0.3865],
        [0.3272, 0.7172, 0.4963, 0.4847, 0.7762, 0.1268, 0.3935],
        [0.3100, 0.7560, 0.4892, 0.4445, 0.8092, 0.1235, 0.3893],
        [0.3038, 0.7842, 0.4833, 0.4171, 0.8297, 0.1222, 0.3817],
        [0.3065, 0.7981, 0.4753, 0.4096, 0.8355, 0.1219, 0.3752],
        [0.3065, 0.7981, 0.4753, 0.4096, 0.8355, 0.1219, 0.3752],
    ];
    for (row, k) in table.iter().zip(2..) {
        let forest = fit_led(&multiway(k, 10_000, 100 + k as u64));
        let imp = forest.importances(false);
        for m in 0..7 {
            assert!(
                (imp[m] - row[m]).abs() < 0.01,
                "K={k} X{}: {:.4} vs {}",
                m + 1,
                imp[m],
                row[m]
            );
        }
    }
}

#[test]
fn every_fully_grown_multiway_tree_sums_to_the_mutual_information() {
    for k in 1..=7 {
        let forest = fit_led(&multiway(k, 40, k as u64));
        let d = forest.mdi_depth_count();
        for (imp, by_depth) in forest
            .tree_importances()
            .iter()
            .zip(forest.tree_mdi_by_depth())
        {
            let s: f64 = imp.iter().sum();
            assert!((s - 10f64.log2()).abs() < 1e-12, "K={k}: sum {s}");
            for m in 0..7 {
                let row: f64 = by_depth[m * d..(m + 1) * d].iter().sum();
                assert!((row - imp[m]).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn example_5_2_multiway_splits_share_the_information_equally() {
    // X1 uniform on {0, 1, 2}, Y = 1[X1 >= 1], X2 = Y: three equally likely rows.
    let x = [0.0, 0.0, 1.0, 1.0, 2.0, 1.0];
    let y = [0u32, 1, 1];
    let h = -(1.0 / 3.0f64) * (1.0 / 3.0f64).log2() - (2.0 / 3.0f64) * (2.0 / 3.0f64).log2();
    let mw = fit(&multiway(1, 20_000, 5), &x, 2, &y, 2).importances(false);
    assert!(
        (mw[0] - h / 2.0).abs() < 0.01 && (mw[1] - h / 2.0).abs() < 0.01,
        "{mw:?}"
    );
    // Binary totally randomized trees: X1 = ½(½H + ½(H − 2/3 + ½·2/3)) = 0.3758.
    let mut bin = ForestParams::totally_randomized(CriterionKind::Entropy);
    bin.n_estimators = 20_000;
    let b = fit(&bin, &x, 2, &y, 2).importances(false);
    let x1 = 0.5 * (0.5 * h + 0.5 * (h - 2.0 / 3.0 + 0.5 * 2.0 / 3.0));
    assert!(
        (b[0] - x1).abs() < 0.01 && (b[1] - (h - x1)).abs() < 0.01,
        "{b:?}"
    );
}

#[test]
fn a_quaternary_variable_gets_one_child_per_observed_value() {
    let x = [3.0, 0.0, 1.0, 3.0, 7.0];
    let y = [2u32, 0, 1, 2, 3];
    let forest = fit(&multiway(1, 3, 0), &x, 1, &y, 4);
    for tree in forest.trees() {
        // Chain of 3 links on X_0 (thresholds 0.5, 2, 5) and 4 pure leaves.
        assert_eq!(tree.len(), 7);
        let depths = tree.node_depths(true);
        let leaves: Vec<usize> = (0..7).filter(|&t| tree.is_leaf(t)).collect();
        assert_eq!(leaves.len(), 4);
        assert!(leaves.iter().all(|&t| depths[t] == 1));
    }
    assert_eq!(forest.mdi_depth_count(), 1);
    let bits = forest.mdi_by_depth()[0];
    let h = -(0.4f64 * 0.4f64.log2() + 3.0 * 0.2 * 0.2f64.log2());
    assert!((bits - h).abs() < 1e-12);
    // Unseen values go to the nearest observed value (the lower one at a mid-point).
    let probe = [-4.0, 0.4, 1.4, 2.0, 4.9, 5.1, 40.0];
    let m = Matrix::new(&probe, 7, 1, Layout::RowMajor).unwrap();
    let proba = forest.predict(m).unwrap();
    let class: Vec<usize> = proba
        .chunks(4)
        .map(|r| (0..4).max_by(|&a, &b| r[a].total_cmp(&r[b])).unwrap())
        .collect();
    assert_eq!(class, [0, 0, 1, 1, 2, 3, 3]);
}

#[test]
fn a_constant_winner_is_a_level_of_the_tree() {
    // Y = X1 and X2 constant: Thm 1 gives X1 half its information at degree 0 and half at
    // degree 1 (when X2, drawn first, is a no-op level).
    let x = [0.0, 5.0, 1.0, 5.0, 0.0, 5.0, 1.0, 5.0];
    let y = [0u32, 1, 0, 1];
    let forest = fit(&multiway(1, 4000, 9), &x, 2, &y, 2);
    assert_eq!(forest.mdi_depth_count(), 2);
    let bd = forest.mdi_by_depth();
    assert!(
        (bd[0] - 0.5).abs() < 0.02 && (bd[1] - 0.5).abs() < 0.02,
        "{bd:?}"
    );
    assert_eq!(&bd[2..], [0.0, 0.0]);
    let with_no_op = forest
        .trees()
        .iter()
        .find(|t| t.threshold(0) == NO_OP_THRESHOLD)
        .expect("some tree draws X2 first");
    assert_eq!(with_no_op.len(), 5); // no-op, its empty leaf, the split on X1, two leaves
    assert_eq!(with_no_op.node_stats().weight[4], 0.0);
    // max_depth = 1 keeps degree 0 only (Louppe 2014, Prop. 6.6): the no-op level counts.
    let mut shallow = multiway(1, 4000, 9);
    shallow.max_depth = Some(1);
    let imp = fit(&shallow, &x, 2, &y, 2).importances(false);
    assert!((imp[0] - 0.5).abs() < 0.02, "{imp:?}");
}

#[test]
fn multiway_models_are_deterministic_and_round_trip() {
    let params = multiway(3, 64, 21);
    let (x, y) = led();
    // The same matrix in the other layout: the row-major LED transposed into column-major.
    let xt: Vec<f64> = (0..7)
        .flat_map(|j| (0..10).map(move |i| (i, j)))
        .map(|(i, j)| x[i * 7 + j])
        .collect();
    let m = Matrix::new(&xt, 10, 7, Layout::ColumnMajor).unwrap();
    let targets = Targets::classes(&y, 10).unwrap();
    let one = install(1, || Forest::fit(&params, m, targets, None).unwrap());
    let two = install(2, || Forest::fit(&params, m, targets, None).unwrap());
    assert_eq!(one, two);
    assert_eq!(one, fit_led(&params), "layout changed the model");
    #[cfg(feature = "serde")]
    {
        let bytes = one.to_bytes().unwrap();
        assert_eq!(bytes, two.to_bytes().unwrap());
        let back = Forest::from_bytes(&bytes).unwrap();
        assert_eq!(back, one);
        assert!(back.is_multiway());
        assert_eq!(back.mdi_by_depth(), one.mdi_by_depth());
    }
}

#[test]
fn multiway_regression_sums_to_the_variance() {
    // y = x0 + 2 x1 on a full 3 x 3 grid: the leaves are pure, Σ MDI = Var(y).
    let x: Vec<f64> = (0..9)
        .flat_map(|i| [(i % 3) as f64, (i / 3) as f64])
        .collect();
    let y: Vec<f64> = (0..9)
        .map(|i| (i % 3) as f64 + 2.0 * (i / 3) as f64)
        .collect();
    let mean = y.iter().sum::<f64>() / 9.0;
    let var = y.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / 9.0;
    let mut p = ForestParams::totally_randomized(CriterionKind::SquaredError);
    p.splitter = SplitterKind::Multiway;
    p.n_estimators = 20;
    let m = Matrix::new(&x, 9, 2, Layout::RowMajor).unwrap();
    let f = Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap();
    for imp in f.tree_importances() {
        assert!((imp.iter().sum::<f64>() - var).abs() < 1e-12);
        // Independent inputs, additive output: Var(x0) = 2/3 and Var(2 x1) = 8/3 exactly.
        assert!((imp[0] - 2.0 / 3.0).abs() < 1e-12 && (imp[1] - 8.0 / 3.0).abs() < 1e-12);
    }
}

#[test]
fn non_integer_inputs_and_best_first_growth_are_refused() {
    let x = [0.0, 1.5, 2.0];
    let y = [0u32, 1, 1];
    let m = Matrix::new(&x, 3, 1, Layout::RowMajor).unwrap();
    let err = Forest::fit(
        &multiway(1, 2, 0),
        m,
        Targets::classes(&y, 2).unwrap(),
        None,
    );
    assert_eq!(
        err.unwrap_err(),
        ForestError::NonInteger {
            row: 1,
            col: 0,
            value: 1.5
        }
    );
    let x = [0.0, 1.0, 2.0];
    let m = Matrix::new(&x, 3, 1, Layout::RowMajor).unwrap();
    let mut p = multiway(1, 2, 0);
    p.max_leaf_nodes = Some(4);
    let err = Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap_err();
    assert!(matches!(err, ForestError::InvalidParameter { name, .. } if name == "max_leaf_nodes"));
}

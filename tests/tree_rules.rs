//! Stopping rules, sampling schemes and predictions on small problems with known answers.

mod common;

use forestimp::{
    CriterionKind, FeatureCount, Forest, ForestParams, Layout, Matrix, SampleCount, SplitterKind,
    Targets,
};

fn class_data() -> (Vec<f32>, Vec<u32>) {
    common::classification(500, 6, 4)
}

fn fit(p: &ForestParams) -> Forest {
    let (x, y) = class_data();
    let m = Matrix::new(&x, 500, 6, Layout::RowMajor).unwrap();
    Forest::fit(p, m, Targets::classes(&y, 3).unwrap(), None).unwrap()
}

fn base() -> ForestParams {
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = 6;
    p
}

#[test]
fn stopping_rules_hold_in_every_tree() {
    let mut p = base();
    p.max_depth = Some(3);
    assert!(fit(&p).trees().iter().all(|t| t.max_depth() <= 3));

    let mut p = base();
    p.min_samples_leaf = 20;
    for t in fit(&p).trees() {
        let count = t.node_stats().n_samples;
        for i in 0..t.len() {
            assert!(!t.is_leaf(i) || count[i] >= 20);
        }
    }

    let mut p = base();
    p.max_leaf_nodes = Some(7);
    for t in fit(&p).trees() {
        assert_eq!((0..t.len()).filter(|&i| t.is_leaf(i)).count(), 7);
    }

    let mut p = base();
    p.min_weight_fraction_leaf = 0.1;
    for t in fit(&p).trees() {
        let w = t.node_stats().weight;
        for i in 0..t.len() {
            assert!(!t.is_leaf(i) || w[i] >= 0.1 * w[0] - 1e-9);
        }
    }

    // A huge min_impurity_decrease leaves only the root.
    let mut p = base();
    p.min_impurity_decrease = 10.0;
    assert!(fit(&p).trees().iter().all(|t| t.len() == 1));
}

/// With K = p = 6, more candidates than one gather holds (4), so a best cut found in the
/// first batch is kept as row flags while the second is gathered: a wrong partition would
/// send training rows to leaves grown on other rows.
#[test]
fn fully_grown_trees_fit_the_training_set() {
    let (x, y) = class_data();
    for splitter in [
        SplitterKind::Best,
        SplitterKind::Random,
        SplitterKind::Histogram { max_bins: 255 },
    ] {
        let mut p = base();
        p.bootstrap = false;
        p.max_features = FeatureCount::All;
        p.splitter = splitter;
        let f = fit(&p);
        let m = Matrix::new(&x, 500, 6, Layout::RowMajor).unwrap();
        let proba = f.predict(m).unwrap();
        for (i, &c) in y.iter().enumerate() {
            assert_eq!(proba[i * 3 + c as usize], 1.0, "{splitter:?}, row {i}");
        }
    }
}

#[test]
fn node_statistics_are_consistent() {
    for t in fit(&base()).trees() {
        let s = t.node_stats();
        let (w, imp, count) = (&s.weight, &s.impurity, &s.n_samples);
        for i in 0..t.len() {
            let v = s.value(i);
            assert!((v.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            if t.is_leaf(i) {
                assert_eq!(v, t.value(i));
            }
            if let Some((l, r)) = t.children(i) {
                assert!(l > i && r > i);
                assert_eq!(count[i], count[l] + count[r]);
                // A split never increases the weighted impurity.
                let dec = w[i] * imp[i] - w[l] * imp[l] - w[r] * imp[r];
                assert!(dec > -1e-9);
            }
        }
    }
}

#[test]
fn random_patches_trees_only_use_their_features() {
    let mut p = ForestParams::random_patches(CriterionKind::Gini, 0.5, 0.5);
    p.n_estimators = 20;
    for t in fit(&p).trees() {
        let used: std::collections::BTreeSet<u32> = (0..t.len())
            .filter(|&i| !t.is_leaf(i))
            .map(|i| t.feature(i))
            .collect();
        assert!(used.len() <= 3);
        // Subsampling without replacement: 250 distinct rows at the root.
        assert_eq!(t.node_stats().n_samples[0], 250);
    }
}

#[test]
fn bootstrap_draws_n_rows_with_replacement() {
    let mut p = base();
    p.max_samples = Some(SampleCount::Count(300));
    for t in fit(&p).trees() {
        let s = t.node_stats();
        assert_eq!(s.weight[0], 300.0); // weights count repeated draws
        assert!(s.n_samples[0] < 300); // distinct rows
    }
}

#[test]
fn oob_accuracy_is_sensible_and_needs_left_out_rows() {
    let mut p = base();
    p.n_estimators = 40;
    let (x, y) = class_data();
    let m = Matrix::new(&x, 500, 6, Layout::RowMajor).unwrap();
    let f = Forest::fit(&p, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    let (proba, counts) = f.oob_predict(m).unwrap();
    let correct = (0..500)
        .filter(|&i| {
            let row = &proba[i * 3..i * 3 + 3];
            let best = (0..3).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
            counts[i] > 0 && best == y[i] as usize
        })
        .count();
    assert!(correct > 350, "OOB accuracy {correct}/500");
    let mut et = ForestParams::extra_trees(CriterionKind::Gini);
    et.n_estimators = 3;
    let g = Forest::fit(&et, m, Targets::classes(&y, 3).unwrap(), None).unwrap();
    assert!(g.oob_predict(m).is_err());
}

#[test]
fn regression_beats_the_mean() {
    let (x, y) = common::regression(800, 5, 6);
    let m = Matrix::new(&x, 800, 5, Layout::RowMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
    p.max_features = FeatureCount::All;
    p.n_estimators = 30;
    let f = Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap();
    let (pred, _) = f.oob_predict(m).unwrap();
    let mean = y.iter().sum::<f64>() / 800.0;
    let sse: f64 = y.iter().zip(&pred).map(|(a, b)| (a - b) * (a - b)).sum();
    let sst: f64 = y.iter().map(|a| (a - mean) * (a - mean)).sum();
    assert!(1.0 - sse / sst > 0.8, "OOB R2 {}", 1.0 - sse / sst);
    let imp = f.importances(true);
    // Var(sin 3x0) ≈ 0.52 vs Var(x1²) ≈ 0.09 on U(-1, 1); the noise features get little.
    assert!(
        imp[0] > 0.7 && imp[1] > 0.1 && imp[2..].iter().all(|&v| v < 0.01),
        "{imp:?}"
    );
}

#[test]
fn invalid_parameters_are_named() {
    let (x, y) = class_data();
    let m = Matrix::new(&x, 500, 6, Layout::RowMajor).unwrap();
    let t = Targets::classes(&y, 3).unwrap();
    type Edit = Box<dyn Fn(&mut ForestParams)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("n_estimators", Box::new(|p| p.n_estimators = 0)),
        (
            "max_features",
            Box::new(|p| p.max_features = FeatureCount::Count(7)),
        ),
        (
            "max_samples",
            Box::new(|p| p.max_samples = Some(SampleCount::Fraction(1.5))),
        ),
        ("min_samples_split", Box::new(|p| p.min_samples_split = 1)),
        (
            "criterion",
            Box::new(|p| p.criterion = CriterionKind::SquaredError),
        ),
    ];
    for (name, edit) in cases {
        let mut p = base();
        edit(&mut p);
        match Forest::fit(&p, m, t, None) {
            Err(forestimp::ForestError::InvalidParameter { name: got, .. }) => {
                assert_eq!(got, name)
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    let bad = [f32::INFINITY; 6];
    let mb = Matrix::new(&bad, 1, 6, Layout::RowMajor).unwrap();
    assert!(Forest::fit(&base(), mb, Targets::classes(&[0], 1).unwrap(), None).is_err());
}

/// One feature `x = 0..80`, class `x ≥ 40`, and 20 NaN rows of class `nan_class`: the root
/// splits at 39.5 and sends NaN to the side of its class, for the exact splitter (which
/// scores both sides) and, over enough trees, for the random one (which draws the side:
/// both sides occur). Predictions of NaN rows follow the learned side.
#[test]
fn missing_values_go_to_the_side_the_split_learned() {
    for nan_class in [0u32, 1] {
        let mut x: Vec<f64> = (0..80).map(f64::from).collect();
        x.extend([f64::NAN; 20]);
        let mut y: Vec<u32> = (0..80).map(|i| u32::from(i >= 40)).collect();
        y.extend([nan_class; 20]);
        let m = Matrix::new(&x, 100, 1, Layout::RowMajor).unwrap();
        let t = Targets::classes(&y, 2).unwrap();
        let mut p = base();
        p.bootstrap = false;
        p.max_depth = Some(1);
        let f = Forest::fit(&p, m, t, None).unwrap();
        for tree in f.trees() {
            assert_eq!(tree.threshold(0), 39.5);
            assert_eq!(tree.missing_left(0), nan_class == 0);
        }
        let probe = [f64::NAN, 10.0, 70.0];
        let probe = Matrix::new(&probe, 3, 1, Layout::RowMajor).unwrap();
        let proba = f.predict(probe).unwrap();
        assert_eq!(
            proba[usize::from(nan_class == 0)],
            0.0,
            "NaN row: {proba:?}"
        );
        // Extra-Trees: random thresholds, NaN sent to a random side.
        let mut p = ForestParams::extra_trees(CriterionKind::Gini);
        p.n_estimators = 40;
        p.max_depth = Some(1);
        let f = Forest::fit(&p, m, t, None).unwrap();
        let left = f.trees().iter().filter(|t| t.missing_left(0)).count();
        assert!(left > 5 && left < 35, "{left} of 40 trees send NaN left");
    }
    // All rows NaN but one value: the feature is constant, the tree a leaf.
    let x = [1.0, f64::NAN, f64::NAN, 1.0];
    let m = Matrix::new(&x, 4, 1, Layout::RowMajor).unwrap();
    let f = Forest::fit(
        &base(),
        m,
        Targets::classes(&[0, 1, 1, 0], 2).unwrap(),
        None,
    )
    .unwrap();
    assert!(f.trees().iter().all(|t| t.len() == 1));
}

#[test]
fn best_first_growth_without_a_leaf_limit_gives_the_depth_first_tree() {
    // One feature and no bootstrap: no draw and no tie between features, so the splits do
    // not depend on the order in which nodes are grown, and best-first growth (renumbered
    // to pre-order when it finishes) must give the depth-first trees (handed over as
    // grown) exactly. (With several features, ties at small nodes go to the feature drawn
    // first, and the draws follow the growth order.)
    let (x, y) = class_data();
    let x0: Vec<f32> = x.chunks(6).map(|row| row[0]).collect();
    let m = Matrix::new(&x0, 500, 1, Layout::RowMajor).unwrap();
    let grow = |p: &ForestParams| Forest::fit(p, m, Targets::classes(&y, 3).unwrap(), None);
    let mut p = base();
    p.bootstrap = false;
    let depth_first = grow(&p).unwrap();
    p.max_leaf_nodes = Some(100_000);
    let best_first = grow(&p).unwrap();
    assert!(depth_first.trees().iter().all(|t| t.n_leaves() > 50));
    assert_eq!(depth_first.trees(), best_first.trees());
}

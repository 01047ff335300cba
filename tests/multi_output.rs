//! Multi-output forests: a tree against the same computation by hand, every splitter on
//! several outputs, the model format of version 4 (with `serde`), and what refuses several
//! outputs.

mod common;

use forestimp::rng::TreeRng;
use forestimp::{
    CriterionKind, FeatureCount, Forest, ForestError, ForestParams, Layout, Matrix, SplitterKind,
    Targets,
};

/// One deterministic tree: every feature at every node, every row once.
fn one_tree(criterion: CriterionKind, max_depth: usize) -> ForestParams {
    let mut p = ForestParams::random_forest(criterion);
    p.n_estimators = 1;
    p.bootstrap = false;
    p.max_features = FeatureCount::All;
    p.max_depth = Some(max_depth);
    p
}

/// 8 rows, 2 features, 2 outputs whose best splits disagree: output 0 follows x0, output
/// 1 follows x1 less cleanly. Values are distinct per feature (no ties between cuts).
const X: [f64; 16] = [
    0.1, 0.7, 0.2, 0.3, 0.3, 0.9, 0.4, 0.1, 0.5, 0.8, 0.6, 0.2, 0.7, 0.6, 0.8, 0.4,
];
const Y_CODES: [u32; 16] = [0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0];
const Y_VALUES: [f64; 16] = [
    1.0, 5.0, 1.5, 2.0, 0.5, 6.0, 1.0, 1.0, 4.0, 5.5, 4.5, 2.5, 5.0, 4.0, 4.5, 3.0,
];

/// Mean over the two outputs of the Gini index of the rows `rows`.
fn mean_gini(rows: &[usize]) -> f64 {
    let mut sum = 0.0;
    for k in 0..2 {
        let n = rows.len() as f64;
        let ones = rows.iter().filter(|&&i| Y_CODES[2 * i + k] == 1).count() as f64;
        sum += 1.0 - (ones / n).powi(2) - ((n - ones) / n).powi(2);
    }
    sum / 2.0
}

/// Mean over the two outputs of the variance of the rows `rows`.
fn mean_variance(rows: &[usize]) -> f64 {
    let mut sum = 0.0;
    for k in 0..2 {
        let v: Vec<f64> = rows.iter().map(|&i| Y_VALUES[2 * i + k]).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        sum += v.iter().map(|y| (y - mean) * (y - mean)).sum::<f64>() / v.len() as f64;
    }
    sum / 2.0
}

/// The root split by exhaustive search: `(feature, threshold, decrease)` maximizing the
/// weighted decrease of `impurity`, the threshold the midpoint between sorted values.
fn best_root(impurity: fn(&[usize]) -> f64) -> (usize, f64, f64) {
    let all: Vec<usize> = (0..8).collect();
    let mut best = (usize::MAX, f64::NAN, f64::NEG_INFINITY);
    for f in 0..2 {
        let mut values: Vec<f64> = (0..8).map(|i| X[2 * i + f]).collect();
        values.sort_by(f64::total_cmp);
        for w in values.windows(2) {
            let t = (w[0] + w[1]) / 2.0;
            let (l, r): (Vec<usize>, Vec<usize>) = all.iter().partition(|&&i| X[2 * i + f] <= t);
            let dec = impurity(&all)
                - (l.len() as f64 * impurity(&l) + r.len() as f64 * impurity(&r)) / 8.0;
            if dec > best.2 + 1e-12 {
                best = (f, t, dec);
            }
        }
    }
    best
}

#[test]
fn a_multi_output_stump_equals_the_search_by_hand() {
    let m = Matrix::new(&X, 8, 2, Layout::RowMajor).unwrap();
    for (criterion, targets, impurity) in [
        (
            CriterionKind::Gini,
            Targets::multi_classes(&Y_CODES, &[2, 2]).unwrap(),
            mean_gini as fn(&[usize]) -> f64,
        ),
        (
            CriterionKind::SquaredError,
            Targets::multi_regression(&Y_VALUES, 2).unwrap(),
            mean_variance,
        ),
    ] {
        let f = Forest::fit(&one_tree(criterion, 1), m, targets, None).unwrap();
        let tree = &f.trees()[0];
        let (feature, threshold, decrease) = best_root(impurity);
        assert_eq!(tree.feature(0) as usize, feature, "{criterion:?}");
        assert!((tree.threshold(0) - threshold).abs() < 1e-12);
        // Leaf values: each output's class frequencies (or mean) over the leaf's rows.
        let (l, r) = tree.children(0).unwrap();
        for (leaf, left) in [(l, true), (r, false)] {
            let rows: Vec<usize> = (0..8)
                .filter(|&i| (X[2 * i + feature] <= threshold) == left)
                .collect();
            let n = rows.len() as f64;
            let want: Vec<f64> = match criterion {
                CriterionKind::Gini => (0..2)
                    .flat_map(|k| {
                        let ones = rows.iter().filter(|&&i| Y_CODES[2 * i + k] == 1).count();
                        [(n - ones as f64) / n, ones as f64 / n]
                    })
                    .collect(),
                _ => (0..2)
                    .map(|k| rows.iter().map(|&i| Y_VALUES[2 * i + k]).sum::<f64>() / n)
                    .collect(),
            };
            let got = tree.value(leaf);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-12, "{criterion:?}: {got:?} vs {want:?}");
            }
        }
        // Node impurities are the means over outputs, and MDI is the decrease.
        let s = tree.node_stats();
        let all: Vec<usize> = (0..8).collect();
        assert!((s.impurity[0] - impurity(&all)).abs() < 1e-12);
        let mdi = f.importances(false);
        assert!(
            (mdi[feature] - decrease).abs() < 1e-12,
            "{mdi:?} vs {decrease}"
        );
        // The shares of the outputs sum to it.
        let shares = &f.tree_importances_by_output()[0];
        assert!((shares[feature] + shares[2 + feature] - decrease).abs() < 1e-12);
        // Predictions: the leaf values, side by side.
        let pred = f.predict(m).unwrap();
        assert_eq!(pred.len(), 8 * tree.width());
    }
}

/// Targets whose outputs are a function of the features.
fn problem(n: usize) -> (Vec<f64>, Vec<u32>, Vec<f64>) {
    let mut rng = TreeRng::new(3);
    let x: Vec<f64> = (0..n * 4).map(|_| rng.unit()).collect();
    let codes = (0..n)
        .flat_map(|i| {
            let r = &x[4 * i..4 * i + 4];
            [u32::from(r[0] > 0.5), (r[1] * 3.0) as u32]
        })
        .collect();
    let values = (0..n)
        .flat_map(|i| {
            let r = &x[4 * i..4 * i + 4];
            [r[0] + r[2], 10.0 * r[1] * r[3], -r[2]]
        })
        .collect();
    (x, codes, values)
}

#[test]
fn every_splitter_grows_multi_output_trees_that_round_trip() {
    let n = 200;
    let (x, codes, values) = problem(n);
    let m = Matrix::new(&x, n, 4, Layout::RowMajor).unwrap();
    let splitters = [
        SplitterKind::Best,
        SplitterKind::Random,
        SplitterKind::Histogram { max_bins: 32 },
    ];
    for splitter in splitters {
        for (criterion, targets) in [
            (
                CriterionKind::Entropy,
                Targets::multi_classes(&codes, &[2, 3]).unwrap(),
            ),
            (
                CriterionKind::SquaredError,
                Targets::multi_regression(&values, 3).unwrap(),
            ),
        ] {
            let mut p = ForestParams::random_forest(criterion);
            p.splitter = splitter;
            p.n_estimators = 4;
            let f = Forest::fit(&p, m, targets, None).unwrap();
            assert_eq!(f.width(), targets.width());
            assert_eq!(f.n_outputs(), targets.outputs().len());
            // Fully grown: every output is fitted on the training rows (most of them in
            // the bags of most trees).
            let pred = f.predict(m).unwrap();
            assert_eq!(pred.len(), n * f.width());
            let fit = training_fit(&pred, targets, n);
            assert!(fit.iter().all(|&v| v > 0.8), "{splitter:?}: {fit:?}");
            #[cfg(feature = "serde")]
            round_trip(&f);
        }
    }
}

/// Per output: the accuracy of the most probable class, or R², of predictions `pred`.
fn training_fit(pred: &[f64], targets: Targets<'_>, n: usize) -> Vec<f64> {
    let w = pred.len() / n;
    match targets {
        Targets::MultiClasses { y, n_classes, .. } => {
            let m = n_classes.len();
            let mut start = 0;
            let mut out = Vec::new();
            for (k, &c) in n_classes.iter().enumerate() {
                let hits = (0..n)
                    .filter(|&i| {
                        let p = &pred[i * w + start..i * w + start + c];
                        let best = (0..c).fold(0, |b, j| if p[j] > p[b] { j } else { b });
                        best as u32 == y[i * m + k]
                    })
                    .count();
                out.push(hits as f64 / n as f64);
                start += c;
            }
            out
        }
        Targets::MultiRegression { y, n_outputs, .. } => (0..n_outputs)
            .map(|k| {
                let mean = (0..n).map(|i| y[i * w + k]).sum::<f64>() / n as f64;
                let (mut ss, mut tot) = (0.0, 0.0);
                for i in 0..n {
                    ss += (y[i * w + k] - pred[i * w + k]).powi(2);
                    tot += (y[i * w + k] - mean).powi(2);
                }
                1.0 - ss / tot
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The model bytes of version 4: exact round trip; damage is an error, never a panic.
#[cfg(feature = "serde")]
fn round_trip(f: &Forest) {
    let bytes = f.to_bytes().unwrap();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 4);
    let g = Forest::from_bytes(&bytes).unwrap();
    assert_eq!(*f, g);
    assert_eq!(g.to_bytes().unwrap(), bytes);
    // Damage: an error, never a panic.
    let mut rng = TreeRng::new(9);
    for _ in 0..300 {
        let mut b = bytes.clone();
        let i = rng.below(b.len());
        b[i] ^= 1 << rng.below(8);
        assert!(Forest::from_bytes(&b).is_err());
    }
    for cut in [0, 20, bytes.len() / 2, bytes.len() - 1] {
        assert!(Forest::from_bytes(&bytes[..cut]).is_err());
    }
}

/// Codes as the values MDI-oob reads (one per row: the first output's).
fn targets_of(codes: &[u32]) -> Vec<f64> {
    codes.iter().step_by(2).map(|&c| f64::from(c)).collect()
}

#[test]
fn what_does_not_support_several_outputs_says_so() {
    let n = 60;
    let (x, codes, values) = problem(n);
    let m = Matrix::new(&x, n, 4, Layout::RowMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::Poisson);
    p.n_estimators = 2;
    let positive: Vec<f64> = values.iter().map(|v| v.abs()).collect();
    let t = Targets::multi_regression(&positive, 3).unwrap();
    assert!(matches!(
        Forest::fit(&p, m, t, None),
        Err(ForestError::Unsupported(_))
    ));
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = 2;
    let f = Forest::fit(
        &p,
        m,
        Targets::multi_classes(&codes, &[2, 3]).unwrap(),
        None,
    )
    .unwrap();
    let values = targets_of(&codes);
    assert!(matches!(
        f.tree_mdi_oob(m, &values),
        Err(ForestError::Unsupported(_))
    ));
    // Bad targets: codes out of range, rows of the wrong width, non-finite values.
    assert!(Targets::multi_classes(&codes, &[2, 2]).is_err());
    assert!(Targets::multi_classes(&codes[..5], &[2, 3]).is_err());
    assert!(Targets::multi_regression(&[1.0, f64::NAN], 2).is_err());
    assert!(Targets::multi_regression(&[1.0, 2.0, 3.0], 2).is_err());
    // A y with another row count than X.
    let short = Targets::multi_regression(&values[..30], 3).unwrap();
    assert!(matches!(
        Forest::fit(&p, m, short, None),
        Err(ForestError::Shape(_))
    ));
}

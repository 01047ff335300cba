//! The histogram splitter on X with missing values (NaN in their own bin): with one bin
//! per distinct non-missing value and whole sums, the exact splitter's trees, node for node,
//! through every candidate source (gathered codes, kept node bins, code lists).

use forestimp::rng::TreeRng;
use forestimp::{CriterionKind, Forest, ForestParams, Layout, Matrix, SplitterKind, Targets};

/// `n × p` integer values below `levels`, a fifth of them NaN, column 2 NaN wherever
/// column 0 is below 8 (so all NaN in some nodes), and a class of columns 0 and 1.
fn data(n: usize, p: usize, levels: usize, seed: u64) -> (Vec<f64>, Vec<u32>) {
    let mut rng = TreeRng::new(seed);
    let mut x: Vec<f64> = (0..n * p).map(|_| rng.below(levels) as f64).collect();
    let y: Vec<u32> = (0..n)
        .map(|i| u32::from(x[i * p] + x[i * p + 1] > levels as f64) ^ u32::from(rng.below(10) == 0))
        .collect();
    for i in 0..n {
        if x[i * p] < 8.0 {
            x[i * p + 2] = f64::NAN;
        }
        for j in 0..p {
            if rng.below(5) == 0 {
                x[i * p + j] = f64::NAN;
            }
        }
    }
    (x, y)
}

/// Fits the exact and the histogram forests of `params` and checks that the trees are the
/// same, node for node, and that every training row reaches the same leaf in both.
fn same_trees(n: usize, params: &ForestParams, weights: bool, regression: bool) {
    let cols = 6;
    let (x, y) = data(n, cols, 30, 1);
    let m = Matrix::new(&x, n, cols, Layout::RowMajor).unwrap();
    let yr: Vec<f64> = y.iter().map(|&c| f64::from(c) * 3.0 - 1.0).collect();
    let w: Vec<f64> = (0..n).map(|i| (1 + i % 3) as f64).collect();
    let fit = |splitter| {
        let mut p = params.clone();
        p.splitter = splitter;
        let t = match regression {
            true => Targets::regression(&yr).unwrap(),
            false => Targets::classes(&y, 2).unwrap(),
        };
        Forest::fit(&p, m, t, weights.then_some(&w[..])).unwrap()
    };
    let exact = fit(SplitterKind::Best);
    let hist = fit(SplitterKind::Histogram { max_bins: 255 });
    for (a, b) in exact.trees().iter().zip(hist.trees()) {
        let (sa, sb) = (a.node_stats(), b.node_stats());
        for t in 0..a.len().min(b.len()) {
            let case = format!(
                "node {t} of {n} rows, weights {weights}, regression {regression}, {:?}",
                params.max_features
            );
            assert_eq!(sa.n_samples[t], sb.n_samples[t], "{case}");
            assert_eq!(a.feature(t), b.feature(t), "{case}");
            assert_eq!(a.missing_left(t), b.missing_left(t), "{case}");
            // "Non-missing left, missing right" keeps its threshold +inf.
            assert_eq!(
                a.threshold(t).is_finite(),
                b.threshold(t).is_finite(),
                "{case}"
            );
        }
        assert_eq!(a.len(), b.len());
    }
    // Thresholds are edges of the whole column's values, which may differ from the node's
    // mid-points where values are absent from the node: the training rows (and NaN,
    // whichever rows hold it) are routed alike, new values may not be.
    assert_eq!(exact.apply(m).unwrap(), hist.apply(m).unwrap());
    assert_eq!(exact.predict(m).unwrap(), hist.predict(m).unwrap());
}

#[test]
fn hist_grows_the_exact_trees_with_missing_values() {
    for (n, max_features) in [(500, 0.3), (500, 1.0), (3000, 0.3), (3000, 1.0)] {
        for (weights, regression) in [(false, false), (true, false), (false, true), (true, true)] {
            let mut p = ForestParams::random_forest(CriterionKind::Gini);
            if regression {
                p = ForestParams::random_forest(CriterionKind::SquaredError);
            }
            p.n_estimators = 4;
            p.bootstrap = false;
            p.min_samples_leaf = 2;
            p.max_features = forestimp::FeatureCount::Fraction(max_features);
            same_trees(n, &p, weights, regression);
            // Best-first growth.
            p.max_leaf_nodes = Some(40);
            same_trees(n, &p, weights, regression);
        }
    }
}

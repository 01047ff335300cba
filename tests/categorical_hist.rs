//! Categorical features in the histogram splitter and the boosters: with a bin per category
//! the histogram trees are the exact trees; with more categories than bins the rare ones
//! share a bin and so always go together; boosters split categories too.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize};

use common::lcg;
use forestimp::{
    BoostParams, Booster, CriterionKind, FeatureCount, Forest, ForestParams, Layout, Loss, Matrix,
    SplitterKind, Targets,
};

/// `n` rows (row-major) of two categorical columns, the first over `levels` codes
/// `0, 3, 6, …` with NaN in one row of 9, the second over 5 codes; y a sum of
/// per-category effects plus noise.
fn data(n: usize, levels: usize, seed: u64) -> (Vec<f32>, Vec<f64>) {
    let mut u = lcg(seed);
    let effect: Vec<f64> = (0..levels).map(|_| u()).collect();
    let mut x = Vec::with_capacity(2 * n);
    let mut y = Vec::with_capacity(n);
    let frequent = 10.min(levels);
    for i in 0..n {
        // Skewed: 85 % of the rows in the first ten categories, the rest spread thin.
        let k = match u() < 0.85 {
            true => (u() * frequent as f64) as usize,
            false => (u() * levels as f64) as usize,
        };
        let b = ((u() * 5.0) as usize).min(4);
        let a = if i % 9 == 4 { f32::NAN } else { (3 * k) as f32 };
        x.extend([a, b as f32]);
        let nan_effect = if a.is_nan() { 0.7 } else { effect[k] };
        y.push(4.0 * nan_effect + [0.0, 1.0, 0.0, 2.0, 1.0][b] + 0.3 * u());
    }
    (x, y)
}

fn params(splitter: SplitterKind) -> ForestParams {
    let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
    p.n_estimators = 3;
    p.bootstrap = false;
    p.max_features = FeatureCount::All;
    p.splitter = splitter;
    p.categorical = Some(vec![true, true]);
    p
}

/// Probes: every code up to past the largest, fractions, negatives and NaN in column 0.
fn probes(levels: usize) -> Vec<f32> {
    let mut x = Vec::new();
    for v in (0..3 * levels + 5)
        .map(|c| c as f32)
        .chain([-1.0, 2.5, 1e7, f32::NAN])
    {
        for b in 0..6 {
            x.extend([v, b as f32]);
        }
    }
    x
}

#[test]
fn with_a_bin_per_category_the_histogram_trees_are_the_exact_ones() {
    let (n, levels) = (2_000, 60);
    let (x, y) = data(n, levels, 5);
    let fit = |splitter| {
        let m = Matrix::new(&x, n, 2, Layout::RowMajor).unwrap();
        let targets = Targets::regression(&y).unwrap();
        Forest::fit(&params(splitter), m, targets, None).unwrap()
    };
    let exact = fit(SplitterKind::Best);
    let hist = fit(SplitterKind::Histogram { max_bins: 255 });
    assert!(hist.trees()[0].has_categorical_splits());
    let probe = probes(levels);
    let rows = probe.len() / 2;
    let on =
        |f: &Forest, x: &[f32], rows| f.apply(Matrix::new(x, rows, 2, Layout::RowMajor).unwrap());
    // The same leaves for the training rows, every code (seen or not), and NaN.
    assert_eq!(on(&hist, &x, n).unwrap(), on(&exact, &x, n).unwrap());
    assert_eq!(
        on(&hist, &probe, rows).unwrap(),
        on(&exact, &probe, rows).unwrap()
    );
    let m = |x| Matrix::new(x, rows, 2, Layout::RowMajor).unwrap();
    assert_eq!(
        hist.predict(m(&probe)).unwrap(),
        exact.predict(m(&probe)).unwrap()
    );
}

#[test]
fn past_the_bins_rare_categories_go_with_their_neighbours() {
    let (n, levels, max_bins) = (3_000, 400, 16);
    let (x, y) = data(n, levels, 8);
    let mut p = params(SplitterKind::Histogram { max_bins });
    p.n_estimators = 4;
    p.bootstrap = true;
    let fit = || {
        let m = Matrix::new(&x, n, 2, Layout::RowMajor).unwrap();
        Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap()
    };
    let forest = fit();
    // (Debug: a set's reference is a NaN, which `==` never equals.)
    assert_eq!(format!("{forest:?}"), format!("{:?}", fit()));
    // The categories fill the 16 bins (NaN has a code of its own) in category order, so
    // those seen in training reach, in every tree, the leaves of at most 16 runs of
    // neighbours.
    let mut counts = vec![0usize; levels];
    for v in x.chunks(2).map(|r| r[0]).filter(|v| !v.is_nan()) {
        counts[v as usize / 3] += 1;
    }
    let seen: Vec<usize> = (0..levels).filter(|&k| counts[k] > 0).collect();
    assert!(seen.len() > 200, "{}", seen.len());
    let probe: Vec<f32> = seen.iter().flat_map(|&k| [(3 * k) as f32, 2.0]).collect();
    let leaves = forest
        .apply(Matrix::new(&probe, seen.len(), 2, Layout::RowMajor).unwrap())
        .unwrap();
    let trees = forest.trees().len();
    let rows: Vec<&[u32]> = leaves.chunks(trees).collect();
    let runs = 1 + rows.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(runs <= usize::from(max_bins), "{runs} runs");
    assert!(runs >= 5, "{runs} runs");
    // And the forest learned the frequent categories: a fit far better than the mean.
    let pred = forest
        .predict(Matrix::new(&x, n, 2, Layout::RowMajor).unwrap())
        .unwrap();
    let mean = y.iter().sum::<f64>() / n as f64;
    let sse = |f: &dyn Fn(usize) -> f64| (0..n).map(|i| (y[i] - f(i)).powi(2)).sum::<f64>();
    assert!(sse(&|i| pred[i]) < 0.5 * sse(&|_| mean));
}

#[test]
fn boosters_split_categories_with_either_splitter() {
    let (n, levels) = (1_500, 40);
    let (x, y) = data(n, levels, 13);
    let m = || Matrix::new(&x, n, 2, Layout::RowMajor).unwrap();
    for splitter in [
        SplitterKind::Best,
        SplitterKind::Histogram { max_bins: 255 },
    ] {
        let mut tree = params(splitter);
        tree.n_estimators = 1;
        tree.max_depth = Some(3);
        tree.max_leaf_nodes = matches!(splitter, SplitterKind::Best).then_some(8);
        let p = BoostParams {
            loss: Loss::SquaredError,
            learning_rate: 0.3,
            n_estimators: 20,
            subsample: 1.0,
            init_zero: false,
            n_iter_no_change: None,
            tol: 1e-4,
            tree,
        };
        let (stop, done) = (AtomicBool::new(false), AtomicUsize::new(0));
        let fit = || Booster::fit(&p, m(), &y, 0, None, None, None, None, &stop, &done).unwrap();
        let b = fit();
        assert_eq!(format!("{b:?}"), format!("{:?}", fit()));
        assert!(b.trees().iter().all(|t| t.has_categorical_splits()));
        let pred = b.raw_predict(m(), None).unwrap();
        #[cfg(feature = "serde")]
        {
            let back = Booster::from_bytes(&b.to_bytes().unwrap()).unwrap();
            assert_eq!(back.raw_predict(m(), None).unwrap(), pred);
        }
        let mean = y.iter().sum::<f64>() / n as f64;
        let sse = |f: &dyn Fn(usize) -> f64| (0..n).map(|i| (y[i] - f(i)).powi(2)).sum::<f64>();
        assert!(sse(&|i| pred[i]) < 0.3 * sse(&|_| mean), "{splitter:?}");
    }
}

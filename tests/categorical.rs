//! Categorical features through the crate's API: the exact search finds the best of all
//! partitions of the categories (checked by brute force), trees route categories, NaN and
//! unseen codes as documented, Extra-Trees draw proper subsets, and what the search cannot
//! split is refused with typed errors.

mod common;

use common::lcg;
use forestimp::{
    CriterionKind, FeatureCount, Forest, ForestError, ForestParams, Layout, Matrix, SplitterKind,
    Targets,
};

/// One categorical column of `n` rows over `levels` categories (codes skipping some, so
/// that absent codes occur), with a per-category effect.
fn column(n: usize, levels: usize, seed: u64) -> (Vec<f32>, Vec<f64>) {
    let mut u = lcg(seed);
    let effect: Vec<f64> = (0..levels).map(|_| u()).collect();
    let codes: Vec<usize> = (0..levels).map(|k| 2 * k + 1).collect();
    let mut x = Vec::with_capacity(n);
    let mut p = Vec::with_capacity(n);
    for _ in 0..n {
        let k = ((u() * levels as f64) as usize).min(levels - 1);
        x.push(codes[k] as f32);
        p.push(effect[k]);
    }
    (x, p)
}

fn stump(criterion: CriterionKind, splitter: SplitterKind) -> ForestParams {
    let mut p = ForestParams::random_forest(criterion);
    p.n_estimators = 1;
    p.bootstrap = false;
    p.max_features = FeatureCount::All;
    p.max_depth = Some(1);
    p.splitter = splitter;
    p.categorical = Some(vec![true]);
    p
}

/// The impurity of one side's rows.
type SideImpurity<'a> = &'a dyn Fn(&[usize]) -> f64;

/// The weighted impurity of the two sides of `left` (per row), `impurity` of a side's
/// statistics.
fn children_impurity(left: &[bool], ws: &[f64], side_impurity: &dyn Fn(&[usize]) -> f64) -> f64 {
    let l: Vec<usize> = (0..left.len()).filter(|&i| left[i]).collect();
    let r: Vec<usize> = (0..left.len()).filter(|&i| !left[i]).collect();
    let w = |rows: &[usize]| rows.iter().map(|&i| ws[i]).sum::<f64>();
    w(&l) * side_impurity(&l) + w(&r) * side_impurity(&r)
}

/// The least weighted impurity of the children over every partition of the categories
/// present in `x` into two non-empty sides.
fn brute_force(x: &[f32], ws: &[f64], side_impurity: &dyn Fn(&[usize]) -> f64) -> f64 {
    let mut cats: Vec<u32> = x.iter().map(|&v| v as u32).collect();
    cats.sort_unstable();
    cats.dedup();
    let m = cats.len();
    let mut best = f64::INFINITY;
    // The last category stays right: each partition once.
    for mask in 1u64..(1 << (m - 1)) {
        let left: Vec<bool> = x
            .iter()
            .map(|&v| {
                let k = cats.iter().position(|&c| c == v as u32).unwrap();
                mask >> k & 1 == 1
            })
            .collect();
        best = best.min(children_impurity(&left, ws, side_impurity));
    }
    best
}

/// Whether category `c` goes left in `set` (bit `c` of word `c / 64`), or the unseen side.
fn in_set(set: (&[u64], bool), c: usize) -> bool {
    set.0.get(c / 64).map_or(set.1, |w| w >> (c % 64) & 1 == 1)
}

#[test]
fn the_exact_search_finds_the_best_partition_of_the_categories() {
    for trial in 0..30u64 {
        let (n, levels) = (60 + 7 * trial as usize, 2 + trial as usize % 9);
        let (x, effect) = column(n, levels, trial);
        let mut u = lcg(1000 + trial);
        let ws: Vec<f64> = (0..n)
            .map(|_| [1.0, 2.0, 0.5][(u() * 3.0) as usize % 3])
            .collect();
        for classification in [true, false] {
            let yc: Vec<u32> = effect.iter().map(|&e| u32::from(u() < e)).collect();
            let yr: Vec<f64> = effect.iter().map(|&e| 3.0 * e + u()).collect();
            let gini = |rows: &[usize]| {
                let w: f64 = rows.iter().map(|&i| ws[i]).sum();
                let w1: f64 = rows.iter().filter(|&&i| yc[i] == 1).map(|&i| ws[i]).sum();
                let p = w1 / w;
                1.0 - p * p - (1.0 - p) * (1.0 - p)
            };
            let variance = |rows: &[usize]| {
                let w: f64 = rows.iter().map(|&i| ws[i]).sum();
                let m = rows.iter().map(|&i| ws[i] * yr[i]).sum::<f64>() / w;
                rows.iter()
                    .map(|&i| ws[i] * (yr[i] - m).powi(2))
                    .sum::<f64>()
                    / w
            };
            let (criterion, side): (_, SideImpurity<'_>) = match classification {
                true => (CriterionKind::Gini, &gini),
                false => (CriterionKind::SquaredError, &variance),
            };
            let m = Matrix::new(&x, n, 1, Layout::RowMajor).unwrap();
            let targets = match classification {
                true => Targets::classes(&yc, 2).unwrap(),
                false => Targets::regression(&yr).unwrap(),
            };
            let p = stump(criterion, SplitterKind::Best);
            let forest = Forest::fit(&p, m, targets, Some(&ws)).unwrap();
            let tree = &forest.trees()[0];
            let best = brute_force(&x, &ws, side);
            let case = format!("trial {trial}, classification {classification}");
            let Some(set) = tree.category_set(0) else {
                // A pure node, or a single category: no split can lower the impurity.
                assert!(
                    best >= children_impurity(&vec![true; n], &ws, side) - 1e-9,
                    "{case}"
                );
                continue;
            };
            let left: Vec<bool> = x.iter().map(|&v| in_set(set, v as usize)).collect();
            let found = children_impurity(&left, &ws, side);
            assert!(
                (found - best).abs() <= 1e-9 * best.abs().max(1.0),
                "{case}: found {found}, best partition {best}"
            );
            // The tree routes each row by its set.
            let leaves = forest
                .apply(Matrix::new(&x, n, 1, Layout::RowMajor).unwrap())
                .unwrap();
            for (i, &leaf) in leaves.iter().enumerate() {
                assert_eq!(leaf == 1, left[i], "{case}: row {i}");
            }
        }
    }
}

#[test]
fn unseen_codes_take_the_larger_side_and_nan_its_learned_one() {
    let n = 400;
    // Category 0: y = 1 mostly; 1, 2: y = 0 mostly; NaN rows with y = 1 (learned left with 0).
    let mut u = lcg(7);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for i in 0..n {
        let (v, p) = match i % 5 {
            0 => (f32::NAN, 0.9),
            1 => (0.0, 0.9),
            2 | 3 => (1.0, 0.1),
            _ => (2.0, 0.1),
        };
        x.push(v);
        y.push(u32::from(u() < p));
    }
    let m = Matrix::new(&x, n, 1, Layout::RowMajor).unwrap();
    let p = stump(CriterionKind::Gini, SplitterKind::Best);
    let forest = Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap();
    let tree = &forest.trees()[0];
    let set = tree.category_set(0).expect("a categorical root");
    let zero_left = in_set(set, 0);
    assert_ne!(zero_left, in_set(set, 1));
    assert_eq!(in_set(set, 1), in_set(set, 2));
    // NaN went with category 0 (the same class).
    assert_eq!(tree.missing_left(0), zero_left);
    // The larger child: categories 1 and 2 with 240 rows against 160.
    let larger_left = in_set(set, 1);
    assert_eq!(set.1, larger_left);
    let probe = [5.0f32, 1000.0, 3.0];
    let leaves = forest
        .apply(Matrix::new(&probe, 3, 1, Layout::RowMajor).unwrap())
        .unwrap();
    let larger = if larger_left { 1 } else { 2 };
    assert!(leaves.iter().all(|&l| l == larger), "{leaves:?}");
}

#[test]
fn extra_trees_draw_proper_subsets_and_refit_the_same() {
    let n = 300;
    let (x, effect) = column(n, 12, 3);
    let y: Vec<f64> = effect.iter().map(|e| 10.0 * e).collect();
    let mut p = ForestParams::extra_trees(CriterionKind::SquaredError);
    p.n_estimators = 8;
    p.categorical = Some(vec![true]);
    let fit = || {
        let m = Matrix::new(&x, n, 1, Layout::RowMajor).unwrap();
        Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap()
    };
    let forest = fit();
    // (Debug: a set's reference is a NaN, which `==` never equals.)
    assert_eq!(format!("{forest:?}"), format!("{:?}", fit()));
    for tree in forest.trees() {
        let set = tree.category_set(0).expect("a categorical root");
        let codes: Vec<usize> = (0..12).map(|k| 2 * k + 1).collect();
        let n_left = codes.iter().filter(|&&c| in_set(set, c)).count();
        assert!(n_left > 0 && n_left < codes.len(), "{n_left}");
    }
    // The model file keeps the sets and the flags (format version 8).
    #[cfg(feature = "serde")]
    {
        let bytes = forest.to_bytes().unwrap();
        assert_eq!(bytes[4], 8);
        let back = Forest::from_bytes(&bytes).unwrap();
        assert_eq!(back.to_bytes().unwrap(), bytes);
        let m = || Matrix::new(&x, n, 1, Layout::RowMajor).unwrap();
        assert_eq!(back.predict(m()).unwrap(), forest.predict(m()).unwrap());
    }
    // Predictions walk the sets: a stump-like check on the training rows.
    let m = Matrix::new(&x, n, 1, Layout::RowMajor).unwrap();
    let pred = forest.predict(m).unwrap();
    let mse = pred
        .iter()
        .zip(&y)
        .map(|(p, t)| (p - t).powi(2))
        .sum::<f64>()
        / n as f64;
    assert!(mse < 0.05, "{mse}");
}

#[test]
fn what_the_search_cannot_split_is_refused() {
    let (x, effect) = column(50, 4, 1);
    let y: Vec<f64> = effect.clone();
    let fit = |p: &ForestParams, x: &[f32]| {
        let m = Matrix::new(x, 50, 1, Layout::RowMajor).unwrap();
        Forest::fit(p, m, Targets::regression(&y).unwrap(), None)
    };
    let mut p = stump(CriterionKind::SquaredError, SplitterKind::Multiway);
    assert!(matches!(fit(&p, &x), Err(ForestError::Unsupported(_))));
    p.splitter = SplitterKind::Best;
    p.criterion = CriterionKind::AbsoluteError;
    assert!(matches!(fit(&p, &x), Err(ForestError::Unsupported(_))));
    p.criterion = CriterionKind::SquaredError;
    p.monotonic_cst = Some(vec![1]);
    assert!(matches!(
        fit(&p, &x),
        Err(ForestError::InvalidParameter {
            name: "monotonic_cst",
            ..
        })
    ));
    p.monotonic_cst = None;
    p.categorical = Some(vec![true, false]);
    assert!(matches!(
        fit(&p, &x),
        Err(ForestError::InvalidParameter {
            name: "categorical_features",
            ..
        })
    ));
    p.categorical = Some(vec![true]);
    for bad in [-1.0f32, 0.5, 1e9] {
        let mut x = x.clone();
        x[7] = bad;
        let r = fit(&p, &x);
        assert!(
            matches!(r, Err(ForestError::CategoryCode { row: 7, col: 0, .. })),
            "{bad}: {r:?}"
        );
    }
    // No categorical flag set: an ordinary forest.
    p.categorical = Some(vec![false]);
    assert!(!fit(&p, &x).unwrap().trees()[0].has_categorical_splits());
}

#[test]
fn thousands_of_levels_are_split_without_a_limit() {
    // 6 000 categories (past any 256-level limit), two effects: the stump must separate
    // them exactly, whatever their codes.
    let (n, levels) = (24_000, 6_000);
    let mut u = lcg(11);
    let high: Vec<bool> = (0..levels).map(|_| u() < 0.5).collect();
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % levels) as f32).collect();
    let y: Vec<f64> = x
        .iter()
        .map(|&c| if high[c as usize] { 5.0 } else { 1.0 })
        .collect();
    let m = Matrix::new(&x, n, 1, Layout::RowMajor).unwrap();
    let p = stump(CriterionKind::SquaredError, SplitterKind::Best);
    let forest = Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap();
    let set = forest.trees()[0]
        .category_set(0)
        .expect("a categorical root");
    let first_high = high.iter().position(|&h| h).unwrap();
    let left_high = in_set(set, first_high);
    for c in 0..levels {
        assert_eq!(in_set(set, c) == left_high, high[c], "category {c}");
    }
}

#[test]
fn shap_values_and_importances_read_the_sets() {
    // A categorical feature beside a numeric one; y depends on both.
    let (n, levels) = (800, 9);
    let (cats, effect) = column(n, levels, 5);
    let mut u = lcg(17);
    let mut x = Vec::with_capacity(2 * n);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let v = u();
        x.extend([if i % 11 == 0 { f32::NAN } else { cats[i] }, v as f32]);
        y.push(4.0 * effect[i] + v);
    }
    let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
    p.n_estimators = 6;
    p.max_depth = Some(5);
    p.categorical = Some(vec![true, false]);
    let m = || Matrix::new(&x, n, 2, Layout::RowMajor).unwrap();
    let forest = Forest::fit(&p, m(), Targets::regression(&y).unwrap(), None).unwrap();
    assert!(forest.trees().iter().all(|t| t.has_categorical_splits()));
    // Probe rows: seen, unseen (past every code, and absent from training) and missing.
    let probe: Vec<f32> = vec![1.0, 0.2, 999.0, 0.5, 2.0, 0.9, f32::NAN, 0.1, 3.0, 0.7];
    let pm = Matrix::new(&probe, 5, 2, Layout::RowMajor).unwrap();
    let pred = forest
        .predict(Matrix::new(&probe, 5, 2, Layout::RowMajor).unwrap())
        .unwrap();
    let shap = forest.tree_shap(pm, false).unwrap();
    for r in 0..5 {
        let total = shap.values[2 * r] + shap.values[2 * r + 1] + shap.expected_value[0];
        assert!(
            (total - pred[r]).abs() < 1e-9,
            "row {r}: {total} against {}",
            pred[r]
        );
    }
    // The categorical feature carries most of the signal, and MDI sees it.
    let mdi = forest.importances(true);
    assert!(
        mdi[0] > mdi[1] && (mdi[0] + mdi[1] - 1.0).abs() < 1e-9,
        "{mdi:?}"
    );
}

/// A loaded forest keeps its fit's categorical flags and guards (format version 8), so it
/// grows more trees (warm start) as the fit would; bad guards in the bytes are refused.
#[cfg(feature = "serde")]
#[test]
fn a_loaded_forest_keeps_its_flags_and_guards_and_grows_more_trees() {
    use forestimp::forest::FitSession;
    let (x, effect) = column(300, 9, 4);
    let mut p = stump(CriterionKind::SquaredError, SplitterKind::Best);
    (p.n_estimators, p.max_depth, p.bootstrap) = (6, None, true);
    p.category_guards.min_samples = 3;
    p.category_guards.penalty = 0.5;
    let m = Matrix::new(&x, x.len(), 1, Layout::RowMajor).unwrap();
    let targets = Targets::regression(&effect).unwrap();
    let all = Forest::fit(&p, m, targets, None).unwrap();
    let first = ForestParams {
        n_estimators: 3,
        ..p.clone()
    };
    let bytes = Forest::fit(&first, m, targets, None)
        .unwrap()
        .to_bytes()
        .unwrap();
    assert_eq!(bytes[4], 8);
    let loaded = Forest::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.params().categorical, Some(vec![true]));
    assert_eq!(loaded.params().category_guards, p.category_guards);
    let session = FitSession::new(&p, m, targets, None).unwrap();
    let more = session.fit_range(3..6);
    assert_eq!(
        session
            .finish_after(&loaded, more)
            .unwrap()
            .to_bytes()
            .unwrap(),
        all.to_bytes().unwrap()
    );
    // A negative penalty in the bytes (the guards are the payload's last 8 bytes).
    let mut bad = bytes.clone();
    let end = bad.len();
    bad[end - 8..].copy_from_slice(&(-1.0f64).to_le_bytes());
    let crc = common::crc32(&bad[20..]);
    bad[16..20].copy_from_slice(&crc.to_le_bytes());
    assert!(matches!(
        Forest::from_bytes(&bad),
        Err(ForestError::Decode(_))
    ));
}

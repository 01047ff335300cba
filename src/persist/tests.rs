//! Round trips, refusals and damaged payloads of the model bytes.

use super::*;
use crate::{Forest, ForestParams, Layout, Matrix, Targets};

/// A model file of format `version` around `repr` (from version 3, without
/// missing-value exceptions, first tree 0, not assembled: one zero byte each).
fn file(version: u16, repr: &ForestRepr) -> Vec<u8> {
    let mut payload = postcard::to_allocvec(repr).unwrap();
    if version >= 3 {
        payload.extend([0, 0, 0]);
    }
    envelope(version, &payload)
}

/// Leaf counts are summed into internal nodes on demand: huge ones from a crafted file
/// must not overflow (a panic in debug builds).
#[test]
fn huge_leaf_counts_do_not_overflow() {
    let x: Vec<f64> = (0..200).map(|i| ((i * 37) % 101) as f64).collect();
    let y: Vec<u32> = (0..100)
        .map(|i| u32::from(x[2 * i] > x[2 * i + 1]))
        .collect();
    let m = Matrix::new(&x, 100, 2, Layout::RowMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = 2;
    let f = Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap();
    let mut repr = ForestRepr {
        crate_version: "0.1.0".into(),
        params: f.params.clone(),
        n_classes: 2,
        trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
    };
    for r in &mut repr.trees {
        r.leaf_count.iter_mut().for_each(|c| *c = u32::MAX);
    }
    let g = Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr)).unwrap();
    for t in g.trees() {
        assert!(t.len() > 1);
        assert_eq!(t.node_stats().n_samples[0], u32::MAX);
    }
    assert_eq!(g.importances(false), f.importances(false));
}

/// A bootstrap classification forest of one tree on one feature.
fn tiny_forest() -> Forest {
    let x: Vec<f64> = (0..40).map(f64::from).collect();
    let y: Vec<u32> = (0..40).map(|i| u32::from(i >= 20)).collect();
    let m = Matrix::new(&x, 40, 1, Layout::RowMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = 1;
    Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap()
}

/// The payload of [`tiny_forest`] up to its tree list, then `tail`.
fn payload_with_trees(tail: &[u8]) -> Vec<u8> {
    let f = tiny_forest();
    // postcard writes a struct as its fields in order: the same bytes as this tuple.
    let mut out = postcard::to_allocvec(&("0.1.0", &f.params, 2u32)).unwrap();
    out.extend_from_slice(tail);
    out
}

/// Length prefixes are untrusted: a prefix claiming 2^60 trees or 2^60 nodes must fail
/// on the missing bytes, not reserve memory for the claim (serde caps every
/// pre-allocation at 1 MiB, and the payload length is checked against the header).
#[test]
fn absurd_length_prefixes_fail_without_reserving_them() {
    let huge = postcard::to_allocvec(&(1u64 << 60)).unwrap();
    let one = postcard::to_allocvec(&1u64).unwrap();
    let trees = payload_with_trees(&huge);
    let nodes = payload_with_trees(&[one.as_slice(), &huge].concat());
    for payload in [trees, nodes] {
        let err = Forest::from_bytes(&envelope(SINGLE_OUTPUT_VERSION, &payload)).unwrap_err();
        assert!(matches!(err, ForestError::Decode(_)), "{err}");
    }
    // The header's own length field cannot ask for more than the bytes present.
    let mut lying = envelope(FORMAT_VERSION, b"");
    lying[8..16].copy_from_slice(&(1u64 << 60).to_le_bytes());
    assert!(Forest::from_bytes(&lying).is_err());
}

/// Parameters a fit refuses are refused on load too: a bootstrap model claiming 2^60
/// draws per tree would make every out-of-bag pass loop 2^60 times.
#[test]
fn parameters_beyond_fit_bounds_are_refused() {
    let f = tiny_forest();
    let repr = |edit: &dyn Fn(&mut Resolved)| {
        let mut params = f.params.clone();
        edit(&mut params);
        ForestRepr {
            crate_version: "0.1.0".into(),
            params,
            n_classes: 2,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
        }
    };
    assert!(Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr(&|_| ()))).is_ok());
    let edits: [&dyn Fn(&mut Resolved); 3] = [
        &|p| p.n_draws = 1 << 60,
        &|p| p.n_features = 1 << 40,
        &|p| p.n_samples = u32::MAX as usize,
    ];
    for edit in edits {
        let err = Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr(edit))).unwrap_err();
        assert!(
            err.to_string().contains("inconsistent model parameters"),
            "{err}"
        );
    }
}

/// Missing-value exceptions round-trip, and a list naming a leaf, an unknown tree or
/// out of order is refused.
#[test]
fn missing_value_exceptions_are_validated() {
    let mut x: Vec<f64> = (0..60).map(f64::from).collect();
    x.extend([f64::NAN; 20]);
    let y: Vec<u32> = (0..80).map(|i| u32::from(!(30..60).contains(&i))).collect();
    let m = Matrix::new(&x, 80, 1, Layout::RowMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = 2;
    let f = Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap();
    let g = Forest::from_bytes(&f.to_bytes().unwrap()).unwrap();
    assert!(g == f);
    let repr = ForestRepr {
        crate_version: "0.1.0".into(),
        params: f.params.clone(),
        n_classes: 2,
        trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
    };
    let leaf = (0..f.trees[0].len())
        .find(|&t| f.trees[0].is_leaf(t))
        .unwrap() as u32;
    for bad in [vec![(0, leaf)], vec![(2, 0)], vec![(1, 0), (0, 0)]] {
        let v3 = ForestReprV3 {
            forest: repr_clone(&repr),
            missing_exceptions: bad,
            first_tree: 0,
            assembled: false,
        };
        let bytes = envelope(FORMAT_VERSION, &postcard::to_allocvec(&v3).unwrap());
        assert!(matches!(
            Forest::from_bytes(&bytes),
            Err(ForestError::Decode(_))
        ));
    }
}

fn repr_clone(r: &ForestRepr) -> ForestRepr {
    postcard::from_bytes(&postcard::to_allocvec(r).unwrap()).unwrap()
}

/// A regression model written in format 1 (every node's impurity) still loads: same
/// structure, values and leaf impurities; internal impurities are derived.
#[test]
fn version_1_regression_models_still_load() {
    let x: Vec<f64> = (0..400).map(|i| ((i * 37) % 101) as f64).collect();
    let y: Vec<f64> = (0..200).map(|i| (x[2 * i] - x[2 * i + 1]).sin()).collect();
    let m = Matrix::new(&x, 200, 2, Layout::RowMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
    p.n_estimators = 3;
    let f = Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap();
    let mut repr = ForestRepr {
        crate_version: "0.1.0".into(),
        params: f.params.clone(),
        n_classes: 0,
        trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
    };
    for (r, t) in repr.trees.iter_mut().zip(&f.trees) {
        assert_eq!(r.impurity.len(), t.len().div_ceil(2)); // leaves only
        r.impurity = t.node_stats().impurity;
    }
    let g = Forest::from_bytes(&file(1, &repr)).unwrap();
    assert_eq!(g, f);
    // Written by this version, the same tree as read through version 2.
    assert!(Forest::from_bytes(&f.to_bytes().unwrap()).unwrap() == f);
}

/// A part of a forest keeps the index of its first tree through its bytes, and an
/// assembled forest its flag; an index no fit could make is refused.
#[test]
fn part_fields_round_trip_and_are_bounded() {
    let f = tiny_forest();
    let mut part = f.clone();
    part.params.first_tree = 1;
    part.params.assembled = true;
    let back = Forest::from_bytes(&part.to_bytes().unwrap()).unwrap();
    assert_eq!(back, part);
    let repr = ForestReprV3 {
        forest: ForestRepr {
            crate_version: "0.1.0".into(),
            params: f.params.clone(),
            n_classes: 2,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
        },
        missing_exceptions: Vec::new(),
        first_tree: u64::MAX - 1,
        assembled: false,
    };
    let bytes = envelope(
        SINGLE_OUTPUT_VERSION,
        &postcard::to_allocvec(&repr).unwrap(),
    );
    let err = Forest::from_bytes(&bytes).unwrap_err();
    assert!(
        err.to_string().contains("inconsistent model parameters"),
        "{err}"
    );
}

/// Version 4 carries the outputs of a multi-output forest; outputs that do not match
/// the task or the trees are refused, and a single-output forest stays version 3.
#[test]
fn outputs_round_trip_and_are_checked() {
    let single = tiny_forest();
    assert_eq!(
        single.to_bytes().unwrap()[4..6],
        SINGLE_OUTPUT_VERSION.to_le_bytes()
    );
    let x = [0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0];
    let y = [0u32, 0, 0, 1, 1, 0, 1, 1, 2, 1, 2, 1];
    let m = Matrix::new(&x, 6, 1, Layout::ColumnMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::Gini);
    p.n_estimators = 2;
    let t = Targets::multi_classes(&y, &[3, 2]).unwrap();
    let f = Forest::fit(&p, m, t, None).unwrap();
    let bytes = f.to_bytes().unwrap();
    assert_eq!(bytes[4..6], MULTI_OUTPUT_VERSION.to_le_bytes());
    assert_eq!(Forest::from_bytes(&bytes).unwrap(), f);
    let v4: ForestReprV4 = postcard::from_bytes(&bytes[HEADER..]).unwrap();
    let v3 = v4.v3;
    // ([5] or [2, 3] would be forests of the same width, as a file may hold.)
    for outputs in [vec![], vec![2, 3, 0], vec![2, 2], vec![7], vec![0, 5]] {
        let repr = ForestReprV4 {
            v3: postcard::from_bytes(&postcard::to_allocvec(&v3).unwrap()).unwrap(),
            outputs,
        };
        let payload = postcard::to_allocvec(&repr).unwrap();
        assert!(Forest::from_bytes(&envelope(MULTI_OUTPUT_VERSION, &payload)).is_err());
    }
    // A version-3 reading of a multi-output payload fails on its trailing bytes, never
    // builds a forest of one output.
    let mut as_v3 = bytes.clone();
    as_v3[4..6].copy_from_slice(&SINGLE_OUTPUT_VERSION.to_le_bytes());
    assert!(Forest::from_bytes(&as_v3).is_err());
}

/// A tree draws at most `MAX_DRAWS_PER_ROW` rows per training row: a file of 40 rows
/// claiming 2^31 draws a tree (each out-of-bag pass would replay them) is refused.
#[test]
fn draws_beyond_the_per_row_bound_are_refused() {
    let f = tiny_forest();
    let with_draws = |n_draws: usize| {
        let mut params = f.params.clone();
        params.n_draws = n_draws;
        let repr = ForestRepr {
            crate_version: "0.1.0".into(),
            params,
            n_classes: 2,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
        };
        Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr))
    };
    let most = 40 * crate::params::MAX_DRAWS_PER_ROW;
    assert!(with_draws(most).is_ok());
    for n_draws in [most + 1, 1 << 31] {
        assert!(matches!(with_draws(n_draws), Err(ForestError::Decode(_))));
    }
}

/// Leaf values mean something, and a file is held to it: class counts are non-negative
/// with a positive total (negated counts made `predict_proba` rows sum to -1), and a
/// tree's leaf weights sum to a finite number (weights of 1e308 made MDI and SHAP NaN).
#[test]
fn leaf_values_that_mean_nothing_are_refused() {
    let f = tiny_forest();
    let base = || ForestRepr {
        crate_version: "0.1.0".into(),
        params: f.params.clone(),
        n_classes: 2,
        trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
    };
    assert!(Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &base())).is_ok());
    let edits: [&dyn Fn(&mut TreeRepr); 3] = [
        &|t| t.leaf_value.iter_mut().for_each(|v| *v = -*v),
        &|t| t.leaf_value[..2].fill(0.0),
        &|t| t.leaf_weight.fill(1e308),
    ];
    for edit in edits {
        let mut repr = base();
        edit(&mut repr.trees[0]);
        let err = Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr)).unwrap_err();
        assert!(matches!(err, ForestError::Decode(_)), "{err}");
    }
}

/// The node statistics of an absolute-error forest (version 5) are held to the same
/// bound: an impurity of 7e307 made MDI NaN.
#[test]
fn node_statistics_summing_past_float64_are_refused() {
    let x: Vec<f64> = (0..60).map(|i| ((i * 17) % 23) as f64).collect();
    let y: Vec<f64> = (0..60).map(|i| (i % 7) as f64).collect();
    let m = Matrix::new(&x, 60, 1, Layout::RowMajor).unwrap();
    let mut p = ForestParams::random_forest(CriterionKind::AbsoluteError);
    p.n_estimators = 2;
    let f = Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap();
    let bytes = f.to_bytes().unwrap();
    let mut repr: ForestReprV5 = decode_exact(&bytes[HEADER..]).unwrap();
    let reseal = |r: &ForestReprV5| envelope(GROWN_VERSION, &postcard::to_allocvec(r).unwrap());
    assert!(Forest::from_bytes(&reseal(&repr)).is_ok());
    repr.grown[0][0] = 7e307;
    let err = Forest::from_bytes(&reseal(&repr)).unwrap_err();
    assert!(err.to_string().contains("summing past float64"), "{err}");
}

//! A sparse X (CSC) grows the forest of its dense twin, byte for byte, with every splitter
//! that reads it, and predicts, routes and scores out of bag as the dense matrix does; the
//! splitters whose codes are dense per column refuse it.

use forestimp::{
    CriterionKind, FeatureCount, Forest, ForestError, ForestParams, Layout, Matrix, SplitterKind,
    Targets,
};

/// The CSC arrays (values, indptr, indices), the dense column-major twin, the labels, n, p.
type Data = (
    Vec<f32>,
    Vec<i32>,
    Vec<i32>,
    Vec<f32>,
    Vec<u32>,
    usize,
    usize,
);

/// A 300 × 40 matrix, 10 % of it stored (some explicit zeros, negative values), in CSC and
/// column-major form, and class labels that depend on three of its columns.
fn data() -> Data {
    let (n, p) = (300usize, 40usize);
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut dense = vec![0.0f32; n * p];
    let (mut values, mut indptr, mut indices) = (Vec::new(), vec![0i32], Vec::new());
    for j in 0..p {
        for i in 0..n {
            if next() % 10 == 0 {
                let v = if next() % 13 == 0 {
                    0.0
                } else {
                    (next() % 2001) as f32 / 1000.0 - 1.0
                };
                dense[j * n + i] = v;
                values.push(v);
                indices.push(i as i32);
            }
        }
        indptr.push(values.len() as i32);
    }
    let y = (0..n)
        .map(|i| u32::from(dense[i] + dense[n + i] > 0.05) + u32::from(dense[2 * n + i] > 0.3))
        .collect();
    (values, indptr, indices, dense, y, n, p)
}

#[test]
fn sparse_fit_is_the_dense_fit() {
    let (values, indptr, indices, dense, y, n, p) = data();
    let sparse = Matrix::sparse_columns(&values, &indptr, &indices, n, p).unwrap();
    let full = Matrix::new(&dense, n, p, Layout::ColumnMajor).unwrap();
    let targets = Targets::classes(&y, 3).unwrap();
    let mut subsampled = ForestParams::random_forest(CriterionKind::Entropy);
    subsampled.max_samples = Some(forestimp::SampleCount::Count(200));
    subsampled.max_features = FeatureCount::Count(7);
    for mut params in [
        ForestParams::random_forest(CriterionKind::Gini),
        ForestParams::extra_trees(CriterionKind::Gini),
        ForestParams::totally_randomized(CriterionKind::Entropy),
        subsampled,
    ] {
        params.n_estimators = 8;
        params.seed = 5;
        let a = Forest::fit(&params, full, targets, None).unwrap();
        let b = Forest::fit(&params, sparse, targets, None).unwrap();
        assert_eq!(a, b); // every tree, node for node
        assert_eq!(a.predict(full).unwrap(), b.predict(sparse).unwrap());
        assert_eq!(a.apply(full).unwrap(), b.apply(sparse).unwrap());
        if params.bootstrap {
            // Bits: rows never out of bag are NaN in both.
            let bits = |(v, c): (Vec<f64>, Vec<u32>)| {
                (v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), c)
            };
            assert_eq!(
                bits(a.oob_predict(full).unwrap()),
                bits(b.oob_predict(sparse).unwrap())
            );
        }
    }
}

#[test]
fn dense_per_column_codes_refuse_sparse() {
    let (values, indptr, indices, _, y, n, p) = data();
    let sparse = Matrix::sparse_columns(&values, &indptr, &indices, n, p).unwrap();
    let targets = Targets::classes(&y, 3).unwrap();
    let mut hist = ForestParams::random_forest(CriterionKind::Gini);
    hist.splitter = SplitterKind::Histogram { max_bins: 255 };
    let mut multiway = ForestParams::totally_randomized(CriterionKind::Gini);
    multiway.splitter = SplitterKind::Multiway;
    for params in [hist, multiway] {
        let err = Forest::fit(&params, sparse, targets, None).unwrap_err();
        assert!(matches!(err, ForestError::Unsupported(_)), "{err}");
    }
    let mut bad = values.clone();
    bad[5] = f32::NAN;
    let nan = Matrix::sparse_columns(&bad, &indptr, &indices, n, p).unwrap();
    let params = ForestParams::extra_trees(CriterionKind::Gini);
    let err = Forest::fit(&params, nan, targets, None).unwrap_err();
    assert!(matches!(err, ForestError::NonFinite { .. }), "{err}");
}

use super::*;
use crate::data::Shadows;

#[test]
fn shadows_are_binned_as_their_values_would_be() {
    let (n, p) = (700, 5);
    let x: Vec<f32> = (0..n * p)
        .map(|v| ((v * 7919) % 613) as f32 * 0.25)
        .collect();
    let m = Matrix::new(&x, n, p, Layout::RowMajor).unwrap();
    let columns = [3u32, 1, 4];
    for sources in [vec![4u32, 3, 3, 1, 4, 1, 1], vec![1, 0, 3]] {
        // [1, 0, 3]: column 0 is not in the view, so its shadow has no twin.
        let shadows = Shadows::independent(n, sources, 9);
        let view = m
            .with_columns(&columns)
            .unwrap()
            .with_shadows(&shadows)
            .unwrap();
        let dense: Vec<f32> = (0..view.n_cols())
            .flat_map(|j| (0..n).map(move |i| (i, j)))
            .map(|(i, j)| view.get(i, j))
            .collect();
        let copy = Matrix::new(&dense, n, view.n_cols(), Layout::ColumnMajor).unwrap();
        for max_bins in [4, 256] {
            let (a, b) = (
                Binned::new(&view, max_bins, 1),
                Binned::new(&copy, max_bins, 1),
            );
            assert_eq!(a.codes, b.codes);
            assert_eq!(a.edges, b.edges);
            // Bins made once from the stored matrix, read through the view: the same.
            let cached = Binned::new(&m, max_bins, 7).view_of(&view).unwrap();
            assert_eq!(cached.codes, b.codes);
            assert_eq!(cached.edges, b.edges);
        }
    }
}

#[test]
fn codes_order_like_values_and_edges_separate_them() {
    let x: Vec<f64> = (0..1000).map(|i| ((i * 37) % 101) as f64 * 0.5).collect();
    let m = Matrix::new(&x, 1000, 1, Layout::ColumnMajor).unwrap();
    for max_bins in [2, 7, 64, 101, 256] {
        let b = Binned::new(&m, max_bins, 0);
        let codes = b.matrix();
        assert!(b.edges(0).len() < max_bins.min(101));
        for i in 0..1000 {
            let c = codes.get(i, 0) as usize;
            for j in 0..1000 {
                let d = codes.get(j, 0) as usize;
                // code ≤ b  ⇔  x ≤ edge_b, for every row and every edge.
                if x[i] < x[j] {
                    assert!(c <= d);
                }
            }
            for (k, &e) in b.edges(0).iter().enumerate() {
                assert_eq!(c <= k, x[i] <= e);
            }
        }
    }
}

#[test]
fn large_inputs_take_edges_from_a_sample_and_still_order_every_row() {
    let n = SAMPLE_ROWS + 50_000;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 100_003) as f32).collect();
    let m = Matrix::new(&x, n, 1, Layout::ColumnMajor).unwrap();
    let b = Binned::new(&m, 255, 7);
    assert_eq!(b.edges(0).len(), 254);
    let codes = b.matrix();
    let mut counts = [0usize; 255];
    for (i, &v) in x.iter().enumerate() {
        let c = codes.get(i, 0) as usize;
        counts[c] += 1;
        assert!(c == 0 || f64::from(v) > b.threshold(0, c - 1));
        assert!(c == 254 || f64::from(v) <= b.threshold(0, c));
    }
    // Quantile bins of a uniform column: each holds about n / 255 rows.
    let expected = n as f64 / 255.0;
    assert!(counts
        .iter()
        .all(|&c| (c as f64 - expected).abs() < 0.1 * expected));
    // Same seed, same edges; the sample depends on the seed.
    assert_eq!(Binned::new(&m, 255, 7).edges(0), b.edges(0));
}

/// Row-major and column-major inputs, and blocks and tiles cut anywhere, give the codes
/// and edges of each column binned alone: every row sorted, or a sample's edges.
#[test]
fn blocks_and_tiles_bin_every_column_as_alone() {
    for n in [TILE_ROWS + 1000, SAMPLE_ROWS + TILE_ROWS + 7] {
        let p = BLOCK + 3;
        let mut rng = TreeRng::new(3);
        let cols: Vec<Vec<f32>> = (0..p)
            .map(|j| {
                (0..n)
                    .map(|_| (rng.below(50 + 40 * j) as f32) * 0.25)
                    .collect()
            })
            .collect();
        let by_col: Vec<f32> = cols.concat();
        let by_row: Vec<f32> = (0..n)
            .flat_map(|i| cols.iter().map(move |c| c[i]))
            .collect();
        let bin = |x: &[f32], p: usize, layout: Layout| {
            Binned::new(&Matrix::new(x, n, p, layout).unwrap(), 64, 1)
        };
        let (f, c) = (
            bin(&by_col, p, Layout::ColumnMajor),
            bin(&by_row, p, Layout::RowMajor),
        );
        assert_eq!((f.codes.len(), f.edges.len()), (n * p, p));
        assert!(f.codes == c.codes && f.edges == c.edges);
        for (j, col) in cols.iter().enumerate() {
            let alone = bin(col, 1, Layout::ColumnMajor);
            assert_eq!(alone.edges(0), f.edges(j));
            assert!(alone.codes[..] == f.codes[j * n..(j + 1) * n], "column {j}");
        }
    }
}

#[test]
fn few_distinct_values_get_one_bin_each() {
    let x = [3.0f32, 1.0, 2.0, 1.0, 3.0, 2.0];
    let m = Matrix::new(&x, 6, 1, Layout::RowMajor).unwrap();
    let b = Binned::new(&m, 255, 0);
    assert_eq!(b.edges(0), &[1.5, 2.5]);
    let codes: Vec<u8> = (0..6).map(|i| b.matrix().get(i, 0)).collect();
    assert_eq!(codes, [2, 0, 1, 0, 2, 1]);
    assert_eq!(b.threshold(0, 1), 2.5);
}

/// NaN gets code 255 in the columns holding it, whose other values then get at most 255
/// bins; a column without NaN keeps 256. With every row, or a sample, placing the edges.
#[test]
fn missing_values_get_their_own_bin() {
    for n in [600, SAMPLE_ROWS + 1000] {
        // Column 0: 255 distinct values (one bin each) and NaN in a few of the last rows
        // (which the edge sample may miss); column 1: 256 values, no NaN.
        let mut x: Vec<f64> = (0..n).map(|i| (i % 255) as f64).collect();
        x.extend((0..n).map(|i| (i % 256) as f64));
        for i in (n - 80..n).step_by(7) {
            x[i] = f64::NAN;
        }
        let m = Matrix::new(&x, n, 2, Layout::ColumnMajor).unwrap();
        let b = Binned::new(&m, 256, 3);
        assert_eq!((b.edges(0).len(), b.edges(1).len()), (254, 255), "{n} rows");
        assert!(b.edges(0).iter().all(|e| e.is_finite()));
        let codes = b.matrix();
        for i in 0..n {
            let (c, v) = (codes.get(i, 0), x[i]);
            assert_eq!(c == NAN_CODE, v.is_nan(), "row {i}");
            if !v.is_nan() {
                assert_eq!(c, code(b.edges(0), v));
            }
            assert_eq!(codes.get(i, 1), code(b.edges(1), x[n + i]));
        }
        // The complete column is binned as before missing values had a bin.
        let alone = Binned::new(
            &Matrix::new(&x[n..], n, 1, Layout::ColumnMajor).unwrap(),
            256,
            3,
        );
        assert_eq!(alone.edges(0), b.edges(1));
    }
}

#[test]
fn bins_are_balanced_and_a_heavy_value_does_not_starve_the_rest() {
    // Half the values are 0, the rest distinct.
    let v: Vec<f64> = (0..10_000)
        .map(|i| if i % 2 == 0 { 0.0 } else { i as f64 })
        .collect();
    let mut sorted = v.clone();
    sorted.sort_by(f64::total_cmp);
    let edges = edges_of_sorted(sorted.into_iter(), 16);
    assert_eq!(edges.len(), 15);
    let mut counts = [0usize; 16];
    for &x in &v {
        counts[code(&edges, x) as usize] += 1;
    }
    assert_eq!(counts[0], 5000);
    let rest = &counts[1..];
    let (lo, hi) = (rest.iter().min().unwrap(), rest.iter().max().unwrap());
    assert!(hi - lo <= 2, "{counts:?}");
}

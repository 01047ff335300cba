//! Histogram binning: every feature mapped once to at most 256 one-byte codes.
//!
//! Feature `j` gets increasing real *edges* `e_0 < e_1 < …`; a value `v` has code
//! `b = #{k : e_k < v}`, so `code ≤ b  ⇔  v ≤ e_b` for every value, seen or not. A tree
//! grown on the codes with the split "code ≤ b" is therefore the same tree as one with the
//! real threshold `e_b`, which is what the model stores: prediction, OOB estimates and
//! importances then work on raw inputs, and the codes are only needed while fitting.
//!
//! Edges are mid-points between consecutive distinct values (like CART thresholds). A
//! feature with at most `max_bins` distinct values gets one bin per value, so the histogram
//! search is then exactly the exact search; otherwise bins hold about equal numbers of
//! sampled values. Edges come from at most [`SAMPLE_ROWS`] rows, drawn from the fit seed,
//! so binning is deterministic and costs O(min(n, SAMPLE_ROWS)·log) per feature.
//!
//! The codes are column-major: one byte per value, 4× less memory than `f32` inputs, and a
//! node's gather reads 4× fewer cache lines.

use super::{Feature, Layout, Matrix};
use crate::parallel::{chunks_mut, map_ordered};
use crate::rng::{tree_seed, TreeRng};

/// Rows used to place the edges (LightGBM samples 200 000 rows for the same purpose).
pub const SAMPLE_ROWS: usize = 200_000;

/// RNG stream of the edge sample (tree index `u64::MAX` is never a real tree).
const BINS: u64 = 4;

/// A matrix of bin codes with the edges that give them meaning.
#[derive(Clone, Debug)]
pub struct Binned {
    codes: Vec<u8>,
    n_rows: usize,
    edges: Vec<Vec<f64>>,
}

impl Binned {
    /// Bins every column of `x` into at most `max_bins` (2..=256) codes.
    pub fn new<T: Feature>(x: &Matrix<'_, T>, max_bins: usize, seed: u64) -> Binned {
        let max_bins = max_bins.clamp(2, 256);
        let (n, p) = (x.n_rows(), x.n_cols());
        let rows = sample_rows(n, seed);
        let edges = map_ordered(p, |j| {
            let mut values: Vec<f64> = match &rows {
                Some(rows) => rows
                    .iter()
                    .map(|&i| x.get(i as usize, j).to_f64())
                    .collect(),
                None => (0..n).map(|i| x.get(i, j).to_f64()).collect(),
            };
            edges_of(&mut values, max_bins)
        });
        drop(rows);
        // Each column is coded straight into its place: per-column buffers joined
        // afterwards held the codes twice.
        let mut codes = vec![0u8; n * p];
        chunks_mut(&mut codes, n, |j, out| {
            let e = &edges[j];
            match x.column(j) {
                Some(col) => out
                    .iter_mut()
                    .zip(col)
                    .for_each(|(c, v)| *c = code(e, v.to_f64())),
                None => out
                    .iter_mut()
                    .enumerate()
                    .for_each(|(i, c)| *c = code(e, x.get(i, j).to_f64())),
            }
        });
        Binned {
            codes,
            n_rows: n,
            edges,
        }
    }

    /// The codes as a column-major matrix.
    pub fn matrix(&self) -> Matrix<'_, u8> {
        // Length n_rows · n_cols by construction.
        Matrix::new(
            &self.codes,
            self.n_rows,
            self.edges.len(),
            Layout::ColumnMajor,
        )
        .unwrap_or_else(|_| unreachable!("codes are n_rows x n_cols"))
    }

    /// The real threshold equivalent to the split "code ≤ `code`" of `feature`.
    /// (A split needs two codes in the node, so `code` is below the number of edges; an
    /// out-of-range code gets the nearest edge rather than a panic.)
    pub fn threshold(&self, feature: usize, code: usize) -> f64 {
        let e = self.edges(feature);
        e.get(code).or(e.last()).copied().unwrap_or(f64::INFINITY)
    }

    /// Edges of `feature` (one fewer than its number of bins; empty for an unknown feature).
    pub fn edges(&self, feature: usize) -> &[f64] {
        self.edges.get(feature).map_or(&[], Vec::as_slice)
    }

    /// Bytes held by the codes.
    pub fn code_bytes(&self) -> usize {
        self.codes.len()
    }
}

/// Sorted rows of the edge sample, or None when every row is used.
fn sample_rows(n: usize, seed: u64) -> Option<Vec<u32>> {
    if n <= SAMPLE_ROWS {
        return None;
    }
    let mut rows: Vec<u32> = (0..n as u32).collect();
    TreeRng::new(tree_seed(seed, u64::MAX, BINS)).partial_shuffle(&mut rows, SAMPLE_ROWS);
    rows.truncate(SAMPLE_ROWS);
    rows.sort_unstable();
    Some(rows)
}

/// Code of `v`: the number of edges strictly below it.
#[inline]
fn code(edges: &[f64], v: f64) -> u8 {
    // At most 255 edges, so the count fits a byte.
    edges.partition_point(|&e| e < v) as u8
}

/// Sorts in IEEE total order, as integers: 2-3x faster than a comparator sort, and binning
/// sorts every feature once per fit.
fn sort_f64(values: &mut [f64]) {
    let mut keys: Vec<u64> = values.iter().map(|v| v.sort_key()).collect();
    keys.sort_unstable();
    for (v, k) in values.iter_mut().zip(keys) {
        // Inverse of f64::sort_key.
        *v = f64::from_bits(if k >> 63 == 1 { k ^ 1 << 63 } else { !k });
    }
}

/// Mid-point of two consecutive distinct values, never equal to the upper one.
fn midpoint(a: f64, b: f64) -> f64 {
    let m = a / 2.0 + b / 2.0;
    if m >= b || !m.is_finite() {
        a
    } else {
        m
    }
}

/// Edges for the (unsorted) sample `values`: at most `max_bins − 1` of them, each between
/// two consecutive distinct values, cutting the sample into bins of about equal counts.
fn edges_of(values: &mut [f64], max_bins: usize) -> Vec<f64> {
    sort_f64(values);
    let mut distinct: Vec<(f64, usize)> = Vec::new();
    for &v in values.iter() {
        match distinct.last_mut() {
            Some((last, count)) if *last == v => *count += 1,
            _ => distinct.push((v, 1)),
        }
    }
    let pairs = distinct.windows(2);
    if distinct.len() <= max_bins {
        return pairs.map(|w| midpoint(w[0].0, w[1].0)).collect();
    }
    // Greedy equal-frequency cuts: each bin takes values until it holds its share of what
    // is left, so a heavy value fills one bin without starving the following ones.
    let mut edges = Vec::with_capacity(max_bins - 1);
    let mut left = values.len();
    let mut in_bin = 0;
    for w in pairs {
        in_bin += w[0].1;
        let bins_left = max_bins - edges.len();
        if bins_left <= 1 {
            break;
        }
        if in_bin * bins_left >= left {
            edges.push(midpoint(w[0].0, w[1].0));
            left -= in_bin;
            in_bin = 0;
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn integer_sort_is_the_total_order() {
        let mut v = vec![
            3.5,
            -0.0,
            f64::INFINITY,
            -2.0,
            0.0,
            -f64::INFINITY,
            1e-300,
            -7.25,
        ];
        let mut expected = v.clone();
        expected.sort_by(f64::total_cmp);
        sort_f64(&mut v);
        assert_eq!(
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
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

    #[test]
    fn bins_are_balanced_and_a_heavy_value_does_not_starve_the_rest() {
        // Half the values are 0, the rest distinct.
        let mut v: Vec<f64> = (0..10_000)
            .map(|i| if i % 2 == 0 { 0.0 } else { i as f64 })
            .collect();
        let edges = edges_of(&mut v, 16);
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
}

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
//! so binning is deterministic. Up to that many rows, one radix sort of a column gives its
//! edges and every row's code; beyond, each code is searched among the sample's edges.
//! Columns are read a block at a time, so row-major input is read in memory order.
//!
//! The codes are column-major: one byte per value, 4× less memory than `f32` inputs, and a
//! node's gather reads 4× fewer cache lines.
//!
//! Missing values (NaN) get their own bin, [`NAN_CODE`] (255), in the columns that hold
//! them (as LightGBM's and scikit-learn's `HistGradientBoosting*` missing-values bin): the
//! non-missing values of such a column then get at most 255 bins (codes 0..=254), so a
//! column with at most 255 distinct non-missing values still gets one bin per value. A
//! column without NaN keeps up to 256 bins, and its codes and edges are those of the
//! binning before missing values were supported. Code 255 means "missing" only in a column
//! flagged as holding NaN; the searches read the flags from the fit
//! (`crate::tree::split::Splitter::with_nan_bins`).

use super::category_bins::CategoryTable;
use super::{Feature, Layout, Matrix, Packed};
use crate::data::midpoint;
use crate::data::sort::sort_packed;
use crate::parallel::{map_each_mut, map_ordered};
use crate::rng::{stream, tree_seed, TreeRng};
use std::ops::Range;

/// Rows used to place the edges (LightGBM samples 200 000 rows for the same purpose).
pub const SAMPLE_ROWS: usize = 200_000;

/// The code of a missing value (NaN), in a column that holds NaN.
pub const NAN_CODE: u8 = u8::MAX;

/// A matrix of bin codes with the edges that give them meaning.
#[derive(Clone, Debug)]
pub struct Binned {
    codes: Vec<u8>,
    n_rows: usize,
    edges: Vec<Vec<f64>>,
    /// Per column, the bins of its categories when it is categorical (empty: none is).
    tables: Vec<Option<CategoryTable>>,
}

impl Binned {
    /// Bins every column of `x` into at most `max_bins` (2..=256) codes, NaN into
    /// [`NAN_CODE`]. Reads X once more to find the columns holding NaN; a fit, which knows
    /// them, calls [`Binned::with_missing`]. Infinite values are the caller's to refuse.
    pub fn new<T: Feature>(x: &Matrix<'_, T>, max_bins: usize, seed: u64) -> Binned {
        let missing = x.missing_columns().ok().flatten();
        Self::with_missing(x, max_bins, seed, missing.as_deref())
    }

    /// [`Binned::new`] given, per column, whether it holds NaN (None: no column does).
    /// A flagged column's non-missing values get at most 255 bins and its NaN the code
    /// [`NAN_CODE`]; `missing` must flag every column with NaN.
    pub fn with_missing<T: Feature>(
        x: &Matrix<'_, T>,
        max_bins: usize,
        seed: u64,
        missing: Option<&[bool]>,
    ) -> Binned {
        if let Some(binned) = Self::with_shadow_twins(x, max_bins, seed, missing) {
            return binned;
        }
        let has_nan = |j: usize| missing.is_some_and(|m| m.get(j).copied().unwrap_or(false));
        let max_bins = max_bins.clamp(2, 256);
        let (n, p) = (x.n_rows(), x.n_cols());
        let mut codes = vec![0u8; n * p];
        if n == 0 {
            let edges = vec![Vec::new(); p];
            return Binned {
                codes,
                n_rows: 0,
                edges,
                tables: Vec::new(),
            };
        }
        let edges: Vec<Vec<f64>> = match sample_rows(n, seed) {
            // Every row: a column's sort gives its edges and its codes.
            None => {
                let mut outs: Vec<&mut [u8]> = codes.chunks_mut(BLOCK * n).collect();
                let edges = map_each_mut(&mut outs, |b, out| {
                    let cols = block(b, p);
                    let first = cols.start;
                    let values = gather_block(x, cols, None);
                    let mut columns: Vec<_> = values.chunks(n).zip(out.chunks_mut(n)).collect();
                    map_each_mut(&mut columns, |c, (v, out)| {
                        bin_column(v, max_bins, has_nan(first + c), Some(out))
                    })
                });
                edges.into_iter().flatten().collect()
            }
            // A sample places the edges; each row's code is then searched among them.
            Some(rows) => {
                let edges = map_ordered(p.div_ceil(BLOCK), |b| {
                    let cols = block(b, p);
                    let first = cols.start;
                    let values = gather_block(x, cols, Some(&rows));
                    let mut columns: Vec<&[T]> = values.chunks(rows.len()).collect();
                    map_each_mut(&mut columns, |c, v| {
                        bin_column(v, max_bins, has_nan(first + c), None)
                    })
                });
                let edges: Vec<Vec<f64>> = edges.into_iter().flatten().collect();
                code_tiles(x, &edges, &mut codes);
                edges
            }
        };
        Binned {
            codes,
            n_rows: n,
            edges,
            tables: Vec::new(),
        }
    }

    /// [`Binned::new`] of a view whose shadows all read real columns of the view, when the
    /// edges come from every row: a shadow's values are then its twin's, permuted, so its
    /// edges are the twin's and its codes are the twin's read at the shadow's rows. Only the
    /// real columns are binned (Boruta's and the random probes' forests bin half the
    /// columns), with the same codes and edges, bit for bit. None otherwise.
    fn with_shadow_twins<T: Feature>(
        x: &Matrix<'_, T>,
        max_bins: usize,
        seed: u64,
        missing: Option<&[bool]>,
    ) -> Option<Binned> {
        let n = x.n_rows();
        if sample_rows(n, seed).is_some() {
            return None;
        }
        let (shadows, twins) = x.shadow_twins()?;
        let real_x = x.without_shadows();
        // The real columns come first; a shadow holds NaN where its twin does.
        let real_missing = missing.map(|m| &m[..real_x.n_cols().min(m.len())]);
        let real = Binned::with_missing(&real_x, max_bins, seed, real_missing);
        let mut codes = real.codes;
        let mut shadow_codes = vec![0u8; n * twins.len()];
        let mut columns: Vec<&mut [u8]> = shadow_codes.chunks_mut(n.max(1)).collect();
        map_each_mut(&mut columns, |k, out| {
            let twin = &codes[twins[k] * n..(twins[k] + 1) * n];
            for (i, code) in out.iter_mut().enumerate() {
                *code = twin[shadows.locate(i, k).0];
            }
        });
        codes.extend_from_slice(&shadow_codes);
        let mut edges = real.edges;
        edges.extend(twins.iter().map(|&t| edges[t].clone()).collect::<Vec<_>>());
        Some(Binned {
            codes,
            n_rows: n,
            edges,
            tables: Vec::new(),
        })
    }

    /// The bins of the view `x` of the matrix these bins were made from (its rows, all its
    /// stored columns), read from these codes instead of binning `x` again: the same codes
    /// and edges as [`Binned::new`] of `x`, bit for bit, when every row places the edges
    /// (at most [`SAMPLE_ROWS`] rows; beyond, the edges would depend on the fit's seed).
    /// None when that does not hold or `x` is not a view of that matrix.
    pub fn view_of<T: Feature>(&self, x: &Matrix<'_, T>) -> Option<Binned> {
        let n = self.n_rows;
        let fits = x.n_rows() == n && x.stored_cols() == self.edges.len() && n > 0;
        if !fits || n > SAMPLE_ROWS {
            return None;
        }
        let p = x.n_cols();
        let mut codes = vec![0u8; n * p];
        let mut columns: Vec<&mut [u8]> = codes.chunks_mut(n).collect();
        map_each_mut(&mut columns, |j, out| {
            for (i, code) in out.iter_mut().enumerate() {
                let (r, c) = x.stored_at(i, j).unwrap_or((i, j));
                *code = self.codes[c * n + r];
            }
        });
        let stored = |j: usize| x.stored_at(0, j).map_or(j, |(_, c)| c);
        let edges = (0..p).map(|j| self.edges[stored(j)].clone()).collect();
        let tables = match self.tables.is_empty() {
            true => Vec::new(),
            false => (0..p).map(|j| self.tables[stored(j)].clone()).collect(),
        };
        Some(Binned {
            codes,
            n_rows: n,
            edges,
            tables,
        })
    }

    /// These bins with the columns of `x` flagged `categorical` binned by category instead
    /// ([`CategoryTable`]), from the rows that placed the edges (`max_bins`, `seed` and the
    /// NaN flags `missing` those these bins were made with).
    pub fn with_categories<T: Feature>(
        mut self,
        x: &Matrix<'_, T>,
        categorical: &[bool],
        max_bins: usize,
        seed: u64,
        missing: Option<&[bool]>,
    ) -> Binned {
        let n = self.n_rows;
        let rows = sample_rows(n, seed);
        let has_nan = |j: usize| missing.is_some_and(|m| m.get(j).copied().unwrap_or(false));
        let is_categorical = |j: usize| categorical.get(j).copied().unwrap_or(false);
        let mut columns: Vec<(usize, &mut [u8])> = (self.codes.chunks_mut(n.max(1)).enumerate())
            .filter(|(j, _)| is_categorical(*j))
            .collect();
        let max_bins = max_bins.clamp(2, 256);
        let tables = map_each_mut(&mut columns, |_, (j, out)| {
            // NaN's bin is the last code; the categories get the others.
            let bins = match has_nan(*j) {
                true => max_bins.min(usize::from(NAN_CODE)),
                false => max_bins,
            };
            let rows = rows.as_deref();
            (
                *j,
                CategoryTable::bin_column(x, *j, rows, (bins, NAN_CODE), out),
            )
        });
        self.tables = vec![None; self.edges.len()];
        for (j, table) in tables {
            // No threshold reads a categorical column's edges.
            self.edges[j].clear();
            self.tables[j] = Some(table);
        }
        self
    }

    /// The bins of the categories of `feature`, when it is categorical.
    pub fn category_table(&self, feature: usize) -> Option<&CategoryTable> {
        self.tables.get(feature).and_then(Option::as_ref)
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

/// Columns binned together: a row-major row is read once per block, one cache line of
/// `f32` values, instead of once per column (which read a whole line for each value).
pub(super) const BLOCK: usize = 16;

/// Rows of a tile of the coding pass, so that narrow data still splits into many tasks.
const TILE_ROWS: usize = 1 << 16;

/// Columns of block `b` of a matrix of `p` columns.
pub(super) fn block(b: usize, p: usize) -> Range<usize> {
    b * BLOCK..p.min((b + 1) * BLOCK)
}

/// Calls `put(c, v)` for the value `v` of row `i` in the `c`-th of the columns `cols`.
#[inline(always)]
pub(super) fn read_row<T: Feature>(
    x: &Matrix<'_, T>,
    i: usize,
    cols: Range<usize>,
    mut put: impl FnMut(usize, T),
) {
    match x.row(i) {
        Some(row) => row[cols].iter().enumerate().for_each(|(c, &v)| put(c, v)),
        None => cols.enumerate().for_each(|(c, j)| put(c, x.get(i, j))),
    }
}

/// The values of the columns `cols` in the rows `rows` (every row: None), column after
/// column, read row by row.
fn gather_block<T: Feature>(x: &Matrix<'_, T>, cols: Range<usize>, rows: Option<&[u32]>) -> Vec<T> {
    let m = rows.map_or(x.n_rows(), <[u32]>::len);
    let mut values = vec![T::default(); cols.len() * m];
    let mut put = |k: usize, i: usize| read_row(x, i, cols.clone(), |c, v| values[c * m + k] = v);
    match rows {
        Some(rows) => rows
            .iter()
            .enumerate()
            .for_each(|(k, &i)| put(k, i as usize)),
        None => (0..m).for_each(|i| put(i, i)),
    }
    values
}

/// Codes every value of `x` into `codes` (column-major) by searching its column's edges,
/// a tile of rows × a block of columns at a time.
fn code_tiles<T: Feature>(x: &Matrix<'_, T>, edges: &[Vec<f64>], codes: &mut [u8]) {
    let (n, p) = (x.n_rows(), x.n_cols());
    let blocks = p.div_ceil(BLOCK);
    let mut tiles: Vec<Vec<&mut [u8]>> = Vec::new();
    for (j, column) in codes.chunks_mut(n).enumerate() {
        for (r, piece) in column.chunks_mut(TILE_ROWS).enumerate() {
            let t = r * blocks + j / BLOCK;
            tiles.resize_with(tiles.len().max(t + 1), Vec::new);
            tiles[t].push(piece);
        }
    }
    map_each_mut(&mut tiles, |t, pieces| {
        let (r, cols) = (t / blocks, block(t % blocks, p));
        let edges = &edges[cols.clone()];
        for (k, i) in (r * TILE_ROWS..n.min((r + 1) * TILE_ROWS)).enumerate() {
            read_row(x, i, cols.clone(), |c, v| {
                pieces[c][k] = code(&edges[c], v.to_f64())
            });
        }
    });
}

/// Edges of one column from its `values` (every row, or the sample), and, when `codes` is
/// given (every row), the code of each value, read off the same sort. A column that
/// `has_nan` bins its non-missing values into at most 255 bins and codes NaN [`NAN_CODE`].
fn bin_column<T: Feature>(
    values: &[T],
    max_bins: usize,
    has_nan: bool,
    mut codes: Option<&mut [u8]>,
) -> Vec<f64> {
    let mut keys: Vec<T::Packed> = (values.iter().enumerate())
        .map(|(k, v)| v.pack(k as u32))
        .collect();
    let value = |k: &T::Packed| values[k.position() as usize].to_f64();
    let max_bins = match has_nan {
        true => {
            // NaN sorts at either end (by its sign bit): its rows are coded apart.
            keys.retain(|k| {
                let nan = value(k).is_nan();
                if let (true, Some(codes)) = (nan, codes.as_deref_mut()) {
                    codes[k.position() as usize] = NAN_CODE;
                }
                !nan
            });
            max_bins.min(usize::from(NAN_CODE))
        }
        false => max_bins,
    };
    sort_packed(&mut keys, &mut Vec::new());
    let edges = edges_of_sorted(keys.iter().map(value), max_bins);
    if let Some(codes) = codes {
        let mut c = 0;
        for k in &keys {
            let v = value(k);
            while c < edges.len() && edges[c] < v {
                c += 1;
            }
            // At most 255 edges, so the count fits a byte.
            codes[k.position() as usize] = c as u8;
        }
    }
    edges
}

/// Sorted rows of the edge sample, or None when every row is used.
fn sample_rows(n: usize, seed: u64) -> Option<Vec<u32>> {
    if n <= SAMPLE_ROWS {
        return None;
    }
    let mut rows: Vec<u32> = (0..n as u32).collect();
    TreeRng::new(tree_seed(seed, stream::FOREST, stream::BIN_EDGES))
        .partial_shuffle(&mut rows, SAMPLE_ROWS);
    rows.truncate(SAMPLE_ROWS);
    rows.sort_unstable();
    Some(rows)
}

/// Code of `v`: the number of edges strictly below it, or [`NAN_CODE`] for NaN (whose
/// column has at most 254 edges).
#[inline]
fn code(edges: &[f64], v: f64) -> u8 {
    if v.is_nan() {
        return NAN_CODE;
    }
    // At most 255 edges, so the count fits a byte.
    edges.partition_point(|&e| e < v) as u8
}

/// Edges for the `sorted` values: at most `max_bins − 1` of them, each between two
/// consecutive distinct values, cutting the values into bins of about equal counts.
fn edges_of_sorted(sorted: impl Iterator<Item = f64>, max_bins: usize) -> Vec<f64> {
    let mut distinct: Vec<(f64, usize)> = Vec::new();
    let mut left = 0;
    for v in sorted {
        left += 1;
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
mod tests;

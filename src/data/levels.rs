//! Lossless codes: a column with at most 256 distinct values (its *levels*) stored as one
//! byte per value, the rank of the value among the levels.
//!
//! Codes order like the values and equal codes are equal values, so a split search on the
//! codes meets the same cuts as one on the values, and the threshold between two codes is
//! the mid-point of their levels: the exact and random splitters search coded columns
//! without sorting values (see `tree::split`) and grow the same trees. Unlike the
//! histogram splitter's bins ([`super::Binned`]), nothing is merged: a column with more
//! levels is not coded, and neither is one holding both `-0.0` and `0.0` (equal values
//! with two bit patterns, which sorts keep apart).
//!
//! Coding reads X once, a block of columns per task, row by row (row-major input in
//! memory order); each value is looked up in a small hash table of its column's levels, so
//! a continuous column is given up after about 257 rows.

use super::bins::{block, read_row, BLOCK};
use super::{Feature, Matrix};
use crate::parallel::map_ordered;
use std::ops::Range;

/// The most levels a coded column may have: codes are bytes.
pub const MAX_LEVELS: usize = 256;

/// The coded columns of a matrix, and which of its columns hold missing values (NaN),
/// the two facts about whole columns that the gathered split search reads.
#[derive(Clone, Debug, Default)]
pub struct Levels {
    columns: Vec<Option<Coded>>,
    /// Per column, whether it holds NaN (empty when none does). A column with NaN is
    /// never coded: it is searched as values, where missing values are handled.
    missing: Vec<bool>,
}

/// One coded column: the code of every row and the increasing levels the codes index.
#[derive(Clone, Debug)]
pub struct Coded {
    /// `codes[i]` is the rank of row `i`'s value among `values`.
    pub codes: Vec<u8>,
    /// The distinct values of the column, increasing, as `f64` (exactly, as every
    /// threshold is computed).
    pub values: Vec<f64>,
}

impl Levels {
    /// Codes every column of `x` with at most [`MAX_LEVELS`] levels; None when none has.
    pub fn new<T: Feature>(x: &Matrix<'_, T>) -> Option<Levels> {
        let p = x.n_cols();
        if x.n_rows() == 0 {
            return None;
        }
        let blocks = map_ordered(p.div_ceil(BLOCK), |b| code_block(x, block(b, p)));
        let columns: Vec<Option<Coded>> = blocks.into_iter().flatten().collect();
        columns.iter().any(Option::is_some).then_some(Levels {
            columns,
            missing: Vec::new(),
        })
    }

    /// `levels` (or none) with the per-column NaN flags `missing` (None: no NaN in X).
    pub fn with_missing(levels: Option<Levels>, missing: Option<Vec<bool>>) -> Option<Levels> {
        let Some(missing) = missing else {
            return levels;
        };
        let mut l = levels.unwrap_or_default();
        l.missing = missing;
        Some(l)
    }

    /// Per column, whether it holds NaN; None when no column does.
    #[inline(always)]
    pub fn missing(&self) -> Option<&[bool]> {
        (!self.missing.is_empty()).then_some(&self.missing[..])
    }

    /// Column `f`, when it is coded.
    #[inline(always)]
    pub fn column(&self, f: usize) -> Option<&Coded> {
        self.columns.get(f).and_then(Option::as_ref)
    }

    /// How many columns are coded.
    pub fn n_coded(&self) -> usize {
        self.columns.iter().flatten().count()
    }

    /// Bytes held by the codes.
    pub fn code_bytes(&self) -> usize {
        self.columns.iter().flatten().map(|c| c.codes.len()).sum()
    }
}

/// Slots of a column's hash table: twice the most levels, so probes stay short.
const SLOTS: usize = 2 * MAX_LEVELS;

/// Codes the columns `cols` of `x`, reading them row by row until every one has either
/// ended or shown more than [`MAX_LEVELS`] levels.
fn code_block<T: Feature>(x: &Matrix<'_, T>, cols: Range<usize>) -> Vec<Option<Coded>> {
    let n = x.n_rows();
    let mut tables: Vec<Option<Box<Distinct>>> =
        cols.clone().map(|_| Some(Distinct::new(n))).collect();
    let mut active = tables.len();
    for i in 0..n {
        read_row(x, i, cols.clone(), |c, v| {
            if let Some(t) = &mut tables[c] {
                if !t.add(i, v.sort_key(), v.to_f64()) {
                    tables[c] = None;
                    active -= 1;
                }
            }
        });
        if active == 0 {
            break;
        }
    }
    tables
        .into_iter()
        .map(|t| t.and_then(|t| t.finish()))
        .collect()
}

/// The levels of one column met so far, in order of first appearance, and each row's
/// level in that order.
struct Distinct {
    /// Sort keys ([`Feature::sort_key`]) by slot, and the slot's level + 1 (0: empty).
    keys: [u64; SLOTS],
    ids: [u16; SLOTS],
    /// Keys and values of the levels, by level.
    level_keys: Vec<u64>,
    values: Vec<f64>,
    /// The level of every row read.
    rows: Vec<u8>,
}

impl Distinct {
    fn new(n: usize) -> Box<Self> {
        Box::new(Distinct {
            keys: [0; SLOTS],
            ids: [0; SLOTS],
            level_keys: Vec::new(),
            values: Vec::new(),
            rows: vec![0; n],
        })
    }

    /// Records row `i` (its value's sort key and value); false once the column has more
    /// than [`MAX_LEVELS`] levels.
    #[inline(always)]
    fn add(&mut self, i: usize, key: u64, value: f64) -> bool {
        // Fibonacci hashing: the top bits of the product mix every bit of the key.
        let mut s = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 55) as usize;
        loop {
            match self.ids[s] {
                0 => {
                    let level = self.values.len();
                    if level == MAX_LEVELS {
                        return false;
                    }
                    self.keys[s] = key;
                    self.ids[s] = level as u16 + 1;
                    self.level_keys.push(key);
                    self.values.push(value);
                    self.rows[i] = level as u8;
                    return true;
                }
                id if self.keys[s] == key => {
                    self.rows[i] = (id - 1) as u8;
                    return true;
                }
                _ => s = (s + 1) % SLOTS,
            }
        }
    }

    /// The column's codes: levels renumbered in increasing order. None when two levels
    /// are equal values (`-0.0` and `0.0`).
    fn finish(self) -> Option<Coded> {
        let m = self.values.len();
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_unstable_by_key(|&l| self.level_keys[l]);
        let values: Vec<f64> = order.iter().map(|&l| self.values[l]).collect();
        // NaN compares false, so it must be refused on its own.
        if values.windows(2).any(|w| w[0] >= w[1]) || values.iter().any(|v| v.is_nan()) {
            return None;
        }
        let mut rank = [0u8; MAX_LEVELS];
        for (r, &l) in order.iter().enumerate() {
            rank[l] = r as u8;
        }
        let mut codes = self.rows;
        for c in &mut codes {
            *c = rank[*c as usize];
        }
        Some(Coded { codes, values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Layout;
    use crate::rng::TreeRng;

    #[test]
    fn codes_rank_the_values_of_columns_with_few_levels() {
        let n = 3000;
        let mut rng = TreeRng::new(5);
        // Columns: 256 levels, 257 levels, 3 negative fractional levels, -0.0 with 0.0,
        // continuous, constant.
        let cols: Vec<Vec<f64>> = vec![
            (0..n).map(|i| (i % 256) as f64 * 1.5).collect(),
            (0..n).map(|i| (i % 257) as f64).collect(),
            (0..n).map(|_| -0.25 * rng.below(3) as f64).collect(),
            (0..n)
                .map(|i| if i % 2 == 0 { -0.0 } else { 0.0 })
                .collect(),
            (0..n).map(|_| rng.unit()).collect(),
            vec![7.0; n],
        ];
        let p = cols.len();
        let by_row: Vec<f64> = (0..n)
            .flat_map(|i| cols.iter().map(move |c| c[i]))
            .collect();
        let by_col: Vec<f64> = cols.concat();
        for (data, layout) in [(&by_row, Layout::RowMajor), (&by_col, Layout::ColumnMajor)] {
            let x = Matrix::new(data, n, p, layout).unwrap();
            let levels = Levels::new(&x).unwrap();
            let coded: Vec<bool> = (0..p).map(|j| levels.column(j).is_some()).collect();
            assert_eq!(coded, [true, false, true, false, false, true]);
            assert_eq!(levels.n_coded(), 3);
            for j in [0, 2, 5] {
                let c = levels.column(j).unwrap();
                let mut distinct = cols[j].clone();
                distinct.sort_by(f64::total_cmp);
                distinct.dedup();
                assert_eq!(c.values, distinct);
                for (i, &v) in cols[j].iter().enumerate() {
                    assert_eq!(c.values[c.codes[i] as usize], v);
                }
            }
        }
    }

    #[test]
    fn a_matrix_without_few_levels_has_no_codes() {
        let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
        let m = Matrix::new(&x, 500, 2, Layout::ColumnMajor).unwrap();
        assert!(Levels::new(&m).is_none());
        let empty: [f32; 0] = [];
        assert!(Levels::new(&Matrix::new(&empty, 0, 3, Layout::RowMajor).unwrap()).is_none());
    }
}

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
//!
//! *Wide* codes ([`Wide`], two bytes a row) are made on request for the other columns
//! with 257 to [`MAX_WIDE_LEVELS`] levels whose rows repeat each level [`WIDE_REPEATS`] times on average:
//! the exact search sums them into bins in the nodes large enough next to their level
//! count, when every sum is whole (`tree::split::gathered`). A column is read once more
//! for them, and given up after `n / WIDE_REPEATS` levels.

use super::bins::{block, read_row, BLOCK};
use super::ranks::Ranks;
use super::{Feature, Matrix};
use crate::parallel::map_ordered;
use std::ops::Range;

/// The most levels a coded column may have: codes are bytes.
pub const MAX_LEVELS: usize = 256;

/// The most levels a wide-coded column may have (codes are `u16`, which could hold
/// 65 535): the bins of more levels overflow the caches, and 8 columns of 15 000 levels
/// fitted no faster binned than sorted (BENCHMARKS.md, issue #20).
pub const MAX_WIDE_LEVELS: usize = 4096;

/// The fewest rows per level, on average, of a wide-coded column: a column of nearly
/// distinct values stays with the sorted search (its nodes would rarely hold enough rows
/// for bins, and its codes would cost two bytes a row for nothing).
pub const WIDE_REPEATS: usize = 4;

/// The coded columns of a matrix, which of its columns hold missing values (NaN), and
/// for a booster every column ranked: the facts about whole columns that the split search
/// reads.
#[derive(Clone, Debug, Default)]
pub struct Levels {
    columns: Vec<Option<Coded>>,
    /// The wide codes of columns with more levels (empty when none was asked for or made).
    wide: Vec<Option<Wide>>,
    /// Per column, whether it holds NaN (empty when none does). A column with NaN is
    /// never coded: it is searched as values, where missing values are handled.
    missing: Vec<bool>,
    /// Every column ranked, when asked for ([`Levels::with_ranks`]): a booster's exact
    /// search of a table with columns that have no lossless codes.
    ranks: Option<Ranks>,
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

/// One wide-coded column: the code of every row and the increasing levels the codes
/// index (between [`MAX_LEVELS`] + 1 and [`MAX_WIDE_LEVELS`] of them).
#[derive(Clone, Debug)]
pub struct Wide {
    /// `codes[i]` is the rank of row `i`'s value among `values`.
    pub codes: Vec<u16>,
    /// The distinct values of the column, increasing, as `f64`.
    pub values: Vec<f64>,
}

impl Levels {
    /// Codes every column of `x` with at most [`MAX_LEVELS`] levels, and with `wide` the
    /// others that qualify for [`Wide`] codes; None when no column is coded.
    pub fn new<T: Feature>(x: &Matrix<'_, T>, wide: bool) -> Option<Levels> {
        let p = x.n_cols();
        if x.n_rows() == 0 {
            return None;
        }
        let blocks = map_ordered(p.div_ceil(BLOCK), |b| code_block(x, block(b, p)));
        let columns: Vec<Option<Coded>> = blocks.into_iter().flatten().collect();
        let wide: Vec<Option<Wide>> = if wide && x.n_rows() / WIDE_REPEATS > MAX_LEVELS {
            map_ordered(p, |j| {
                columns[j].is_none().then(|| code_wide(x, j)).flatten()
            })
        } else {
            Vec::new()
        };
        let any = columns.iter().any(Option::is_some) || wide.iter().any(Option::is_some);
        any.then_some(Levels {
            columns,
            wide,
            missing: Vec::new(),
            ranks: None,
        })
    }

    /// Column `f`'s wide codes, when it has them.
    #[inline(always)]
    pub fn wide(&self, f: usize) -> Option<&Wide> {
        self.wide.get(f).and_then(Option::as_ref)
    }

    /// `levels` without the codes of the columns flagged in `dropped` (None: none); None
    /// when no column keeps codes.
    pub fn without(levels: Option<Levels>, dropped: Option<&[bool]>) -> Option<Levels> {
        let Some(dropped) = dropped else {
            return levels;
        };
        let mut l = levels?;
        for (f, _) in dropped.iter().enumerate().filter(|(_, &d)| d) {
            if let Some(c) = l.columns.get_mut(f) {
                *c = None;
            }
            if let Some(w) = l.wide.get_mut(f) {
                *w = None;
            }
        }
        let any = l.columns.iter().any(Option::is_some) || l.wide.iter().any(Option::is_some);
        any.then_some(l)
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

    /// `levels` with every column of `x` ranked ([`Ranks`]), when X has no NaN, some
    /// column has no lossless codes (a table of codes only is binned instead) and
    /// [`Ranks::new`] ranks it; `levels` unchanged otherwise.
    pub fn with_ranks<T: Feature>(levels: Option<Levels>, x: &Matrix<'_, T>) -> Option<Levels> {
        let binned = levels.as_ref().is_some_and(|l| {
            let coded = |f: usize| l.column(f).is_some() || l.wide(f).is_some();
            l.missing().is_some() || (0..x.n_cols()).all(coded)
        });
        if binned {
            return levels;
        }
        match Ranks::new(x) {
            Some(ranks) => Some(Levels {
                ranks: Some(ranks),
                ..levels.unwrap_or_default()
            }),
            None => levels,
        }
    }

    /// Every column ranked, when [`Levels::with_ranks`] made them.
    #[inline(always)]
    pub fn ranks(&self) -> Option<&Ranks> {
        self.ranks.as_ref()
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
        let wide: usize = self.wide.iter().flatten().map(|c| 2 * c.codes.len()).sum();
        wide + self
            .columns
            .iter()
            .flatten()
            .map(|c| c.codes.len())
            .sum::<usize>()
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
        let (values, rank) = ranked(&self.level_keys, self.values)?;
        let mut codes = self.rows;
        for c in &mut codes {
            *c = rank[*c as usize] as u8;
        }
        Some(Coded { codes, values })
    }
}

/// The levels (sort keys `keys` and `values`, in order of first appearance) in increasing
/// order, and the rank of each; None when two are equal values (`-0.0` and `0.0`) or one
/// is NaN.
fn ranked(keys: &[u64], values: Vec<f64>) -> Option<(Vec<f64>, Vec<usize>)> {
    let m = values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_unstable_by_key(|&l| keys[l]);
    let sorted: Vec<f64> = order.iter().map(|&l| values[l]).collect();
    // NaN compares false, so it must be refused on its own.
    if sorted.windows(2).any(|w| w[0] >= w[1]) || sorted.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut rank = vec![0; m];
    for (r, &l) in order.iter().enumerate() {
        rank[l] = r;
    }
    Some((sorted, rank))
}

/// Rows read to recognize a continuous column before coding it wide.
const PROBE_ROWS: usize = 512;

/// Whether the values `value(i)` of the first `m` rows are all distinct (by sort key).
fn all_distinct<T: Feature>(m: usize, value: impl Fn(usize) -> T) -> bool {
    let mut keys: Vec<u64> = (0..m).map(|i| value(i).sort_key()).collect();
    keys.sort_unstable();
    keys.windows(2).all(|w| w[0] != w[1])
}

/// The wide codes of column `j` of `x`, when it has more than [`MAX_LEVELS`] levels and
/// at most `n / WIDE_REPEATS` (and [`MAX_WIDE_LEVELS`]); given up at the first level over.
fn code_wide<T: Feature>(x: &Matrix<'_, T>, j: usize) -> Option<Wide> {
    let n = x.n_rows();
    let limit = MAX_WIDE_LEVELS.min(n / WIDE_REPEATS);
    let value = |i: usize| match x.column(j) {
        Some(c) => c[i],
        None => x.get(i, j),
    };
    if all_distinct(PROBE_ROWS.min(n), value) {
        // Continuous, most likely: with at most 4 096 levels, 512 distinct first rows
        // have a probability below e^-32. (Giving up changes no tree, only its speed.)
        return None;
    }
    // An open-addressing table of twice the most levels (as `Distinct`, sized at run time).
    let bits = (2 * limit).next_power_of_two().trailing_zeros();
    let mask = (1usize << bits) - 1;
    let mut keys = vec![0u64; mask + 1];
    let mut ids = vec![0u32; mask + 1];
    let (mut level_keys, mut values) = (Vec::new(), Vec::new());
    let mut rows = vec![0u16; n];
    for (i, row) in rows.iter_mut().enumerate() {
        let v = value(i);
        let key = v.sort_key();
        let mut s = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
        loop {
            match ids[s] {
                0 => {
                    let level = values.len();
                    if level == limit {
                        return None;
                    }
                    keys[s] = key;
                    ids[s] = level as u32 + 1;
                    level_keys.push(key);
                    values.push(v.to_f64());
                    *row = level as u16;
                    break;
                }
                id if keys[s] == key => {
                    *row = (id - 1) as u16;
                    break;
                }
                _ => s = (s + 1) & mask,
            }
        }
    }
    if values.len() <= MAX_LEVELS {
        return None; // coded in bytes, or refused there (-0.0 with 0.0, NaN)
    }
    let (values, rank) = ranked(&level_keys, values)?;
    for c in &mut rows {
        *c = rank[usize::from(*c)] as u16;
    }
    Some(Wide {
        codes: rows,
        values,
    })
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
            let levels = Levels::new(&x, false).unwrap();
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
    fn wide_codes_rank_columns_of_many_repeated_levels() {
        let n = 8000;
        let mut rng = TreeRng::new(7);
        // 600 levels (wide), 600 with -0.0 and 0.0 (refused), n / 4 + 1 levels (too few
        // repeats), 3 levels (bytes), 5 000 levels (over both limits).
        let cols: Vec<Vec<f64>> = vec![
            (0..n).map(|_| rng.below(600) as f64 * -0.5).collect(),
            (0..n)
                .map(|i| {
                    if i < 2 {
                        [-0.0, 0.0][i]
                    } else {
                        rng.below(600) as f64 + 1.0
                    }
                })
                .collect(),
            (0..n).map(|i| (i % (n / 4 + 1)) as f64).collect(),
            (0..n).map(|_| rng.below(3) as f64).collect(),
            (0..n).map(|i| (i % 5000) as f64).collect(),
        ];
        let by_col: Vec<f64> = cols.concat();
        let x = Matrix::new(&by_col, n, cols.len(), Layout::ColumnMajor).unwrap();
        let levels = Levels::new(&x, true).unwrap();
        let wide: Vec<bool> = (0..cols.len()).map(|j| levels.wide(j).is_some()).collect();
        assert_eq!(wide, [true, false, false, false, false]);
        let w = levels.wide(0).unwrap();
        let mut distinct = cols[0].clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        assert_eq!(w.values, distinct);
        for (i, &v) in cols[0].iter().enumerate() {
            assert_eq!(w.values[usize::from(w.codes[i])], v);
        }
        assert_eq!(levels.code_bytes(), n + 2 * n);
        assert!(Levels::new(&x, false).unwrap().wide(0).is_none());
    }

    #[test]
    fn a_matrix_without_few_levels_has_no_codes() {
        let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
        let m = Matrix::new(&x, 500, 2, Layout::ColumnMajor).unwrap();
        assert!(Levels::new(&m, true).is_none());
        let empty: [f32; 0] = [];
        assert!(Levels::new(&Matrix::new(&empty, 0, 3, Layout::RowMajor).unwrap(), true).is_none());
    }
}

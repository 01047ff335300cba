//! Ranks: every column's rows sorted once per fit, each row's value replaced by its rank
//! among the column's distinct values (the lossless codes of a column of any number of
//! levels).
//!
//! A booster grows a hundred or more trees on the same X, and its exact search sorted
//! every candidate's values at every node of every tree. Ranked, the rows of a tree's root
//! are read in (value, row) order from these lists, and its nodes from lists partitioned
//! stably at each split (`tree::split::code_lists`): the same order as the sorted scan, so
//! the same sums, cuts and trees, without a sort.
//!
//! Made only for a booster's exact search of a dense X without NaN with columns that have
//! no lossless codes (a table of codes only is binned instead; in a mixed table the coded
//! columns are ranked too), and only up to [`MAX_CELLS`] cells: the lists
//! take 8 bytes per row and column, here and in every tree being grown. A column holding
//! both `-0.0` and `0.0` (equal values the sorted scan orders by their bits) is not ranked,
//! and then neither is X.

use super::{Feature, Matrix, Packed};
use crate::data::sort::sort_packed;
use crate::parallel::map_ordered;

/// The most cells (rows × columns) ranked.
pub const MAX_CELLS: usize = 1 << 23;

/// One ranked column: its rows in (value, row) order, each as its rank above its row.
#[derive(Clone, Debug)]
pub struct Ranked {
    /// `rank << 32 | row`, increasing.
    pub sorted: Vec<u64>,
    /// The distinct values of the column, increasing, as `f64`: rank `r`'s is `values[r]`.
    pub values: Vec<f64>,
}

/// The ranked columns of a matrix.
#[derive(Clone, Debug)]
pub struct Ranks {
    columns: Vec<Ranked>,
}

impl Ranks {
    /// Ranks every column of `x`; None when X is sparse, holds NaN (refused here as
    /// well), has a column with both zeros, or has more than [`MAX_CELLS`] cells.
    pub fn new<T: Feature>(x: &Matrix<'_, T>) -> Option<Ranks> {
        let (n, p) = (x.n_rows(), x.n_cols());
        if x.is_sparse() || n == 0 || n >= 1 << 32 || n.saturating_mul(p) > MAX_CELLS {
            return None;
        }
        let columns: Option<Vec<Ranked>> =
            map_ordered(p, |j| rank_column(x, j)).into_iter().collect();
        columns.map(|columns| Ranks { columns })
    }

    /// How many columns are ranked (all of X's).
    pub fn n_cols(&self) -> usize {
        self.columns.len()
    }

    /// Column `f`.
    #[inline(always)]
    pub fn column(&self, f: usize) -> &Ranked {
        &self.columns[f]
    }
}

/// Column `j` of `x` ranked, or None (see [`Ranks::new`]).
fn rank_column<T: Feature>(x: &Matrix<'_, T>, j: usize) -> Option<Ranked> {
    let n = x.n_rows();
    let column = x.column(j);
    let value = |i: usize| match column {
        Some(column) => column[i],
        None => x.get(i, j),
    };
    let mut keys: Vec<T::Packed> = (0..n).map(|i| value(i).pack(i as u32)).collect();
    sort_packed(&mut keys, &mut Vec::new());
    let mut sorted = Vec::with_capacity(n);
    let mut values: Vec<f64> = Vec::new();
    let mut last: Option<T> = None;
    for key in keys {
        let row = key.position();
        let v = value(row as usize);
        if v.to_f64().is_nan() {
            return None;
        }
        match last {
            // The sorted scan cuts only between values that compare greater.
            Some(u) if v <= u => {
                if v.to_f64().to_bits() != u.to_f64().to_bits() {
                    return None; // -0.0 and 0.0
                }
            }
            _ => values.push(v.to_f64()),
        }
        last = Some(v);
        sorted.push(((values.len() - 1) as u64) << 32 | u64::from(row));
    }
    Some(Ranked { sorted, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Layout;

    #[test]
    fn ranks_order_rows_by_value_then_row() {
        let data = [3.0f32, 1.0, 3.0, -2.0, 1.0, 1.0];
        let x = Matrix::new(&data, 6, 1, Layout::ColumnMajor).unwrap();
        let ranks = Ranks::new(&x).unwrap();
        let c = ranks.column(0);
        assert_eq!(c.values, vec![-2.0, 1.0, 3.0]);
        let pairs: Vec<(u64, u64)> = c
            .sorted
            .iter()
            .map(|&s| (s >> 32, s & 0xffff_ffff))
            .collect();
        assert_eq!(pairs, vec![(0, 3), (1, 1), (1, 4), (1, 5), (2, 0), (2, 2)]);
    }

    #[test]
    fn both_zeros_nan_and_too_many_cells_are_not_ranked() {
        for bad in [[0.0f64, -0.0, 1.0], [0.0, f64::NAN, 1.0]] {
            let x = Matrix::new(&bad, 3, 1, Layout::RowMajor).unwrap();
            assert!(Ranks::new(&x).is_none(), "{bad:?}");
        }
        let one_zero = [0.0f64, 0.0, 1.0];
        assert!(Ranks::new(&Matrix::new(&one_zero, 3, 1, Layout::RowMajor).unwrap()).is_some());
        let wide = vec![0.0f32; MAX_CELLS + 2];
        let x = Matrix::new(&wide, 2, MAX_CELLS / 2 + 1, Layout::RowMajor).unwrap();
        assert!(Ranks::new(&x).is_none());
    }
}

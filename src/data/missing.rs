//! Which columns of X hold missing values (NaN), read once per fit and per prediction.
//!
//! X may hold NaN, a missing value, but never ±inf. Data without NaN pay one vectorized
//! pass ([`Matrix::check_finite`], as before missing values were supported); only when it
//! fails is X read again, value by value, to locate the NaN columns and any infinity.

use super::{Feature, Matrix};
use crate::error::{ForestError, Result};

impl<T: Feature> Matrix<'_, T> {
    /// Per column of the view, whether it holds NaN; None when none does. Fails on the
    /// first infinite value (row by row).
    pub fn missing_columns(&self) -> Result<Option<Vec<bool>>> {
        if self.check_finite().is_ok() {
            return Ok(None);
        }
        let (n, p) = (self.n_rows(), self.n_cols());
        let mut missing = vec![false; p];
        let mut see = |i: usize, f: usize, v: f64| {
            if v.is_nan() {
                missing[f] = true;
                Ok(())
            } else if v.is_infinite() {
                Err(ForestError::NonFinite {
                    what: "X",
                    row: i,
                    col: f,
                })
            } else {
                Ok(())
            }
        };
        for i in 0..n {
            match self.row(i) {
                Some(row) => {
                    for (f, v) in row.iter().enumerate() {
                        see(i, f, v.to_f64())?;
                    }
                }
                None => {
                    for f in 0..p {
                        see(i, f, self.get(i, f).to_f64())?;
                    }
                }
            }
        }
        Ok(missing.iter().any(|&m| m).then_some(missing))
    }

    /// The first NaN of X (row by row) as `(row, column)`, if any.
    pub fn first_missing(&self) -> Option<(usize, usize)> {
        if self.check_finite().is_ok() {
            return None;
        }
        (0..self.n_rows()).find_map(|i| {
            (0..self.n_cols())
                .find(|&f| self.get(i, f).to_f64().is_nan())
                .map(|f| (i, f))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::data::{Layout, Matrix};
    use crate::error::ForestError;

    #[test]
    fn nan_columns_are_found_and_infinities_refused() {
        let nan = f64::NAN;
        // 3 x 3, row-major: NaN in columns 0 and 2.
        let x = [1.0, 2.0, nan, nan, 5.0, 6.0, 7.0, 8.0, 9.0];
        for (data, layout) in [
            (x.to_vec(), Layout::RowMajor),
            (
                (0..9).map(|k| x[(k % 3) * 3 + k / 3]).collect(),
                Layout::ColumnMajor,
            ),
        ] {
            let m = Matrix::new(&data, 3, 3, layout).unwrap();
            assert_eq!(m.missing_columns().unwrap(), Some(vec![true, false, true]));
            assert_eq!(m.first_missing(), Some((0, 2)));
        }
        let clean = [1.0f32, 2.0, 3.0, 4.0];
        let m = Matrix::new(&clean, 2, 2, Layout::RowMajor).unwrap();
        assert_eq!(m.missing_columns().unwrap(), None);
        assert_eq!(m.first_missing(), None);
        let inf = [1.0, nan, f64::NEG_INFINITY, 4.0];
        let m = Matrix::new(&inf, 2, 2, Layout::RowMajor).unwrap();
        assert_eq!(
            m.missing_columns().unwrap_err(),
            ForestError::NonFinite {
                what: "X",
                row: 1,
                col: 0
            }
        );
    }
}

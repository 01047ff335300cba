//! The borrowed input matrix: layouts, element access, shadow columns, prefetching.

use super::Feature;
use crate::error::{ForestError, Result};

/// Memory order of a [`Matrix`] buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row-major (C order): `x[i, j]` at `i * n_cols + j`.
    RowMajor,
    /// Column-major (Fortran order): `x[i, j]` at `j * n_rows + i`.
    ColumnMajor,
}

/// Hints the CPU to load `v` into cache; changes no result.
#[inline(always)]
pub(crate) fn prefetch<T>(v: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching a valid reference only affects the cache.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            (v as *const T).cast::<i8>(),
            std::arch::x86_64::_MM_HINT_T0,
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// A borrowed `n_rows × n_cols` dense matrix.
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T> {
    data: &'a [T],
    n_rows: usize,
    /// Columns seen by users of the view (twice `stored_cols` with shadows).
    n_cols: usize,
    /// Columns stored in `data`.
    stored_cols: usize,
    layout: Layout,
    /// Row permutation of the shadow columns.
    shadow: Option<&'a [u32]>,
}

impl<'a, T: Feature> Matrix<'a, T> {
    /// Wraps `data` without copying; fails if its length is not `n_rows * n_cols`.
    pub fn new(data: &'a [T], n_rows: usize, n_cols: usize, layout: Layout) -> Result<Self> {
        if n_rows.checked_mul(n_cols) != Some(data.len()) {
            return Err(ForestError::Shape(format!(
                "buffer of {} values cannot be a {n_rows} x {n_cols} matrix",
                data.len()
            )));
        }
        Ok(Matrix {
            data,
            n_rows,
            n_cols,
            stored_cols: n_cols,
            layout,
            shadow: None,
        })
    }

    /// The same matrix followed by `n_cols` shadow columns: column `n_cols + j` at row `i`
    /// reads column `j` at row `permutation[i]`. Fails unless `permutation` is a permutation
    /// of the rows.
    pub fn with_shadows(self, permutation: &'a [u32]) -> Result<Self> {
        let mut seen = vec![false; self.n_rows];
        let ok = permutation.len() == self.n_rows
            && permutation.iter().all(|&r| {
                let fresh = seen.get(r as usize).is_some_and(|s| !s);
                if fresh {
                    seen[r as usize] = true;
                }
                fresh
            });
        if !ok || self.shadow.is_some() {
            return Err(ForestError::Shape(format!(
                "shadow columns need a permutation of the {} rows",
                self.n_rows
            )));
        }
        Ok(Matrix {
            n_cols: 2 * self.stored_cols,
            shadow: Some(permutation),
            ..self
        })
    }

    /// Whether the view has shadow columns.
    pub fn has_shadows(&self) -> bool {
        self.shadow.is_some()
    }

    /// Number of rows (samples).
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns (features).
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Memory order of the buffer.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Value at row `i`, column `j`.
    #[inline(always)]
    pub fn get(&self, i: usize, j: usize) -> T {
        let (i, j) = match self.shadow {
            Some(perm) if j >= self.stored_cols => (perm[i] as usize, j - self.stored_cols),
            _ => (i, j),
        };
        match self.layout {
            Layout::RowMajor => self.data[i * self.stored_cols + j],
            Layout::ColumnMajor => self.data[j * self.n_rows + i],
        }
    }

    /// Hints the CPU to load `x[i, j]` into cache (a read of scattered rows is a cache miss
    /// unless requested early); never faults and changes no result.
    #[inline(always)]
    pub fn prefetch(&self, i: usize, j: usize) {
        let (i, j) = match self.shadow {
            Some(perm) if j >= self.stored_cols => match perm.get(i) {
                Some(&r) => (r as usize, j - self.stored_cols),
                None => return,
            },
            _ => (i, j),
        };
        let k = match self.layout {
            Layout::RowMajor => i * self.stored_cols + j,
            Layout::ColumnMajor => j * self.n_rows + i,
        };
        if let Some(v) = self.data.get(k) {
            prefetch(v);
        }
    }

    /// Column `j` as a contiguous slice, when the layout allows it (never for a shadow).
    #[inline]
    pub fn column(&self, j: usize) -> Option<&'a [T]> {
        match self.layout {
            Layout::ColumnMajor if j < self.stored_cols => {
                Some(&self.data[j * self.n_rows..(j + 1) * self.n_rows])
            }
            _ => None,
        }
    }

    /// The stored values when they are the rows one after another (row-major, no
    /// shadows): `x[i, j]` is `data[i * n_cols + j]`.
    #[inline]
    pub fn row_major_data(&self) -> Option<&'a [T]> {
        match (self.layout, self.shadow) {
            (Layout::RowMajor, None) => Some(self.data),
            _ => None,
        }
    }

    /// Row `i` as a contiguous slice, when the layout allows it (never with shadows).
    #[inline]
    pub fn row(&self, i: usize) -> Option<&'a [T]> {
        match (self.layout, self.shadow) {
            (Layout::RowMajor, None) => Some(&self.data[i * self.n_cols..(i + 1) * self.n_cols]),
            _ => None,
        }
    }

    /// Fails on the first NaN or infinite value (scanned in memory order).
    pub fn check_finite(&self) -> Result<()> {
        // Whole blocks are tested without an early exit, which vectorizes; only a block
        // that fails is searched for its first bad value.
        const BLOCK: usize = 1024;
        let bad_block = self
            .data
            .chunks(BLOCK)
            .position(|b| !b.iter().fold(true, |ok, v| ok & v.finite()));
        let first_bad = bad_block.and_then(|b| {
            let block = &self.data[b * BLOCK..((b + 1) * BLOCK).min(self.data.len())];
            block
                .iter()
                .position(|v| !v.finite())
                .map(|k| b * BLOCK + k)
        });
        match first_bad {
            None => Ok(()),
            Some(k) => {
                let (row, col) = match self.layout {
                    Layout::RowMajor => (k / self.stored_cols.max(1), k % self.stored_cols.max(1)),
                    Layout::ColumnMajor => (k % self.n_rows.max(1), k / self.n_rows.max(1)),
                };
                Err(ForestError::NonFinite {
                    what: "X",
                    row,
                    col,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn both_layouts_address_the_same_matrix() {
        let c = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 x 3
        let f = [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0];
        let a = Matrix::new(&c, 2, 3, Layout::RowMajor).unwrap();
        let b = Matrix::new(&f, 2, 3, Layout::ColumnMajor).unwrap();
        for i in 0..2 {
            for j in 0..3 {
                assert_eq!(a.get(i, j), b.get(i, j));
            }
        }
        assert_eq!(b.column(1).unwrap(), &[2.0, 5.0]);
        assert!(Matrix::new(&c, 4, 2, Layout::RowMajor).is_err());
    }
    #[test]
    fn shadows_read_permuted_rows_in_both_layouts() {
        let c = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 3 x 2
        let f = [1.0f32, 3.0, 5.0, 2.0, 4.0, 6.0];
        let perm = [2u32, 0, 1];
        for m in [
            Matrix::new(&c, 3, 2, Layout::RowMajor).unwrap(),
            Matrix::new(&f, 3, 2, Layout::ColumnMajor).unwrap(),
        ] {
            let s = m.with_shadows(&perm).unwrap();
            assert_eq!(s.n_cols(), 4);
            assert!(s.row(0).is_none() && s.column(2).is_none());
            for i in 0..3 {
                for j in 0..2 {
                    assert_eq!(s.get(i, j), m.get(i, j));
                    assert_eq!(s.get(i, 2 + j), m.get(perm[i] as usize, j));
                }
            }
        }
        let m = Matrix::new(&c, 3, 2, Layout::RowMajor).unwrap();
        assert!(m.with_shadows(&[0, 0, 1]).is_err());
        assert!(m.with_shadows(&[0, 1]).is_err());
        assert!(m.with_shadows(&[0, 1, 3]).is_err());
    }
    #[test]
    fn non_finite_is_located() {
        let c = [1.0f64, 2.0, f64::NAN, 4.0];
        let a = Matrix::new(&c, 2, 2, Layout::RowMajor).unwrap();
        assert_eq!(
            a.check_finite(),
            Err(ForestError::NonFinite {
                what: "X",
                row: 1,
                col: 0
            })
        );
    }
}

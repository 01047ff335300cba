//! The borrowed input matrix: layouts, element access, shadow columns, prefetching.

use super::{CscIndex, Feature, RowIndex, Shadows};
use crate::error::{ForestError, Result};

/// Memory order of a [`Matrix`] buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row-major (C order): `x[i, j]` at `i * n_cols + j`.
    RowMajor,
    /// Column-major (Fortran order): `x[i, j]` at `j * n_rows + i`.
    ColumnMajor,
    /// Compressed sparse columns (scipy's CSC): the stored values of each column, at the
    /// rows of a [`CscIndex`]; the others are 0.
    SparseColumns,
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
    /// Columns seen by users of the view (`n_real` plus the shadows).
    n_cols: usize,
    /// Columns stored in `data`.
    stored_cols: usize,
    /// Columns of the view that read a stored column as it is.
    n_real: usize,
    /// The stored column of each real column of the view (None: all, in order).
    columns: Option<&'a [u32]>,
    layout: Layout,
    /// The shadow columns after the stored ones.
    shadow: Option<&'a Shadows>,
    /// The index of a [`Layout::SparseColumns`] matrix (whose `data` are its stored values).
    csc: Option<CscIndex<'a>>,
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
            n_real: n_cols,
            columns: None,
            layout,
            shadow: None,
            csc: None,
        })
    }

    /// Views a CSC matrix: `values` are its stored values, `indptr` and `indices` its index
    /// (checked by [`CscIndex::new`]). Nothing is copied or densified.
    pub fn sparse_columns(
        values: &'a [T],
        indptr: &'a [i32],
        indices: &'a [i32],
        n_rows: usize,
        n_cols: usize,
    ) -> Result<Self> {
        let csc = CscIndex::new(indptr, indices, values.len(), n_rows, n_cols)?;
        Ok(Matrix {
            data: values,
            n_rows,
            n_cols,
            stored_cols: n_cols,
            n_real: n_cols,
            columns: None,
            layout: Layout::SparseColumns,
            shadow: None,
            csc: Some(csc),
        })
    }

    /// The column index of a sparse view, with its entries also listed by row (`by_row`,
    /// made from this view's index by [`RowIndex::new`]); a dense view is returned as it is.
    pub fn with_row_index(self, by_row: &'a RowIndex) -> Self {
        Matrix {
            csc: self.csc.map(|c| c.with_rows(by_row)),
            ..self
        }
    }

    /// The index of a sparse view.
    pub fn csc_index(&self) -> Option<CscIndex<'a>> {
        self.csc
    }

    /// The entries by row of a plain sparse view (no column selection, no shadows), when
    /// made: view column `j` is then stored column `j`.
    #[inline]
    pub fn sparse_rows(&self) -> Option<&'a RowIndex> {
        self.csc.filter(|_| self.plain()).and_then(|c| c.by_row())
    }

    /// Writes row `i` of a plain sparse view with a row index into `dense` (its `n_cols`
    /// values; the other values must be 0 and stay so), calls `read(dense)`, and makes
    /// `dense` zeros again, in `O(entries of the row)`. False (and nothing called) for any
    /// other view.
    pub fn with_row_written(&self, i: usize, dense: &mut [T], read: impl FnOnce(&[T])) -> bool {
        let Some(by_row) = self.sparse_rows() else {
            return false;
        };
        for (j, k) in by_row.entries(i) {
            dense[j] = self.data[k];
        }
        read(dense);
        for (j, _) in by_row.entries(i) {
            dense[j] = T::default();
        }
        true
    }

    /// Whether the view reads a sparse matrix.
    #[inline]
    pub fn is_sparse(&self) -> bool {
        self.csc.is_some()
    }

    /// The stored rows and values of real column `j` of a sparse view (rows strictly
    /// increasing); None for a dense view or a shadow column.
    #[inline]
    pub fn sparse_column(&self, j: usize) -> Option<(&'a [i32], &'a [T])> {
        let csc = self.csc?;
        if j >= self.n_real {
            return None;
        }
        let (range, rows) = csc.column(self.columns.map_or(j, |c| c[j] as usize));
        Some((rows, &self.data[range]))
    }

    /// `x[i, j]` of a sparse view at a stored `(i, j)`: kept out of line, so that the dense
    /// reads of [`Self::get`] stay as small as they were.
    #[inline(never)]
    fn sparse_value(&self, i: usize, j: usize) -> T {
        match self.csc.and_then(|c| c.find(i, j)) {
            Some(k) => self.data[k],
            None => T::default(),
        }
    }

    /// The view of the stored columns `columns` (in that order, repeats allowed), without a
    /// copy. Fails if one is out of range, or on a view that already has shadows or a
    /// column selection.
    pub fn with_columns(self, columns: &'a [u32]) -> Result<Self> {
        let fits = columns.iter().all(|&j| (j as usize) < self.stored_cols);
        if !fits || self.shadow.is_some() || self.columns.is_some() {
            return Err(ForestError::Shape(format!(
                "a column selection must name columns of the {} stored ones, before shadows",
                self.stored_cols
            )));
        }
        Ok(Matrix {
            n_cols: columns.len(),
            n_real: columns.len(),
            columns: Some(columns),
            ..self
        })
    }

    /// The same matrix followed by the columns of `shadows` (column `n_cols + k` is shadow
    /// `k`). Fails unless `shadows` permutes this matrix's rows and reads its columns.
    pub fn with_shadows(self, shadows: &'a Shadows) -> Result<Self> {
        let fits = shadows.n_rows() == self.n_rows
            && shadows
                .sources()
                .iter()
                .all(|&j| (j as usize) < self.stored_cols);
        if !fits || self.shadow.is_some() {
            return Err(ForestError::Shape(format!(
                "shadow columns must permute the {} rows and read the {} columns of the matrix",
                self.n_rows, self.stored_cols
            )));
        }
        Ok(Matrix {
            n_cols: self.n_real + shadows.len(),
            shadow: Some(shadows),
            ..self
        })
    }

    /// The shadows of the view and the view column of each shadow's source (the real
    /// column that reads it at the stored rows), when every source is one.
    pub(super) fn shadow_twins(&self) -> Option<(&'a Shadows, Vec<usize>)> {
        let shadows = self.shadow?;
        let twin = |s: u32| match self.columns {
            None => ((s as usize) < self.n_real).then_some(s as usize),
            Some(c) => c.iter().position(|&j| j == s),
        };
        let twins: Option<Vec<usize>> = shadows.sources().iter().map(|&s| twin(s)).collect();
        twins.map(|t| (shadows, t))
    }

    /// The view without its shadow columns.
    pub(super) fn without_shadows(self) -> Self {
        Matrix {
            n_cols: self.n_real,
            shadow: None,
            ..self
        }
    }

    /// Columns of the stored matrix the view reads.
    pub(super) fn stored_cols(&self) -> usize {
        self.stored_cols
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

    /// The stored `(row, column)` of the view's `x[i, j]`, None for an out-of-range shadow
    /// row (real columns are bounds-checked where `data` is indexed).
    #[inline(always)]
    pub(super) fn stored_at(&self, i: usize, j: usize) -> Option<(usize, usize)> {
        if j < self.n_real {
            return Some((i, self.columns.map_or(j, |c| c[j] as usize)));
        }
        match self.shadow {
            Some(s) => s.try_locate(i, j - self.n_real),
            None => Some((i, j)),
        }
    }

    /// Value at row `i`, column `j`.
    #[inline(always)]
    pub fn get(&self, i: usize, j: usize) -> T {
        let (i, j) = match self.shadow {
            Some(s) if j >= self.n_real => s.locate(i, j - self.n_real),
            _ => (i, self.columns.map_or(j, |c| c[j] as usize)),
        };
        match self.layout {
            Layout::RowMajor => self.data[i * self.stored_cols + j],
            Layout::ColumnMajor => self.data[j * self.n_rows + i],
            Layout::SparseColumns => self.sparse_value(i, j),
        }
    }

    /// Hints the CPU to load `x[i, j]` into cache (a read of scattered rows is a cache miss
    /// unless requested early); never faults and changes no result.
    #[inline(always)]
    pub fn prefetch(&self, i: usize, j: usize) {
        let Some((i, j)) = self.stored_at(i, j) else {
            return;
        };
        let k = match self.layout {
            Layout::RowMajor => i * self.stored_cols + j,
            Layout::ColumnMajor => j * self.n_rows + i,
            Layout::SparseColumns => return,
        };
        if let Some(v) = self.data.get(k) {
            prefetch(v);
        }
    }

    /// Column `j` as a contiguous slice, when the layout allows it (never for a shadow).
    #[inline]
    pub fn column(&self, j: usize) -> Option<&'a [T]> {
        match self.layout {
            Layout::ColumnMajor if j < self.n_real => {
                let j = self.columns.map_or(j, |c| c[j] as usize);
                Some(&self.data[j * self.n_rows..(j + 1) * self.n_rows])
            }
            _ => None,
        }
    }

    /// Whether every column is a contiguous slice ([`Self::column`] never returns None).
    #[inline]
    pub fn columns_are_slices(&self) -> bool {
        self.layout == Layout::ColumnMajor && self.shadow.is_none()
    }

    /// Whether the view reads the stored matrix as it is (no selection, no shadows).
    #[inline]
    fn plain(&self) -> bool {
        self.shadow.is_none() && self.columns.is_none()
    }

    /// The stored values when they are the rows one after another (row-major, a plain
    /// view): `x[i, j]` is `data[i * n_cols + j]`.
    #[inline]
    pub fn row_major_data(&self) -> Option<&'a [T]> {
        (self.layout == Layout::RowMajor && self.plain()).then_some(self.data)
    }

    /// Row `i` as a contiguous slice, when the layout allows it (a plain row-major view).
    #[inline]
    pub fn row(&self, i: usize) -> Option<&'a [T]> {
        (self.layout == Layout::RowMajor && self.plain())
            .then(|| &self.data[i * self.n_cols..(i + 1) * self.n_cols])
    }

    /// Fails on the first NaN or infinite value (scanned in memory order; for a sparse
    /// view, among the stored values).
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
                let (row, col) = match (self.layout, self.csc) {
                    (Layout::RowMajor, _) => {
                        (k / self.stored_cols.max(1), k % self.stored_cols.max(1))
                    }
                    (Layout::SparseColumns, Some(c)) => c.locate(k),
                    _ => (k % self.n_rows.max(1), k / self.n_rows.max(1)),
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
        let shadows = Shadows::shared_with(perm.to_vec(), 2).unwrap();
        for m in [
            Matrix::new(&c, 3, 2, Layout::RowMajor).unwrap(),
            Matrix::new(&f, 3, 2, Layout::ColumnMajor).unwrap(),
        ] {
            let s = m.with_shadows(&shadows).unwrap();
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
        let two_rows = Shadows::shared_with(vec![0, 1], 2).unwrap();
        let third_column = Shadows::independent(3, vec![2], 0);
        assert!(m.with_shadows(&two_rows).is_err());
        assert!(m.with_shadows(&third_column).is_err());
        let twice = m.with_shadows(&shadows).unwrap();
        assert!(twice.with_shadows(&shadows).is_err());
    }
    #[test]
    fn column_selections_read_stored_columns_then_shadows() {
        let c = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 x 3
        let f = [1.0f32, 4.0, 2.0, 5.0, 3.0, 6.0];
        let shadows = Shadows::independent(2, vec![2], 4);
        for m in [
            Matrix::new(&c, 2, 3, Layout::RowMajor).unwrap(),
            Matrix::new(&f, 2, 3, Layout::ColumnMajor).unwrap(),
        ] {
            let v = m.with_columns(&[2, 0]).unwrap();
            assert_eq!((v.n_cols(), v.row(0)), (2, None));
            assert_eq!([v.get(1, 0), v.get(1, 1)], [6.0, 4.0]);
            assert_eq!(v.column(0).is_some(), m.layout() == Layout::ColumnMajor);
            let s = v.with_shadows(&shadows).unwrap();
            assert_eq!(s.n_cols(), 3);
            let mut shadow = [s.get(0, 2), s.get(1, 2)];
            shadow.sort_by(f32::total_cmp);
            assert_eq!(shadow, [3.0, 6.0]);
            assert!(m.with_columns(&[3]).is_err() && s.with_columns(&[0]).is_err());
        }
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

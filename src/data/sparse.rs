//! The index of a compressed sparse column (CSC) matrix, as scipy stores it: column `j`
//! holds the entries `indptr[j]..indptr[j + 1]`, whose rows are `indices[k]` and whose
//! values are the matrix's stored values. A [`super::Matrix`] built by
//! [`super::Matrix::sparse_columns`] reads X through this index; every other value is 0.
//!
//! Invariant (checked once, by [`CscIndex::new`], before any read): `indptr` starts at 0,
//! never decreases and ends at the number of entries; within each column the rows are
//! strictly increasing (sorted, no duplicates) and below `n_rows`. Reads can then neither
//! fail nor index out of bounds, and a column's rows can be searched by bisection.

use crate::error::{ForestError, Result};

/// The borrowed structure of a CSC matrix (its values are kept by the matrix view).
#[derive(Clone, Copy, Debug)]
pub struct CscIndex<'a> {
    indptr: &'a [i32],
    indices: &'a [i32],
    /// The same entries by row, when made ([`RowIndex`]).
    by_row: Option<&'a RowIndex>,
}

/// The columns of each row's entries (the CSR structure of the same matrix), made once per
/// fit or prediction in `O(entries + rows)`: a node's rows then name the features that
/// have an entry in the node, and the others are known constant (all zeros) without a
/// search; and `x[i, j]` is found among row `i`'s few entries, which a row's descent
/// through a tree reads again and again, instead of in column `j`, a new one at each node.
#[derive(Clone, Debug)]
pub struct RowIndex {
    indptr: Vec<u32>,
    /// Per row, the columns of its entries (increasing), and where each is stored in the
    /// CSC values.
    columns: Vec<u32>,
    stored_at: Vec<u32>,
}

impl RowIndex {
    /// The row index of `csc` (a counting sort of its entries by row).
    pub fn new(csc: &CscIndex<'_>, n_rows: usize) -> Self {
        let mut indptr = vec![0u32; n_rows + 1];
        for &r in csc.indices {
            indptr[r as usize + 1] += 1;
        }
        for i in 0..n_rows {
            indptr[i + 1] += indptr[i];
        }
        let mut next = indptr.clone();
        let mut columns = vec![0u32; csc.indices.len()];
        let mut stored_at = vec![0u32; csc.indices.len()];
        for (j, w) in csc.indptr.windows(2).enumerate() {
            for k in w[0] as usize..w[1] as usize {
                let slot = &mut next[csc.indices[k] as usize];
                columns[*slot as usize] = j as u32;
                stored_at[*slot as usize] = k as u32;
                *slot += 1;
            }
        }
        RowIndex {
            indptr,
            columns,
            stored_at,
        }
    }

    /// The columns with an entry in row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[u32] {
        &self.columns[self.range(i)]
    }

    /// The CSC entry holding `x[i, j]`, None when it is an implicit zero.
    #[inline]
    pub fn find(&self, i: usize, j: usize) -> Option<usize> {
        let range = self.range(i);
        let k = self.columns[range.clone()]
            .binary_search(&(j as u32))
            .ok()?;
        Some(self.stored_at[range.start + k] as usize)
    }

    /// Row `i`'s entries: (column, where it is stored in the CSC values).
    #[inline]
    pub fn entries(&self, i: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let range = self.range(i);
        let stored = self.stored_at[range.clone()].iter();
        self.columns[range]
            .iter()
            .zip(stored)
            .map(|(&j, &k)| (j as usize, k as usize))
    }

    #[inline]
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.indptr[i] as usize..self.indptr[i + 1] as usize
    }

    /// Entries per row, on average.
    pub fn mean_row_len(&self) -> f64 {
        self.columns.len() as f64 / (self.indptr.len() - 1).max(1) as f64
    }
}

fn malformed(msg: String) -> ForestError {
    ForestError::Shape(format!("malformed sparse matrix: {msg}"))
}

impl<'a> CscIndex<'a> {
    /// Checks the invariant of the module for an `n_rows × n_cols` matrix of `n_values`
    /// stored values, in one pass over the index.
    pub fn new(
        indptr: &'a [i32],
        indices: &'a [i32],
        n_values: usize,
        n_rows: usize,
        n_cols: usize,
    ) -> Result<Self> {
        if n_rows > i32::MAX as usize || n_cols > i32::MAX as usize {
            // Rows are int32 in the index and u32 sample ids in a fit.
            return Err(malformed(format!(
                "{n_rows} x {n_cols} is larger than int32 indices can address"
            )));
        }
        if indptr.len() != n_cols + 1 {
            return Err(malformed(format!(
                "indptr has {} entries for {n_cols} columns (expected {})",
                indptr.len(),
                n_cols + 1
            )));
        }
        if indices.len() != n_values {
            return Err(malformed(format!(
                "{} indices for {n_values} stored values",
                indices.len()
            )));
        }
        if indptr[0] != 0 || indptr[n_cols] as i64 != n_values as i64 {
            return Err(malformed(format!(
                "indptr must start at 0 and end at the {n_values} stored values, got {} and {}",
                indptr[0], indptr[n_cols]
            )));
        }
        for (j, w) in indptr.windows(2).enumerate() {
            // Starting at 0, never decreasing and never past the entries: each column's
            // range is in bounds before it is read.
            if w[1] < w[0] || w[1] as i64 > n_values as i64 {
                return Err(malformed(format!(
                    "indptr decreases or passes the {n_values} stored values at column {j}"
                )));
            }
            let rows = &indices[w[0] as usize..w[1] as usize];
            if let Some(&r) = rows.iter().find(|&&r| r < 0 || r as i64 >= n_rows as i64) {
                return Err(malformed(format!(
                    "row index {r} in column {j} is out of range for {n_rows} rows"
                )));
            }
            if rows.windows(2).any(|p| p[1] <= p[0]) {
                return Err(malformed(format!(
                    "the row indices of column {j} are unsorted or repeated \
                     (call sum_duplicates() and sort_indices())"
                )));
            }
        }
        Ok(CscIndex {
            indptr,
            indices,
            by_row: None,
        })
    }

    /// The same index with its entries also listed by row.
    pub fn with_rows(self, by_row: &'a RowIndex) -> Self {
        CscIndex {
            by_row: Some(by_row),
            ..self
        }
    }

    /// The entries by row, when made.
    pub fn by_row(&self) -> Option<&'a RowIndex> {
        self.by_row
    }

    /// The range of column `j`'s entries, and their rows.
    #[inline]
    pub fn column(&self, j: usize) -> (std::ops::Range<usize>, &'a [i32]) {
        let range = self.indptr[j] as usize..self.indptr[j + 1] as usize;
        (range.clone(), &self.indices[range])
    }

    /// The entry holding `x[i, j]`, None when it is an implicit zero.
    #[inline]
    pub fn find(&self, i: usize, j: usize) -> Option<usize> {
        if let Some(by_row) = self.by_row {
            return by_row.find(i, j);
        }
        let (range, rows) = self.column(j);
        let k = rows.binary_search(&(i as i32)).ok()?;
        Some(range.start + k)
    }

    /// The `(row, column)` of entry `k`.
    pub fn locate(&self, k: usize) -> (usize, usize) {
        let col = self.indptr.partition_point(|&p| p as usize <= k);
        (self.indices[k] as usize, col.saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_indices_are_refused() {
        // 3 x 2: column 0 has rows 0, 2; column 1 has row 1.
        let ok = CscIndex::new(&[0, 2, 3], &[0, 2, 1], 3, 3, 2).unwrap();
        assert_eq!(ok.find(2, 0), Some(1));
        assert_eq!(ok.find(1, 0), None);
        assert_eq!(ok.locate(2), (1, 1));
        let bad: [(&[i32], &[i32], usize); 7] = [
            (&[0, 2], &[0, 2], 2),        // indptr too short
            (&[1, 2, 3], &[0, 2, 1], 3),  // does not start at 0
            (&[0, 2, 4], &[0, 2, 1], 3),  // does not end at nnz
            (&[0, 3, 2], &[0, 1, 2], 2),  // decreasing (and end mismatch)
            (&[0, 2, 3], &[0, 3, 1], 3),  // row out of range
            (&[0, 2, 3], &[2, 0, 1], 3),  // unsorted
            (&[0, 2, 3], &[-1, 0, 1], 3), // negative
        ];
        // Past the entries, then back to their end: refused before column 0 is read.
        assert!(CscIndex::new(&[0, 5, 3], &[0, 1, 2], 3, 3, 2).is_err());
        for (indptr, indices, nnz) in bad {
            assert!(
                CscIndex::new(indptr, indices, nnz, 3, 2).is_err(),
                "{indptr:?} {indices:?}"
            );
        }
        assert!(CscIndex::new(&[0, 2, 3], &[0, 0, 1], 3, 3, 2).is_err()); // duplicate
        let by_row = RowIndex::new(&ok, 3);
        assert_eq!(
            [by_row.row(0), by_row.row(1), by_row.row(2)],
            [&[0u32][..], &[1], &[0]]
        );
        let both = ok.with_rows(&by_row);
        for (i, j) in (0..3).flat_map(|i| (0..2).map(move |j| (i, j))) {
            assert_eq!(both.find(i, j), ok.find(i, j), "({i}, {j})");
        }
        assert!(CscIndex::new(&[0, 3, 3], &[0, 1, 2], 3, 3, 2).is_ok());
        assert!(CscIndex::new(&[0, 0], &[], 0, 1 << 31, 1).is_err());
    }
}

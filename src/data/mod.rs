//! Zero-copy views of the input matrix and the targets.
//!
//! `Matrix` borrows a dense buffer in row-major (C) or column-major (Fortran) order; the
//! engine reads it in place and never copies X. Column-major is the fast layout for
//! fitting (a node gathers one feature at a time), row-major for prediction.
//!
//! A matrix may also carry *shadow* columns (Nembrini et al. 2018, as in ranger): with a row
//! permutation π, column `p + j` is column `j` read at row `π(i)`. Shadows are virtual: they
//! double the feature count without a copy of X.

mod bins;
mod targets;

pub use bins::{Binned, SAMPLE_ROWS};
pub use targets::Targets;

use crate::error::{ForestError, Result};

/// A feature type the engine reads directly: `f32` or `f64` inputs, `u8` bin codes.
pub trait Feature: Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + 'static {
    /// Widening conversion used for thresholds and comparisons.
    fn to_f64(self) -> f64;
    /// Whether the value is neither NaN nor infinite.
    fn finite(self) -> bool;
    /// IEEE total order, so sorts are fully determined.
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering;
    /// An unsigned integer ordered like [`Feature::total_cmp`].
    fn sort_key(self) -> u64;
    /// The value as an index: meaningful for bin codes, which are small integers.
    #[inline(always)]
    fn code(self) -> usize {
        self.to_f64() as usize
    }
    /// The sort key and a row position packed in one integer.
    type Packed: Packed;
    /// `sort_key << 32 | position`: integers ordered by value, then position.
    fn pack(self, position: u32) -> Self::Packed;
}

/// A sort key above a 32-bit row position, in one unsigned integer, so sorting needs no
/// comparator and large sorts can be radix sorts over the key bytes.
pub trait Packed: Copy + Ord + Send + Sync + std::fmt::Debug + 'static {
    /// Bytes of the key.
    const KEY_BYTES: usize;
    /// Byte `b` of the key (0 is the least significant).
    fn key_byte(self, b: usize) -> usize;
    /// The row position.
    fn position(self) -> u32;
}

/// `Packed` for an unsigned integer whose bits above the low 32 hold a key of `$bytes` bytes.
macro_rules! packed_integer {
    ($int:ty, $bytes:expr) => {
        impl Packed for $int {
            const KEY_BYTES: usize = $bytes;
            #[inline(always)]
            fn key_byte(self, b: usize) -> usize {
                (self >> (32 + 8 * b)) as usize & 255
            }
            #[inline(always)]
            fn position(self) -> u32 {
                self as u32
            }
        }
    };
}

packed_integer!(u64, 4);
packed_integer!(u128, 8);

impl Feature for f32 {
    type Packed = u64;
    #[inline]
    fn pack(self, position: u32) -> u64 {
        self.sort_key() << 32 | u64::from(position)
    }
    #[inline]
    fn sort_key(self) -> u64 {
        // Negative values: flip all bits (reverses their order); others: set the sign bit.
        let b = self.to_bits();
        u64::from(if b >> 31 == 1 { !b } else { b | 1 << 31 })
    }
    #[inline]
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering {
        f32::total_cmp(self, other)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Feature for f64 {
    type Packed = u128;
    #[inline]
    fn pack(self, position: u32) -> u128 {
        u128::from(self.sort_key()) << 32 | u128::from(position)
    }
    #[inline]
    fn sort_key(self) -> u64 {
        let b = self.to_bits();
        if b >> 63 == 1 {
            !b
        } else {
            b | 1 << 63
        }
    }
    #[inline]
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering {
        f64::total_cmp(self, other)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// Bin codes (see [`Binned`]): the histogram splitter grows trees on them.
impl Feature for u8 {
    #[inline(always)]
    fn code(self) -> usize {
        usize::from(self)
    }
    type Packed = u64;
    #[inline]
    fn pack(self, position: u32) -> u64 {
        self.sort_key() << 32 | u64::from(position)
    }
    #[inline]
    fn sort_key(self) -> u64 {
        u64::from(self)
    }
    #[inline]
    fn total_cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.cmp(other)
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn finite(self) -> bool {
        true
    }
}

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
        match self.data.iter().position(|v| !v.finite()) {
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
    fn sort_keys_order_like_total_cmp() {
        let v32 = [
            -f32::INFINITY,
            -2.5,
            -1e-30,
            -0.0,
            0.0,
            1e-30,
            3.0,
            f32::INFINITY,
        ];
        let v64 = [
            -f64::INFINITY,
            -2.5,
            -1e-300,
            -0.0,
            0.0,
            1e-300,
            3.0,
            f64::INFINITY,
        ];
        for w in v32.windows(2) {
            assert!(w[0].sort_key() < w[1].sort_key() && w[1].sort_key() < 1 << 32);
        }
        for w in v64.windows(2) {
            assert!(w[0].sort_key() < w[1].sort_key());
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

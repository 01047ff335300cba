//! Zero-copy views of the input matrix and the targets.
//!
//! `Matrix` (`matrix`) borrows a dense buffer in row-major (C) or column-major (Fortran)
//! order; the engine reads it in place and never copies X. Both layouts fit at about the
//! same speed (a node reads its candidate features row by row in C order, column by column
//! in Fortran order); row-major is the faster one for prediction.
//!
//! A matrix may also carry *shadow* columns (`shadows`; Nembrini et al. 2018 and Boruta, as
//! in ranger): column `p + k` is a column read at permuted rows. Shadows are virtual: they
//! add features without a copy of X.
//!
//! A matrix may also be sparse (`sparse`: scipy's CSC, read in place through its index):
//! the fit then reads each candidate's stored entries at a node's rows, never a dense copy.
//!
//! Map: `matrix` (the view), `bins` (one-byte codes for the histogram splitter), `levels`
//! (lossless one-byte codes of the columns with few distinct values), `ranks` (every
//! column's rows sorted once, for a booster's exact search), `targets`
//! (class codes or real outputs); the [`Feature`] element types live here.

mod bins;
mod category_bins;
mod levels;
mod matrix;
mod missing;
mod ranks;
mod shadows;
pub(crate) mod sort;
mod sparse;
mod targets;

pub use bins::{Binned, NAN_CODE, SAMPLE_ROWS};
pub use category_bins::CategoryTable;
pub use levels::{Coded, Levels, Wide, MAX_LEVELS};
pub(crate) use matrix::prefetch;
pub use matrix::{Layout, Matrix};
pub use ranks::{Ranked, Ranks};
pub use shadows::{shadow_permutation, Shadows};
pub use sparse::{CscIndex, RowIndex};
pub use targets::{check_sums, check_weights, Targets};

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

/// Mid-point of two consecutive distinct values, never equal to the upper one.
#[inline]
pub(crate) fn midpoint(a: f64, b: f64) -> f64 {
    let m = a / 2.0 + b / 2.0;
    if m >= b || !m.is_finite() {
        a
    } else {
        m
    }
}

/// Widens the bounds `lo`, `hi` to `v`: the one comparison step of every bounds pass (the
/// split search's gathers, its NaN-aware and sparse bounds, and its source reading X in
/// place, whose bounds must keep the gathers' bits: of `-0.0` against `0.0`, the first met
/// stays).
#[inline(always)]
pub(crate) fn widen<T: Feature>(lo: &mut T, hi: &mut T, v: T) {
    *lo = if v < *lo { v } else { *lo };
    *hi = if v > *hi { v } else { *hi };
}

/// Makes `buf` `n` long for the caller to overwrite: only a grown tail is filled (with
/// `fill`), so a buffer that shrinks node after node costs nothing to resize.
#[inline]
pub(crate) fn set_len<T: Copy>(buf: &mut Vec<T>, n: usize, fill: T) {
    buf.truncate(n);
    buf.resize(n, fill);
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

/// A one-byte bin code above a 32-bit row position: [`Packed`] with one key byte, so a
/// node's codes are ordered by a single counting pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CodeKey(u64);

impl Packed for CodeKey {
    const KEY_BYTES: usize = 1;
    #[inline(always)]
    fn key_byte(self, _b: usize) -> usize {
        (self.0 >> 32) as usize & 255
    }
    #[inline(always)]
    fn position(self) -> u32 {
        self.0 as u32
    }
}

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
    type Packed = CodeKey;
    #[inline]
    fn pack(self, position: u32) -> CodeKey {
        CodeKey(self.sort_key() << 32 | u64::from(position))
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

/// Wide lossless codes (see [`Levels`]): columns with 257 to 4 096 levels, summed into
/// bins by the exact search. Never a matrix's element type: only bins index by them.
impl Feature for u16 {
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

#[cfg(test)]
mod tests {
    use super::*;
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
}

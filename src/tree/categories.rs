//! Categorical splits: a node that sends a set of categories to its left child.
//!
//! A categorical feature reads category codes `0, 1, …` (as floats; NaN is missing). The
//! set of a categorical split lives in its tree's pool of 64-bit words, and the node's
//! threshold refers to it: a NaN, which no ordered split's threshold is, whose payload is
//! the set's offset in the pool ([`reference`], [`offset_of`]). Ordered nodes keep their
//! 16 bytes and their comparison, and a tree without categorical splits has an empty pool.
//!
//! A set is a header word, `n_words << 1 | unseen_left`, then `n_words` words of bits:
//! category `c` goes left when bit `c` is set. Any other value that is not NaN — a code past
//! the set's bits (a category the fit never saw), or no category code at all — goes left
//! when `unseen_left`: the side with more training samples, where unseen NaN go too. The fit
//! gives that side to the categories it saw but not in the node, when it writes the set.
//! NaN goes to the node's missing side ([`super::Tree::missing_left`]), as for ordered
//! splits.

use crate::data::{Feature, Matrix};
use crate::error::{ForestError, Result};

/// The most categories a categorical feature may have (codes `0..MAX_CATEGORIES`): a set
/// of a node's categories takes up to 2 MiB.
pub(crate) const MAX_CATEGORIES: usize = 1 << 24;

/// The high bits of a threshold that refers to a category set: a quiet NaN with a tag, so
/// that neither a NaN a computation returns nor any number has them.
const TAG: u64 = 0x7FFC_CA7E_0000_0000;
const TAG_MASK: u64 = 0xFFFF_FFFF_0000_0000;

/// The threshold of a categorical split whose set is at `offset` in its tree's pool.
pub(crate) fn reference(offset: u32) -> f64 {
    f64::from_bits(TAG | u64::from(offset))
}

/// The offset in the pool of the set a threshold refers to; None for an ordered split's
/// threshold.
#[inline(always)]
pub(crate) fn offset_of(threshold: f64) -> Option<usize> {
    let bits = threshold.to_bits();
    (bits & TAG_MASK == TAG).then_some((bits & !TAG_MASK) as usize)
}

/// Appends the set of `left` categories (bit `c` of word `c / 64`: category `c` goes left)
/// to `pool`, unseen values going left when `unseen_left`, and returns its offset. Trailing
/// zero words are dropped when unseen values go right: their categories would go right
/// past the set's end too.
pub(crate) fn push_set(pool: &mut Vec<u64>, left: &[u64], unseen_left: bool) -> u32 {
    let offset = pool.len();
    let n_words = match unseen_left {
        true => left.len(),
        false => left.iter().rposition(|&w| w != 0).map_or(0, |k| k + 1),
    };
    pool.push((n_words as u64) << 1 | u64::from(unseen_left));
    pool.extend_from_slice(&left[..n_words]);
    u32::try_from(offset).expect("a tree's category sets fit in 2^32 words")
}

/// The set at `offset` of `pool`: its words and whether unseen values go left.
#[inline(always)]
pub(crate) fn set_at(pool: &[u64], offset: usize) -> (&[u64], bool) {
    let header = pool[offset];
    let n_words = (header >> 1) as usize;
    (&pool[offset + 1..offset + 1 + n_words], header & 1 == 1)
}

/// Whether `value` goes to the left child of the categorical split whose set is at
/// `offset` of `pool`, NaN going left when `missing_left`.
#[inline(always)]
pub(crate) fn goes_left(pool: &[u64], offset: usize, value: f64, missing_left: bool) -> bool {
    if value.is_nan() {
        return missing_left;
    }
    let (words, unseen_left) = set_at(pool, offset);
    // Whole codes below the set's end are read from it; everything else is unseen.
    let inside = value >= 0.0 && value < (words.len() * 64) as f64 && value.fract() == 0.0;
    if !inside {
        return unseen_left;
    }
    let c = value as usize;
    words[c / 64] >> (c % 64) & 1 == 1
}

/// Checks a pool read from a model file: every set whole, in order, from offset 0 to the
/// end; returns the offsets of its sets (for the nodes' references to be checked against).
#[cfg(feature = "serde")]
pub(crate) fn check_pool(pool: &[u64]) -> Result<Vec<usize>, &'static str> {
    let mut offsets = Vec::new();
    let mut at = 0usize;
    while at < pool.len() {
        let header = pool[at];
        let n_words = usize::try_from(header >> 1).map_err(|_| "category set too long")?;
        if header >> 33 != 0 || n_words > pool.len() - at - 1 {
            return Err("category set past the end of its pool");
        }
        offsets.push(at);
        at += 1 + n_words;
    }
    Ok(offsets)
}

/// Checks the columns flagged `categorical` of `x`: every value a category code below
/// [`MAX_CATEGORIES`], or NaN.
pub(crate) fn check_codes<T: Feature>(x: &Matrix<'_, T>, categorical: &[bool]) -> Result<()> {
    let max = MAX_CATEGORIES as f64;
    for col in (0..x.n_cols()).filter(|&f| categorical[f]) {
        for row in 0..x.n_rows() {
            let value = x.get(row, col).to_f64();
            let code = value >= 0.0 && value < max && value.fract() == 0.0;
            if !(code || value.is_nan()) {
                return Err(ForestError::CategoryCode { row, col, value });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_is_told_from_every_ordered_threshold() {
        for offset in [0u32, 1, 77, u32::MAX] {
            let t = reference(offset);
            assert!(t.is_nan());
            assert_eq!(offset_of(t), Some(offset as usize));
        }
        for t in [
            0.0,
            -0.0,
            1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ] {
            assert_eq!(offset_of(t), None, "{t}");
        }
    }

    #[test]
    fn sets_route_their_categories_unseen_values_and_nan() {
        let mut pool = vec![];
        // Categories 1 and 70 left; unseen right.
        let mut left = vec![0u64; 3];
        left[0] |= 1 << 1;
        left[1] |= 1 << (70 - 64);
        let a = push_set(&mut pool, &left, false) as usize;
        // Category 0 left, unseen left: every word kept.
        let b = push_set(&mut pool, &[1, 0], true) as usize;
        #[cfg(feature = "serde")]
        assert_eq!(check_pool(&pool), Ok(vec![a, b]));
        // The trailing zero word of `a` is not stored.
        assert_eq!(set_at(&pool, a).0.len(), 2);
        assert_eq!(set_at(&pool, b), (&[1u64, 0][..], true));
        let left_of = |o, v| goes_left(&pool, o, v, true);
        assert!(left_of(a, 1.0) && left_of(a, 70.0));
        assert!(!left_of(a, 0.0) && !left_of(a, 2.0) && !left_of(a, 69.0));
        // Past the end, negative, fractional, infinite: unseen (right for `a`).
        for v in [128.0, 1e9, -1.0, 1.5, f64::INFINITY] {
            assert!(!left_of(a, v) && left_of(b, v), "{v}");
        }
        assert!(!left_of(b, 1.0) && left_of(b, 0.0));
        // NaN: the node's missing side, whatever the set.
        assert!(goes_left(&pool, a, f64::NAN, true));
        assert!(!goes_left(&pool, b, f64::NAN, false));
    }

    #[test]
    #[cfg(feature = "serde")]
    fn damaged_pools_are_refused() {
        assert_eq!(check_pool(&[]), Ok(vec![]));
        assert!(check_pool(&[2 << 1, 5]).is_err()); // two words announced, one there
        assert!(check_pool(&[u64::MAX]).is_err());
        assert_eq!(check_pool(&[0, 1 << 1 | 1, 9]), Ok(vec![0, 1]));
    }
}

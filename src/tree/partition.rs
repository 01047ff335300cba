//! Stable partition of a node's rows (sample ids, targets, weights) between its children.
//!
//! Stable, so each child keeps its samples in increasing order and the next gathers walk
//! the columns forward. The arrays go through one shared buffer of 64-bit words, one after
//! the other, and only the smaller side is buffered: the buffer holds half a node, where a
//! buffer per array holding a whole node took 16 bytes per in-bag row of every thread.

use super::gather::set_len;

/// A value that travels through the partition buffer as a 64-bit word.
pub trait Word: Copy {
    /// The value's bits in a word.
    fn to_word(self) -> u64;
    /// The value back from [`Word::to_word`]'s bits.
    fn from_word(w: u64) -> Self;
}

impl Word for u32 {
    #[inline(always)]
    fn to_word(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        w as u32
    }
}

impl Word for f64 {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self.to_bits()
    }
    #[inline(always)]
    fn from_word(w: u64) -> Self {
        f64::from_bits(w)
    }
}

/// Reorders `data` so that the `n_left` values with `is_left(k)` come first, both sides in
/// their previous order.
///
/// Branch-free (a row's side is unpredictable): every value is written both to its side's
/// run in place and to the buffer, and only its side's count advances. The in-place run
/// grows from the end the scan starts at, so it only overwrites values already read; the
/// other side (the smaller one) waits in `buf`.
pub(crate) fn stable_partition<V: Word>(
    data: &mut [V],
    buf: &mut Vec<u64>,
    n_left: usize,
    is_left: impl Fn(usize) -> bool,
) {
    let n = data.len();
    let n_right = n - n_left;
    // One slot more than the buffered side: the last write of a row staying in place
    // lands past the buffered values.
    if n_right <= n_left {
        set_len(buf, n_right + 1, 0);
        let (mut l, mut r) = (0, 0);
        for k in 0..n {
            let v = data[k];
            let left = is_left(k);
            data[l] = v;
            buf[r] = v.to_word();
            l += usize::from(left);
            r += usize::from(!left);
        }
        for (d, &w) in data[n_left..].iter_mut().zip(buf.iter()) {
            *d = V::from_word(w);
        }
    } else {
        // Mirror image: the right side is packed at the end, scanning backwards, and the
        // left side waits in the buffer in reverse order.
        set_len(buf, n_left + 1, 0);
        let (mut l, mut r) = (0, 0);
        for k in (0..n).rev() {
            let v = data[k];
            let left = is_left(k);
            data[n - 1 - r] = v;
            buf[l] = v.to_word();
            l += usize::from(left);
            r += usize::from(!left);
        }
        for (d, &w) in data[..n_left].iter_mut().zip(buf[..n_left].iter().rev()) {
            *d = V::from_word(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(data: &[u32], side: &[bool]) -> Vec<u32> {
        let left = data.iter().zip(side).filter(|(_, &s)| s).map(|(&v, _)| v);
        let right = data.iter().zip(side).filter(|(_, &s)| !s).map(|(&v, _)| v);
        left.chain(right).collect()
    }

    #[test]
    fn matches_a_stable_filter_on_every_side_pattern() {
        let mut buf = Vec::new();
        // Every side pattern of up to 10 rows: both branches, all-left, all-right, empty.
        for n in 0..=10usize {
            for mask in 0u32..(1 << n) {
                let side: Vec<bool> = (0..n).map(|k| mask >> k & 1 == 1).collect();
                let data: Vec<u32> = (0..n as u32).map(|k| 100 + 7 * k).collect();
                let n_left = side.iter().filter(|&&s| s).count();
                let mut got = data.clone();
                stable_partition(&mut got, &mut buf, n_left, |k| side[k]);
                assert_eq!(got, reference(&data, &side), "n={n} mask={mask:b}");
            }
        }
    }

    #[test]
    fn floats_keep_their_bits() {
        let data = [-0.0, f64::MIN_POSITIVE, 1.5, f64::MAX, 3.0e-300];
        let side = [false, true, false, true, true];
        let mut got = data;
        stable_partition(&mut got, &mut Vec::new(), 3, |k| side[k]);
        let want = [f64::MIN_POSITIVE, f64::MAX, 3.0e-300, -0.0, 1.5];
        assert!(got
            .iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}

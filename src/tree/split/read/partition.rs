//! Stable partition of a node's rows (sample ids, targets, weights) between its children.
//!
//! Stable, so each child keeps its samples in increasing order and the next gathers walk
//! the columns forward. The arrays go through one shared buffer of 64-bit words, one after
//! the other, and only the smaller side is buffered: the buffer holds half a node, where a
//! buffer per array holding a whole node took 16 bytes per in-bag row of every thread.
//! Nodes of at most [`ONE_PASS_ROWS`] rows move their sample ids, targets and weights in
//! one pass instead, three words a buffered row: one side test and one loop per row
//! rather than two or three.

use crate::data::set_len;

/// The samples of one node with their targets and weights, aligned position by position.
pub(crate) struct NodeRows<'s, Y> {
    pub samples: &'s mut [u32],
    pub ys: &'s mut [Y],
    pub ws: &'s mut [f64],
}

/// The largest node whose arrays are partitioned in one pass: its buffer then holds two or
/// three words a row, which for the largest nodes would triple the buffer's memory per
/// thread (see BENCHMARKS.md, real tables).
const ONE_PASS_ROWS: usize = 1 << 16;

/// A value that travels through the partition buffer as a 64-bit word.
pub trait Word: Copy {
    /// The value's bits in a word.
    fn to_word(self) -> u64;
    /// The value back from [`Word::to_word`]'s bits.
    fn from_word(w: u64) -> Self;
    /// [`stable_partition`] of sample ids and their values of this type: one array after
    /// the other.
    fn partition_with_samples(
        samples: &mut [u32],
        values: &mut [Self],
        buf: &mut Vec<u64>,
        n_left: usize,
        is_left: impl Fn(usize) -> bool,
    ) {
        stable_partition(samples, buf, n_left, |k, _| is_left(k));
        stable_partition(values, buf, n_left, |k, _| is_left(k));
    }
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
    /// Both halves of one word: one pass instead of two.
    fn partition_with_samples(
        samples: &mut [u32],
        values: &mut [u32],
        buf: &mut Vec<u64>,
        n_left: usize,
        is_left: impl Fn(usize) -> bool,
    ) {
        stable_partition((samples, values), buf, n_left, |k, _| is_left(k));
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

/// A row of aligned arrays as it travels through the partition buffer, of 64-bit words.
pub(crate) trait Buffered: Copy {
    /// Words per row.
    const WORDS: usize;
    /// Row `r` of `buf`.
    fn load(buf: &[u64], r: usize) -> Self;
    /// Writes the row as row `r` of `buf`.
    fn store(self, buf: &mut [u64], r: usize);
}

impl Buffered for u64 {
    const WORDS: usize = 1;
    #[inline(always)]
    fn load(buf: &[u64], r: usize) -> u64 {
        buf[r]
    }
    #[inline(always)]
    fn store(self, buf: &mut [u64], r: usize) {
        buf[r] = self;
    }
}

impl<const N: usize> Buffered for [u64; N] {
    const WORDS: usize = N;
    #[inline(always)]
    fn load(buf: &[u64], r: usize) -> [u64; N] {
        std::array::from_fn(|k| buf[N * r + k])
    }
    #[inline(always)]
    fn store(self, buf: &mut [u64], r: usize) {
        buf[N * r..N * r + N].copy_from_slice(&self);
    }
}

/// Aligned arrays partitioned together: each row's values travel as one, two or three
/// 64-bit words ([`Rows::Row`]).
pub(crate) trait Rows {
    /// A row's values.
    type Row: Buffered;
    /// Number of rows.
    fn len(&self) -> usize;
    /// Row `k`.
    fn word(&self, k: usize) -> Self::Row;
    /// Overwrites row `k` with a row from [`Rows::word`].
    fn set(&mut self, k: usize, w: Self::Row);
}

impl<V: Word> Rows for &mut [V] {
    type Row = u64;
    #[inline(always)]
    fn len(&self) -> usize {
        <[V]>::len(self)
    }
    #[inline(always)]
    fn word(&self, k: usize) -> u64 {
        self[k].to_word()
    }
    #[inline(always)]
    fn set(&mut self, k: usize, w: u64) {
        self[k] = V::from_word(w);
    }
}

/// Two arrays of 32-bit values (sample ids and class codes): one pass moves both.
impl Rows for (&mut [u32], &mut [u32]) {
    type Row = u64;
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len().min(self.1.len())
    }
    #[inline(always)]
    fn word(&self, k: usize) -> u64 {
        u64::from(self.0[k]) << 32 | u64::from(self.1[k])
    }
    #[inline(always)]
    fn set(&mut self, k: usize, w: u64) {
        self.0[k] = (w >> 32) as u32;
        self.1[k] = w as u32;
    }
}

/// Sample ids and targets (weights all 1, left in place), one pass moving both, two words
/// a row with the sample id first, for sides read from the id: any target type, where the
/// pair above packs ids and class codes into one word.
struct IdsAnd<'a, V>(&'a mut [u32], &'a mut [V]);

impl<V: Word> Rows for IdsAnd<'_, V> {
    type Row = [u64; 2];
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len().min(self.1.len())
    }
    #[inline(always)]
    fn word(&self, k: usize) -> [u64; 2] {
        [u64::from(self.0[k]), self.1[k].to_word()]
    }
    #[inline(always)]
    fn set(&mut self, k: usize, [a, b]: [u64; 2]) {
        self.0[k] = a as u32;
        self.1[k] = V::from_word(b);
    }
}

/// Sample ids, targets and weights: one pass moves all three, three words a row.
impl<V: Word> Rows for (&mut [u32], &mut [V], &mut [f64]) {
    type Row = [u64; 3];
    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len().min(self.1.len()).min(self.2.len())
    }
    #[inline(always)]
    fn word(&self, k: usize) -> [u64; 3] {
        [
            u64::from(self.0[k]),
            self.1[k].to_word(),
            self.2[k].to_bits(),
        ]
    }
    #[inline(always)]
    fn set(&mut self, k: usize, [a, b, c]: [u64; 3]) {
        self.0[k] = a as u32;
        self.1[k] = V::from_word(b);
        self.2[k] = f64::from_bits(c);
    }
}

/// Reorders `data` so that the `n_left` rows with `is_left(k, word)` come first, both
/// sides in their previous order (`word` is row `k`'s [`Rows::word`], for rows that say
/// themselves which side they go to).
///
/// Branch-free (a row's side is unpredictable): every row is written both to its side's
/// run in place and to the buffer, and only its side's count advances. The in-place run
/// grows from the end the scan starts at, so it only overwrites rows already read; the
/// other side (the smaller one) waits in `buf`.
pub(crate) fn stable_partition<D: Rows>(
    mut data: D,
    buf: &mut Vec<u64>,
    n_left: usize,
    is_left: impl Fn(usize, D::Row) -> bool,
) {
    let n = data.len();
    let n_right = n - n_left;
    // One slot more than the buffered side: the last write of a row staying in place
    // lands past the buffered values.
    if n_right <= n_left {
        set_len(buf, (n_right + 1) * D::Row::WORDS, 0);
        let (mut l, mut r) = (0, 0);
        for k in 0..n {
            let v = data.word(k);
            let left = is_left(k, v);
            data.set(l, v);
            v.store(buf, r);
            l += usize::from(left);
            r += usize::from(!left);
        }
        for (r, k) in (n_left..n).enumerate() {
            data.set(k, D::Row::load(buf, r));
        }
    } else {
        // Mirror image: the right side is packed at the end, scanning backwards, and the
        // left side waits in the buffer in reverse order.
        set_len(buf, (n_left + 1) * D::Row::WORDS, 0);
        let (mut l, mut r) = (0, 0);
        for k in (0..n).rev() {
            let v = data.word(k);
            let left = is_left(k, v);
            data.set(n - 1 - r, v);
            v.store(buf, l);
            l += usize::from(left);
            r += usize::from(!left);
        }
        for k in 0..n_left {
            data.set(k, D::Row::load(buf, n_left - 1 - k));
        }
    }
}

/// Stable partition of the node rows, rows with `is_left` first, both sides in their
/// previous order. `n_left` is the search's count of them, counted here when None.
/// Returns the left count. Weights that are all 1 stay where they are.
pub(crate) fn partition_rows<Y: Word>(
    n_left: Option<usize>,
    rows: &mut NodeRows<'_, Y>,
    buf: &mut Vec<u64>,
    unit_weights: bool,
    is_left: impl Fn(usize) -> bool + Copy,
) -> usize {
    let count = || (0..rows.samples.len()).filter(|&k| is_left(k)).count();
    let n_left = n_left.unwrap_or_else(count);
    debug_assert_eq!(n_left, count());
    let (samples, ys, ws) = (&mut *rows.samples, &mut *rows.ys, &mut rows.ws[..]);
    match (unit_weights, samples.len() <= ONE_PASS_ROWS) {
        (true, _) => Y::partition_with_samples(samples, ys, buf, n_left, is_left),
        (false, true) => stable_partition((samples, ys, ws), buf, n_left, |k, _| is_left(k)),
        (false, false) => {
            Y::partition_with_samples(samples, ys, buf, n_left, is_left);
            stable_partition(ws, buf, n_left, |k, _| is_left(k));
        }
    }
    n_left
}

/// [`partition_rows`] where a row's side follows from its sample id alone
/// (`sample_left`, e.g. the split column read at the id), so the column needs no gathered
/// copy: nodes of up to [`ONE_PASS_ROWS`] rows move their ids, targets and (unless all 1)
/// weights in one pass, each row's side read from the id it carries; larger ones move
/// weights and targets first, their sides read at the ids still in place, then the ids.
pub(crate) fn partition_rows_by_sample<Y: Word>(
    n_left: usize,
    rows: &mut NodeRows<'_, Y>,
    buf: &mut Vec<u64>,
    unit_weights: bool,
    sample_left: impl Fn(u32) -> bool + Copy,
) {
    let (samples, ys, ws) = (&mut *rows.samples, &mut *rows.ys, &mut rows.ws[..]);
    debug_assert_eq!(samples.iter().filter(|&&i| sample_left(i)).count(), n_left);
    match (unit_weights, samples.len() <= ONE_PASS_ROWS) {
        (true, true) => stable_partition(IdsAnd(samples, ys), buf, n_left, |_, row| {
            sample_left(row[0] as u32)
        }),
        (false, true) => stable_partition((samples, ys, ws), buf, n_left, |_, row| {
            sample_left(row[0] as u32)
        }),
        (unit, false) => {
            let ids = &*samples;
            if !unit {
                stable_partition(ws, buf, n_left, |k, _| sample_left(ids[k]));
            }
            stable_partition(ys, buf, n_left, |k, _| sample_left(ids[k]));
            stable_partition(samples, buf, n_left, |_, id| sample_left(id as u32));
        }
    }
}

#[cfg(test)]
mod tests;

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
mod tests {
    use crate::tree::split::read::partition::*;

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
                stable_partition(&mut got[..], &mut buf, n_left, |k, _| side[k]);
                assert_eq!(got, reference(&data, &side), "n={n} mask={mask:b}");
                // Paired with a second array, which must move the same way.
                let codes: Vec<u32> = data.iter().map(|v| v.wrapping_mul(2_654_435_761)).collect();
                let (mut a, mut b) = (data.clone(), codes.clone());
                stable_partition((&mut a[..], &mut b[..]), &mut buf, n_left, |k, _| side[k]);
                assert_eq!(a, reference(&data, &side), "pair n={n} mask={mask:b}");
                assert_eq!(b, reference(&codes, &side), "pair n={n} mask={mask:b}");
                // And a third, of weights, in the same pass.
                let ws: Vec<f64> = data.iter().map(|&v| f64::from(v) * 0.5 - 3.0).collect();
                let (mut a, mut b, mut c) = (data.clone(), codes.clone(), ws.clone());
                let triple = (&mut a[..], &mut b[..], &mut c[..]);
                stable_partition(triple, &mut buf, n_left, |k, _| side[k]);
                let want: Vec<u64> = reference(&data, &side)
                    .iter()
                    .map(|&v| (f64::from(v) * 0.5 - 3.0).to_bits())
                    .collect();
                assert_eq!(a, reference(&data, &side), "triple n={n} mask={mask:b}");
                assert_eq!(b, reference(&codes, &side), "triple n={n} mask={mask:b}");
                assert_eq!(c.iter().map(|w| w.to_bits()).collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn sides_read_from_the_sample_ids_move_the_rows_as_gathered_sides_do() {
        let mut buf = Vec::new();
        // Nodes in one pass and above it, left side the smaller and the larger.
        for (n, cut) in [
            (9, 3),
            (9, 6),
            (ONE_PASS_ROWS + 5, 21),
            (ONE_PASS_ROWS + 5, 87),
        ] {
            let column: Vec<u32> = (0..2 * n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) % 97)
                .collect();
            let left = |i: u32| column[i as usize] < cut;
            for unit in [true, false] {
                let samples: Vec<u32> = (0..n as u32).map(|k| 2 * k + k % 3 % 2).collect();
                let ys: Vec<f64> = samples.iter().map(|&i| f64::from(i) * 0.25 - 7.0).collect();
                let ws: Vec<f64> = match unit {
                    true => vec![1.0; n],
                    false => samples.iter().map(|&i| f64::from(i % 5)).collect(),
                };
                let n_left = samples.iter().filter(|&&i| left(i)).count();
                let (mut a, mut b) = (
                    (samples.clone(), ys.clone(), ws.clone()),
                    (samples.clone(), ys, ws),
                );
                let side: Vec<bool> = samples.iter().map(|&i| left(i)).collect();
                let mut rows = NodeRows {
                    samples: &mut a.0,
                    ys: &mut a.1,
                    ws: &mut a.2,
                };
                partition_rows(Some(n_left), &mut rows, &mut buf, unit, |k| side[k]);
                let mut rows = NodeRows {
                    samples: &mut b.0,
                    ys: &mut b.1,
                    ws: &mut b.2,
                };
                partition_rows_by_sample(n_left, &mut rows, &mut buf, unit, left);
                assert_eq!(a.0, b.0, "n={n} cut={cut} unit={unit}");
                assert_eq!(a.1, b.1, "n={n} cut={cut} unit={unit}");
                assert_eq!(a.2, b.2, "n={n} cut={cut} unit={unit}");
            }
        }
    }

    #[test]
    fn floats_keep_their_bits() {
        let data = [-0.0, f64::MIN_POSITIVE, 1.5, f64::MAX, 3.0e-300];
        let side = [false, true, false, true, true];
        let mut got = data;
        stable_partition(&mut got[..], &mut Vec::new(), 3, |k, _| side[k]);
        let want = [f64::MIN_POSITIVE, f64::MAX, 3.0e-300, -0.0, 1.5];
        assert!(got
            .iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }
}

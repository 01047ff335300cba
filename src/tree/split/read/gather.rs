//! Reading candidate features at a node's rows ("gathering"), the memory-bound part of
//! growing a tree: deep nodes read X at scattered rows, so every read is a cache miss
//! unless it was requested early or shares a cache line with another one.

use crate::data::{prefetch, set_len, widen, Feature, Matrix};
use crate::tree::split::read::sparse_gather::gather_sparse;

/// Copies the codes `column` of `samples` into `out` and returns their (min, max). The
/// codes of a column are a byte (or two) a row, so even deep nodes mostly read them from
/// cache.
#[inline(never)] // (inlined into the draw loop, it grew the loop's instructions: callgrind)
pub(crate) fn gather_codes<K: Copy + Ord + Default>(
    column: &[K],
    samples: &[u32],
    out: &mut Vec<K>,
) -> (K, K) {
    set_len(out, samples.len(), K::default());
    for (o, &i) in out.iter_mut().zip(samples) {
        *o = column[i as usize];
    }
    // Apart from the copy, min and max vectorize (together they chained each row's load
    // through two scalar compares).
    let lo = out.iter().copied().min().unwrap_or_default();
    let hi = out.iter().copied().max().unwrap_or_default();
    (lo, hi)
}

/// [`gather_codes`] of a column of at most 64 levels (codes `0..64`): the bounds come from
/// a bitmap of the codes met, made in the copying pass, instead of a min and a max pass
/// (which cost most, for the few rows of a deep node, in their set-up and tails).
#[inline(never)]
pub(crate) fn gather_few_codes(column: &[u8], samples: &[u32], out: &mut Vec<u8>) -> (u8, u8) {
    set_len(out, samples.len(), 0);
    let mut bits = 0u64;
    for (o, &i) in out.iter_mut().zip(samples) {
        let c = column[i as usize];
        *o = c;
        bits |= 1 << (c % 64);
    }
    match bits {
        0 => (0, 0),
        _ => (
            bits.trailing_zeros() as u8,
            (63 - bits.leading_zeros()) as u8,
        ),
    }
}

/// The codes `column` of `samples` with their (min, max): the column itself when the
/// samples are every row (a root of all rows: the samples of a node are increasing, so
/// they are then `0..n`), else gathered into `out` ([`gather_codes`]).
pub(crate) fn node_codes<'c, K: Copy + Ord + Default>(
    column: &'c [K],
    samples: &[u32],
    out: &'c mut Vec<K>,
) -> (&'c [K], K, K) {
    if samples.len() == column.len() {
        debug_assert!(samples.iter().enumerate().all(|(j, &i)| i as usize == j));
        let lo = column.iter().copied().min().unwrap_or_default();
        let hi = column.iter().copied().max().unwrap_or_default();
        return (column, lo, hi);
    }
    let (lo, hi) = gather_codes(column, samples, out);
    (out, lo, hi)
}

/// How many samples ahead the gather asks for a value.
const PREFETCH_AHEAD: usize = 32;

/// Copies features `fs` of `samples` into `cols[k]` and returns the (min, max) of each in
/// `bounds[k]`. When X is row-major the candidates of a row are read together, so values
/// that share a cache line cost one miss instead of one each.
///
/// Each layout has its own loop ([`gather_rows`], [`gather_column`], [`gather_view`]):
/// sharing one generic body, the loops of the dense layouts paid for the tests of the
/// others (sparse X, shadows, column selections), per candidate or per row.
pub(crate) fn gather_many<T: Feature>(
    x: &Matrix<'_, T>,
    fs: &[u32],
    samples: &[u32],
    cols: &mut [Vec<T>],
    bounds: &mut [(T, T)],
) {
    if let Some(data) = x.row_major_data() {
        let stride = x.n_cols();
        match fs.len() {
            1 => return gather_rows::<T, 1>(data, stride, fs, samples, cols, bounds),
            2 => return gather_rows::<T, 2>(data, stride, fs, samples, cols, bounds),
            3 => return gather_rows::<T, 3>(data, stride, fs, samples, cols, bounds),
            4 => return gather_rows::<T, 4>(data, stride, fs, samples, cols, bounds),
            _ => {}
        }
    }
    let sparse = x.is_sparse();
    for ((&f, col), b) in fs.iter().zip(cols.iter_mut()).zip(bounds.iter_mut()) {
        let f = f as usize;
        *b = match sparse.then(|| x.sparse_column(f)).flatten() {
            // A candidate with no entry in the node is constant: not written.
            Some((rows, values)) => gather_sparse(rows, values, samples, col, true),
            None => match x.column(f) {
                Some(column) => gather_column(column, samples, col),
                None => gather_view(x, f, samples, col),
            },
        };
    }
}

/// [`gather_many`] of `B` features of a plain row-major X, whose row `i` is
/// `data[i * stride..][..stride]` (`B` fixed, so the per-row loop over the candidates
/// unrolls).
#[inline(never)]
fn gather_rows<T: Feature, const B: usize>(
    data: &[T],
    stride: usize,
    fs: &[u32],
    samples: &[u32],
    cols: &mut [Vec<T>],
    bounds: &mut [(T, T)],
) {
    let fs: [usize; B] = std::array::from_fn(|k| fs[k] as usize);
    let n = samples.len();
    let row = |i: u32| &data[i as usize * stride..][..stride];
    let first = fs.map(|f| row(samples[0])[f]);
    let mut lo = first;
    let mut hi = first;
    let mut out: [&mut [T]; B] = {
        let mut it = cols.iter_mut();
        std::array::from_fn(|k| match it.next() {
            Some(col) => {
                set_len(col, n, first[k]);
                &mut col[..]
            }
            None => &mut [],
        })
    };
    // Rows asked for ahead while the head is copied; the tail's were asked for already.
    let head = n.saturating_sub(PREFETCH_AHEAD);
    for (j, (&i, &a)) in samples.iter().zip(&samples[n - head..]).enumerate() {
        let ahead = a as usize * stride;
        for f in fs {
            if let Some(v) = data.get(ahead + f) {
                prefetch(v);
            }
        }
        put_row(&fs, row(i), j, &mut out, &mut lo, &mut hi);
    }
    for (j, &i) in samples.iter().enumerate().skip(head) {
        put_row(&fs, row(i), j, &mut out, &mut lo, &mut hi);
    }
    for k in 0..B {
        bounds[k] = (lo[k], hi[k]);
    }
}

/// Writes features `fs` of row `r` at position `j` of the `out` columns, and widens their
/// bounds.
#[inline(always)]
fn put_row<T: Feature, const B: usize>(
    fs: &[usize; B],
    r: &[T],
    j: usize,
    out: &mut [&mut [T]; B],
    lo: &mut [T; B],
    hi: &mut [T; B],
) {
    for k in 0..B {
        let v = r[fs[k]];
        out[k][j] = v;
        widen(&mut lo[k], &mut hi[k], v);
    }
}

/// The widest rows [`row_bounds`] reads.
pub(crate) const MAX_ROW_COLS: usize = 16;

/// The (min, max) of each of the `stride` columns of a plain row-major X (row `i` is
/// `data[i * stride..][..stride]`, `stride` at most [`MAX_ROW_COLS`]) at rows `samples`,
/// with the gathers' bounds ([`widen`], row after row). Each row is read whole: its
/// values share one or two cache lines.
pub(crate) fn row_bounds<T: Feature>(
    data: &[T],
    stride: usize,
    samples: &[u32],
) -> ([T; MAX_ROW_COLS], [T; MAX_ROW_COLS]) {
    match stride {
        0..=4 => row_bounds_in::<T, 4>(data, stride, samples),
        5..=8 => row_bounds_in::<T, 8>(data, stride, samples),
        _ => row_bounds_in::<T, MAX_ROW_COLS>(data, stride, samples),
    }
}

/// [`row_bounds`] reading `N >= stride` values a row, so that the bounds of a row are a
/// few vector instructions. The values past a row's `stride` (the next row's, or a
/// default past the end of X) widen bounds that are not returned.
#[inline(never)]
fn row_bounds_in<T: Feature, const N: usize>(
    data: &[T],
    stride: usize,
    samples: &[u32],
) -> ([T; MAX_ROW_COLS], [T; MAX_ROW_COLS]) {
    let read = |i: u32| -> [T; N] {
        let at = i as usize * stride;
        match data.get(at..at + N) {
            Some(r) => std::array::from_fn(|f| r[f]),
            None => std::array::from_fn(|f| data.get(at + f).copied().unwrap_or_default()),
        }
    };
    let mut lo = read(samples[0]);
    let mut hi = lo;
    for (j, &i) in samples.iter().enumerate() {
        if let Some(&a) = samples.get(j + PREFETCH_AHEAD) {
            if let Some(v) = data.get(a as usize * stride) {
                prefetch(v);
            }
        }
        let v = read(i);
        for f in 0..N {
            widen(&mut lo[f], &mut hi[f], v[f]);
        }
    }
    let mut bounds = ([T::default(); MAX_ROW_COLS], [T::default(); MAX_ROW_COLS]);
    bounds.0[..stride].copy_from_slice(&lo[..stride]);
    bounds.1[..stride].copy_from_slice(&hi[..stride]);
    bounds
}

/// Copies feature `f` of `samples` into `xf`; returns its (min, max).
#[inline]
pub(crate) fn gather<T: Feature>(
    x: &Matrix<'_, T>,
    f: usize,
    samples: &[u32],
    xf: &mut Vec<T>,
) -> (T, T) {
    // (`is_sparse` first: a dense view makes no call per candidate.)
    if let Some((rows, values)) = x.is_sparse().then(|| x.sparse_column(f)).flatten() {
        return gather_sparse(rows, values, samples, xf, false);
    }
    match x.column(f) {
        Some(column) => gather_column(column, samples, xf),
        None => gather_view(x, f, samples, xf),
    }
}

/// [`gather`] of a column that is a slice (column-major X).
#[inline(never)]
fn gather_column<T: Feature>(column: &[T], samples: &[u32], xf: &mut Vec<T>) -> (T, T) {
    let n = samples.len();
    let first = column[samples[0] as usize];
    // Written through a slice of the final length: pushing would store the length on every
    // iteration.
    set_len(xf, n, first);
    let (mut lo, mut hi) = (first, first);
    let head = n.saturating_sub(PREFETCH_AHEAD);
    let (out_head, out_tail) = xf.split_at_mut(head);
    let ahead = &samples[n - head..];
    for ((dst, &i), &a) in out_head.iter_mut().zip(samples).zip(ahead) {
        if let Some(v) = column.get(a as usize) {
            prefetch(v);
        }
        let v = column[i as usize];
        *dst = v;
        widen(&mut lo, &mut hi, v);
    }
    for (dst, &i) in out_tail.iter_mut().zip(&samples[head..]) {
        let v = column[i as usize];
        *dst = v;
        widen(&mut lo, &mut hi, v);
    }
    (lo, hi)
}

/// [`gather`] through [`Matrix::get`]: shadow columns, column selections of a row-major X.
#[inline(never)]
fn gather_view<T: Feature>(
    x: &Matrix<'_, T>,
    f: usize,
    samples: &[u32],
    xf: &mut Vec<T>,
) -> (T, T) {
    let first = x.get(samples[0] as usize, f);
    set_len(xf, samples.len(), first);
    let (mut lo, mut hi) = (first, first);
    let ahead = samples
        .iter()
        .skip(PREFETCH_AHEAD)
        .map(Some)
        .chain(std::iter::repeat(None));
    for ((dst, &i), next) in xf.iter_mut().zip(samples).zip(ahead) {
        if let Some(&a) = next {
            x.prefetch(a as usize, f);
        }
        let v = x.get(i as usize, f);
        *dst = v;
        widen(&mut lo, &mut hi, v);
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use crate::tree::split::read::gather::*;

    #[test]
    fn few_codes_gather_as_any_codes() {
        let column: Vec<u8> = (0..500u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8 % 64)
            .collect();
        let (mut few, mut any) = (Vec::new(), Vec::new());
        for (start, step, len) in [(0, 1, 500), (3, 7, 60), (10, 1, 1), (499, 1, 1), (5, 3, 2)] {
            let samples: Vec<u32> = (0..len).map(|k| (start + k * step) as u32).collect();
            let want = gather_codes(&column, &samples, &mut any);
            assert_eq!(gather_few_codes(&column, &samples, &mut few), want);
            assert_eq!(few, any);
        }
    }
}

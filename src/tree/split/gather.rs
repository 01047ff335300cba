//! Reading candidate features at a node's rows ("gathering"), the memory-bound part of
//! growing a tree: deep nodes read X at scattered rows, so every read is a cache miss
//! unless it was requested early or shares a cache line with another one.

use super::sparse_gather::gather_sparse;
use crate::data::{Feature, Matrix};

/// Candidates gathered in one pass at most (each needs a node-sized buffer).
pub(crate) const MAX_BATCH: usize = 4;

/// Bytes of gathered values one pass may fill: nodes larger than that gather fewer
/// candidates per pass (one at least), so the batch buffers of a tree stay near this size
/// instead of four times its root. Only the first levels of trees on millions of rows
/// (over 2M for f32, 1M for f64) pass over X more often. The drawing rule is the same;
/// where such a node meets constant features, the batch size changes which features fill
/// the remaining draws (`find_split`), never with the number of threads.
const BATCH_BYTES: usize = 32 << 20;

/// Candidates to gather together at a node of `n` samples.
pub(crate) fn batch_len<T>(n: usize) -> usize {
    (BATCH_BYTES / (n * std::mem::size_of::<T>()).max(1)).clamp(1, MAX_BATCH)
}

/// Copies the codes `column` of `samples` into `out` and returns their (min, max). The
/// codes of a column are a byte a row, so even deep nodes mostly read them from cache.
pub(crate) fn gather_codes(column: &[u8], samples: &[u32], out: &mut Vec<u8>) -> (u8, u8) {
    set_len(out, samples.len(), 0);
    for (o, &i) in out.iter_mut().zip(samples) {
        *o = column[i as usize];
    }
    // Apart from the copy, min and max vectorize (together they chained each row's load
    // through two scalar compares).
    let lo = out.iter().copied().min().unwrap_or(0);
    let hi = out.iter().copied().max().unwrap_or(0);
    (lo, hi)
}

/// How many samples ahead the gather asks for a value.
const PREFETCH_AHEAD: usize = 32;

/// Makes `buf` `n` long for the caller to overwrite: only a grown tail is filled (with
/// `fill`), so a buffer that shrinks node after node costs nothing to resize.
#[inline]
pub(crate) fn set_len<T: Copy>(buf: &mut Vec<T>, n: usize, fill: T) {
    buf.truncate(n);
    buf.resize(n, fill);
}

/// Copies features `fs` of `samples` into `cols[k]` and returns the (min, max) of each in
/// `bounds[k]`. When X is row-major the candidates of a row are read together, so values
/// that share a cache line cost one miss instead of one each.
pub(crate) fn gather_many<T: Feature>(
    x: &Matrix<'_, T>,
    fs: &[u32],
    samples: &[u32],
    cols: &mut [Vec<T>],
    bounds: &mut [(T, T)],
) {
    let row_major = x.row(samples[0] as usize).is_some();
    match fs.len() {
        2 if row_major => gather_rows::<T, 2>(x, fs, samples, cols, bounds),
        3 if row_major => gather_rows::<T, 3>(x, fs, samples, cols, bounds),
        4 if row_major => gather_rows::<T, 4>(x, fs, samples, cols, bounds),
        _ => {
            for ((&f, col), b) in fs.iter().zip(cols.iter_mut()).zip(bounds.iter_mut()) {
                *b = match x.is_sparse().then(|| x.sparse_column(f as usize)).flatten() {
                    // A candidate with no entry in the node is constant: not written.
                    Some((rows, values)) => gather_sparse(rows, values, samples, col, true),
                    None => gather(x, f as usize, samples, col),
                };
            }
        }
    }
}

/// [`gather_many`] of `B` features of a row-major X (`B` fixed, so the per-row loop over
/// the candidates unrolls).
fn gather_rows<T: Feature, const B: usize>(
    x: &Matrix<'_, T>,
    fs: &[u32],
    samples: &[u32],
    cols: &mut [Vec<T>],
    bounds: &mut [(T, T)],
) {
    let fs: [usize; B] = std::array::from_fn(|k| fs[k] as usize);
    let n = samples.len();
    let first = x
        .row(samples[0] as usize)
        .map_or([T::default(); B], |r| fs.map(|f| r[f]));
    let mut lo = first;
    let mut hi = first;
    let out: [&mut [T]; B] = {
        let mut it = cols.iter_mut();
        std::array::from_fn(|k| {
            let col = it.next().expect("MAX_BATCH columns");
            set_len(col, n, first[k]);
            &mut col[..]
        })
    };
    for (j, &i) in samples.iter().enumerate() {
        if let Some(&a) = samples.get(j + PREFETCH_AHEAD) {
            for f in fs {
                x.prefetch(a as usize, f);
            }
        }
        let Some(row) = x.row(i as usize) else {
            continue; // never: row-major without shadows
        };
        for k in 0..B {
            let v = row[fs[k]];
            out[k][j] = v;
            lo[k] = if v < lo[k] { v } else { lo[k] };
            hi[k] = if v > hi[k] { v } else { hi[k] };
        }
    }
    for k in 0..B {
        bounds[k] = (lo[k], hi[k]);
    }
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
    let first = x.get(samples[0] as usize, f);
    // Written through a slice of the final length: pushing would store the length on every
    // iteration.
    set_len(xf, samples.len(), first);
    let (mut lo, mut hi) = (first, first);
    let mut put = |dst: &mut T, v: T| {
        *dst = v;
        lo = if v < lo { v } else { lo };
        hi = if v > hi { v } else { hi };
    };
    let ahead = samples
        .iter()
        .skip(PREFETCH_AHEAD)
        .map(Some)
        .chain(std::iter::repeat(None));
    match x.column(f) {
        Some(col) => {
            for ((dst, &i), next) in xf.iter_mut().zip(samples).zip(ahead) {
                if let Some(&a) = next {
                    x.prefetch(a as usize, f);
                }
                put(dst, col[i as usize]);
            }
        }
        None => {
            for ((dst, &i), next) in xf.iter_mut().zip(samples).zip(ahead) {
                if let Some(&a) = next {
                    x.prefetch(a as usize, f);
                }
                put(dst, x.get(i as usize, f));
            }
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_shrink_only_for_nodes_beyond_the_byte_budget() {
        assert_eq!(batch_len::<f32>(0), MAX_BATCH);
        assert_eq!(batch_len::<f32>(100_000), MAX_BATCH);
        assert_eq!(batch_len::<u8>(8_000_000), MAX_BATCH);
        // 32 MiB hold 2 columns of 4M f32 values, 1 of 8M, and never fewer than one.
        assert_eq!(batch_len::<f32>(4 << 20), 2);
        assert_eq!(batch_len::<f32>(8 << 20), 1);
        assert_eq!(batch_len::<f64>(100 << 20), 1);
    }
}

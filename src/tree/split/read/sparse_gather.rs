//! Gathering a sparse column at a node's rows: the node's values of the feature are its
//! stored entries at those rows, and 0 at the others. The gathered column is the one a
//! dense copy of X would give, value for value and in the same order, so the searches,
//! the partition and therefore the trees are those of the dense fit.
//!
//! A node's samples are strictly increasing (the root's rows are, and partitions are
//! stable: [`crate::tree::split::read::partition`]), and so are a column's rows, so the two lists are
//! intersected by bisection in whichever is longer (as scikit-learn's sparse splitter
//! chooses between bisection and an index map): each step searches only past the last
//! match. A column with no entry among the node's rows is constant (all zeros), found in
//! `O(entries · log n)` or `O(n · log entries)` without writing a value.
//!
//! Small nodes of a wide sparse X meet mostly such columns, and the draw visits nearly all
//! features before it finds K that vary. [`NodeFeatures`] lists the features with an entry
//! in the node from the rows' entries ([`crate::data::RowIndex`]), so each of the others
//! is known constant in `O(1)`. The draws and the trees are unchanged: only how a constant
//! column is recognized.

use crate::data::{set_len, widen};
use crate::data::{Feature, Matrix};
use crate::tree::criterion::Criterion;
use crate::tree::goes_left;

/// The features with an entry among a node's rows, as per-feature stamps: feature `f` has
/// one iff `stamp[f] == node` (no clearing between nodes).
#[derive(Default)]
pub(crate) struct NodeFeatures {
    stamp: Vec<u32>,
    node: u32,
    /// Whether the current node's features are listed (otherwise every feature may vary).
    active: bool,
}

impl NodeFeatures {
    /// Lists the features of the node `samples` of a sparse `x` that has a row index, when
    /// its entries are few next to the features (listing costs a node's entries, and pays
    /// back only if the draw meets many absent features). Otherwise lists nothing.
    pub(crate) fn mark<T: Feature>(&mut self, x: &Matrix<'_, T>, samples: &[u32]) {
        self.active = false;
        let Some(by_row) = x.sparse_rows() else {
            return;
        };
        let p = x.n_cols();
        if samples.len() as f64 * by_row.mean_row_len() > p as f64 / 4.0 {
            return;
        }
        if self.stamp.len() != p {
            self.stamp = vec![0; p];
            self.node = 0;
        }
        self.node = self.node.wrapping_add(1);
        if self.node == 0 {
            self.stamp.fill(0);
            self.node = 1;
        }
        for &i in samples {
            for &f in by_row.row(i as usize) {
                self.stamp[f as usize] = self.node;
            }
        }
        self.active = true;
    }

    /// Whether feature `f` is known to have no entry in the node (so to be all zeros).
    #[inline(always)]
    pub(crate) fn absent(&self, f: u32) -> bool {
        self.active && self.stamp.get(f as usize).is_some_and(|&s| s != self.node)
    }
}

/// Where each row of X sits among a node's samples, as per-row stamps: row `i` is at
/// position `pos[i]` iff `stamp[i] == node`. Made in `O(rows of the node)` once per node
/// of a sparse X, it finds each drawn candidate's entries in the node in `O(entries)`,
/// where a bisection per entry (or per row) cost a chain of dependent loads.
#[derive(Default)]
pub(crate) struct RowPositions {
    stamp: Vec<u32>,
    pos: Vec<u32>,
    node: u32,
}

impl RowPositions {
    /// Stamps the rows of the node `samples` of a matrix of `n_rows` rows.
    pub(crate) fn mark(&mut self, n_rows: usize, samples: &[u32]) {
        if self.stamp.len() != n_rows {
            (self.stamp, self.pos) = (vec![0; n_rows], vec![0; n_rows]);
            self.node = 0;
        }
        self.node = self.node.wrapping_add(1);
        if self.node == 0 {
            self.stamp.fill(0);
            self.node = 1;
        }
        for (j, &i) in samples.iter().enumerate() {
            self.stamp[i as usize] = self.node;
            self.pos[i as usize] = j as u32;
        }
    }

    /// Row `i`'s position in the node, if it is one of its rows.
    #[inline(always)]
    fn position(&self, i: usize) -> Option<usize> {
        (self.stamp.get(i) == Some(&self.node)).then(|| self.pos[i] as usize)
    }
}

/// Writes the values of the column (`rows`, `values`) at `samples` into `xf` and returns
/// their (min, max). With `lazy`, a column without an entry at `samples` is reported as
/// `(0, 0)` without writing `xf`: the draw loop then skips it as constant, and never reads
/// its values.
pub(crate) fn gather_sparse<T: Feature>(
    rows: &[i32],
    values: &[T],
    samples: &[u32],
    xf: &mut Vec<T>,
    lazy: bool,
) -> (T, T) {
    let n = samples.len();
    let mut filled = !lazy;
    if filled {
        fill_zeros(xf, n);
    }
    let found = intersect(rows, values, samples, |j, v| {
        if !filled {
            fill_zeros(xf, n);
            filled = true;
        }
        xf[j] = v;
    });
    bounds_with_zeros(found, n)
}

/// A sparse candidate's stored entries at a node's rows: the position of each in the node
/// (increasing) and its value. The node's other rows hold 0.
#[derive(Default)]
pub(crate) struct Entries<T> {
    pub pos: Vec<u32>,
    pub vals: Vec<T>,
}

impl<T: Feature> Entries<T> {
    /// The node's `n` values: 0, and the entries at their positions.
    pub(crate) fn write_dense(&self, n: usize, xf: &mut Vec<T>) {
        fill_zeros(xf, n);
        for (&j, &v) in self.pos.iter().zip(&self.vals) {
            xf[j as usize] = v;
        }
    }
}

/// Lists the entries of the column (`rows`, `values`) at the node's rows (`samples`,
/// stamped in `node`) into `out` and returns the (min, max) of the node's values, zeros
/// included: what [`gather_sparse`] would write, in `O(entries)` instead of `O(rows)` of
/// the node. The entries come in the samples' order (both increase).
pub(crate) fn gather_entries<T: Feature>(
    rows: &[i32],
    values: &[T],
    samples: &[u32],
    node: &RowPositions,
    out: &mut Entries<T>,
) -> (T, T) {
    out.pos.clear();
    out.vals.clear();
    let zero = T::default();
    let (Some(&first), Some(&last)) = (samples.first(), samples.last()) else {
        return (zero, zero);
    };
    // Only the entries between the node's first and last rows can match.
    let a = rows.partition_point(|&r| (r as u32) < first);
    let b = rows.partition_point(|&r| (r as u32) <= last);
    let (mut lo, mut hi) = (zero, zero);
    for (&r, &v) in rows[a..b].iter().zip(&values[a..b]) {
        if let Some(j) = node.position(r as usize) {
            if out.pos.is_empty() {
                (lo, hi) = (v, v);
            } else {
                widen(&mut lo, &mut hi, v);
            }
            out.pos.push(j as u32);
            out.vals.push(v);
        }
    }
    bounds_with_zeros((out.pos.len(), lo, hi), samples.len())
}

/// The sums of the rows of a node that go left (`x ≤ t`, by [`goes_left`]) for a sparse
/// candidate given by its `entries`: those of the stored entries that do, plus, when 0
/// goes left, those of the zeros, the node's `total` minus all the entries'. Exact only
/// when every sum is whole ([`crate::tree::split::NodeCtx::whole_sums`]), which is when the trees
/// equal those of the dense search, that sums the rows in their order. Returns the rows
/// that go left.
pub(crate) fn sums_left<T: Feature, C: Criterion>(
    entries: &Entries<T>,
    t: f64,
    crit: &C,
    (ys, ws): (&[C::Y], &[f64]),
    total: &[f64],
    (left, stored): (&mut [f64], &mut [f64]),
) -> usize {
    left.fill(0.0);
    stored.fill(0.0);
    let mut n_left = 0;
    for (&j, &v) in entries.pos.iter().zip(&entries.vals) {
        let (y, w) = (ys[j as usize], ws[j as usize]);
        stored[0] += w;
        crit.add(stored, y, w);
        if goes_left(v.to_f64(), t, false) {
            left[0] += w;
            crit.add(left, y, w);
            n_left += 1;
        }
    }
    if goes_left(0.0, t, false) {
        for ((l, &a), &s) in left.iter_mut().zip(total).zip(stored.iter()) {
            *l += a - s;
        }
        n_left += ys.len() - entries.pos.len();
    }
    n_left
}

/// Calls `put(j, v)` for each entry `v` of the column (`rows`, `values`) at a row of
/// `samples`, `j` its position there (increasing), and returns (entries found, their min,
/// their max). Both lists are strictly increasing: each step bisects the longer of them
/// past the last match.
fn intersect<T: Feature>(
    rows: &[i32],
    values: &[T],
    samples: &[u32],
    mut put: impl FnMut(usize, T),
) -> (usize, T, T) {
    let zero = T::default();
    let n = samples.len();
    let (Some(&first), Some(&last)) = (samples.first(), samples.last()) else {
        return (0, zero, zero);
    };
    // Only the entries between the node's first and last rows can match.
    let a = rows.partition_point(|&r| (r as u32) < first);
    let b = rows.partition_point(|&r| (r as u32) <= last);
    let (rows, values) = (&rows[a..b], &values[a..b]);
    let mut found = 0usize;
    let (mut lo, mut hi) = (zero, zero);
    let mut keep = |j: usize, v: T| {
        put(j, v);
        if found == 0 {
            (lo, hi) = (v, v);
        } else {
            widen(&mut lo, &mut hi, v);
        }
        found += 1;
    };
    if rows.len() <= n {
        // Few entries: find each among the samples, past the last match.
        let mut from = 0;
        for (&r, &v) in rows.iter().zip(values) {
            match samples[from..].binary_search(&(r as u32)) {
                Ok(k) => {
                    keep(from + k, v);
                    from += k + 1;
                }
                Err(k) => from += k,
            }
        }
    } else {
        // Few samples: find each among the entries, past the last match.
        let mut from = 0;
        for (j, &i) in samples.iter().enumerate() {
            match rows[from..].binary_search(&(i as i32)) {
                Ok(k) => {
                    keep(j, values[from + k]);
                    from += k + 1;
                }
                Err(k) => from += k,
            }
        }
    }
    (found, lo, hi)
}

/// The (min, max) of a node of `n` rows whose `found` entries span `lo..=hi`: the
/// implicit zeros are values of the node too.
fn bounds_with_zeros<T: Feature>((found, lo, hi): (usize, T, T), n: usize) -> (T, T) {
    let zero = T::default();
    if found == n {
        return (lo, hi);
    }
    let lo = if zero < lo || found == 0 { zero } else { lo };
    let hi = if zero > hi || found == 0 { zero } else { hi };
    (lo, hi)
}

/// Makes `xf` `n` zeros.
fn fill_zeros<T: Feature>(xf: &mut Vec<T>, n: usize) {
    set_len(xf, n, T::default());
    xf.fill(T::default());
}

#[cfg(test)]
mod tests {
    use crate::rng::TreeRng;
    use crate::tree::split::read::sparse_gather::*;

    /// Random sparse columns and sorted sample sets: the gathered values and bounds are
    /// those of the dense column.
    #[test]
    fn sparse_gather_is_the_dense_gather() {
        let mut rng = TreeRng::new(5);
        for _ in 0..2000 {
            let n_rows = 1 + rng.below(60);
            let density = rng.unit();
            let dense: Vec<f32> = (0..n_rows)
                .map(|_| {
                    if rng.unit() < density {
                        (rng.below(7) as f32) - 3.0
                    } else {
                        0.0
                    }
                })
                .collect();
            let (rows, values): (Vec<i32>, Vec<f32>) = dense
                .iter()
                .enumerate()
                .filter(|(_, &v)| v != 0.0 || rng.below(4) == 0) // some explicit zeros
                .map(|(i, &v)| (i as i32, v))
                .unzip();
            let keep = rng.unit();
            let samples: Vec<u32> = (0..n_rows as u32).filter(|_| rng.unit() < keep).collect();
            if samples.is_empty() {
                continue;
            }
            let want: Vec<f32> = samples.iter().map(|&i| dense[i as usize]).collect();
            let lo = want.iter().copied().fold(f32::INFINITY, f32::min);
            let hi = want.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            for lazy in [false, true] {
                let mut xf = vec![9.0f32; rng.below(80)];
                let (l, h) = gather_sparse(&rows, &values, &samples, &mut xf, lazy);
                assert_eq!((l, h), (lo, hi));
                if !(lazy && lo == 0.0 && hi == 0.0) {
                    assert_eq!(xf, want);
                }
            }
        }
    }
}

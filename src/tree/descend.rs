//! Prediction's descent: the leaf each row reaches.
//!
//! The rows of a block go down a tree together, partitioned at each node the way the fit
//! partitions its samples. Nodes are then read in pre-order (increasing addresses), once
//! per block instead of once per row, and the loads left are the rows' values, which stay
//! in cache for the whole forest. A row alone in its subtree finishes on one of
//! [`WALK_LANES`] interleaved walks, so that the chains of dependent loads overlap.

use super::{categories, goes_left, Tree, LEAF};
use crate::data::{Feature, Matrix};

/// How many rows ahead a partition asks for a row's value (the block's rows are in L2 or
/// L3 cache, not in L1).
const PREFETCH_AHEAD: usize = 16;

/// Rows walked down a tree together once each is alone in its subtree.
const WALK_LANES: usize = 8;

/// Most rows of `x` in one block. A block reads each tree's nodes once, so the more rows the
/// cheaper each, until their values no longer stay in cache while the block goes down every
/// tree (8 MiB was measured against 4 and 16: `BENCHMARKS.md`).
pub(crate) fn max_block_rows<T: Feature>(x: &Matrix<'_, T>) -> usize {
    const BLOCK_BYTES: usize = 8 << 20;
    (BLOCK_BYTES / (x.n_cols().max(1) * std::mem::size_of::<T>())).max(64)
}

impl Tree {
    /// Leaves reached by the rows `first..first + out.len()` of `x`, written to `out`.
    pub fn leaves<T: Feature>(&self, x: &Matrix<'_, T>, first: usize, out: &mut [u32]) {
        let block = max_block_rows(x);
        for (k, part) in out.chunks_mut(block).enumerate() {
            let rows = (0..part.len() as u32).collect();
            let reach = |leaf, r: usize| part[r] = leaf as u32;
            self.descend(x, first + k * block, rows, true, reach);
        }
    }

    /// Calls `reach(leaf, r)` once for every `r` of `rows` (row `first + r` of `x`) with the
    /// leaf it reaches; rows come in no particular order. `nan`: whether X may hold NaN
    /// (false only when it is known to hold none, which spares the partitions a test).
    #[inline]
    pub(crate) fn descend<T: Feature>(
        &self,
        x: &Matrix<'_, T>,
        first: usize,
        rows: Vec<u32>,
        nan: bool,
        reach: impl FnMut(usize, usize),
    ) {
        let p = x.n_cols();
        if x.sparse_rows().is_some() {
            return self.descend_written_out(x, first, &rows, reach);
        }
        match (x.row_major_data(), x.columns_are_slices()) {
            (Some(data), _) => {
                let column = |f| Strided::new(&data[first * p + f..], p);
                self.descend_by(rows, column, nan, reach)
            }
            (None, true) => {
                let column = |f| Strided::new(&x.column(f).unwrap_or_default()[first..], 1);
                self.descend_by(rows, column, nan, reach)
            }
            (None, false) => {
                let column = |f| Entries { x, first, f };
                self.descend_by(rows, column, nan, reach)
            }
        }
    }

    /// [`Tree::descend`] of a sparse X with its row index, one row after the other, as
    /// scikit-learn's trees read a sparse X: each row is written out into a dense buffer
    /// (its few entries), walked down the tree, and cleared. Found in its column instead,
    /// each value was a bisection in a column not in cache (see `BENCHMARKS.md`, sparse X).
    fn descend_written_out<T: Feature>(
        &self,
        x: &Matrix<'_, T>,
        first: usize,
        rows: &[u32],
        mut reach: impl FnMut(usize, usize),
    ) {
        let mut dense = vec![T::default(); x.n_cols()];
        for &r in rows {
            x.with_row_written(first + r as usize, &mut dense, |row| {
                let mut t = 0;
                while self.nodes[t].right != LEAF {
                    t = self.next(t, row[self.nodes[t].feature()].to_f64());
                }
                reach(t, r as usize);
            });
        }
    }

    /// [`Tree::descend`] for rows whose feature `f` reads `column(f)`.
    #[inline(always)]
    fn descend_by<C: Column>(
        &self,
        rows: Vec<u32>,
        column: impl Fn(usize) -> C,
        nan: bool,
        mut reach: impl FnMut(usize, usize),
    ) {
        // Two buffers: a node's rows are read from one and partitioned into the other, so
        // no row waits for the side of the previous one to be known.
        let n = rows.len();
        let mut bufs = [rows, vec![0u32; n]];
        // (node, start, end, buffer): the rows bufs[buffer][start..end] all reach `node`.
        let mut stack = vec![(0usize, 0usize, n, 0usize)];
        let mut alone = Vec::new(); // (node, row)
        while let Some((t, start, end, src)) = stack.pop() {
            let nd = &self.nodes[t];
            let [a, b] = &mut bufs;
            let (rows, dst) = if src == 0 {
                (&a[start..end], b)
            } else {
                (&b[start..end], a)
            };
            if nd.right == LEAF {
                rows.iter().for_each(|&r| reach(t, r as usize));
                continue;
            }
            if let [r] = rows {
                alone.push((t, *r as usize));
                continue;
            }
            let dst = &mut dst[start..end];
            let (col, threshold) = (column(nd.feature()), nd.threshold);
            // The node's missing side made a constant: each loop compares once per row.
            let l = if let Some(at) = categories::offset_of(threshold) {
                let (pool, ml) = (&self.categories[..], self.missing_left(t));
                split_rows(rows, dst, &col, |v| categories::goes_left(pool, at, v, ml))
            } else if nan && self.missing_left(t) {
                split_rows(rows, dst, &col, |v| goes_left(v, threshold, true))
            } else {
                split_rows(rows, dst, &col, |v| goes_left(v, threshold, false))
            };
            let mid = start + l;
            if mid < end {
                stack.push((nd.right as usize, mid, end, 1 - src));
            }
            if mid > start {
                stack.push((t + 1, start, mid, 1 - src));
            }
        }
        match self.has_categorical_splits() {
            true => self.walk_lanes::<true>(&alone, |r, f| column(f).value(r), reach),
            false => self.walk_lanes::<false>(&alone, |r, f| column(f).value(r), reach),
        }
    }

    /// Finishes the descent of the rows `(node, row)` of `starts`: a walk is a chain of
    /// dependent loads, and [`WALK_LANES`] independent chains keep several in flight. A
    /// lane whose row reaches its leaf takes the next row at once.
    /// `CAT`: the tree has categorical splits ([`Tree::step`]).
    #[inline(always)]
    fn walk_lanes<const CAT: bool>(
        &self,
        starts: &[(usize, usize)],
        value: impl Fn(usize, usize) -> f64,
        mut reach: impl FnMut(usize, usize),
    ) {
        const IDLE: usize = usize::MAX;
        let n = starts.len();
        let mut row = [IDLE; WALK_LANES];
        let mut node = [0usize; WALK_LANES];
        let mut next = n.min(WALK_LANES);
        for l in 0..next {
            (node[l], row[l]) = starts[l];
        }
        let mut busy = next;
        while busy > 0 {
            for l in 0..WALK_LANES {
                let r = row[l];
                if r == IDLE {
                    continue;
                }
                let t = node[l];
                let nd = &self.nodes[t];
                if nd.right != LEAF {
                    node[l] = self.step::<CAT>(nd, t, value(r, nd.feature()));
                    continue;
                }
                reach(t, r);
                if next < n {
                    (node[l], row[l]) = starts[next];
                    next += 1;
                } else {
                    row[l] = IDLE;
                    busy -= 1;
                }
            }
        }
    }
}

/// Partitions a node's `rows` into `dst` (same length): the rows whose value in `col` goes
/// `left` first, in order, the others from the back; returns how many go left. Every row is
/// written at both ends and only its side's end advances (no branch to mispredict).
#[inline(always)]
fn split_rows<C: Column>(
    rows: &[u32],
    dst: &mut [u32],
    col: &C,
    left: impl Fn(f64) -> bool,
) -> usize {
    let (mut l, mut r_end) = (0, dst.len());
    for (k, &r) in rows.iter().enumerate() {
        // Past the end, the last row again: a select, not a branch.
        col.prefetch(*rows.get(k + PREFETCH_AHEAD).unwrap_or(&r) as usize);
        let left = left(col.value(r as usize));
        dst[r_end - 1] = r;
        dst[l] = r;
        l += usize::from(left);
        r_end -= usize::from(!left);
    }
    l
}

/// One feature of a block's rows, read by row.
trait Column {
    /// Row `r`'s value.
    fn value(&self, r: usize) -> f64;
    /// Asks the cache for row `r`'s value; changes no result.
    fn prefetch(&self, r: usize);
}

/// Row `r` at `data[r * stride]`: one column of either layout, with no per-row layout test.
struct Strided<'a, T> {
    data: &'a [T],
    stride: usize,
}

impl<'a, T> Strided<'a, T> {
    fn new(data: &'a [T], stride: usize) -> Self {
        Strided { data, stride }
    }
}

impl<T: Feature> Column for Strided<'_, T> {
    #[inline(always)]
    fn value(&self, r: usize) -> f64 {
        self.data[r * self.stride].to_f64()
    }

    #[inline(always)]
    fn prefetch(&self, r: usize) {
        if let Some(v) = self.data.get(r * self.stride) {
            crate::data::prefetch(v);
        }
    }
}

/// Any column of any matrix, shadows included, through [`Matrix::get`].
struct Entries<'a, 'x, T> {
    x: &'a Matrix<'x, T>,
    first: usize,
    f: usize,
}

impl<T: Feature> Column for Entries<'_, '_, T> {
    #[inline(always)]
    fn value(&self, r: usize) -> f64 {
        self.x.get(self.first + r, self.f).to_f64()
    }

    #[inline(always)]
    fn prefetch(&self, r: usize) {
        self.x.prefetch(self.first + r, self.f)
    }
}

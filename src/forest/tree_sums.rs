//! Every row down every tree, its leaf values summed: predictions and out-of-bag estimates.
//!
//! A block of rows goes down a tree as one task ([`Tree::descend`] reads the tree's nodes
//! once per block, so the larger the block the cheaper each row). Threads therefore share
//! the trees rather than the rows: two threads each taking half the trees for all the rows
//! beat two threads each taking half the rows for all the trees (`BENCHMARKS.md`).
//!
//! The trees are summed in one fixed order ([`sum_by_halves`]): a range of trees as two
//! halves, the right one into its own buffer, then added to the left. The order depends on
//! the number of trees only, so the sums are the same bits for any thread count, and
//! anything that must equal a prediction bit for bit (the permuted predictions of
//! permutation importance) sums its trees the same way.

use super::Forest;
use crate::data::{Feature, Matrix};
use crate::parallel::{chunks_mut, current_threads, join};
use crate::tree::max_block_rows;

/// Rows × trees below which a range of trees is summed by one task (a quarter of a
/// millisecond or less, against microseconds to hand a task to another thread).
const MIN_TASK: usize = 1 << 13;

/// Most bytes of one block's sums (8 bytes per class, or per output, and row).
const ACC_BYTES: usize = 4 << 20;

/// Trees a range holds at most to be summed one after the other rather than as two halves.
const LEAF_TREES: usize = 4;

/// Adds the trees `range` to `acc`, `add_tree(t, acc)` adding tree `t`: up to
/// [`LEAF_TREES`] trees one after the other, more as two halves, the right half summed into
/// a zeroed buffer that is then added to `acc`. `parallel(len)` says whether the halves of
/// `len` trees run as two tasks, which changes no bit of the sums.
pub(crate) fn sum_by_halves(
    range: std::ops::Range<usize>,
    acc: &mut [f64],
    parallel: &(impl Fn(usize) -> bool + Sync),
    add_tree: &(impl Fn(usize, &mut [f64]) + Sync),
) {
    if range.len() <= LEAF_TREES {
        range.for_each(|t| add_tree(t, acc));
        return;
    }
    let (left, right) = (
        range.start..range.start + range.len() / 2,
        range.start + range.len() / 2..range.end,
    );
    let mut right_acc = vec![0.0; acc.len()];
    if parallel(range.len()) {
        join(
            || sum_by_halves(left, acc, parallel, add_tree),
            || sum_by_halves(right, &mut right_acc, parallel, add_tree),
        );
    } else {
        sum_by_halves(left, acc, parallel, add_tree);
        sum_by_halves(right, &mut right_acc, parallel, add_tree);
    }
    acc.iter_mut().zip(&right_acc).for_each(|(a, r)| *a += r);
}

/// The rows of one block and what to sum over them.
struct Block<'a, 'x, T, K, A> {
    forest: &'a Forest,
    x: &'a Matrix<'x, T>,
    /// First row of the block in `x`.
    first: usize,
    rows: usize,
    /// Values per row of the sums.
    stride: usize,
    takes: &'a K,
    add: &'a A,
    /// Whether X may hold NaN (see `Tree::descend`).
    nan: bool,
}

impl Forest {
    /// For every row `i` of `x` (a row of `out`, `stride` values wide) and every tree `t`
    /// with `takes(t, i)`, calls `add(row, t, slot)` with the slot of the leaf the row
    /// reaches. `out` must start zeroed; rows are split into blocks that stay in cache.
    /// `nan`: whether X may hold NaN (from [`Forest::check_input`]).
    pub(crate) fn sum_over_trees<T: Feature>(
        &self,
        x: &Matrix<'_, T>,
        nan: bool,
        out: &mut [f64],
        stride: usize,
        takes: &(impl Fn(usize, usize) -> bool + Sync),
        add: &(impl Fn(&mut [f64], usize, usize) + Sync),
    ) {
        // A block's sums are held once more per level of halving: many classes make the
        // block shorter, so that each buffer stays within ACC_BYTES.
        let block = max_block_rows(x).min((ACC_BYTES / (8 * stride.max(1))).max(64));
        let each_block = |b: usize, out: &mut [f64]| {
            let rows = out.len() / stride;
            let first = b * block;
            let job = Block {
                forest: self,
                x,
                first,
                rows,
                stride,
                takes,
                add,
                nan,
            };
            job.sum(out);
        };
        // With trees enough to share, the threads go through one block at a time, which
        // they then share in cache (faster than a block per thread: `BENCHMARKS.md`).
        if self.trees.len() >= 4 * current_threads() {
            let blocks = out.chunks_mut(block * stride).enumerate();
            blocks.for_each(|(b, out)| each_block(b, out));
        } else {
            chunks_mut(out, block * stride, each_block);
        }
    }
}

impl<T: Feature, K, A> Block<'_, '_, T, K, A>
where
    K: Fn(usize, usize) -> bool + Sync,
    A: Fn(&mut [f64], usize, usize) + Sync,
{
    /// Adds every tree to `acc`, in parallel halves while they hold work enough.
    fn sum(&self, acc: &mut [f64]) {
        let parallel = |trees: usize| trees * self.rows >= 2 * MIN_TASK;
        let n_trees = self.forest.trees.len();
        sum_by_halves(0..n_trees, acc, &parallel, &|t, acc| self.add_tree(t, acc));
    }

    fn add_tree(&self, t: usize, acc: &mut [f64]) {
        let tree = &self.forest.trees[t];
        let (first, stride) = (self.first, self.stride);
        // Every row is written and only a taken one kept: no branch to mispredict when a
        // third of the rows are taken at random (out-of-bag rows).
        let mut rows = vec![0u32; self.rows];
        let mut taken = 0;
        for r in 0..self.rows {
            rows[taken] = r as u32;
            taken += usize::from((self.takes)(t, first + r));
        }
        rows.truncate(taken);
        tree.descend(self.x, first, rows, self.nan, |leaf, r| {
            (self.add)(
                &mut acc[r * stride..(r + 1) * stride],
                t,
                tree.leaf_slot(leaf),
            );
        });
    }
}

//! Growing one tree: depth-first with an explicit stack, or best-first when
//! `max_leaf_nodes` is set.
//!
//! The builder owns the stopping rules; [`super::splitter`] owns the choice of a split.
//! No allocation happens per node: statistics and gather buffers live in [`Grower`] and
//! are reused, and samples are partitioned in place in one buffer.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::criterion::Criterion;
use super::growing::GrowingTree;
use super::split::code_lists::{find_split_listed, list_rows, lists_pay, CodeLists};
use super::split::histograms::{find_split_binned, BinStack, NodeBins};
use super::split::{find_split, NodeCtx, NodeRows, Split, SplitBufs, ThresholdRule};
use super::LEAF;
use crate::data::{Feature, Matrix};
use crate::params::Resolved;
use crate::rng::TreeRng;

/// Below this impurity a node is pure (scikit-learn's `EPSILON`).
const EPSILON: f64 = f64::EPSILON;

/// A node whose split has been chosen (its samples are already partitioned).
struct Pending {
    node: u32,
    start: usize,
    end: usize,
    depth: usize,
    split: Split,
    improvement: f64,
    n_constant: usize,
}

/// The tree being grown and everything reused across its nodes.
pub(crate) struct Grower<'a, T: Feature, C: Criterion> {
    x: Matrix<'a, T>,
    crit: &'a C,
    /// Targets and weights aligned with the tree's `samples` buffer, permuted with it.
    ys: Vec<C::Y>,
    ws: Vec<f64>,
    params: &'a Resolved,
    scratch: SplitBufs<T>,
    /// The listed subtree of the histogram splitter (unused by the other splitters).
    lists: CodeLists<T, C::Y>,
    /// The bins of the histogram splitter's pending nodes, when they are subtracted.
    bins: Option<BinStack>,
    total: Vec<f64>,
    left: Vec<f64>,
    /// The rows `start..end` whose statistics `left` holds: the left child of the last
    /// split, summed in the order its own node would sum them, so that node copies them.
    left_rows: (usize, usize),
    right: Vec<f64>,
    value: Vec<f64>,
    root_weight: f64,
    min_weight_leaf: f64,
    unit_weights: bool,
    pub tree: GrowingTree,
}

impl<'a, T: Feature, C: Criterion> Grower<'a, T, C> {
    pub fn new(
        x: Matrix<'a, T>,
        crit: &'a C,
        ws: Vec<f64>,
        samples: &[u32],
        params: &'a Resolved,
        width: usize,
    ) -> Self {
        let root_weight: f64 = ws.iter().sum();
        let unit_weights = ws.iter().all(|&w| w == 1.0);
        let k = crit.stats_len();
        Grower {
            x,
            crit,
            ys: samples.iter().map(|&i| crit.target(i as usize)).collect(),
            ws,
            params,
            scratch: SplitBufs::new(samples.len(), k),
            lists: CodeLists::new(),
            bins: None,
            total: vec![0.0; k],
            left: vec![0.0; k],
            left_rows: (0, 0),
            right: vec![0.0; k],
            value: vec![0.0; width],
            root_weight,
            min_weight_leaf: params.min_weight_fraction_leaf * root_weight,
            unit_weights,
            tree: GrowingTree::with_capacity(
                width,
                2 * samples.len().min(1 << 16),
                params.criterion,
            ),
        }
    }

    /// Grows the whole tree over `samples` (the in-bag rows with positive weight).
    pub fn grow<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        rng: &mut TreeRng,
    ) {
        match self.params.max_leaf_nodes {
            None => self.depth_first::<R>(samples, features, rng),
            Some(max_leaves) => self.best_first::<R>(samples, features, rng, max_leaves),
        }
    }

    fn depth_first<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        rng: &mut TreeRng,
    ) {
        let listed = R::LISTED && lists_pay(self.params.max_features, features.len());
        let list_rows = list_rows(features.len());
        if listed {
            let k = self.crit.stats_len();
            self.bins = BinStack::new(features, self.x.n_cols(), k, list_rows);
        }
        // (start, end, depth, parent, is_left, n_constant)
        let mut stack = vec![(0usize, samples.len(), 0usize, LEAF, false, 0usize)];
        while let Some((start, end, depth, parent, is_left, n_constant)) = stack.pop() {
            let listed = listed && end - start <= list_rows;
            let (node, pending) = self.evaluate::<R>(
                samples, features, start, end, depth, n_constant, listed, rng,
            );
            if parent != LEAF {
                self.tree.link(parent, is_left, node);
            }
            if let Some(p) = pending {
                self.tree
                    .set_split(node, p.split.feature, p.split.threshold);
                let mid = start + p.split.n_left;
                // Right pushed first so the left child is numbered next (pre-order).
                stack.push((mid, end, depth + 1, node, false, p.n_constant));
                stack.push((start, mid, depth + 1, node, true, p.n_constant));
            }
        }
    }

    fn best_first<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        rng: &mut TreeRng,
        max_leaves: usize,
    ) {
        // Frontier nodes interleave, so the constant-feature prefix of one node could be
        // reordered by another: constants are rediscovered instead of inherited (n_constant
        // = 0), which changes the work done, never the drawing rule.
        let mut frontier = BinaryHeap::new();
        let n = samples.len();
        let (_, root) = self.evaluate::<R>(samples, features, 0, n, 0, 0, false, rng);
        frontier.extend(root.map(ByImprovement));
        let mut leaves = 1;
        while leaves < max_leaves {
            let Some(ByImprovement(p)) = frontier.pop() else {
                break;
            };
            self.tree
                .set_split(p.node, p.split.feature, p.split.threshold);
            let mid = p.start + p.split.n_left;
            for (is_left, s, e) in [(true, p.start, mid), (false, mid, p.end)] {
                let (child, pending) =
                    self.evaluate::<R>(samples, features, s, e, p.depth + 1, 0, false, rng);
                self.tree.link(p.node, is_left, child);
                frontier.extend(pending.map(ByImprovement));
            }
            leaves += 1;
        }
    }

    /// Adds the node `samples[start..end]` to the tree as a leaf and, unless a stopping rule
    /// holds, chooses and applies its split (from code-ordered lists when `listed`, from
    /// its bins when they are kept).
    #[allow(clippy::too_many_arguments)]
    fn evaluate<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        start: usize,
        end: usize,
        depth: usize,
        n_constant: usize,
        listed: bool,
        rng: &mut TreeRng,
    ) -> (u32, Option<Pending>) {
        // Bins kept for this node by its parent are the innermost pending ones: taken now,
        // so that a node that turns out a leaf leaves none behind.
        let mut bins = self.bins.as_mut().and_then(|b| b.take(start, end));
        let evaluated = self.evaluate_node::<R>(
            samples, features, start, end, depth, n_constant, listed, &mut bins, rng,
        );
        if let (Some(stack), Some(b)) = (self.bins.as_mut(), bins) {
            stack.recycle(b);
        }
        evaluated
    }

    /// [`Grower::evaluate`] with the node's `bins` if kept (taken when its children keep
    /// theirs).
    #[allow(clippy::too_many_arguments)]
    fn evaluate_node<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        start: usize,
        end: usize,
        depth: usize,
        n_constant: usize,
        listed: bool,
        bins: &mut Option<NodeBins>,
        rng: &mut TreeRng,
    ) -> (u32, Option<Pending>) {
        let mut rows = NodeRows {
            samples: &mut samples[start..end],
            ys: &mut self.ys[start..end],
            ws: &mut self.ws[start..end],
        };
        if self.left_rows == (start, end) {
            // Nothing has moved these rows since their parent summed them.
            self.total.copy_from_slice(&self.left);
        } else {
            self.crit.accumulate(&mut self.total, rows.ys, rows.ws);
        }
        let impurity = self.crit.impurity(&self.total);
        self.crit.value(&self.total, &mut self.value);
        let n = end - start;
        let node = self
            .tree
            .push_leaf(impurity, self.total[0], n as u32, &self.value);
        let p = self.params;
        let w = self.total[0];
        if depth >= p.max_depth
            || n < p.min_samples_split
            || n < p.min_samples_leaf.saturating_mul(2)
            || w < 2.0 * self.min_weight_leaf
            || impurity <= EPSILON
        {
            return (node, None);
        }
        let ctx = NodeCtx {
            crit: self.crit,
            total: &self.total,
            min_samples_leaf: p.min_samples_leaf,
            min_weight_leaf: self.min_weight_leaf,
            unit_weights: self.unit_weights,
        };
        // The fewest rows of a child that may be split (the others are leaves by size).
        let split_rows = match depth + 1 >= p.max_depth {
            true => usize::MAX,
            false => p
                .min_samples_split
                .max(p.min_samples_leaf.saturating_mul(2)),
        };
        let (split, n_constant) = if listed {
            if !self.lists.covers(start, end) {
                self.lists
                    .build(&self.x, &rows, start, &features[n_constant..]);
            }
            find_split_listed(
                &mut self.lists,
                &ctx,
                &mut self.scratch,
                &mut rows,
                start,
                features,
                n_constant,
                p.max_features,
                split_rows,
                rng,
            )
        } else if let Some(stack) = self.bins.as_mut() {
            let nb = bins.get_or_insert_with(|| {
                let node = (&rows.samples[..], &rows.ys[..], &rows.ws[..]);
                let varying = &features[n_constant..];
                stack.fill(&self.x, self.crit, &mut self.scratch, node, start, varying)
            });
            find_split_binned(
                &self.x,
                stack,
                nb,
                &ctx,
                &mut self.scratch,
                &mut rows,
                features,
                n_constant,
                p.max_features,
                rng,
            )
        } else {
            find_split::<T, C, R>(
                &self.x,
                &ctx,
                &mut self.scratch,
                &mut rows,
                features,
                n_constant,
                p.max_features,
                rng,
            )
        };
        let split = match split {
            Some(s) => s,
            None => return (node, None),
        };
        self.crit.accumulate(
            &mut self.left,
            &rows.ys[..split.n_left],
            &rows.ws[..split.n_left],
        );
        self.left_rows = (start, start + split.n_left);
        for ((r, t), l) in self.right.iter_mut().zip(&self.total).zip(&self.left) {
            *r = t - l;
        }
        let (wl, wr) = (self.left[0], self.right[0]);
        let improvement = (w / self.root_weight)
            * (impurity
                - wl / w * self.crit.impurity(&self.left)
                - wr / w * self.crit.impurity(&self.right));
        if improvement + EPSILON < p.min_impurity_decrease {
            return (node, None);
        }
        if let (Some(stack), Some(nb)) = (self.bins.as_mut(), bins.take()) {
            let varying = &features[n_constant..];
            let (x, s) = (&self.x, &mut self.scratch);
            stack.keep_children(
                x,
                self.crit,
                s,
                nb,
                &rows,
                split.n_left,
                varying,
                split_rows,
            );
        }
        (
            node,
            Some(Pending {
                node,
                start,
                end,
                depth,
                split,
                improvement,
                n_constant,
            }),
        )
    }
}

/// Max-heap order on improvement; equal improvements pop the older node first.
struct ByImprovement(Pending);

impl PartialEq for ByImprovement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for ByImprovement {}
impl PartialOrd for ByImprovement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ByImprovement {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .improvement
            .total_cmp(&other.0.improvement)
            .then(other.0.node.cmp(&self.0.node))
    }
}

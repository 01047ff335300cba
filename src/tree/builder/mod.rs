//! Growing one tree: depth-first with an explicit stack, or best-first when
//! `max_leaf_nodes` is set.
//!
//! The builder owns the stopping rules and the tree's assembly; [`super::split`] owns the
//! choice of a split and everything the search keeps from node to node ([`Splitter`]).
//! Under monotonic constraints ([`super::monotone`]) each node also carries its bounds:
//! its value is clipped to them and its children's are derived from its split. No
//! allocation happens per node: the node statistics live in [`Grower`] and are reused, and
//! samples are partitioned in place in one buffer. The growth orders are here; the work on
//! one node (its leaf, stopping rules, split and children's bins) is in [`node`].

use crate::params::CategoryGuards;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use super::criterion::Criterion;
use super::growing::GrowingTree;
use super::monotone::Bounds;
use super::split::ThresholdRule;
use super::split::{unseen_go_left, ChosenSplit, NodeCtx, Planning, SpareBins, Splitter};
use super::LEAF;
use crate::data::{Feature, Levels, Matrix};
use crate::params::Resolved;
use crate::rng::TreeRng;

mod node;

/// A node whose split has been chosen (its samples are already partitioned).
struct Pending {
    node: u32,
    start: usize,
    end: usize,
    depth: usize,
    split: ChosenSplit,
    improvement: f64,
    n_constant: usize,
    /// The children's bounds under the monotonic constraints (left, right).
    bounds: (Bounds, Bounds),
    /// The left child's statistics, when its bins are kept only once the node is split
    /// (`Grower::defer_children`; empty otherwise).
    left: Vec<f64>,
    /// The set of a categorical split ([`Splitter::chosen_categories`]; empty otherwise).
    categories: Vec<u64>,
}

/// The tree being grown and everything reused across its nodes.
pub(crate) struct Grower<'a, T: Feature, C: Criterion> {
    x: Matrix<'a, T>,
    /// Lossless codes of X's columns with few values, searched instead of their values.
    levels: Option<&'a Levels>,
    crit: &'a C,
    /// Targets and weights aligned with the tree's `samples` buffer, permuted with it.
    ys: Vec<C::Y>,
    ws: Vec<f64>,
    params: &'a Resolved,
    splitter: Splitter<T, C::Y>,
    total: Vec<f64>,
    left: Vec<f64>,
    /// The rows `start..end` whose statistics `left` holds: the left child of the last
    /// split, summed in the order its own node would sum them, so that node copies them.
    left_rows: (usize, usize),
    right: Vec<f64>,
    /// The right child's statistics summed over its rows `right_rows` (as its node will
    /// sum them, so that node copies them too), for scanning its bins as they are kept
    /// ([`Splitter::scans_children`]).
    right_sums: Vec<f64>,
    right_rows: (usize, usize),
    value: Vec<f64>,
    root_weight: f64,
    min_weight_leaf: f64,
    unit_weights: bool,
    /// Coded columns may be summed in bins, and sparse ones from their entries
    /// ([`NodeCtx::whole_sums`]; only asked where X has codes or is sparse).
    whole_sums: bool,
    /// Best-first growth keeps histogram bins as depth-first growth does (the booster's
    /// trees only: [`Grower::with_best_first_bins`]).
    best_first_bins: bool,
    /// Set from outside (Ctrl-C in a booster's round): every node still to grow becomes a
    /// leaf, so the tree ends at once; its caller throws it away.
    stop: Option<&'a AtomicBool>,
    /// Best-first growth with kept bins keeps a node's children's bins only once the node
    /// is split, not as soon as its split is chosen: most frontier nodes never are.
    defer_children: bool,
    pub tree: GrowingTree,
}

impl<'a, T: Feature, C: Criterion> Grower<'a, T, C> {
    pub fn new(
        x: Matrix<'a, T>,
        levels: Option<&'a Levels>,
        crit: &'a C,
        ws: Vec<f64>,
        samples: &[u32],
        params: &'a Resolved,
        width: usize,
    ) -> Self {
        let root_weight: f64 = ws.iter().sum();
        let unit_weights = ws.iter().all(|&w| w == 1.0);
        let k = crit.stats_len();
        let ys: Vec<C::Y> = samples.iter().map(|&i| crit.target(i as usize)).collect();
        let whole_sums = (levels.is_some() || x.is_sparse()) && crit.whole_sums(&ys, &ws);
        Grower {
            x,
            levels,
            crit,
            ys,
            ws,
            params,
            splitter: Splitter::new(samples.len(), k),
            total: vec![0.0; k],
            left: vec![0.0; k],
            left_rows: (0, 0),
            right: vec![0.0; k],
            right_sums: vec![0.0; k],
            right_rows: (0, 0),
            value: vec![0.0; width],
            root_weight,
            min_weight_leaf: params.min_weight_fraction_leaf * root_weight,
            unit_weights,
            whole_sums,
            best_first_bins: false,
            stop: None,
            defer_children: false,
            tree: {
                // No more than the depth and leaf limits allow (a booster's shallow trees).
                let by_depth = 2usize << params.max_depth.min(40);
                let by_leaves = params.max_leaf_nodes.map_or(usize::MAX, |l| 2 * l);
                let nodes = (2 * samples.len().min(1 << 16))
                    .min(by_depth)
                    .min(by_leaves);
                let tree = GrowingTree::with_capacity(width, nodes, params.criterion);
                match params.monotonic_cst {
                    Some(_) => tree.keeping_grown(),
                    None => tree,
                }
            },
        }
    }

    /// Lets best-first growth keep the histogram search's bins and lists (LightGBM's
    /// subtraction), as depth-first growth does. Subtracted sums round differently, so a
    /// near-tie may resolve otherwise than without: only the booster asks for it, and the
    /// forests' trees are unchanged. The booster grows its trees one at a time, so their
    /// large nodes also fill their bins in parallel over features
    /// ([`Splitter::fill_bins_in_parallel`]; the same bins for any number of threads).
    pub fn with_best_first_bins(mut self) -> Self {
        self.best_first_bins = true;
        self.splitter.fill_bins_in_parallel();
        self
    }

    /// Lets the tree's node bins reuse the buffers of earlier trees in `spare`
    /// ([`Grower::give_back_bins`] returns them): for trees grown one after another.
    pub fn with_spare_bins(mut self, spare: &SpareBins) -> Self {
        self.splitter.reuse_bins(spare.take());
        self
    }

    /// Ends the growth early once `stop` is set (see the field).
    pub fn with_stop(mut self, stop: &'a AtomicBool) -> Self {
        self.stop = Some(stop);
        self
    }

    fn stopped(&self) -> bool {
        self.stop.is_some_and(|s| s.load(AtomicOrdering::Relaxed))
    }

    /// Gives the grown tree's bins buffers to `spare`, for a later tree.
    pub fn give_back_bins(&mut self, spare: &SpareBins) {
        spare.give(self.splitter.spare_bins());
    }

    /// Lets the exact search sum a coded column in bins (one pass over the node's codes)
    /// even when the sums are not whole numbers, as histogram boosters do: bins add a
    /// code's rows before adding codes, which rounds otherwise than the sorted scan, so a
    /// near-tie may resolve otherwise; so do the larger children's bins, subtracted from
    /// their parents' ([`super::split`]'s kept bins). Only the booster asks for it (its
    /// gradients are never whole, and its sorted scans cost as much as scikit-learn's); the
    /// forests' trees stay those of the sorted scan, bit for bit.
    pub fn with_sums_in_any_order(mut self) -> Self {
        self.whole_sums |= self.levels.is_some();
        self
    }

    /// Lets the histogram search read bin code [`crate::data::NAN_CODE`] of the features
    /// flagged in `missing` (those of X holding NaN) as their missing-values bin.
    pub fn with_nan_bins(mut self, missing: &[bool]) -> Self {
        self.splitter.with_nan_bins(missing);
        self
    }

    /// Splits the features flagged in `categorical` by sets of categories.
    pub fn with_categorical(mut self, categorical: &[bool], guards: CategoryGuards) -> Self {
        self.splitter.with_categorical(categorical, guards);
        self
    }

    /// Turns `node` into the split `p` (the node `start..end` of the samples).
    fn set_split(&mut self, node: u32, p: &Pending) {
        let (split, n) = (&p.split, p.end - p.start);
        let missing = split.missing_side(n);
        match split.is_categorical() {
            true => {
                let set = (&p.categories[..], unseen_go_left(split.n_left, n));
                self.tree
                    .set_category_split(node, split.feature, set, missing);
            }
            false => (self.tree).set_split(node, split.feature, split.threshold, missing),
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
        let plan = self.planning();
        self.splitter.depth_first::<R>(features, plan);
        // (start, end, depth, parent, is_left, n_constant, bounds)
        let root = (
            0usize,
            samples.len(),
            0usize,
            LEAF,
            false,
            0usize,
            Bounds::NONE,
        );
        let mut stack = vec![root];
        while let Some((start, end, depth, parent, is_left, n_constant, bounds)) = stack.pop() {
            let node_rows = (start, end, depth, n_constant);
            let (node, pending) = self.evaluate::<R>(samples, features, node_rows, bounds, rng);
            if parent != LEAF {
                self.tree.link(parent, is_left, node);
            }
            if let Some(p) = pending {
                self.set_split(node, &p);
                let mid = start + p.split.n_left;
                // Right pushed first so the left child is numbered next (pre-order).
                let (lb, rb) = p.bounds;
                stack.push((mid, end, depth + 1, node, false, p.n_constant, rb));
                stack.push((start, mid, depth + 1, node, true, p.n_constant, lb));
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
        if self.best_first_bins {
            let plan = self.planning();
            self.splitter.best_first::<R>(features, plan);
            self.defer_children = true;
        }
        let mut frontier = BinaryHeap::new();
        let n = samples.len();
        let (_, root) = self.evaluate::<R>(samples, features, (0, n, 0, 0), Bounds::NONE, rng);
        frontier.extend(root.map(ByImprovement));
        let mut leaves = 1;
        while leaves < max_leaves && !self.stopped() {
            let Some(ByImprovement(p)) = frontier.pop() else {
                break;
            };
            self.set_split(p.node, &p);
            let mid = p.start + p.split.n_left;
            if self.defer_children {
                self.left.copy_from_slice(&p.left);
                self.left_rows = (p.start, mid);
                self.splitter.resume_node(p.start, p.end);
                let node_rows = (p.start, p.end, p.split.n_left);
                let split_rows = self.split_rows(p.depth);
                self.keep_children(samples, features, node_rows, 0, split_rows);
                self.splitter.end_node();
            }
            let (lb, rb) = p.bounds;
            for (is_left, s, e, b) in [(true, p.start, mid, lb), (false, mid, p.end, rb)] {
                let child_rows = (s, e, p.depth + 1, 0);
                let (child, pending) = self.evaluate::<R>(samples, features, child_rows, b, rng);
                self.tree.link(p.node, is_left, child);
                frontier.extend(pending.map(ByImprovement));
            }
            leaves += 1;
        }
    }

    /// What the splitter plans the tree's lists and bins from (bins hold the sums the
    /// proxy reads).
    fn planning(&self) -> Planning<'a> {
        Planning {
            n_cols: self.x.n_cols(),
            proxy_len: self.crit.proxy_len(),
            max_features: self.params.max_features,
            levels: self.levels,
            whole_sums: self.whole_sums,
            order_statistic: self.crit.order_statistic(&self.ys).is_some(),
        }
    }

    /// The search context of every node, but for its statistics (`total`, empty here) and
    /// bounds under the monotonic constraints (none here).
    fn rules(&self) -> NodeCtx<'a, C> {
        NodeCtx {
            crit: self.crit,
            total: &[],
            min_samples_leaf: self.params.min_samples_leaf,
            min_weight_leaf: self.min_weight_leaf,
            unit_weights: self.unit_weights,
            whole_sums: self.whole_sums,
            mono: None,
            sign: 0,
        }
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

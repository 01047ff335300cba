//! Growing one tree: depth-first with an explicit stack, or best-first when
//! `max_leaf_nodes` is set.
//!
//! The builder owns the stopping rules and the tree's assembly; [`super::split`] owns the
//! choice of a split and everything the search keeps from node to node ([`Splitter`]).
//! Under monotonic constraints ([`super::monotone`]) each node also carries its bounds:
//! its value is clipped to them and its children's are derived from its split. No
//! allocation happens per node: the node statistics live in [`Grower`] and are reused, and
//! samples are partitioned in place in one buffer.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use super::criterion::{Criterion, EPSILON};
use super::growing::GrowingTree;
use super::monotone::Bounds;
use super::split::{ChosenSplit, NodeCtx, NodeRows, SpareBins, Splitter, ThresholdRule};
use super::LEAF;
use crate::data::{Feature, Levels, Matrix};
use crate::params::Resolved;
use crate::rng::TreeRng;

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
        // Bins hold the sums the proxy reads.
        let (n_cols, k) = (self.x.n_cols(), self.crit.proxy_len());
        let max_features = self.params.max_features;
        // The exact search's kept bins: whole sums subtract exactly, so the forests' trees
        // are unchanged; a booster that sums in any order accepts the subtraction's
        // rounding as it accepts the bins'.
        let coded = self.levels.filter(|_| self.whole_sums);
        // Otherwise the exact search may list the codes, when every feature has them (the
        // order-statistic search reads the rows' values, not sums: never listed).
        let listable = !self.whole_sums
            && self.crit.order_statistic(&self.ys).is_none()
            && self.levels.is_some_and(|l| {
                let every = features.iter().all(|&f| l.column(f as usize).is_some());
                every && l.missing().is_none()
            });
        // A booster's exact search of ranked columns lists every node by their ranks.
        let ranked = R::KIND.lists_lossless_codes()
            && self.crit.order_statistic(&self.ys).is_none()
            && self.levels.and_then(Levels::ranks).is_some()
            && self.splitter.depth_first_ranked(features, max_features);
        if !ranked {
            (self.splitter).depth_first::<R>(features, n_cols, k, max_features, coded, listable);
        }
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
                self.tree.set_split(
                    node,
                    p.split.feature,
                    p.split.threshold,
                    p.split.missing_side(end - start),
                );
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
            let (n_cols, k) = (self.x.n_cols(), self.crit.proxy_len());
            let max_features = self.params.max_features;
            (self.splitter).best_first::<R>(features, n_cols, k, max_features);
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
            self.tree.set_split(
                p.node,
                p.split.feature,
                p.split.threshold,
                p.split.missing_side(p.end - p.start),
            );
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

    /// Adds the node `samples[start..end]` (`node_rows`: start, end, depth and the length
    /// of its constant prefix) to the tree as a leaf and, unless a stopping rule holds,
    /// chooses and applies its split. `bounds` are the node's under the monotonic
    /// constraints (unbounded without).
    fn evaluate<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        node_rows: (usize, usize, usize, usize),
        bounds: Bounds,
        rng: &mut TreeRng,
    ) -> (u32, Option<Pending>) {
        let (start, end, depth, n_constant) = node_rows;
        self.splitter.begin_node(start, end);
        let evaluated = self.evaluate_node::<R>(
            samples, features, start, end, depth, n_constant, bounds, rng,
        );
        self.splitter.end_node();
        evaluated
    }

    /// [`Grower::evaluate`] between the splitter's `begin_node` and `end_node`.
    #[allow(clippy::too_many_arguments)]
    fn evaluate_node<R: ThresholdRule>(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        start: usize,
        end: usize,
        depth: usize,
        n_constant: usize,
        bounds: Bounds,
        rng: &mut TreeRng,
    ) -> (u32, Option<Pending>) {
        let (rules, split_rows) = (self.rules(), self.split_rows(depth));
        let mut rows = NodeRows {
            samples: &mut samples[start..end],
            ys: &mut self.ys[start..end],
            ws: &mut self.ws[start..end],
        };
        if self.left_rows == (start, end) {
            // Nothing has moved these rows since their parent summed them.
            self.total.copy_from_slice(&self.left);
        } else if self.right_rows == (start, end) {
            self.total.copy_from_slice(&self.right_sums);
        } else {
            self.crit.accumulate(&mut self.total, rows.ys, rows.ws);
        }
        let impurity = self.crit.node_impurity(&self.total, rows.ys, rows.ws);
        (self.crit).node_value(&self.total, rows.ys, rows.ws, &mut self.value);
        let mono = self.params.monotonic_cst.as_deref();
        if mono.is_some() {
            bounds.clip(&mut self.value);
        }
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
            || self.crit.is_pure(&self.total, rows.ys, rows.ws, impurity)
            || self.stop.is_some_and(|s| s.load(AtomicOrdering::Relaxed))
        {
            return (node, None);
        }
        let ctx = NodeCtx {
            total: &self.total,
            mono: mono.map(|cst| (cst, bounds)),
            ..rules
        };
        let (split, n_constant) = self.splitter.find::<C, R>(
            &self.x,
            self.levels,
            &ctx,
            &mut rows,
            start,
            features,
            n_constant,
            p.max_features,
            split_rows,
            rng,
        );
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
        let (wl, wr, nl) = (self.left[0], self.right[0], split.n_left);
        let (ys, ws) = (&rows.ys, &rows.ws);
        let improvement = (w / self.root_weight)
            * (impurity
                - wl / w * self.crit.node_impurity(&self.left, &ys[..nl], &ws[..nl])
                - wr / w * self.crit.node_impurity(&self.right, &ys[nl..], &ws[nl..]));
        if improvement + EPSILON < p.min_impurity_decrease {
            return (node, None);
        }
        let bounds = match mono {
            Some(cst) => {
                let sign = cst.get(split.feature as usize).copied().unwrap_or(0);
                let (left, right) = (&self.left, &self.right);
                bounds.children(sign, || self.crit.middle_value(left, right, ys, ws, nl))
            }
            None => (bounds, bounds),
        };
        let left = match self.defer_children {
            // The children's bins are kept when the node is split, if it is.
            true => {
                self.splitter.defer_children();
                self.left.clone()
            }
            false => {
                let node_rows = (start, end, split.n_left);
                self.keep_children(samples, features, node_rows, n_constant, split_rows);
                Vec::new()
            }
        };
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
                bounds,
                left,
            }),
        )
    }

    /// The fewest rows a child of a node at `depth` needs to be split (the others are
    /// leaves by size).
    fn split_rows(&self, depth: usize) -> usize {
        let p = self.params;
        match depth + 1 >= p.max_depth {
            true => usize::MAX,
            false => p
                .min_samples_split
                .max(p.min_samples_leaf.saturating_mul(2)),
        }
    }

    /// Has the splitter keep the bins of the children of the node `start..end` just split
    /// (`node_rows`: start, end and the left child's rows; the rows partitioned, the left
    /// child's statistics in `self.left`) for the features after the constant prefix
    /// `n_constant` (every feature in best-first growth, whose children inherit none). The
    /// children are scanned as they are kept when the splitter does that
    /// ([`Splitter::scans_children`]; not under monotonic constraints, whose children's
    /// bounds follow from the split).
    fn keep_children(
        &mut self,
        samples: &mut [u32],
        features: &[u32],
        (start, end, n_left): (usize, usize, usize),
        n_constant: usize,
        split_rows: usize,
    ) {
        let rules = self.rules();
        let scanned = self.params.monotonic_cst.is_none() && self.splitter.scans_children();
        self.right_rows = match scanned {
            true => (start + n_left, end),
            false => (0, 0),
        };
        if scanned {
            // As the right child's own node will sum them.
            let (ys, ws) = (&self.ys[start + n_left..end], &self.ws[start + n_left..end]);
            self.crit.accumulate(&mut self.right_sums, ys, ws);
        }
        let child = |total| NodeCtx { total, ..rules };
        let n = end - start;
        let children = scanned.then(|| {
            [
                (child(&self.left), n_left),
                (child(&self.right_sums), n - n_left),
            ]
        });
        let varying = match self.best_first_bins {
            true => features,
            false => &features[n_constant..],
        };
        let rows = NodeRows {
            samples: &mut samples[start..end],
            ys: &mut self.ys[start..end],
            ws: &mut self.ws[start..end],
        };
        let (x, levels) = (&self.x, self.levels);
        (self.splitter).keep_children(
            x, levels, self.crit, &rows, n_left, varying, split_rows, children,
        );
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

//! The growth of one multiway tree: an explicit stack of logical nodes, chain links and the
//! empty leaves of no-op levels, popped in pre-order, and the stopping rules.
//!
//! Invariant: a logical node at depth `d` is conditioned on `features[..d]`; the winner of
//! its split is swapped to position `d` before its children are pushed, so each child sees
//! the parent's used set plus the winner.

use super::NO_OP_THRESHOLD;
use crate::data::{Feature, Matrix};
use crate::params::Resolved;
use crate::rng::TreeRng;
use crate::tree::criterion::{Criterion, EPSILON};
use crate::tree::growing::GrowingTree;
use crate::tree::{Missing, LEAF};

/// Work left on the explicit stack; popping in stack order yields pre-order node ids.
enum Item {
    /// A logical node on `rows[start..end]`, conditioned on `features[..depth]`.
    Node {
        start: usize,
        end: usize,
        depth: usize,
        parent: u32,
        is_left: bool,
    },
    /// Chain node for the groups `cuts[first..=last]` (rows `start..cuts[last].0`), right
    /// child of `parent`; its children are logical nodes at `child_depth`. `missing`: the
    /// side of the split's NaN rows (right, towards their group, the last), if it has any.
    Link {
        start: usize,
        first: usize,
        last: usize,
        feature: u32,
        child_depth: usize,
        parent: u32,
        missing: Missing,
    },
    /// The unreachable right leaf of the no-op node `parent`, which predicts as its parent
    /// (whose own statistics are not kept once it splits).
    Empty {
        parent: u32,
        impurity: f64,
        value: Box<[f64]>,
    },
}

/// The multiway tree being grown and the buffers reused across its nodes.
pub(super) struct MultiwayGrower<'a, T, C: Criterion> {
    pub(super) x: Matrix<'a, T>,
    pub(super) crit: &'a C,
    /// Targets and weights aligned with `samples`, permuted with it.
    pub(super) ys: Vec<C::Y>,
    pub(super) ws: Vec<f64>,
    pub(super) params: &'a Resolved,
    root_weight: f64,
    pub(super) min_weight_leaf: f64,
    pub(super) total: Vec<f64>,
    pub(super) child: Vec<f64>,
    value: Vec<f64>,
    /// `(value, position in the node)` of the candidate being scored and of the best one.
    pub(super) sorted: Vec<(T, u32)>,
    pub(super) best_sorted: Vec<(T, u32)>,
    pub(super) tmp_samples: Vec<u32>,
    pub(super) tmp_ys: Vec<C::Y>,
    pub(super) tmp_ws: Vec<f64>,
    /// Groups of every multiway split: `(end row, threshold to the next group)`.
    pub(super) cuts: Vec<(usize, f64)>,
    tree: GrowingTree,
}

/// Grows one multiway tree over `samples` (the in-bag rows with positive weight, `ws` their
/// weights), drawing candidates among `features` (the tree's feature subset).
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow<T: Feature, C: Criterion>(
    x: Matrix<'_, T>,
    crit: &C,
    ws: Vec<f64>,
    samples: &mut [u32],
    features: &mut [u32],
    params: &Resolved,
    width: usize,
    rng: &mut TreeRng,
) -> GrowingTree {
    let root_weight: f64 = ws.iter().sum();
    let k = crit.stats_len();
    let n = samples.len();
    let mut g = MultiwayGrower {
        x,
        crit,
        ys: samples.iter().map(|&i| crit.target(i as usize)).collect(),
        ws,
        params,
        root_weight,
        min_weight_leaf: params.min_weight_fraction_leaf * root_weight,
        total: vec![0.0; k],
        child: vec![0.0; k],
        value: vec![0.0; width],
        sorted: Vec::with_capacity(n),
        best_sorted: Vec::with_capacity(n),
        tmp_samples: Vec::with_capacity(n),
        tmp_ys: Vec::with_capacity(n),
        tmp_ws: Vec::with_capacity(n),
        cuts: Vec::new(),
        tree: GrowingTree::with_capacity(width, 2 * n.min(1 << 16), params.criterion),
    };
    let mut stack = vec![Item::Node {
        start: 0,
        end: n,
        depth: 0,
        parent: LEAF,
        is_left: false,
    }];
    while let Some(item) = stack.pop() {
        match item {
            Item::Node {
                start,
                end,
                depth,
                parent,
                is_left,
            } => g.node(
                samples, features, start, end, depth, parent, is_left, rng, &mut stack,
            ),
            Item::Link {
                start,
                first,
                last,
                feature,
                child_depth,
                parent,
                missing,
            } => g.link(
                start,
                (first, last),
                feature,
                child_depth,
                parent,
                missing,
                &mut stack,
            ),
            Item::Empty {
                parent,
                impurity,
                value,
            } => {
                let leaf = g.tree.push_leaf(impurity, 0.0, 0, &value);
                g.tree.link(parent, false, leaf);
            }
        }
    }
    g.tree
}

impl<T: Feature, C: Criterion> MultiwayGrower<'_, T, C> {
    /// Pushes a node with the statistics of `rows[start..end]`, linked to `parent`.
    fn push_node(&mut self, start: usize, end: usize, parent: u32, is_left: bool) -> (u32, f64) {
        self.crit
            .accumulate(&mut self.total, &self.ys[start..end], &self.ws[start..end]);
        let impurity = self.crit.impurity(&self.total);
        self.crit.value(&self.total, &mut self.value);
        let id = self
            .tree
            .push_leaf(impurity, self.total[0], (end - start) as u32, &self.value);
        if parent != LEAF {
            self.tree.link(parent, is_left, id);
        }
        (id, impurity)
    }

    /// Adds the logical node `rows[start..end]` and, unless a stopping rule holds, splits it.
    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        samples: &mut [u32],
        features: &mut [u32],
        start: usize,
        end: usize,
        depth: usize,
        parent: u32,
        is_left: bool,
        rng: &mut TreeRng,
        stack: &mut Vec<Item>,
    ) {
        let (node, impurity) = self.push_node(start, end, parent, is_left);
        let p = self.params;
        let (n, w) = (end - start, self.total[0]);
        if depth >= p.max_depth
            || depth >= features.len()
            || n < p.min_samples_split
            || n < p.min_samples_leaf.saturating_mul(2)
            || w < 2.0 * self.min_weight_leaf
            || impurity <= EPSILON
        {
            return;
        }
        let Some((pos, dec, constant)) =
            self.choose(&samples[start..end], start, features, depth, impurity, rng)
        else {
            return;
        };
        features.swap(pos, depth);
        let feature = features[depth];
        if constant {
            // A no-op level is stored only if its continuation can still split.
            let can_split = depth + 1 < p.max_depth
                && features[depth + 1..]
                    .iter()
                    .any(|&f| !self.is_constant(f, &samples[start..end]));
            if can_split {
                self.tree
                    .set_split(node, feature, NO_OP_THRESHOLD, Missing::Unseen);
                stack.push(Item::Empty {
                    parent: node,
                    impurity,
                    value: self.value.clone().into_boxed_slice(),
                });
                stack.push(Item::Node {
                    start,
                    end,
                    depth: depth + 1,
                    parent: node,
                    is_left: true,
                });
            }
            return;
        }
        if (w / self.root_weight) * dec + EPSILON < p.min_impurity_decrease {
            return;
        }
        let first = self.apply_split(samples, start, end);
        let last = self.cuts.len() - 1;
        // NaN rows form the last group: every node of the chain sends them right.
        let nan = self
            .best_sorted
            .last()
            .is_some_and(|v| v.0.to_f64().is_nan());
        let missing = Missing::seen(nan, false);
        self.tree
            .set_split(node, feature, self.cuts[first].1, missing);
        self.push_chain(
            start,
            (first, last),
            feature,
            depth + 1,
            node,
            missing,
            stack,
        );
    }

    /// Pushes the children of the chain node `node` covering the groups `first..=last`: the
    /// group `first` on its left, the rest (one group, or the next link) on its right.
    #[allow(clippy::too_many_arguments)]
    fn push_chain(
        &self,
        start: usize,
        (first, last): (usize, usize),
        feature: u32,
        child_depth: usize,
        node: u32,
        missing: Missing,
        stack: &mut Vec<Item>,
    ) {
        let mid = self.cuts[first].0;
        if last == first + 1 {
            stack.push(Item::Node {
                start: mid,
                end: self.cuts[last].0,
                depth: child_depth,
                parent: node,
                is_left: false,
            });
        } else {
            stack.push(Item::Link {
                start: mid,
                first: first + 1,
                last,
                feature,
                child_depth,
                parent: node,
                missing,
            });
        }
        stack.push(Item::Node {
            start,
            end: mid,
            depth: child_depth,
            parent: node,
            is_left: true,
        });
    }

    /// Adds a chain link (a node of an ongoing multiway split) and pushes its children.
    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        start: usize,
        (first, last): (usize, usize),
        feature: u32,
        child_depth: usize,
        parent: u32,
        missing: Missing,
        stack: &mut Vec<Item>,
    ) {
        let end = self.cuts[last].0;
        let (node, _) = self.push_node(start, end, parent, false);
        self.tree
            .set_split(node, feature, self.cuts[first].1, missing);
        self.push_chain(
            start,
            (first, last),
            feature,
            child_depth,
            node,
            missing,
            stack,
        );
    }
}

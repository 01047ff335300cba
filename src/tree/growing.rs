//! A tree while it grows. The growers push each node as a leaf before deciding whether to
//! split it; a split takes the node's leaf statistics back, so only leaves ever hold
//! statistics, as in the compact [`Tree`]. When growth was depth-first (nodes in pre-order,
//! leaf slots in node order) [`GrowingTree::finish`] hands the arrays over as they are;
//! otherwise (best-first growth) it renumbers the nodes.

use super::{Missing, SplitNode, Tree, LEAF};
use crate::params::CriterionKind;

pub(crate) struct GrowingTree {
    /// Nodes and leaf statistics in push order (a leaf's `feature` is its leaf slot).
    tree: Tree,
    /// Left children (best-first growth creates nodes out of pre-order).
    left: Vec<u32>,
    /// Whether node ids are in pre-order and every leaf slot belongs to a leaf, in node
    /// order: cleared by a split that is not of the last pushed node, or a left child that
    /// is not the next node.
    in_order: bool,
    /// Bit `id`: NaN goes left at split node `id` (push order), as the builder resolved it.
    missing_left: Vec<u64>,
    /// Whether some split left its side to be derived (`Missing::Unseen`: multiway trees).
    unseen: bool,
    /// Whether every node keeps its impurity and value as grown ([`Tree::grown`]).
    keep_grown: bool,
    /// Bit `id`: split node `id` (push order) left its side to be derived; the other
    /// splits of a multiway tree learned theirs (their node had NaN).
    derived: Vec<u64>,
}

impl GrowingTree {
    pub(crate) fn with_capacity(width: usize, nodes: usize, criterion: CriterionKind) -> Self {
        let leaves = nodes / 2 + 1;
        let regression = criterion.is_regression();
        GrowingTree {
            tree: Tree {
                nodes: Vec::with_capacity(nodes),
                leaf_value: Vec::with_capacity(leaves * width),
                leaf_weight: Vec::with_capacity(leaves),
                leaf_count: Vec::with_capacity(leaves),
                leaf_impurity: Vec::with_capacity(if regression { leaves } else { 0 }),
                width,
                criterion,
                missing_left: Vec::new(),
                outputs: Vec::new(),
                grown: Vec::new(),
                categories: Vec::new(),
            },
            left: Vec::with_capacity(nodes),
            in_order: true,
            missing_left: Vec::new(),
            unseen: false,
            keep_grown: criterion == CriterionKind::AbsoluteError,
            derived: Vec::new(),
        }
    }

    /// Keeps every node's impurity and value as grown, as absolute-error trees do: the
    /// trees of a monotonic constraint, whose clipped values do not give the impurities of
    /// their rows (scikit-learn's `tree_.impurity`, and so its MDI).
    pub(crate) fn keeping_grown(mut self) -> Self {
        self.keep_grown = true;
        self
    }

    /// Appends a leaf and returns its id. Leaf impurities are kept for regression only;
    /// classification impurities follow from the values.
    pub(crate) fn push_leaf(
        &mut self,
        impurity: f64,
        weight: f64,
        n_samples: u32,
        value: &[f64],
    ) -> u32 {
        let t = &mut self.tree;
        let id = t.nodes.len() as u32;
        t.nodes.push(SplitNode {
            threshold: 0.0,
            feature: t.leaf_weight.len() as u32,
            right: LEAF,
        });
        t.leaf_value.extend_from_slice(value);
        t.leaf_weight.push(weight);
        t.leaf_count.push(n_samples);
        if t.criterion.is_regression() {
            t.leaf_impurity.push(impurity);
        }
        if self.keep_grown {
            // Kept when the node splits: a median (or a clipped value) is not derived from
            // its leaves.
            t.grown.push(impurity);
            t.grown.extend_from_slice(value);
        }
        self.left.push(LEAF);
        id
    }

    /// [`GrowingTree::set_split`] of a categorical split: the categories of `left` (bit `c`
    /// of word `c / 64`) go left, and values outside them (categories not seen in
    /// training) go left when `unseen_left`.
    pub(crate) fn set_category_split(
        &mut self,
        node: u32,
        feature: u32,
        (left, unseen_left): (&[u64], bool),
        missing: Missing,
    ) {
        let offset = super::categories::push_set(&mut self.tree.categories, left, unseen_left);
        self.set_split(node, feature, super::categories::reference(offset), missing);
    }

    /// Turns leaf `node` into an internal node; its children are linked later. The leaf
    /// slot of the last pushed node is freed; any other becomes an orphan for `finish`.
    /// `missing` is the node's missing-value side, learned or derived from its counts
    /// ([`super::split::ChosenSplit::missing_side`]); `Unseen` leaves it to be derived from
    /// the leaf counts in `finish`.
    pub(crate) fn set_split(&mut self, node: u32, feature: u32, threshold: f64, missing: Missing) {
        let id = node as usize;
        match missing {
            Missing::Unseen => {
                self.unseen = true;
                if self.derived.len() <= id / 64 {
                    self.derived.resize(id / 64 + 1, 0);
                }
                self.derived[id / 64] |= 1 << (id % 64);
            }
            Missing::Left => {
                if self.missing_left.len() <= id / 64 {
                    self.missing_left.resize(id / 64 + 1, 0);
                }
                self.missing_left[id / 64] |= 1 << (id % 64);
            }
            Missing::Right => {}
        }
        let t = &mut self.tree;
        let slot = t.nodes[node as usize].feature as usize;
        if node as usize + 1 == t.nodes.len() && slot + 1 == t.leaf_weight.len() {
            t.leaf_value.truncate(slot * t.width);
            t.leaf_weight.truncate(slot);
            t.leaf_count.truncate(slot);
            t.leaf_impurity.truncate(slot.min(t.leaf_impurity.len()));
        } else {
            self.in_order = false;
        }
        let n = &mut t.nodes[node as usize];
        n.feature = feature;
        n.threshold = threshold;
    }

    /// Rewrites every split threshold as `f(feature, threshold)` (bin code → real value).
    pub(crate) fn map_thresholds(&mut self, f: impl Fn(usize, f64) -> f64) {
        for n in self.tree.nodes.iter_mut().filter(|n| n.right != LEAF) {
            n.threshold = f(n.feature(), n.threshold);
        }
    }

    /// Replaces the set of every categorical split by `f(feature, words, unseen_left)`
    /// (None: kept), unseen values keeping their side: the histogram search's sets of bins
    /// become sets of categories.
    pub(crate) fn map_category_sets(
        &mut self,
        f: impl Fn(usize, &[u64], bool) -> Option<Vec<u64>>,
    ) {
        if self.tree.categories.is_empty() {
            return;
        }
        let old = std::mem::take(&mut self.tree.categories);
        for n in self.tree.nodes.iter_mut().filter(|n| n.right != LEAF) {
            let Some(offset) = super::categories::offset_of(n.threshold) else {
                continue;
            };
            let (words, unseen_left) = super::categories::set_at(&old, offset);
            let mapped = f(n.feature(), words, unseen_left);
            let words = mapped.as_deref().unwrap_or(words);
            let pool = &mut self.tree.categories;
            let offset = super::categories::push_set(pool, words, unseen_left);
            n.threshold = super::categories::reference(offset);
        }
    }

    pub(crate) fn link(&mut self, parent: u32, is_left: bool, child: u32) {
        if is_left {
            self.in_order &= child == parent + 1;
            self.left[parent as usize] = child;
        } else {
            self.tree.nodes[parent as usize].right = child;
        }
    }

    /// Sets every leaf's value to the uniform distribution of each output, whose class
    /// counts are `n_classes` (a multi-output tree grown on no sample).
    pub(crate) fn fill_uniform(&mut self, n_classes: &[usize]) {
        let width: usize = n_classes.iter().sum();
        for leaf in self.tree.leaf_value.chunks_mut(width.max(1)) {
            let mut start = 0;
            for &c in n_classes {
                leaf[start..start + c].fill(1.0 / c as f64);
                start += c;
            }
        }
    }

    /// Marks a multi-output tree: `outputs` are the values of each output in a node's value
    /// ([`Tree::outputs`]).
    pub(crate) fn set_outputs(&mut self, outputs: Vec<usize>) {
        self.tree.outputs = outputs;
    }

    /// Sets every value to `v` (a tree grown on no sample predicts the uniform distribution).
    pub(crate) fn fill_values(&mut self, v: f64) {
        self.tree.leaf_value.fill(v);
    }

    /// The compact tree, in exact-size arrays since a forest keeps many trees.
    ///
    /// The arrays are copied into fresh allocations rather than shrunk in place: the
    /// growing arrays were reallocated while the working buffers were live and sit above
    /// them in the allocator's heap, where a long-lived tree keeps the freed buffers below
    /// it resident, which raised the peak memory of large fits.
    pub(crate) fn finish(mut self) -> Tree {
        let mut old = std::mem::take(&mut self.missing_left);
        let mut derived = std::mem::take(&mut self.derived);
        let unseen = self.unseen;
        let mut t = if self.in_order {
            debug_assert!(self.preorder().iter().enumerate().all(|(i, &o)| i == o));
            let mut t = self.tree;
            old.resize(t.len().div_ceil(64), 0);
            derived.resize(t.len().div_ceil(64), 0);
            t.missing_left = old;
            t
        } else {
            let order = self.preorder();
            let mut t = self.renumbered();
            t.missing_left = renumber_bits(&old, &order);
            derived = renumber_bits(&derived, &order);
            t
        };
        if unseen {
            // Multiway trees: the sides of the splits that saw no NaN are derived from the
            // leaf counts (towards each split's largest group), the others kept.
            let bit = |b: &[u64], t: usize| b.get(t / 64).is_some_and(|w| w >> (t % 64) & 1 == 1);
            let learned = t.missing_left.clone();
            t.route_missing(|n| (!bit(&derived, n)).then(|| bit(&learned, n)), true);
        }
        // `to_vec` allocates exactly the length.
        t.nodes = t.nodes.to_vec();
        t.leaf_value = t.leaf_value.to_vec();
        t.leaf_weight = t.leaf_weight.to_vec();
        t.leaf_count = t.leaf_count.to_vec();
        t.leaf_impurity = t.leaf_impurity.to_vec();
        t.missing_left = t.missing_left.to_vec();
        t.grown = t.grown.to_vec();
        t.categories = t.categories.to_vec();
        t
    }

    /// The tree with its nodes in pre-order and its leaf slots in node order.
    fn renumbered(&self) -> Tree {
        let order = self.preorder();
        let g = &self.tree;
        let (w, regression) = (g.width, g.criterion.is_regression());
        let n_leaves = order.iter().filter(|&&o| g.nodes[o].right == LEAF).count();
        let mut t = Tree {
            nodes: Vec::with_capacity(order.len()),
            leaf_value: Vec::with_capacity(n_leaves * w),
            leaf_weight: Vec::with_capacity(n_leaves),
            leaf_count: Vec::with_capacity(n_leaves),
            leaf_impurity: Vec::with_capacity(if regression { n_leaves } else { 0 }),
            width: w,
            criterion: g.criterion,
            missing_left: Vec::new(),
            outputs: g.outputs.clone(),
            grown: Vec::with_capacity(g.grown.len()),
            // Thresholds move with their nodes, so their references to the sets hold.
            categories: g.categories.clone(),
        };
        let mut new_id = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = new as u32;
        }
        for &o in &order {
            if let Some(stats) = g.grown.get(o * (1 + w)..(o + 1) * (1 + w)) {
                t.grown.extend_from_slice(stats);
            }
            let mut nd = g.nodes[o];
            if nd.right == LEAF {
                let slot = nd.feature as usize;
                nd.feature = t.leaf_weight.len() as u32;
                t.leaf_value
                    .extend_from_slice(&g.leaf_value[slot * w..(slot + 1) * w]);
                t.leaf_weight.push(g.leaf_weight[slot]);
                t.leaf_count.push(g.leaf_count[slot]);
                if regression {
                    t.leaf_impurity.push(g.leaf_impurity[slot]);
                }
            } else {
                nd.right = new_id[nd.right as usize];
            }
            t.nodes.push(nd);
        }
        t
    }

    /// Old ids in pre-order (the identity when growth was depth-first).
    fn preorder(&self) -> Vec<usize> {
        let nodes = &self.tree.nodes;
        let mut order = Vec::with_capacity(nodes.len());
        let mut stack = if nodes.is_empty() {
            vec![]
        } else {
            vec![0usize]
        };
        while let Some(t) = stack.pop() {
            order.push(t);
            if nodes[t].right != LEAF {
                stack.push(nodes[t].right as usize);
                stack.push(self.left[t] as usize);
            }
        }
        order
    }
}

/// Bits by push-order id, renumbered to the pre-order ids of `order` (`order[new] = old`).
fn renumber_bits(bits: &[u64], order: &[usize]) -> Vec<u64> {
    let bit = |id: usize| bits.get(id / 64).is_some_and(|w| w >> (id % 64) & 1 == 1);
    let mut out = vec![0u64; order.len().div_ceil(64)];
    for (new, &o) in order.iter().enumerate() {
        if bit(o) {
            out[new / 64] |= 1 << (new % 64);
        }
    }
    out
}

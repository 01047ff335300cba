//! A tree while it grows: every node carries its statistics, because the growers push each
//! node as a leaf before deciding whether to split it. [`GrowingTree::finish`] keeps only
//! the primary data (splits and leaf statistics) in the compact [`Tree`].

use super::{SplitNode, Tree, LEAF};
use crate::params::CriterionKind;

pub(crate) struct GrowingTree {
    nodes: Vec<SplitNode>,
    impurity: Vec<f64>,
    weight: Vec<f64>,
    n_samples: Vec<u32>,
    /// `n_nodes × width`: class frequencies, or the mean output.
    value: Vec<f64>,
    width: usize,
    /// Left children (best-first growth creates nodes out of pre-order).
    left: Vec<u32>,
}

impl GrowingTree {
    pub(crate) fn with_capacity(width: usize, nodes: usize) -> Self {
        GrowingTree {
            nodes: Vec::with_capacity(nodes),
            impurity: Vec::with_capacity(nodes),
            weight: Vec::with_capacity(nodes),
            n_samples: Vec::with_capacity(nodes),
            value: Vec::with_capacity(nodes * width),
            width,
            left: Vec::with_capacity(nodes),
        }
    }

    /// Appends a leaf and returns its id.
    pub(crate) fn push_leaf(
        &mut self,
        impurity: f64,
        weight: f64,
        n_samples: u32,
        value: &[f64],
    ) -> u32 {
        let id = self.nodes.len() as u32;
        self.nodes.push(SplitNode {
            threshold: 0.0,
            feature: 0,
            right: LEAF,
        });
        self.left.push(LEAF);
        self.impurity.push(impurity);
        self.weight.push(weight);
        self.n_samples.push(n_samples);
        self.value.extend_from_slice(value);
        id
    }

    /// Turns leaf `node` into an internal node; its children are linked later.
    pub(crate) fn set_split(&mut self, node: u32, feature: u32, threshold: f64) {
        let n = &mut self.nodes[node as usize];
        n.feature = feature;
        n.threshold = threshold;
    }

    /// Rewrites every split threshold as `f(feature, threshold)` (bin code → real value).
    pub(crate) fn map_thresholds(&mut self, f: impl Fn(usize, f64) -> f64) {
        for n in self.nodes.iter_mut().filter(|n| n.right != LEAF) {
            n.threshold = f(n.feature as usize, n.threshold);
        }
    }

    pub(crate) fn link(&mut self, parent: u32, is_left: bool, child: u32) {
        if is_left {
            self.left[parent as usize] = child;
        } else {
            self.nodes[parent as usize].right = child;
        }
    }

    /// Value pushed for `node`.
    pub(crate) fn value(&self, node: usize) -> &[f64] {
        &self.value[node * self.width..(node + 1) * self.width]
    }

    /// Impurity pushed for `node`.
    pub(crate) fn impurity(&self, node: usize) -> f64 {
        self.impurity[node]
    }

    /// Sets every value to `v` (a tree grown on no sample predicts the uniform distribution).
    pub(crate) fn fill_values(&mut self, v: f64) {
        self.value.iter_mut().for_each(|x| *x = v);
    }

    /// The compact tree: nodes in pre-order, statistics of the leaves only (in exact-size
    /// arrays, since a forest keeps many trees). Leaf impurities are kept for regression
    /// only; classification impurities follow from the values.
    pub(crate) fn finish(self, criterion: CriterionKind) -> Tree {
        let order = self.preorder();
        let n_leaves = order
            .iter()
            .filter(|&&o| self.nodes[o].right == LEAF)
            .count();
        let w = self.width;
        let regression = criterion == CriterionKind::SquaredError;
        let mut t = Tree {
            nodes: Vec::with_capacity(order.len()),
            leaf_value: Vec::with_capacity(n_leaves * w),
            leaf_weight: Vec::with_capacity(n_leaves),
            leaf_count: Vec::with_capacity(n_leaves),
            leaf_impurity: Vec::with_capacity(if regression { n_leaves } else { 0 }),
            width: w,
            criterion,
        };
        let mut new_id = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = new as u32;
        }
        for &o in &order {
            let mut nd = self.nodes[o];
            if nd.right == LEAF {
                nd.feature = t.leaf_weight.len() as u32;
                t.leaf_value
                    .extend_from_slice(&self.value[o * w..(o + 1) * w]);
                t.leaf_weight.push(self.weight[o]);
                t.leaf_count.push(self.n_samples[o]);
                if regression {
                    t.leaf_impurity.push(self.impurity[o]);
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
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack = if self.nodes.is_empty() {
            vec![]
        } else {
            vec![0usize]
        };
        while let Some(t) = stack.pop() {
            order.push(t);
            if self.nodes[t].right != LEAF {
                stack.push(self.nodes[t].right as usize);
                stack.push(self.left[t] as usize);
            }
        }
        order
    }
}

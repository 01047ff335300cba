//! Binary decision trees stored as flat parallel node arrays.
//!
//! Node 0 is the root; children always have larger ids than their parent, which makes
//! bottom-up passes a reverse scan and lets the loader reject cycles cheaply. Leaves have
//! `left == right == LEAF`.
//!
//! Only leaf statistics are primary: the weight, sample count and value of an internal node
//! are derived from its children ([`Tree::finalize`]), and classification impurities from
//! the values. A fitted tree and the same tree loaded from bytes are therefore identical
//! bit for bit, and so are their importances.
//!
//! Module map: `criterion` (impurities), `splitter` (one node's split), `builder` (growing a
//! tree depth-first or best-first).

pub(crate) mod builder;
pub mod criterion;
pub(crate) mod splitter;

use crate::data::{Feature, Matrix};
use crate::params::CriterionKind;

/// Child id marking a leaf.
pub const LEAF: u32 = u32::MAX;

/// A fitted binary tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    pub(crate) left: Vec<u32>,
    pub(crate) right: Vec<u32>,
    pub(crate) feature: Vec<u32>,
    pub(crate) threshold: Vec<f64>,
    pub(crate) impurity: Vec<f64>,
    pub(crate) weight: Vec<f64>,
    pub(crate) n_samples: Vec<u32>,
    /// `n_nodes × width`: class frequencies, or the mean output.
    pub(crate) value: Vec<f64>,
    pub(crate) width: usize,
}

impl Tree {
    pub(crate) fn with_capacity(width: usize, nodes: usize) -> Self {
        Tree {
            left: Vec::with_capacity(nodes),
            right: Vec::with_capacity(nodes),
            feature: Vec::with_capacity(nodes),
            threshold: Vec::with_capacity(nodes),
            impurity: Vec::with_capacity(nodes),
            weight: Vec::with_capacity(nodes),
            n_samples: Vec::with_capacity(nodes),
            value: Vec::with_capacity(nodes * width),
            width,
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
        let id = self.left.len() as u32;
        self.left.push(LEAF);
        self.right.push(LEAF);
        self.feature.push(0);
        self.threshold.push(0.0);
        self.impurity.push(impurity);
        self.weight.push(weight);
        self.n_samples.push(n_samples);
        self.value.extend_from_slice(value);
        id
    }

    /// Turns leaf `node` into an internal node; its children are linked later.
    pub(crate) fn set_split(&mut self, node: u32, feature: u32, threshold: f64) {
        self.feature[node as usize] = feature;
        self.threshold[node as usize] = threshold;
    }

    pub(crate) fn link(&mut self, parent: u32, is_left: bool, child: u32) {
        if is_left {
            self.left[parent as usize] = child;
        } else {
            self.right[parent as usize] = child;
        }
    }

    /// Derives internal-node weights, counts, values and (for classification) all
    /// impurities from the leaves. Children have larger ids, so one reverse scan suffices.
    pub(crate) fn finalize(&mut self, criterion: CriterionKind) {
        let w = self.width;
        for t in (0..self.len()).rev() {
            if self.is_leaf(t) {
                continue;
            }
            let (l, r) = (self.left[t] as usize, self.right[t] as usize);
            let (wl, wr) = (self.weight[l], self.weight[r]);
            let wt = wl + wr;
            self.weight[t] = wt;
            self.n_samples[t] = self.n_samples[l] + self.n_samples[r];
            for k in 0..w {
                let v = if wt > 0.0 {
                    (wl * self.value[l * w + k] + wr * self.value[r * w + k]) / wt
                } else {
                    0.0
                };
                self.value[t * w + k] = v;
            }
        }
        if criterion != CriterionKind::SquaredError {
            for t in 0..self.len() {
                self.impurity[t] =
                    criterion::impurity_of_frequencies(criterion, &self.value[t * w..(t + 1) * w]);
            }
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.left.len()
    }

    /// Whether the tree has no node (never true for a fitted tree).
    pub fn is_empty(&self) -> bool {
        self.left.is_empty()
    }

    /// Whether `node` is a leaf.
    #[inline]
    pub fn is_leaf(&self, node: usize) -> bool {
        self.left[node] == LEAF
    }

    /// Values per node (number of classes, or 1).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Prediction stored at `node`.
    #[inline]
    pub fn value(&self, node: usize) -> &[f64] {
        &self.value[node * self.width..(node + 1) * self.width]
    }

    /// Left children (`LEAF` for leaves).
    pub fn children_left(&self) -> &[u32] {
        &self.left
    }
    /// Right children (`LEAF` for leaves).
    pub fn children_right(&self) -> &[u32] {
        &self.right
    }
    /// Split feature of each node (meaningless at leaves).
    pub fn features(&self) -> &[u32] {
        &self.feature
    }
    /// Split threshold of each node: `x ≤ threshold` goes left.
    pub fn thresholds(&self) -> &[f64] {
        &self.threshold
    }
    /// Impurity `i(t)` of each node.
    pub fn impurities(&self) -> &[f64] {
        &self.impurity
    }
    /// Weighted number of (in-bag) samples in each node.
    pub fn weights(&self) -> &[f64] {
        &self.weight
    }
    /// Number of distinct in-bag samples in each node.
    pub fn sample_counts(&self) -> &[u32] {
        &self.n_samples
    }

    /// Leaf reached by row `i` of `x`.
    #[inline]
    pub fn leaf<T: Feature>(&self, x: &Matrix<'_, T>, i: usize) -> usize {
        let mut t = 0usize;
        while self.left[t] != LEAF {
            t = if x.get(i, self.feature[t] as usize).to_f64() <= self.threshold[t] {
                self.left[t] as usize
            } else {
                self.right[t] as usize
            };
        }
        t
    }

    /// Nodes visited by row `i`, root first, appended to `path`.
    pub fn path<T: Feature>(&self, x: &Matrix<'_, T>, i: usize, path: &mut Vec<usize>) {
        let mut t = 0usize;
        path.push(t);
        while self.left[t] != LEAF {
            t = if x.get(i, self.feature[t] as usize).to_f64() <= self.threshold[t] {
                self.left[t] as usize
            } else {
                self.right[t] as usize
            };
            path.push(t);
        }
    }

    /// Depth of every node (root 0).
    pub fn node_depths(&self) -> Vec<usize> {
        let mut depth = vec![0usize; self.len()];
        for t in 0..self.len() {
            if !self.is_leaf(t) {
                depth[self.left[t] as usize] = depth[t] + 1;
                depth[self.right[t] as usize] = depth[t] + 1;
            }
        }
        depth
    }

    /// Maximum depth of a leaf.
    pub fn max_depth(&self) -> usize {
        self.node_depths().into_iter().max().unwrap_or(0)
    }

    /// Raw mean decrease of impurity of each of `n_features` features (Louppe 2014, Eq. 6.2):
    /// `Imp(X_m) = Σ_{t splits on X_m} p(t) · Δi(t)` with `p(t) = w_t / w_root` and
    /// `Δi(t) = i(t) − (w_L/w_t) i(t_L) − (w_R/w_t) i(t_R)`. In bits for entropy.
    pub fn mdi(&self, n_features: usize) -> Vec<f64> {
        let mut imp = vec![0.0; n_features];
        let root = self.weight.first().copied().unwrap_or(0.0);
        if root <= 0.0 {
            return imp;
        }
        for t in 0..self.len() {
            if self.is_leaf(t) {
                continue;
            }
            let (l, r) = (self.left[t] as usize, self.right[t] as usize);
            let dec = self.weight[t] * self.impurity[t]
                - self.weight[l] * self.impurity[l]
                - self.weight[r] * self.impurity[r];
            imp[self.feature[t] as usize] += dec / root;
        }
        imp
    }
}

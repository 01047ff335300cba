//! Binary decision trees stored as flat parallel node arrays.
//!
//! Nodes are stored in pre-order: node 0 is the root, the left child of an internal node
//! `t` is `t + 1` and only the right child is stored. A split node is 16 bytes (threshold,
//! feature, right child), so prediction walks few cache lines and the left path is
//! sequential in memory. Children have larger ids than their parent, so bottom-up passes
//! are a reverse scan. Leaves have `right == LEAF`.
//!
//! Only leaf statistics are primary: the weight, sample count and value of an internal node
//! are derived from its children ([`Tree::finalize`]), and classification impurities from
//! the values. A fitted tree and the same tree loaded from bytes are therefore identical
//! bit for bit, and so are their importances.
//!
//! Module map: `criterion` (impurities), `splitter` (one node's split), `sort` (radix sort of
//! packed keys), `builder` (growing a
//! tree depth-first or best-first), `multiway` (multiway trees stored as binary chains).

pub(crate) mod builder;
pub mod criterion;
pub mod multiway;
mod sort;
pub(crate) mod splitter;

use crate::data::{Feature, Matrix};
use crate::params::CriterionKind;

/// Child id marking a leaf.
pub const LEAF: u32 = u32::MAX;

/// Rows walked down a tree together by [`Tree::leaves`].
const WALK_LANES: usize = 8;

/// The split fields of a node, packed for prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SplitNode {
    /// `x ≤ threshold` goes to the left child `t + 1`.
    pub threshold: f64,
    pub feature: u32,
    /// Right child, or `LEAF`.
    pub right: u32,
}

/// A fitted binary tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    pub(crate) nodes: Vec<SplitNode>,
    pub(crate) impurity: Vec<f64>,
    pub(crate) weight: Vec<f64>,
    pub(crate) n_samples: Vec<u32>,
    /// `n_nodes × width`: class frequencies, or the mean output.
    pub(crate) value: Vec<f64>,
    pub(crate) width: usize,
    /// Left children while growing (best-first creates nodes out of pre-order); emptied by
    /// [`Tree::finalize`].
    build_left: Vec<u32>,
}

impl Tree {
    pub(crate) fn with_capacity(width: usize, nodes: usize) -> Self {
        Tree {
            nodes: Vec::with_capacity(nodes),
            impurity: Vec::with_capacity(nodes),
            weight: Vec::with_capacity(nodes),
            n_samples: Vec::with_capacity(nodes),
            value: Vec::with_capacity(nodes * width),
            width,
            build_left: Vec::with_capacity(nodes),
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
        self.build_left.push(LEAF);
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
            self.build_left[parent as usize] = child;
        } else {
            self.nodes[parent as usize].right = child;
        }
    }

    /// Puts the nodes in pre-order (if growing did not), then derives internal-node
    /// weights, counts, values and (for classification) all impurities from the leaves.
    pub(crate) fn finalize(&mut self, criterion: CriterionKind) {
        let in_preorder =
            (0..self.len()).all(|t| self.is_leaf(t) || self.build_left[t] as usize == t + 1);
        if !in_preorder {
            self.reorder();
        }
        self.build_left = Vec::new();
        let w = self.width;
        for t in (0..self.len()).rev() {
            let Some((l, r)) = self.children(t) else {
                continue;
            };
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
            if criterion == CriterionKind::SquaredError && wt > 0.0 {
                // Law of total variance: the node's variance from its children's. The
                // decrease i(t) − (w_l i_l + w_r i_r)/w_t is then a sum of squares, never
                // negative, and only leaf impurities need storing.
                let (vt, vl, vr) = (self.value[t], self.value[l], self.value[r]);
                self.impurity[t] = (wl * (self.impurity[l] + (vl - vt) * (vl - vt))
                    + wr * (self.impurity[r] + (vr - vt) * (vr - vt)))
                    / wt;
            }
        }
        if criterion != CriterionKind::SquaredError {
            for t in 0..self.len() {
                self.impurity[t] =
                    criterion::impurity_of_frequencies(criterion, &self.value[t * w..(t + 1) * w]);
            }
        }
        // The arrays were reserved for a large tree: a forest keeps many trees, so give the
        // slack back (it would stay resident once the allocator reuses the pages).
        self.nodes.shrink_to_fit();
        self.impurity.shrink_to_fit();
        self.weight.shrink_to_fit();
        self.n_samples.shrink_to_fit();
        self.value.shrink_to_fit();
    }

    /// Renumbers the nodes in pre-order using the build-time left links.
    fn reorder(&mut self) {
        let n = self.len();
        let mut order = Vec::with_capacity(n); // new id -> old id
        let mut stack = vec![0usize];
        while let Some(t) = stack.pop() {
            order.push(t);
            if self.nodes[t].right != LEAF {
                stack.push(self.nodes[t].right as usize);
                stack.push(self.build_left[t] as usize);
            }
        }
        let mut new_id = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            new_id[old] = new as u32;
        }
        let w = self.width;
        let nodes = order
            .iter()
            .map(|&o| {
                let mut nd = self.nodes[o];
                if nd.right != LEAF {
                    nd.right = new_id[nd.right as usize];
                }
                nd
            })
            .collect();
        self.nodes = nodes;
        self.impurity = order.iter().map(|&o| self.impurity[o]).collect();
        self.weight = order.iter().map(|&o| self.weight[o]).collect();
        self.n_samples = order.iter().map(|&o| self.n_samples[o]).collect();
        self.value = order
            .iter()
            .flat_map(|&o| self.value[o * w..(o + 1) * w].to_vec())
            .collect();
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no node (never true for a fitted tree).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether `node` is a leaf.
    #[inline]
    pub fn is_leaf(&self, node: usize) -> bool {
        self.nodes[node].right == LEAF
    }

    /// `(left, right)` children of `node`, None for a leaf.
    #[inline]
    pub fn children(&self, node: usize) -> Option<(usize, usize)> {
        let r = self.nodes[node].right;
        (r != LEAF).then_some((node + 1, r as usize))
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

    /// Split feature of `node` (meaningless at leaves).
    pub fn feature(&self, node: usize) -> u32 {
        self.nodes[node].feature
    }
    /// Split threshold of `node`: `x ≤ threshold` goes left.
    pub fn threshold(&self, node: usize) -> f64 {
        self.nodes[node].threshold
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
        match x.row(i) {
            Some(row) => self.walk(|f| row[f]),
            None => self.walk(|f| x.get(i, f)),
        }
    }

    /// Leaf reached by a sample whose feature `f` is `value(f)`.
    #[inline(always)]
    fn walk<T: Feature>(&self, value: impl Fn(usize) -> T) -> usize {
        let mut t = 0usize;
        loop {
            let nd = &self.nodes[t];
            if nd.right == LEAF {
                return t;
            }
            t = if value(nd.feature as usize).to_f64() <= nd.threshold {
                t + 1
            } else {
                nd.right as usize
            };
        }
    }

    /// Leaves reached by the rows `first..first + out.len()` of `x`, written to `out`.
    ///
    /// Rows descend [`WALK_LANES`] at a time, one level per round: a descent is a chain of
    /// dependent loads, and interleaving independent chains keeps several loads in flight.
    pub fn leaves<T: Feature>(&self, x: &Matrix<'_, T>, first: usize, out: &mut [u32]) {
        for (g, group) in out.chunks_mut(WALK_LANES).enumerate() {
            let base = first + g * WALK_LANES;
            let mut at = [0usize; WALK_LANES];
            let mut moving = true;
            while moving {
                moving = false;
                for (lane, t) in at.iter_mut().enumerate().take(group.len()) {
                    let nd = &self.nodes[*t];
                    if nd.right == LEAF {
                        continue;
                    }
                    moving = true;
                    let v = x.get(base + lane, nd.feature as usize);
                    *t = if v.to_f64() <= nd.threshold {
                        *t + 1
                    } else {
                        nd.right as usize
                    };
                }
            }
            for (leaf, &t) in group.iter_mut().zip(&at) {
                *leaf = t as u32;
            }
        }
    }

    /// Nodes visited by row `i`, root first, appended to `path`.
    pub fn path<T: Feature>(&self, x: &Matrix<'_, T>, i: usize, path: &mut Vec<usize>) {
        let mut t = 0usize;
        path.push(t);
        while let Some((l, r)) = self.children(t) {
            t = if x.get(i, self.nodes[t].feature as usize).to_f64() <= self.nodes[t].threshold {
                l
            } else {
                r
            };
            path.push(t);
        }
    }

    /// Depth of every node (root 0).
    pub fn node_depths(&self) -> Vec<usize> {
        let mut depth = vec![0usize; self.len()];
        for t in 0..self.len() {
            if let Some((l, r)) = self.children(t) {
                depth[l] = depth[t] + 1;
                depth[r] = depth[t] + 1;
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
            let Some((l, r)) = self.children(t) else {
                continue;
            };
            let dec = self.weight[t] * self.impurity[t]
                - self.weight[l] * self.impurity[l]
                - self.weight[r] * self.impurity[r];
            imp[self.nodes[t].feature as usize] += dec / root;
        }
        imp
    }
}

//! Binary decision trees stored as flat parallel node arrays.
//!
//! Nodes are stored in pre-order: node 0 is the root, the left child of an internal node
//! `t` is `t + 1` and only the right child is stored. A split node is 16 bytes (threshold,
//! feature, right child), so prediction walks few cache lines and the left path is
//! sequential in memory. Children have larger ids than their parent, so bottom-up passes
//! are a reverse scan. Leaves have `right == LEAF`.
//!
//! Only primary data is kept: the split fields of every node and the statistics of the
//! leaves (a leaf's `feature` field holds its index in the leaf arrays). The weight, sample
//! count, value and impurity of an internal node follow from its leaves and are derived on
//! demand ([`Tree::node_stats`]) by the importance code. A forest in memory is then a small
//! multiple of its model bytes (fixed-size nodes for prediction, where the model format
//! packs varints; measured in `BENCHMARKS.md`), and a fitted tree and the same tree loaded
//! from bytes are identical bit for bit.
//!
//! Module map: `criterion` (the criterion contract, with the impurities of `classes` and
//! `regression`), `builder` (growing a tree depth-first or best-first: stopping rules and
//! assembly), `growing` (the tree while it grows), `split` (one node's split: the route
//! table `split::route` picks a candidate source of `split::source`, drawn by
//! `split::draw`; the threshold rules of `split::rules` offer cuts through the scans of
//! `split::scan`; `split::read` gathers and partitions a node's rows, `split::state` keeps
//! what a tree needs between nodes), `multiway` (multiway trees stored as binary chains: `grow` a tree, `choose` a
//! node's split), `descend` (prediction: the leaf each row reaches), `missing` (the side
//! missing values go to at each split, learned or derived from the counts), `prune` (minimal
//! cost-complexity pruning of a grown tree), `stats` (every node's statistics, derived from
//! the leaves).

pub(crate) mod builder;
pub(crate) mod categories;
pub mod criterion;
mod descend;
pub(crate) use descend::max_block_rows;
pub(crate) mod growing;
mod missing;
pub(crate) mod monotone;
pub(crate) use missing::Missing;
pub mod multiway;
mod prune;
#[cfg(feature = "serde")]
mod repr;
#[cfg(feature = "serde")]
pub(crate) use repr::TreeRepr;
pub(crate) mod split;
pub use split::Word;
mod stats;
pub use stats::NodeStats;

use crate::data::{Feature, Matrix};
use crate::params::CriterionKind;

/// Child id marking a leaf.
pub const LEAF: u32 = u32::MAX;

/// The routing rule: whether a sample whose split feature reads `value` goes to the left
/// child of a node with this `threshold`, where missing values (NaN) go left when
/// `missing_left`. Every walk of a fitted tree and every partition of a growing one decides
/// by this function (through [`Tree::goes_left`] for the walks), so the rule lives here
/// once. A comparison with NaN is false, so `value ≤ threshold` sends NaN right and
/// `!(value > threshold)`, the same test for every other value, sends it left: either way
/// one comparison, when `missing_left` is a constant of the caller's loop.
#[inline(always)]
#[allow(clippy::neg_cmp_op_on_partial_ord)] // the negation is the point: true for NaN
pub(crate) fn goes_left(value: f64, threshold: f64, missing_left: bool) -> bool {
    if missing_left {
        !(value > threshold)
    } else {
        value <= threshold
    }
}

/// [`goes_left`] where the node's missing side is read (`missing_left()`) only for a NaN
/// value: the walks of one row through a tree, whose steps are a chain of dependent loads,
/// then do no more work per step on complete data than a single comparison and a branch
/// that is never taken.
#[inline(always)]
fn goes_left_lazy(value: f64, threshold: f64, missing_left: impl FnOnce() -> bool) -> bool {
    if value.is_nan() {
        goes_left(value, threshold, missing_left())
    } else {
        goes_left(value, threshold, false)
    }
}

/// The split fields of a node, packed for prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SplitNode {
    /// `x ≤ threshold` goes to the left child `t + 1`.
    threshold: f64,
    /// Split feature; for a leaf, its index in the leaf arrays.
    feature: u32,
    /// Right child, or `LEAF`.
    right: u32,
}

impl SplitNode {
    /// The split feature.
    #[inline(always)]
    fn feature(&self) -> usize {
        self.feature as usize
    }

    /// The child a value goes to, `t` being this node's id and `missing_left()` its
    /// missing-value side.
    #[inline(always)]
    fn next(&self, t: usize, value: f64, missing_left: impl FnOnce() -> bool) -> usize {
        if goes_left_lazy(value, self.threshold, missing_left) {
            t + 1
        } else {
            self.right as usize
        }
    }
}

/// A fitted binary tree. Its node arrays are private to `tree/`: the rest of the crate
/// walks it through [`Tree::goes_left`], [`Tree::child`] and [`Tree::next`].
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    nodes: Vec<SplitNode>,
    /// `n_leaves × width`: class frequencies, or the mean output.
    leaf_value: Vec<f64>,
    leaf_weight: Vec<f64>,
    leaf_count: Vec<u32>,
    /// Regression only (empty for classification, where impurity follows from the value).
    leaf_impurity: Vec<f64>,
    width: usize,
    criterion: CriterionKind,
    /// Bit `t` (word `t / 64`): whether NaN goes to the left child of split node `t`. Kept
    /// apart from the nodes, which stay 16 bytes, and read off the walk's chain of
    /// dependent loads; set by [`Tree::route_missing`].
    missing_left: Vec<u64>,
    /// Multi-output trees: the values of each output in a node's value, in order (class
    /// counts, or 1 per regression output), summing to `width`. Empty for one output.
    outputs: Vec<usize>,
    /// Absolute-error and monotonic trees only (empty otherwise): `[impurity, value…]` of
    /// every node as grown, `1 + width` numbers a node. A median and its deviation are no
    /// function of the children's, and a clipped value gives no impurity of the node's
    /// rows, so an internal node's cannot be derived from the leaves.
    grown: Vec<f64>,
    /// The sets of the categorical splits, which their thresholds refer to
    /// ([`categories`]); empty when the tree has none.
    categories: Vec<u64>,
}

impl Tree {
    /// Every node's `[impurity, value…]` as grown (absolute-error trees; else empty).
    pub(crate) fn grown(&self) -> &[f64] {
        &self.grown
    }

    /// The values of each output in a node's value (class counts, or 1 per regression
    /// output), in order; empty for a single-output tree.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// The single-output tree of one output of a multi-output tree: the same splits, each
    /// leaf value cut to `start..start + width`. Only values are cut: a regression tree's
    /// leaf impurities stay the mean over outputs (the model keeps no other), so the result
    /// serves the measures that read leaf values, never impurities.
    pub(crate) fn output_values(&self, start: usize, width: usize) -> Tree {
        let leaf_value = (self.leaf_value.chunks(self.width.max(1)))
            .flat_map(|v| v[start..start + width].iter().copied())
            .collect();
        Tree {
            nodes: self.nodes.clone(),
            leaf_value,
            leaf_weight: self.leaf_weight.clone(),
            leaf_count: self.leaf_count.clone(),
            leaf_impurity: self.leaf_impurity.clone(),
            width,
            criterion: self.criterion,
            missing_left: self.missing_left.clone(),
            outputs: Vec::new(),
            grown: self.grown.clone(),
            categories: self.categories.clone(),
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The same tree over other feature ids: a split on feature `j` becomes a split on
    /// `columns[j]` (a tree grown on the columns `columns` of a wider matrix, read again over
    /// all its columns). `columns` must cover every feature the tree splits on.
    pub(crate) fn remap_features(&mut self, columns: &[u32]) {
        for node in self.nodes.iter_mut().filter(|n| n.right != LEAF) {
            node.feature = columns[node.feature as usize];
        }
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

    /// Values per node (number of classes, or 1; for several outputs, their sum).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Prediction of leaf `node` (class frequencies, or the mean output). Internal nodes
    /// have no stored value: see [`Tree::node_stats`].
    #[inline]
    pub fn value(&self, node: usize) -> &[f64] {
        self.slot_value(self.leaf_slot(node))
    }

    /// Position of leaf `node` in the leaf arrays.
    pub(crate) fn leaf_slot(&self, node: usize) -> usize {
        debug_assert!(self.is_leaf(node));
        self.nodes[node].feature as usize
    }

    /// Value of the leaf at position `slot` of the leaf arrays.
    pub(crate) fn slot_value(&self, slot: usize) -> &[f64] {
        &self.leaf_value[slot * self.width..(slot + 1) * self.width]
    }

    /// The leaf slot and sample count of every leaf, left to right. A left child is its
    /// parent's next node, so this is also the order in which the builder's partitions
    /// leave the rows the tree was grown on: each leaf's rows after the previous leaf's.
    pub(crate) fn leaves_in_order(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.nodes.len()).filter(|&t| self.is_leaf(t)).map(|t| {
            let slot = self.leaf_slot(t);
            (slot, self.leaf_count[slot] as usize)
        })
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.leaf_weight.len()
    }

    /// Split feature of `node` (meaningless at leaves).
    pub fn feature(&self, node: usize) -> u32 {
        self.nodes[node].feature() as u32
    }

    /// Whether missing values (NaN) go to the left child of split node `node`: the side
    /// learned at fit when the node's rows had NaN in its feature, else the side with more
    /// training samples (ties right), as in scikit-learn.
    #[inline(always)]
    pub fn missing_left(&self, node: usize) -> bool {
        let word = self.missing_left.get(node / 64).copied().unwrap_or(0);
        word >> (node % 64) & 1 == 1
    }
    /// Split threshold of `node`: `x ≤ threshold` goes left (NaN: [`Tree::missing_left`]).
    /// A categorical split's is a NaN that refers to its set ([`Tree::category_set`]).
    pub fn threshold(&self, node: usize) -> f64 {
        self.nodes[node].threshold
    }

    /// The categories that go left at split node `node` (category `c`: bit `c % 64` of
    /// word `c / 64`) and whether values outside them (categories not seen in training)
    /// do, when the node splits on categories; None for an ordered split.
    pub fn category_set(&self, node: usize) -> Option<(&[u64], bool)> {
        let offset = categories::offset_of(self.nodes[node].threshold)?;
        Some(categories::set_at(&self.categories, offset))
    }

    /// Whether some node of the tree splits on categories.
    pub fn has_categorical_splits(&self) -> bool {
        !self.categories.is_empty()
    }

    /// Whether `value` of split node `node`'s feature goes to its left child (the routing
    /// rule, [`goes_left`], or the node's category set).
    #[inline(always)]
    pub fn goes_left(&self, node: usize, value: f64) -> bool {
        let nd = &self.nodes[node];
        match categories::offset_of(nd.threshold) {
            None => goes_left_lazy(value, nd.threshold, || self.missing_left(node)),
            Some(at) => categories::goes_left(&self.categories, at, value, self.missing_left(node)),
        }
    }

    /// The child of split node `t` (`nd`) that `value` goes to; `CAT`: the node may split
    /// on categories (a tree without categorical splits walks with `CAT = false`, one
    /// comparison a node).
    #[inline(always)]
    fn step<const CAT: bool>(&self, nd: &SplitNode, t: usize, value: f64) -> usize {
        if CAT && categories::offset_of(nd.threshold).is_some() {
            return self.child(t, self.goes_left(t, value));
        }
        nd.next(t, value, || self.missing_left(t))
    }

    /// The left (`left = true`) or right child of split node `node`.
    #[inline(always)]
    pub fn child(&self, node: usize, left: bool) -> usize {
        if left {
            node + 1
        } else {
            self.nodes[node].right as usize
        }
    }

    /// The child of split node `node` that `value` of its feature goes to.
    #[inline(always)]
    pub fn next(&self, node: usize, value: f64) -> usize {
        self.step::<true>(&self.nodes[node], node, value)
    }

    /// Leaf reached by row `i` of `x`.
    #[inline]
    pub fn leaf<T: Feature>(&self, x: &Matrix<'_, T>, i: usize) -> usize {
        match (x.row(i), self.has_categorical_splits()) {
            (Some(row), false) => self.walk::<false, T>(|f| row[f]),
            (Some(row), true) => self.walk::<true, T>(|f| row[f]),
            (None, false) => self.walk::<false, T>(|f| x.get(i, f)),
            (None, true) => self.walk::<true, T>(|f| x.get(i, f)),
        }
    }

    /// Leaf reached by a sample whose feature `f` is `value(f)` (`CAT`: see [`Tree::step`]).
    #[inline(always)]
    fn walk<const CAT: bool, T: Feature>(&self, value: impl Fn(usize) -> T) -> usize {
        let mut t = 0usize;
        loop {
            let nd = &self.nodes[t];
            if nd.right == LEAF {
                return t;
            }
            t = self.step::<CAT>(nd, t, value(nd.feature()).to_f64());
        }
    }

    /// Nodes visited by row `i`, root first, appended to `path`.
    pub fn path<T: Feature>(&self, x: &Matrix<'_, T>, i: usize, path: &mut Vec<usize>) {
        let mut t = 0usize;
        path.push(t);
        while !self.is_leaf(t) {
            t = self.next(t, x.get(i, self.nodes[t].feature()).to_f64());
            path.push(t);
        }
    }

    /// Depth of every node, root 0. With `logical`, for multiway trees stored as binary
    /// chains ([`multiway`]): a right child that splits on its parent's feature is a link of
    /// the parent's chain and stays at the parent's depth, so a node's depth is the number
    /// of variables it is conditioned on.
    pub fn node_depths(&self, logical: bool) -> Vec<usize> {
        let mut depth = vec![0usize; self.len()];
        // Pre-order: a parent's depth is final before its children are visited.
        for t in 0..self.len() {
            let Some((l, r)) = self.children(t) else {
                continue;
            };
            let link = logical && !self.is_leaf(r) && self.feature(r) == self.feature(t);
            depth[l] = depth[t] + 1;
            depth[r] = depth[t] + usize::from(!link);
        }
        depth
    }

    /// Maximum depth of a leaf.
    pub fn max_depth(&self) -> usize {
        self.node_depths(false).into_iter().max().unwrap_or(0)
    }
}

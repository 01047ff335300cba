//! What the TreeSHAP walk needs of one fitted tree, derived once per tree and shared by
//! every row: the cover ratios of the edges, the tree's expected value, which nodes split
//! on which feature, the quadrature rule whose size the tree's paths call for, and the
//! leaf outputs explained: the tree's own values (forests), or values given per leaf and
//! the output column they add to (boosting: the line-searched values times the learning
//! rate, one class column per tree).
//!
//! Invariant: node ids are those of [`Tree`] (pre-order, left child `t + 1`), so a node's
//! subtree is the id range `t..subtree_end[t]`.

use super::quadrature::Rule;
use crate::error::{ForestError, Result};
use crate::tree::Tree;

/// One tree, prepared for the TreeSHAP walk.
pub(super) struct ShapTree<'t> {
    pub tree: &'t Tree,
    /// `[w(left) / w(t), w(right) / w(t)]` of every split node `t`, the "cover" fractions
    /// of path-dependent TreeSHAP (0 when `w(t) = 0`).
    pub cover: Vec<[f64; 2]>,
    /// One past the last node of each node's subtree.
    pub subtree_end: Vec<u32>,
    /// Split nodes of feature `f`: `split_nodes[split_start[f]..split_start[f + 1]]`,
    /// ascending.
    split_start: Vec<u32>,
    split_nodes: Vec<u32>,
    /// Features the tree splits on, ascending.
    pub used_features: Vec<u32>,
    /// Cover-weighted mean output of the tree: its value at the root (`width` values).
    pub expected: Vec<f64>,
    /// Gauss–Legendre rule exact for the tree's paths (see [`points_for`]).
    pub rule: Rule,
    /// Number of nodes on the longest root-to-leaf path.
    pub max_path: usize,
    /// Node-indexed leaf outputs (`width` per node, 0 at internal nodes) that replace the
    /// tree's values, or `None` to explain the tree's own values.
    leaf_outputs: Option<Vec<f64>>,
    /// Outputs of the tree's walk: its value width, or that of `leaf_outputs`.
    pub width: usize,
    /// First column of the explained output that the tree's `width` outputs add to.
    pub column: usize,
}

impl<'t> ShapTree<'t> {
    /// Prepares `tree`, fitted on `n_features` features.
    pub fn new(tree: &'t Tree, n_features: usize) -> Result<ShapTree<'t>> {
        // A fitted or decoded forest never splits on a feature it does not have; checked
        // here so that the walks can index by feature without a bounds failure.
        if (0..tree.len()).any(|t| !tree.is_leaf(t) && tree.feature(t) as usize >= n_features) {
            return Err(ForestError::Internal(
                "a tree splits on a feature beyond the forest's features".into(),
            ));
        }
        let stats = tree.node_stats();
        let n = tree.len();
        let mut cover = vec![[0.0; 2]; n];
        for (t, c) in cover.iter_mut().enumerate() {
            if let Some((l, r)) = tree.children(t) {
                let w = stats.weight[t];
                if w > 0.0 {
                    *c = [stats.weight[l] / w, stats.weight[r] / w];
                }
            }
        }
        let (split_start, split_nodes, used_features) = splits_by_feature(tree, n_features);
        let (max_unique, max_path) = path_lengths(tree, n_features);
        Ok(ShapTree {
            tree,
            cover,
            subtree_end: subtree_ends(tree),
            split_start,
            split_nodes,
            used_features,
            expected: expected_value(tree, &stats),
            rule: Rule::new(points_for(max_unique)),
            max_path,
            leaf_outputs: None,
            width: stats.value(0).len(),
            column: 0,
        })
    }

    /// Prepares `tree` to explain one output other than its values: leaf `ℓ` outputs
    /// `scale · by_slot[slot(ℓ)]`, added to output column `column`. The expected value is
    /// then the cover-weighted mean of those outputs, `Σ_ℓ w(ℓ) out(ℓ) / w(root)`, summed
    /// over the leaves in node order (TreeSHAP is linear in the leaf values).
    pub fn with_leaf_values(
        tree: &'t Tree,
        n_features: usize,
        by_slot: &[f64],
        scale: f64,
        column: usize,
    ) -> Result<ShapTree<'t>> {
        let mut prepared = ShapTree::new(tree, n_features)?;
        let stats = tree.node_stats();
        let mut outputs = vec![0.0; tree.len()];
        let mut weighted = 0.0;
        for (t, out) in outputs
            .iter_mut()
            .enumerate()
            .filter(|(t, _)| tree.is_leaf(*t))
        {
            let v = by_slot.get(tree.leaf_slot(t)).ok_or_else(|| {
                ForestError::Internal("a leaf has no value of its own to explain".into())
            })?;
            *out = scale * v;
            weighted += stats.weight[t] * *out;
        }
        let root = stats.weight.first().copied().unwrap_or(0.0);
        prepared.expected = vec![if root > 0.0 { weighted / root } else { 0.0 }];
        prepared.leaf_outputs = Some(outputs);
        prepared.width = 1;
        prepared.column = column;
        Ok(prepared)
    }

    /// The `width` outputs of leaf `node` that the walk credits.
    #[inline]
    pub fn leaf_output(&self, node: usize) -> &[f64] {
        match &self.leaf_outputs {
            Some(v) => &v[node * self.width..(node + 1) * self.width],
            None => self.tree.value(node),
        }
    }

    /// Whether the subtree of `node` (itself included) has a split on `feature`.
    pub fn subtree_splits_on(&self, node: usize, feature: usize) -> bool {
        let (a, b) = (
            self.split_start[feature] as usize,
            self.split_start[feature + 1] as usize,
        );
        let nodes = &self.split_nodes[a..b];
        // The first split on `feature` at or after `node` in pre-order is in the subtree iff
        // it comes before the subtree's end.
        let first = nodes.partition_point(|&s| (s as usize) < node);
        nodes
            .get(first)
            .is_some_and(|&s| s < self.subtree_end[node])
    }
}

/// TreeSHAP's base value: the root's value, which is the cover-weighted mean of the leaves'
/// for every criterion but the absolute error, whose root holds a median. Its values sum to
/// the prediction minus that mean, so an absolute-error tree's is summed from the leaves.
fn expected_value(tree: &Tree, stats: &crate::tree::NodeStats) -> Vec<f64> {
    let mut mean = stats.value(0).to_vec();
    if tree.grown().is_empty() {
        return mean;
    }
    mean.fill(0.0);
    for t in (0..tree.len()).filter(|&t| tree.is_leaf(t)) {
        for (m, v) in mean.iter_mut().zip(stats.value(t)) {
            *m += stats.weight[t] * v;
        }
    }
    let root = stats.weight.first().copied().unwrap_or(0.0);
    if root > 0.0 {
        mean.iter_mut().for_each(|m| *m /= root);
    }
    mean
}

/// Quadrature points that integrate TreeSHAP's polynomial exactly on a tree whose paths
/// have at most `max_unique` distinct features: the integrand has degree `max_unique − 1`,
/// and `n` points are exact up to degree `2n − 1`.
pub(super) fn points_for(max_unique: usize) -> usize {
    max_unique.div_ceil(2).max(1)
}

/// One past the last node of every node's subtree (pre-order: a right child's subtree
/// ends where its parent's does, a left child's where the right sibling starts).
fn subtree_ends(tree: &Tree) -> Vec<u32> {
    let n = tree.len();
    let mut end = vec![n as u32; n];
    for t in 0..n {
        if let Some((l, r)) = tree.children(t) {
            end[l] = r as u32;
            end[r] = end[t];
        }
    }
    end
}

/// Split nodes grouped by feature (CSR, node ids ascending) and the used features.
fn splits_by_feature(tree: &Tree, n_features: usize) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let splits = || (0..tree.len()).filter(|&t| !tree.is_leaf(t));
    let mut start = vec![0u32; n_features + 1];
    for t in splits() {
        start[tree.feature(t) as usize + 1] += 1;
    }
    for f in 0..n_features {
        start[f + 1] += start[f];
    }
    let mut fill = start.clone();
    let mut nodes = vec![0u32; start[n_features] as usize];
    for t in splits() {
        let f = tree.feature(t) as usize;
        nodes[fill[f] as usize] = t as u32;
        fill[f] += 1;
    }
    let used = (0..n_features as u32)
        .filter(|&f| start[f as usize + 1] > start[f as usize])
        .collect();
    (start, nodes, used)
}

/// `(most distinct features on a root-to-leaf path, most nodes on such a path)`, by an
/// explicit-stack walk that keeps how many times each feature occurs on the current path.
fn path_lengths(tree: &Tree, n_features: usize) -> (usize, usize) {
    let mut on_path = vec![0u32; n_features];
    let (mut distinct, mut best_distinct, mut best_len) = (0usize, 0usize, 1usize);
    // (node, entering): a node is pushed twice, to enter it and to leave it.
    let mut stack = vec![(0usize, true)];
    let mut depth = 0usize;
    while let Some((t, entering)) = stack.pop() {
        let Some((l, r)) = tree.children(t) else {
            best_len = best_len.max(depth + 1);
            best_distinct = best_distinct.max(distinct);
            continue;
        };
        let f = tree.feature(t) as usize;
        if entering {
            on_path[f] += 1;
            distinct += usize::from(on_path[f] == 1);
            depth += 1;
            stack.extend([(t, false), (r, true), (l, true)]);
        } else {
            distinct -= usize::from(on_path[f] == 1);
            on_path[f] -= 1;
            depth -= 1;
        }
    }
    (best_distinct, best_len)
}

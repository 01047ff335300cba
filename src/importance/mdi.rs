//! Mean decrease of impurity split by the depth of the nodes that earn it.
//!
//! A split node `t` earns `p(t) Δi(t) = (w_t i(t) − w_L i(t_L) − w_R i(t_R)) / w_root`
//! (Louppe 2014, Eq. 6.2), credited here to its feature **and** its depth, so that summing
//! over depths gives [`crate::Tree::mdi`] back.
//!
//! Depth is the number of nodes above `t` on its path, except in multiway forests
//! ([`SplitterKind::Multiway`]), where it is the *logical* depth: the links of a multiway
//! split's chain (a right child splitting on its parent's feature, see
//! [`crate::tree::multiway`]) do not add a level, and no-op levels do. A node at logical depth
//! `k` is then conditioned on exactly `k` variables, so for fully grown multiway totally
//! randomized trees the depth-`k` column estimates the degree-`k` term of Thm 1 of Louppe et
//! al. (2013): `Σ_{B ⊆ V^{−m}, |B| = k} I(X_m; Y | B) / (C(p, k) (p − k))`.
//!
//! Layout: a by-depth matrix is `n_features × n_depths`, row-major (`[m * n_depths + d]`),
//! with `n_depths` = 1 + the deepest split node of the forest (at least 1), the same for
//! every tree so per-tree matrices stack.

use crate::forest::Forest;
use crate::params::SplitterKind;
use crate::tree::Tree;

/// Depth of every node of `tree` as MDI by depth counts it: the plain depth (root 0), or,
/// with `multiway`, the logical depth, where a right child splitting on its parent's
/// feature (a chain link) stays at its parent's depth.
pub fn mdi_node_depths(tree: &Tree, multiway: bool) -> Vec<usize> {
    let mut depth = vec![0usize; tree.len()];
    // Pre-order: a parent's depth is final before its children are visited.
    for t in 0..tree.len() {
        let Some((l, r)) = tree.children(t) else {
            continue;
        };
        let link = multiway && !tree.is_leaf(r) && tree.feature(r) == tree.feature(t);
        depth[l] = depth[t] + 1;
        depth[r] = depth[t] + usize::from(!link);
    }
    depth
}

/// Raw MDI of `tree` by depth into `out` (`n_features × n_depths`, row-major, zeroed by the
/// caller): `out[m, d] = Σ_{t splits on X_m, depth(t) = d} p(t) Δi(t)`. Nodes deeper than
/// `n_depths − 1` are credited to the last column (never the case with
/// [`Forest::mdi_depth_count`]).
pub fn tree_mdi_by_depth(tree: &Tree, multiway: bool, n_depths: usize, out: &mut [f64]) {
    let stats = tree.node_stats();
    let (w, imp) = (&stats.weight, &stats.impurity);
    let root = w.first().copied().unwrap_or(0.0);
    if root <= 0.0 || n_depths == 0 {
        return;
    }
    let depth = mdi_node_depths(tree, multiway);
    for t in 0..tree.len() {
        let Some((l, r)) = tree.children(t) else {
            continue;
        };
        let dec = w[t] * imp[t] - w[l] * imp[l] - w[r] * imp[r];
        let cell = tree.feature(t) as usize * n_depths + depth[t].min(n_depths - 1);
        if let Some(o) = out.get_mut(cell) {
            *o += dec / root;
        }
    }
}

impl Forest {
    /// Whether the trees are multiway trees stored as binary chains.
    pub fn is_multiway(&self) -> bool {
        self.params.splitter == SplitterKind::Multiway
    }

    /// Number of depth columns of MDI by depth: 1 + the largest depth (see
    /// [`mdi_node_depths`]) of a split node in any tree; 1 when no tree splits.
    pub fn mdi_depth_count(&self) -> usize {
        let multiway = self.is_multiway();
        let deepest = crate::parallel::map_ordered(self.trees.len(), |i| {
            let tree = &self.trees[i];
            let depth = mdi_node_depths(tree, multiway);
            (0..tree.len())
                .filter(|&t| !tree.is_leaf(t))
                .map(|t| depth[t] + 1)
                .max()
                .unwrap_or(1)
        });
        deepest.into_iter().max().unwrap_or(1)
    }

    /// Raw MDI by depth of every tree, in tree order: each `n_features × n_depths`,
    /// row-major, with `n_depths = self.mdi_depth_count()`. Summed over depths, tree `i`
    /// gives `self.tree_importances()[i]` (up to rounding).
    pub fn tree_mdi_by_depth(&self) -> Vec<Vec<f64>> {
        self.per_tree_by_depth(self.mdi_depth_count())
    }

    fn per_tree_by_depth(&self, d: usize) -> Vec<Vec<f64>> {
        let (multiway, p) = (self.is_multiway(), self.n_features());
        crate::parallel::map_ordered(self.trees.len(), |i| {
            let mut out = vec![0.0; p * d];
            tree_mdi_by_depth(&self.trees[i], multiway, d, &mut out);
            out
        })
    }

    /// Raw MDI by depth, averaged over trees (summed in tree order):
    /// `Imp_d(X_m) = (1/M) Σ_trees Σ_{t splits on X_m, depth(t) = d} p(t) Δi(t)`, as an
    /// `n_features × n_depths` row-major matrix. Summed over depths it is
    /// `self.importances(false)`; for multiway totally randomized trees column `d` estimates
    /// the degree-`d` term of Thm 1 (module docs).
    pub fn mdi_by_depth(&self) -> Vec<f64> {
        let d = self.mdi_depth_count();
        let per_tree = self.per_tree_by_depth(d);
        let mut acc = vec![0.0; self.n_features() * d];
        for m in &per_tree {
            acc.iter_mut().zip(m).for_each(|(a, v)| *a += v);
        }
        let n = per_tree.len().max(1) as f64;
        acc.iter_mut().for_each(|a| *a /= n);
        acc
    }
}

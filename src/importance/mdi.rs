//! Mean decrease of impurity: per tree, for the forest (raw or normalized), and split by
//! the depth of the nodes that earn it.
//!
//! A split node `t` earns `p(t) Δi(t) = (w_t i(t) − w_L i(t_L) − w_R i(t_R)) / w_root`
//! (Louppe 2014, Eq. 6.2), computed once by [`weighted_decreases`]; MDI credits it to its
//! feature, MDI by depth to its feature **and** its depth, so summing over depths gives
//! [`tree_mdi`] back.
//!
//! Depth is the number of nodes above `t` on its path, except in multiway forests
//! ([`SplitterKind::Multiway`]), where it is the *logical* depth: the links of a multiway
//! split's chain (a right child splitting on its parent's feature, see
//! [`crate::tree::multiway`]) do not add a level, and no-op levels do. A node at logical depth
//! `k` is then conditioned on exactly `k` variables, so for fully grown multiway totally
//! randomized trees the depth-`k` column estimates the degree-`k` term of Thm 1 of Louppe et
//! al. (2013): `Σ_{B ⊆ V^{−m}, |B| = k} I(X_m; Y | B) / (C(p, k) (p − k))`.
//!
//! MDI by output ([`tree_mdi_by_output`]) splits a multi-output forest's MDI into the
//! shares of its outputs, which sum to it.
//!
//! Layout: a by-depth matrix is `n_features × n_depths`, row-major (`[m * n_depths + d]`),
//! with `n_depths` = 1 + the deepest split node of the forest (at least 1), the same for
//! every tree so per-tree matrices stack.

use crate::forest::Forest;
use crate::params::{CriterionKind, SplitterKind};
use crate::tree::criterion::impurity_of_frequencies;
use crate::tree::Tree;

/// `(node, feature, p(t) Δi(t))` for every split node of `tree`, in pre-order: the one
/// quantity every MDI sums. Empty when the root has no weight.
pub fn weighted_decreases(tree: &Tree) -> Vec<(usize, usize, f64)> {
    let s = tree.node_stats();
    let (w, i) = (&s.weight, &s.impurity);
    let root = w.first().copied().unwrap_or(0.0);
    if root <= 0.0 {
        return Vec::new();
    }
    (0..tree.len())
        .filter_map(|t| {
            let (l, r) = tree.children(t)?;
            let dec = w[t] * i[t] - w[l] * i[l] - w[r] * i[r];
            Some((t, tree.feature(t) as usize, dec / root))
        })
        .collect()
}

/// Raw MDI of each of the `n_features` features in one tree (Louppe 2014, Eq. 6.2):
/// `Imp(X_m) = Σ_{t splits on X_m} p(t) Δi(t)`, in bits for entropy.
pub fn tree_mdi(tree: &Tree, n_features: usize) -> Vec<f64> {
    let mut imp = vec![0.0; n_features];
    for (_, f, dec) in weighted_decreases(tree) {
        imp[f] += dec;
    }
    imp
}

/// Raw MDI of `tree` by depth into `out` (`n_features × n_depths`, row-major, zeroed by the
/// caller): `out[m, d] = Σ_{t splits on X_m, depth(t) = d} p(t) Δi(t)`. Nodes deeper than
/// `n_depths − 1` are credited to the last column (never the case with
/// [`Forest::mdi_depth_count`]). `multiway` counts logical depths ([`Tree::node_depths`]).
pub fn tree_mdi_by_depth(tree: &Tree, multiway: bool, n_depths: usize, out: &mut [f64]) {
    if n_depths == 0 {
        return;
    }
    let depth = tree.node_depths(multiway);
    for (t, f, dec) in weighted_decreases(tree) {
        if let Some(o) = out.get_mut(f * n_depths + depth[t].min(n_depths - 1)) {
            *o += dec;
        }
    }
}

/// Raw MDI of `tree` split by output, `n_outputs × n_features` row-major (one row for a
/// single-output tree): row `k` sums `p(t) Δi_k(t) / m` over the nodes splitting on each
/// feature, where `i_k` is output `k`'s impurity. A multi-output tree's impurity is the mean
/// `(1/m) Σ_k i_k` ([`crate::tree::criterion`]), so the rows sum to [`tree_mdi`].
/// `Δi_k` needs no stored impurity: class frequencies give `i_k`, and for squared error
/// `w_t i_k(t) − w_L i_k(t_L) − w_R i_k(t_R) = w_L (v_{L,k} − v_{t,k})² + w_R (v_{R,k} −
/// v_{t,k})²` (the law of total variance) needs only the node means.
pub fn tree_mdi_by_output(tree: &Tree, criterion: CriterionKind, n_features: usize) -> Vec<f64> {
    let widths = tree.outputs();
    if widths.is_empty() {
        return tree_mdi(tree, n_features);
    }
    let m = widths.len();
    let mut out = vec![0.0; m * n_features];
    let s = tree.node_stats();
    let w = &s.weight;
    let root = w.first().copied().unwrap_or(0.0);
    if root <= 0.0 {
        return out;
    }
    let starts: Vec<usize> = widths
        .iter()
        .scan(0, |acc, &c| {
            let start = *acc;
            *acc += c;
            Some(start)
        })
        .collect();
    let part = |node: usize, k: usize| &s.value(node)[starts[k]..starts[k] + widths[k]];
    for t in 0..tree.len() {
        let Some((l, r)) = tree.children(t) else {
            continue;
        };
        let f = tree.feature(t) as usize;
        for k in 0..m {
            let dec = match criterion.is_regression() {
                true => {
                    let (vt, vl, vr) = (part(t, k)[0], part(l, k)[0], part(r, k)[0]);
                    w[l] * (vl - vt) * (vl - vt) + w[r] * (vr - vt) * (vr - vt)
                }
                false => {
                    let i = |node| impurity_of_frequencies(criterion, part(node, k));
                    w[t] * i(t) - w[l] * i(l) - w[r] * i(r)
                }
            };
            if let Some(o) = out.get_mut(k * n_features + f) {
                *o += dec / (root * m as f64);
            }
        }
    }
    out
}

impl Forest {
    /// Raw MDI of every tree split by output ([`tree_mdi_by_output`]), in tree order.
    pub fn tree_importances_by_output(&self) -> Vec<Vec<f64>> {
        let kind = self.params.criterion;
        crate::parallel::map_ordered(self.trees.len(), |i| {
            tree_mdi_by_output(&self.trees[i], kind, self.n_features())
        })
    }

    /// Raw MDI of every tree (see [`tree_mdi`]), in tree order.
    pub fn tree_importances(&self) -> Vec<Vec<f64>> {
        crate::parallel::map_ordered(self.trees.len(), |i| {
            tree_mdi(&self.trees[i], self.n_features())
        })
    }

    /// Mean decrease of impurity.
    ///
    /// Raw (`normalize = false`): `Imp(X_m) = (1/M) Σ_trees Σ_{t splits on X_m} p(t) Δi(t)`
    /// (Louppe 2014, Eq. 6.2), in bits for entropy; for fully grown totally randomized trees
    /// it sums to `I(X; Y)`. Normalized: scikit-learn's `feature_importances_`: each tree
    /// with a split normalized to sum 1, averaged, and normalized again.
    pub fn importances(&self, normalize: bool) -> Vec<f64> {
        let per_tree = self.tree_importances();
        let mut acc = vec![0.0; self.n_features()];
        if !normalize {
            for imp in &per_tree {
                acc.iter_mut().zip(imp).for_each(|(a, v)| *a += v);
            }
            let m = per_tree.len() as f64;
            acc.iter_mut().for_each(|a| *a /= m);
            return acc;
        }
        let mut n_split = 0usize;
        for (imp, tree) in per_tree.iter().zip(&self.trees) {
            if tree.len() <= 1 {
                continue; // scikit-learn leaves single-leaf trees out of the average
            }
            n_split += 1;
            let s: f64 = imp.iter().sum();
            if s > 0.0 {
                acc.iter_mut().zip(imp).for_each(|(a, v)| *a += v / s);
            }
        }
        let s: f64 = acc.iter().sum();
        if n_split > 0 && s > 0.0 {
            acc.iter_mut().for_each(|a| *a /= s);
        }
        acc
    }

    /// Whether the trees are multiway trees stored as binary chains.
    pub fn is_multiway(&self) -> bool {
        self.params.splitter == SplitterKind::Multiway
    }

    /// Number of depth columns of MDI by depth: 1 + the largest depth (see
    /// [`Tree::node_depths`]) of a split node in any tree; 1 when no tree splits.
    pub fn mdi_depth_count(&self) -> usize {
        let multiway = self.is_multiway();
        let deepest = crate::parallel::map_ordered(self.trees.len(), |i| {
            let tree = &self.trees[i];
            let depth = tree.node_depths(multiway);
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

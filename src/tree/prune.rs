//! Minimal cost-complexity pruning (Breiman et al. 1984, ch. 3), scikit-learn's
//! `ccp_alpha`, applied to a grown tree.
//!
//! The cost of a node `t` kept as a leaf is `R(t) = (w_t / w_root) i(t)`, that of the
//! subtree below it `R(T_t) = Σ_{leaves l of T_t} R(l)`. Pruning repeatedly collapses the
//! weakest link, the internal node of smallest effective alpha
//! `g(t) = (R(t) − R(T_t)) / (|leaves(T_t)| − 1)` (the first in pre-order on ties), while
//! that alpha is at most `ccp_alpha`, as scikit-learn's `_cost_complexity_prune` does; the
//! candidates wait in a heap, so a collapse costs the depth of the node (times log n)
//! rather than a scan of every node.
//! Node statistics are [`Tree::node_stats`], derived from the leaves, so a collapsed node
//! becomes a leaf with exactly the weight, count, value and impurity its subtree implies.
//!
//! Invariant: the pruned tree is a [`Tree`] like any grown one (pre-order, leaf slots in
//! node order), so prediction, importances and the model format need nothing new.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::{SplitNode, Tree, LEAF};

/// A pruning candidate: its effective alpha `g` and its node id, ordered by `g`, then id.
struct Link(f64, usize);

impl PartialEq for Link {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Link {}
impl PartialOrd for Link {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Link {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

impl Tree {
    /// The tree pruned with complexity parameter `alpha > 0`, or None when no subtree is
    /// weak enough to go (the tree is then kept as it is, bit for bit).
    pub(crate) fn pruned(&self, alpha: f64) -> Option<Tree> {
        let n = self.len();
        let s = self.node_stats();
        let root = s.weight[0];
        if root.is_nan() || root <= 0.0 {
            return None;
        }
        let r_node: Vec<f64> = (0..n).map(|t| s.weight[t] / root * s.impurity[t]).collect();
        let mut parent = vec![usize::MAX; n];
        for t in 0..n {
            if let Some((l, r)) = self.children(t) {
                parent[l] = t;
                parent[r] = t;
            }
        }
        // Cost and leaf count of each subtree, bottom-up (children follow their parent).
        let mut r_branch = r_node.clone();
        let mut n_leaves = vec![1usize; n];
        for t in (0..n).rev() {
            if let Some((l, r)) = self.children(t) {
                r_branch[t] = r_branch[l] + r_branch[r];
                n_leaves[t] = n_leaves[l] + n_leaves[r];
            }
        }
        // Internal nodes still in the tree; a collapsed node leaves with its subtree.
        let mut candidate: Vec<bool> = (0..n).map(|t| !self.is_leaf(t)).collect();
        let mut collapsed = vec![false; n];
        let mut any = false;
        // The candidates by (g, node): the smallest g, the first node on ties, as the scan
        // of every candidate in scikit-learn. A collapse changes the g of the ancestors
        // only; they are pushed again, and entries of an older g are skipped.
        let g_of = |t: usize, r_branch: &[f64], n_leaves: &[usize]| {
            // `+ 0.0`: −0 would order below +0, which `<` calls equal.
            (r_node[t] - r_branch[t]) / (n_leaves[t] - 1) as f64 + 0.0
        };
        let mut g: Vec<f64> = vec![f64::NAN; n];
        let mut heap = BinaryHeap::new();
        for t in (0..n).filter(|&t| candidate[t]) {
            g[t] = g_of(t, &r_branch, &n_leaves);
            heap.push(Reverse(Link(g[t], t)));
        }
        while let Some(Reverse(Link(weakest_alpha, t))) = heap.pop() {
            if !candidate[t] || weakest_alpha.to_bits() != g[t].to_bits() {
                continue;
            }
            if alpha < weakest_alpha {
                break;
            }
            any = true;
            collapsed[t] = true;
            let mut stack = vec![t];
            while let Some(u) = stack.pop() {
                candidate[u] = false;
                if let Some((l, r)) = self.children(u) {
                    stack.extend([l, r]);
                }
            }
            let gone = n_leaves[t] - 1;
            let diff = r_node[t] - r_branch[t];
            n_leaves[t] = 1;
            r_branch[t] = r_node[t];
            let mut u = parent[t];
            while u != usize::MAX {
                n_leaves[u] -= gone;
                r_branch[u] += diff;
                g[u] = g_of(u, &r_branch, &n_leaves);
                heap.push(Reverse(Link(g[u], u)));
                u = parent[u];
            }
        }
        any.then(|| self.keep_above(&collapsed, &s))
    }

    /// The tree in which every node marked `collapsed` is a leaf (its subtree dropped),
    /// with the statistics `s` of this tree.
    fn keep_above(&self, collapsed: &[bool], s: &super::NodeStats) -> Tree {
        let w = self.width;
        let regression = self.criterion.is_regression();
        let mut t = Tree {
            nodes: Vec::new(),
            leaf_value: Vec::new(),
            leaf_weight: Vec::new(),
            leaf_count: Vec::new(),
            leaf_impurity: Vec::new(),
            width: w,
            criterion: self.criterion,
            missing_left: Vec::new(),
            outputs: self.outputs.clone(),
            grown: Vec::new(),
            // Kept splits keep their thresholds, so their references to the sets.
            categories: self.categories.clone(),
        };
        // The old id of every kept split node, for its missing-value side.
        let mut old_of = Vec::new();
        // Pre-order walk of the kept nodes: (old id, parent's new id awaiting its right).
        let mut stack = vec![(0usize, None::<usize>)];
        while let Some((old, right_of)) = stack.pop() {
            let new = t.nodes.len();
            if !self.grown.is_empty() {
                t.grown.push(s.impurity[old]);
                t.grown.extend_from_slice(s.value(old));
            }
            if let Some(p) = right_of {
                t.nodes[p].right = new as u32;
            }
            match self.children(old) {
                Some((l, r)) if !collapsed[old] => {
                    old_of.resize(new + 1, None);
                    old_of[new] = Some(old);
                    t.nodes.push(self.nodes[old]);
                    stack.push((r, Some(new)));
                    stack.push((l, None));
                }
                _ => {
                    t.nodes.push(SplitNode {
                        threshold: 0.0,
                        feature: t.leaf_weight.len() as u32,
                        right: LEAF,
                    });
                    t.leaf_value.extend_from_slice(s.value(old));
                    t.leaf_weight.push(s.weight[old]);
                    t.leaf_count.push(s.n_samples[old]);
                    if regression {
                        t.leaf_impurity.push(s.impurity[old]);
                    }
                }
            }
        }
        // A kept split keeps its subtrees' sample counts, so its side, learned or derived,
        // is the same.
        t.route_missing(
            |new| {
                old_of
                    .get(new)
                    .copied()
                    .flatten()
                    .map(|old| self.missing_left(old))
            },
            false,
        );
        t
    }
}

#[cfg(test)]
mod tests {
    use crate::params::CriterionKind;
    use crate::tree::growing::GrowingTree;
    use crate::tree::missing::Missing;

    /// A regression stump of stump: root splits, its left child splits again.
    fn tree() -> crate::tree::Tree {
        tree_with_root_side(Missing::Right)
    }

    /// [`tree`] whose root learned (or not) where missing values go.
    fn tree_with_root_side(root_side: Missing) -> crate::tree::Tree {
        let mut g = GrowingTree::with_capacity(1, 5, CriterionKind::SquaredError);
        // Leaves: (impurity, weight, count, mean).
        let root = g.push_leaf(0.0, 0.0, 0, &[0.0]);
        g.set_split(root, 0, 0.5, root_side);
        let l = g.push_leaf(0.0, 0.0, 0, &[0.0]);
        g.link(root, true, l);
        g.set_split(l, 1, 0.5, Missing::Right);
        let ll = g.push_leaf(1.0, 2.0, 2, &[0.0]);
        g.link(l, true, ll);
        let lr = g.push_leaf(1.0, 2.0, 2, &[1.0]);
        g.link(l, false, lr);
        let r = g.push_leaf(0.0, 4.0, 4, &[10.0]);
        g.link(root, false, r);
        g.finish()
    }

    /// Hand computed: the left split lowers the cost from R(l) = (4/8)·1.25 to
    /// (2/8)·1 + (2/8)·1, so g(l) = 0.125; the root's g is far larger.
    #[test]
    fn the_weakest_link_goes_first_and_only_below_alpha() {
        let t = tree();
        assert!(t.pruned(0.124).is_none());
        let p = t
            .pruned(0.125)
            .expect("g(l) = 0.125 is pruned at alpha = 0.125");
        assert_eq!(p.len(), 3);
        let s = p.node_stats();
        assert_eq!(s.weight, vec![8.0, 4.0, 4.0]);
        assert_eq!(p.value(1), &[0.5]);
        assert!((s.impurity[1] - 1.25).abs() < 1e-15);
        let all = t.pruned(1e9).expect("everything goes");
        assert_eq!(all.len(), 1);
        assert_eq!(all.value(0), &[(0.0 * 2.0 + 1.0 * 2.0 + 10.0 * 4.0) / 8.0]);
    }

    /// A kept split keeps its missing-value side: learned (left, against the derived right
    /// of a 4-4 tie) or derived.
    #[test]
    fn a_kept_split_keeps_its_missing_side() {
        for (side, left) in [(Missing::Left, true), (Missing::Right, false)] {
            let t = tree_with_root_side(side);
            assert_eq!(t.missing_left(0), left);
            let p = t.pruned(0.125).expect("the left split goes");
            assert_eq!((p.len(), p.missing_left(0)), (3, left));
        }
    }
}

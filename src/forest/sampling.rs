//! What each tree sees: its rows (bootstrap or subsample) and its features (Random
//! Subspace / Patches). Both are regenerated from `(seed, tree index)` whenever needed
//! (OOB estimates, importances), never stored in the model. `tree` is a tree's position in
//! its forest; the index drawn for is `first_tree + tree` (`Resolved::first_tree`), so a
//! part of a forest draws what the whole forest draws for the same trees.

use crate::params::Resolved;
use crate::rng::stream::{FEATURES, ROWS, SPLITS};
use crate::rng::{tree_seed, TreeRng};

/// How many times each row is drawn for tree `tree` (0 = out of bag).
///
/// Bootstrap: `n_draws` rows uniformly with replacement. Otherwise `n_draws` distinct rows
/// (all of them when `n_draws == n_samples`, with no randomness used).
pub fn in_bag_counts(p: &Resolved, tree: usize) -> Vec<u32> {
    let n = p.n_samples;
    if !p.bootstrap && p.n_draws == n {
        return vec![1; n];
    }
    let mut rng = TreeRng::new(tree_seed(p.seed, index(p, tree), ROWS));
    let mut counts = vec![0u32; n];
    if p.bootstrap {
        for _ in 0..p.n_draws {
            counts[rng.below(n)] += 1;
        }
    } else {
        let mut rows: Vec<u32> = (0..n as u32).collect();
        rng.partial_shuffle(&mut rows, p.n_draws);
        for &r in &rows[..p.n_draws] {
            counts[r as usize] = 1;
        }
    }
    counts
}

/// Features tree `tree` may split on, in increasing order.
pub fn tree_features(p: &Resolved, tree: usize) -> Vec<u32> {
    let mut all: Vec<u32> = (0..p.n_features as u32).collect();
    if p.tree_features < p.n_features {
        let mut rng = TreeRng::new(tree_seed(p.seed, index(p, tree), FEATURES));
        rng.partial_shuffle(&mut all, p.tree_features);
        all.truncate(p.tree_features);
        all.sort_unstable();
    }
    all
}

/// Generator for the node-level randomness of tree `tree`.
pub fn split_rng(p: &Resolved, tree: usize) -> TreeRng {
    TreeRng::new(tree_seed(p.seed, index(p, tree), SPLITS))
}

/// The index in the seed's sequence of the tree at position `tree`.
fn index(p: &Resolved, tree: usize) -> u64 {
    (p.first_tree + tree) as u64
}

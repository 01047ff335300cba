//! One tree's part of the model format (`crate::persist`): the node arrays as written, and
//! their validation on the way back, so that no bytes can build a tree a walk would fail on.
//! It lives here because the node arrays are private to `tree/`.

use serde::{Deserialize, Serialize};

use super::{categories, SplitNode, Tree, LEAF};
use crate::error::{ForestError, Result};
use crate::params::CriterionKind;

/// One tree in pre-order: the left child is implicit, the right child is stored as a
/// forward offset (0 for a leaf) so it is a small varint; split fields only for internal
/// nodes, leaf fields only for leaves.
#[derive(Serialize, Deserialize)]
pub(crate) struct TreeRepr {
    pub(crate) right: Vec<u32>,
    pub(crate) feature: Vec<u32>,
    pub(crate) threshold: Vec<f64>,
    pub(crate) leaf_weight: Vec<f64>,
    pub(crate) leaf_count: Vec<u32>,
    pub(crate) leaf_value: Vec<f64>,
    /// Regression: the leaves' impurities (version 1: every node's); empty for
    /// classification (derived from the values).
    pub(crate) impurity: Vec<f64>,
}

fn decode_error(msg: &str) -> ForestError {
    ForestError::Decode(msg.into())
}

impl TreeRepr {
    /// The leaf arrays of a [`Tree`] are already in pre-order, as written here.
    pub(crate) fn from_tree(t: &Tree) -> Self {
        let mut r = TreeRepr {
            right: Vec::with_capacity(t.len()),
            feature: Vec::new(),
            threshold: Vec::new(),
            leaf_weight: t.leaf_weight.clone(),
            leaf_count: t.leaf_count.clone(),
            leaf_value: t.leaf_value.clone(),
            impurity: t.leaf_impurity.clone(),
        };
        for (i, nd) in t.nodes.iter().enumerate() {
            if nd.right == LEAF {
                r.right.push(0);
            } else {
                r.right.push(nd.right - i as u32);
                r.feature.push(nd.feature);
                r.threshold.push(nd.threshold);
            }
        }
        r
    }

    pub(crate) fn into_tree(
        self,
        criterion: CriterionKind,
        width: usize,
        n_features: usize,
        version: u16,
        outputs: &[usize],
        pool: Vec<u64>,
    ) -> Result<Tree> {
        let sets = categories::check_pool(&pool).map_err(decode_error)?;
        let n = self.right.len();
        let n_internal = self.right.iter().filter(|&&d| d != 0).count();
        let n_leaves = n - n_internal;
        if n == 0
            || self.feature.len() != n_internal
            || self.threshold.len() != n_internal
            || self.leaf_weight.len() != n_leaves
            || self.leaf_count.len() != n_leaves
            || Some(self.leaf_value.len()) != n_leaves.checked_mul(width)
            || n_internal + 1 != n_leaves
        {
            return Err(decode_error("node arrays of inconsistent lengths"));
        }
        let regression = criterion.is_regression();
        let stored = match (regression, version) {
            (false, _) => 0,
            (true, 1) => n,
            (true, _) => n_leaves,
        };
        if self.impurity.len() != stored {
            return Err(decode_error("impurity array of the wrong length"));
        }
        if self.impurity.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(decode_error("impurity not a finite non-negative number"));
        }
        check_preorder(&self.right)?;
        // A classification leaf holds class counts (of each output): non-negative, with a
        // positive total per output, or its probabilities would not be probabilities.
        let single = [width];
        let counts_per_output: &[usize] = if outputs.is_empty() { &single } else { outputs };
        let counts_ok = |v: &[f64]| {
            let mut rest = v;
            counts_per_output.iter().all(|&c| {
                let (counts, tail) = rest.split_at(c.min(rest.len()));
                rest = tail;
                counts.iter().all(|&x| x >= 0.0) && counts.iter().sum::<f64>() > 0.0
            })
        };
        let leaf_ok = |k: usize| {
            let v = &self.leaf_value[k * width..(k + 1) * width];
            let w = self.leaf_weight[k];
            w.is_finite()
                && w >= 0.0
                && v.iter().all(|x| x.is_finite())
                && (regression || counts_ok(v))
        };
        if !(0..n_leaves).all(leaf_ok) {
            return Err(decode_error(
                "leaf statistics not finite, or not class counts",
            ));
        }
        // The sums a fit checks on its learning set (`crate::data::check_sums`) are checked
        // on the leaves: node statistics and importances are derived from them, and a file
        // must not be able to make those overflow into NaN or infinity.
        let (mut total, mut abs, mut squares, mut spread) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for k in 0..n_leaves {
            let w = self.leaf_weight[k];
            total += w;
            spread += w * self.impurity.get(k).copied().unwrap_or(0.0);
            for v in &self.leaf_value[k * width..(k + 1) * width] {
                // Class counts are summed up the tree; real values are weighted (and
                // squared) by the variance proxies.
                match regression {
                    true => {
                        abs += w * v.abs();
                        squares += w * v * v;
                    }
                    false => abs += v,
                }
            }
        }
        let sums_ok = (total * total).is_finite()
            && (abs * abs).is_finite()
            && squares.is_finite()
            && (version == 1 || spread.is_finite());
        if !sums_ok {
            return Err(decode_error(
                "leaf weights, values or impurities summing past float64",
            ));
        }
        let (mut k_int, mut k_leaf) = (0, 0);
        let mut nodes = Vec::with_capacity(n);
        let mut leaf_impurity = Vec::with_capacity(if regression { n_leaves } else { 0 });
        for (i, &dr) in self.right.iter().enumerate() {
            if dr == 0 {
                if regression {
                    // Version 1 stored every node's impurity; internal ones are derived.
                    leaf_impurity.push(self.impurity[if version == 1 { i } else { k_leaf }]);
                }
                nodes.push(SplitNode {
                    threshold: 0.0,
                    feature: k_leaf as u32,
                    right: LEAF,
                });
                k_leaf += 1;
                continue;
            }
            let (f, thr) = (self.feature[k_int], self.threshold[k_int]);
            // A NaN threshold is allowed only as a reference to a category set.
            let set = categories::offset_of(thr).map(|o| sets.binary_search(&o).is_ok());
            if f as usize >= n_features || (thr.is_nan() && set != Some(true)) {
                return Err(decode_error(
                    "split on an unknown feature, a NaN threshold or an unknown category set",
                ));
            }
            nodes.push(SplitNode {
                threshold: thr,
                feature: f,
                right: i as u32 + dr,
            });
            k_int += 1;
        }
        Ok(Tree {
            nodes,
            leaf_value: self.leaf_value,
            leaf_weight: self.leaf_weight,
            leaf_count: self.leaf_count,
            leaf_impurity,
            width,
            criterion,
            missing_left: Vec::new(),
            outputs: outputs.to_vec(),
            grown: Vec::new(),
            categories: pool,
        })
    }
}

impl Tree {
    /// The sets of the tree's categorical splits, as written ([`super::categories`]).
    pub(crate) fn category_pool(&self) -> &[u64] {
        &self.categories
    }

    /// Sets [`Tree::grown`] read from a model: `1 + width` finite numbers a node, the
    /// impurity non-negative.
    pub(crate) fn set_grown(&mut self, grown: Vec<f64>) -> Result<()> {
        let stride = 1 + self.width;
        // Importances weigh a node's impurity by its weight (at most the tree's): the sum
        // over the nodes must stay finite, as the leaves' does (`TreeRepr::into_tree`).
        let total: f64 = self.leaf_weight.iter().sum();
        let weighted: f64 = grown.iter().map(|x| x.abs() * total).sum();
        let ok = Some(grown.len()) == self.len().checked_mul(stride)
            && grown.iter().all(|x| x.is_finite())
            && grown.chunks(stride).all(|g| g[0] >= 0.0)
            && weighted.is_finite();
        if !ok {
            return Err(decode_error(
                "node statistics of the wrong length, not finite, or summing past float64",
            ));
        }
        self.grown = grown;
        Ok(())
    }
}

/// Checks that right-child offsets describe one binary tree in pre-order: walking it from
/// the root must meet the ids 0, 1, 2, … in order and end exactly at the last node.
fn check_preorder(right: &[u32]) -> Result<()> {
    let n = right.len();
    let mut next = 0usize;
    let mut stack = vec![0usize];
    while let Some(t) = stack.pop() {
        if t != next || t >= n {
            return Err(decode_error("child ids do not form a tree in pre-order"));
        }
        next += 1;
        if right[t] != 0 {
            let r = t
                .checked_add(right[t] as usize)
                .filter(|&r| r > t + 1 && r < n);
            let Some(r) = r else {
                return Err(decode_error("right child out of range"));
            };
            stack.push(r);
            stack.push(t + 1);
        }
    }
    if next == n {
        Ok(())
    } else {
        Err(decode_error("nodes unreachable from the root"))
    }
}

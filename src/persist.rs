//! The versioned binary model format.
//!
//! ```text
//! offset  size  field
//! 0       4     magic b"FIMP"
//! 4       2     format version (little-endian u16)
//! 6       2     flags (0)
//! 8       8     payload length (little-endian u64)
//! 16      4     CRC-32 of the payload (little-endian u32)
//! 20      …     payload: postcard encoding of `ForestRepr`
//! ```
//! Only primary data is written (split structure, thresholds, leaf statistics), which is
//! also all a [`Tree`] keeps in memory, so a loaded model equals the saved one. Loading
//! validates everything a later traversal relies on (child ids, feature ids, array lengths,
//! parameters), so no input can make it panic.

use serde::{Deserialize, Serialize};

use crate::error::{ForestError, Result};
use crate::forest::Forest;
use crate::params::{CriterionKind, Resolved};
use crate::tree::{SplitNode, Tree, LEAF};

/// First bytes of every model.
pub const MAGIC: &[u8; 4] = b"FIMP";
/// Version written by this build; it reads this version and older ones.
///
/// * 1: regression trees store the impurity of every node;
/// * 2: regression trees store leaf impurities only (internal ones are derived from them).
pub const FORMAT_VERSION: u16 = 2;
const HEADER: usize = 20;

#[derive(Serialize, Deserialize)]
struct ForestRepr {
    crate_version: String,
    params: Resolved,
    n_classes: u32,
    trees: Vec<TreeRepr>,
}

/// One tree in pre-order: the left child is implicit, the right child is stored as a
/// forward offset (0 for a leaf) so it is a small varint; split fields only for internal
/// nodes, leaf fields only for leaves.
#[derive(Serialize, Deserialize)]
struct TreeRepr {
    right: Vec<u32>,
    feature: Vec<u32>,
    threshold: Vec<f64>,
    leaf_weight: Vec<f64>,
    leaf_count: Vec<u32>,
    leaf_value: Vec<f64>,
    /// Regression: the leaves' impurities (version 1: every node's); empty for
    /// classification (derived from the values).
    impurity: Vec<f64>,
}

fn decode_err(msg: impl Into<String>) -> ForestError {
    ForestError::Decode(msg.into())
}

impl TreeRepr {
    /// The leaf arrays of a [`Tree`] are already in pre-order, as written here.
    fn from_tree(t: &Tree) -> Self {
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

    fn into_tree(
        self,
        criterion: CriterionKind,
        width: usize,
        n_features: usize,
        version: u16,
    ) -> Result<Tree> {
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
            return Err(decode_err("node arrays of inconsistent lengths"));
        }
        let regression = criterion == CriterionKind::SquaredError;
        let stored = match (regression, version) {
            (false, _) => 0,
            (true, 1) => n,
            (true, _) => n_leaves,
        };
        if self.impurity.len() != stored {
            return Err(decode_err("impurity array of the wrong length"));
        }
        if self.impurity.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(decode_err("impurity not a finite non-negative number"));
        }
        check_preorder(&self.right)?;
        let leaf_ok = |k: usize| {
            let v = &self.leaf_value[k * width..(k + 1) * width];
            let w = self.leaf_weight[k];
            w.is_finite() && w >= 0.0 && v.iter().all(|x| x.is_finite())
        };
        if !(0..n_leaves).all(leaf_ok) {
            return Err(decode_err("non-finite leaf statistics"));
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
            if f as usize >= n_features || thr.is_nan() {
                return Err(decode_err("split on an unknown feature or a NaN threshold"));
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
        })
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
            return Err(decode_err("child ids do not form a tree in pre-order"));
        }
        next += 1;
        if right[t] != 0 {
            let r = t
                .checked_add(right[t] as usize)
                .filter(|&r| r > t + 1 && r < n);
            let Some(r) = r else {
                return Err(decode_err("right child out of range"));
            };
            stack.push(r);
            stack.push(t + 1);
        }
    }
    if next == n {
        Ok(())
    } else {
        Err(decode_err("nodes unreachable from the root"))
    }
}

fn check_params(p: &Resolved, n_classes: usize, n_trees: usize) -> Result<()> {
    let classification = p.criterion != CriterionKind::SquaredError;
    let ok = p.n_estimators == n_trees
        && n_trees > 0
        && p.n_features > 0
        && p.n_samples > 0
        && p.n_samples < u32::MAX as usize
        && p.tree_features >= 1
        && p.tree_features <= p.n_features
        && p.max_features >= 1
        && p.max_features <= p.tree_features
        && p.n_draws >= 1
        && (p.bootstrap || p.n_draws <= p.n_samples)
        && classification == (n_classes > 0);
    if ok {
        Ok(())
    } else {
        Err(decode_err("inconsistent model parameters"))
    }
}

/// The header of the format (magic, `version`, flags, length, CRC-32), then `payload`.
fn envelope(version: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

impl Forest {
    /// Serializes the model into the versioned format described in [`crate::persist`].
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let repr = ForestRepr {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            params: self.params.clone(),
            n_classes: self.n_classes as u32,
            trees: self.trees.iter().map(TreeRepr::from_tree).collect(),
        };
        let payload =
            postcard::to_allocvec(&repr).map_err(|e| ForestError::Encode(e.to_string()))?;
        Ok(envelope(FORMAT_VERSION, &payload))
    }

    /// Reads a model written by [`Forest::to_bytes`]; any damage gives an error, never a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Forest> {
        if bytes.len() < HEADER || &bytes[..4] != MAGIC {
            return Err(decode_err(
                "not a forestimp model (bad magic or shorter than the header)",
            ));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version > FORMAT_VERSION {
            return Err(ForestError::Version {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if version == 0 {
            return Err(decode_err("format version 0 does not exist"));
        }
        if bytes[6..8] != [0, 0] {
            return Err(decode_err("unknown flags in the header"));
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&bytes[8..16]);
        let len = u64::from_le_bytes(len);
        let payload = &bytes[HEADER..];
        if payload.len() as u64 != len {
            return Err(decode_err(format!(
                "payload is {} bytes, header says {len} (truncated?)",
                payload.len()
            )));
        }
        let crc = u32::from_le_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
        if crc32fast::hash(payload) != crc {
            return Err(decode_err("checksum mismatch (corrupted bytes)"));
        }
        let repr: ForestRepr =
            postcard::from_bytes(payload).map_err(|e| decode_err(e.to_string()))?;
        let n_classes = repr.n_classes as usize;
        check_params(&repr.params, n_classes, repr.trees.len())?;
        let width = n_classes.max(1);
        let (criterion, p) = (repr.params.criterion, repr.params.n_features);
        let trees = repr
            .trees
            .into_iter()
            .map(|t| t.into_tree(criterion, width, p, version))
            .collect::<Result<Vec<_>>>()?;
        Ok(Forest {
            params: repr.params,
            n_classes,
            trees,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Forest, ForestParams, Layout, Matrix, Targets};

    /// A model file of format `version` around `repr`.
    fn file(version: u16, repr: &ForestRepr) -> Vec<u8> {
        envelope(version, &postcard::to_allocvec(repr).unwrap())
    }

    /// Leaf counts are summed into internal nodes on demand: huge ones from a crafted file
    /// must not overflow (a panic in debug builds).
    #[test]
    fn huge_leaf_counts_do_not_overflow() {
        let x: Vec<f64> = (0..200).map(|i| ((i * 37) % 101) as f64).collect();
        let y: Vec<u32> = (0..100)
            .map(|i| u32::from(x[2 * i] > x[2 * i + 1]))
            .collect();
        let m = Matrix::new(&x, 100, 2, Layout::RowMajor).unwrap();
        let mut p = ForestParams::random_forest(CriterionKind::Gini);
        p.n_estimators = 2;
        let f = Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap();
        let mut repr = ForestRepr {
            crate_version: "0.1.0".into(),
            params: f.params.clone(),
            n_classes: 2,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
        };
        for r in &mut repr.trees {
            r.leaf_count.iter_mut().for_each(|c| *c = u32::MAX);
        }
        let g = Forest::from_bytes(&file(FORMAT_VERSION, &repr)).unwrap();
        for t in g.trees() {
            assert!(t.len() > 1);
            assert_eq!(t.node_stats().n_samples[0], u32::MAX);
        }
        assert_eq!(g.importances(false), f.importances(false));
    }

    /// A regression model written in format 1 (every node's impurity) still loads: same
    /// structure, values and leaf impurities; internal impurities are derived.
    #[test]
    fn version_1_regression_models_still_load() {
        let x: Vec<f64> = (0..400).map(|i| ((i * 37) % 101) as f64).collect();
        let y: Vec<f64> = (0..200).map(|i| (x[2 * i] - x[2 * i + 1]).sin()).collect();
        let m = Matrix::new(&x, 200, 2, Layout::RowMajor).unwrap();
        let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
        p.n_estimators = 3;
        let f = Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap();
        let mut repr = ForestRepr {
            crate_version: "0.1.0".into(),
            params: f.params.clone(),
            n_classes: 0,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
        };
        for (r, t) in repr.trees.iter_mut().zip(&f.trees) {
            assert_eq!(r.impurity.len(), t.len().div_ceil(2)); // leaves only
            r.impurity = t.node_stats().impurity;
        }
        let g = Forest::from_bytes(&file(1, &repr)).unwrap();
        assert_eq!(g, f);
        // Written by this version, the same tree as read through version 2.
        assert!(Forest::from_bytes(&f.to_bytes().unwrap()).unwrap() == f);
    }
}

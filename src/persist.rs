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
//! also all a [`crate::Tree`] keeps in memory, so a loaded model equals the saved one. Loading
//! validates everything a later traversal relies on (child ids, feature ids, array lengths,
//! parameters), so no input can make it panic.

use serde::{Deserialize, Serialize};

use crate::error::{ForestError, Result};
use crate::forest::Forest;
use crate::params::Resolved;
use crate::tree::TreeRepr;

/// First bytes of every model.
pub const MAGIC: &[u8; 4] = b"FIMP";
/// Version written by this build; it reads this version and older ones.
///
/// * 1: regression trees store the impurity of every node;
/// * 2: regression trees store leaf impurities only (internal ones are derived from them);
/// * 3: the index of the first tree (`Resolved::first_tree`, for a part of a forest) and
///   whether the forest was assembled from patches (`Resolved::assembled`).
///
/// The criterion is written as its [`crate::CriterionKind`] index (0 Gini, 1 entropy,
/// 2 squared error, 3 Poisson); a reader older than Poisson refuses a Poisson model with a
/// decode error. `ccp_alpha` is not written (the stored trees are pruned already).
pub const FORMAT_VERSION: u16 = 3;
const HEADER: usize = 20;

#[derive(Serialize, Deserialize)]
struct ForestRepr {
    crate_version: String,
    params: Resolved,
    n_classes: u32,
    trees: Vec<TreeRepr>,
    /// `Resolved::first_tree` (0 but for a part of a forest); absent before format 3.
    first_tree: u64,
    /// `Resolved::assembled`; absent before format 3.
    assembled: bool,
}

/// [`ForestRepr`] of formats 1 and 2, which had no `first_tree`.
#[derive(Serialize, Deserialize)]
struct ForestReprV2 {
    crate_version: String,
    params: Resolved,
    n_classes: u32,
    trees: Vec<TreeRepr>,
}

fn decode_err(msg: impl Into<String>) -> ForestError {
    ForestError::Decode(msg.into())
}

/// The bounds `ForestParams::resolve` enforces at fit, checked again on untrusted bytes:
/// later work is sized from these numbers (an out-of-bag pass draws `n_draws` rows per tree,
/// feature ids are `u32`), so a file must not be able to claim more than a fit could make.
fn check_params(p: &Resolved, n_classes: usize, n_trees: usize) -> Result<()> {
    let classification = !p.criterion.is_regression();
    let ok = p.n_estimators == n_trees
        && n_trees > 0
        && p.n_features > 0
        && p.n_features <= u32::MAX as usize
        && p.n_samples > 0
        && p.n_samples < u32::MAX as usize
        && p.n_draws < u32::MAX as usize
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
            first_tree: self.params.first_tree as u64,
            assembled: self.params.assembled,
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
        let repr: ForestRepr = if version >= 3 {
            postcard::from_bytes(payload).map_err(|e| decode_err(e.to_string()))?
        } else {
            let old: ForestReprV2 =
                postcard::from_bytes(payload).map_err(|e| decode_err(e.to_string()))?;
            ForestRepr {
                crate_version: old.crate_version,
                params: old.params,
                n_classes: old.n_classes,
                trees: old.trees,
                first_tree: 0,
                assembled: false,
            }
        };
        let n_classes = repr.n_classes as usize;
        check_params(&repr.params, n_classes, repr.trees.len())?;
        // Tree indices are hashed as u64 with the seed; a part of a forest is a fit's.
        if repr.first_tree >= u64::from(u32::MAX) {
            return Err(decode_err("inconsistent model parameters"));
        }
        let width = n_classes.max(1);
        let (criterion, p) = (repr.params.criterion, repr.params.n_features);
        let trees = repr
            .trees
            .into_iter()
            .map(|t| t.into_tree(criterion, width, p, version))
            .collect::<Result<Vec<_>>>()?;
        let mut params = repr.params;
        params.first_tree = repr.first_tree as usize;
        params.assembled = repr.assembled;
        Ok(Forest {
            params,
            n_classes,
            trees,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::CriterionKind;
    use crate::{Forest, ForestParams, Layout, Matrix, Targets};

    /// A model file of format `version` around `repr`.
    fn file(version: u16, repr: &impl Serialize) -> Vec<u8> {
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
            first_tree: 0,
            assembled: false,
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

    /// A bootstrap classification forest of one tree on one feature.
    fn tiny_forest() -> Forest {
        let x: Vec<f64> = (0..40).map(f64::from).collect();
        let y: Vec<u32> = (0..40).map(|i| u32::from(i >= 20)).collect();
        let m = Matrix::new(&x, 40, 1, Layout::RowMajor).unwrap();
        let mut p = ForestParams::random_forest(CriterionKind::Gini);
        p.n_estimators = 1;
        Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap()
    }

    /// The payload of [`tiny_forest`] up to its tree list, then `tail`.
    fn payload_with_trees(tail: &[u8]) -> Vec<u8> {
        let f = tiny_forest();
        // postcard writes a struct as its fields in order: the same bytes as this tuple.
        let mut out = postcard::to_allocvec(&("0.1.0", &f.params, 2u32)).unwrap();
        out.extend_from_slice(tail);
        out
    }

    /// Length prefixes are untrusted: a prefix claiming 2^60 trees or 2^60 nodes must fail
    /// on the missing bytes, not reserve memory for the claim (serde caps every
    /// pre-allocation at 1 MiB, and the payload length is checked against the header).
    #[test]
    fn absurd_length_prefixes_fail_without_reserving_them() {
        let huge = postcard::to_allocvec(&(1u64 << 60)).unwrap();
        let one = postcard::to_allocvec(&1u64).unwrap();
        let trees = payload_with_trees(&huge);
        let nodes = payload_with_trees(&[one.as_slice(), &huge].concat());
        for payload in [trees, nodes] {
            let err = Forest::from_bytes(&envelope(FORMAT_VERSION, &payload)).unwrap_err();
            assert!(matches!(err, ForestError::Decode(_)), "{err}");
        }
        // The header's own length field cannot ask for more than the bytes present.
        let mut lying = envelope(FORMAT_VERSION, b"");
        lying[8..16].copy_from_slice(&(1u64 << 60).to_le_bytes());
        assert!(Forest::from_bytes(&lying).is_err());
    }

    /// Parameters a fit refuses are refused on load too: a bootstrap model claiming 2^60
    /// draws per tree would make every out-of-bag pass loop 2^60 times.
    #[test]
    fn parameters_beyond_fit_bounds_are_refused() {
        let f = tiny_forest();
        let repr = |edit: &dyn Fn(&mut Resolved)| {
            let mut params = f.params.clone();
            edit(&mut params);
            ForestRepr {
                crate_version: "0.1.0".into(),
                params,
                n_classes: 2,
                trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
                first_tree: 0,
                assembled: false,
            }
        };
        assert!(Forest::from_bytes(&file(FORMAT_VERSION, &repr(&|_| ()))).is_ok());
        let edits: [&dyn Fn(&mut Resolved); 3] = [
            &|p| p.n_draws = 1 << 60,
            &|p| p.n_features = 1 << 40,
            &|p| p.n_samples = u32::MAX as usize,
        ];
        for edit in edits {
            let err = Forest::from_bytes(&file(FORMAT_VERSION, &repr(edit))).unwrap_err();
            assert!(
                err.to_string().contains("inconsistent model parameters"),
                "{err}"
            );
        }
    }

    /// A regression model written in format 1 (every node's impurity) or 2 still loads:
    /// same structure, values and leaf impurities; internal impurities are derived.
    #[test]
    fn version_1_regression_models_still_load() {
        let x: Vec<f64> = (0..400).map(|i| ((i * 37) % 101) as f64).collect();
        let y: Vec<f64> = (0..200).map(|i| (x[2 * i] - x[2 * i + 1]).sin()).collect();
        let m = Matrix::new(&x, 200, 2, Layout::RowMajor).unwrap();
        let mut p = ForestParams::random_forest(CriterionKind::SquaredError);
        p.n_estimators = 3;
        let f = Forest::fit(&p, m, Targets::regression(&y).unwrap(), None).unwrap();
        let mut repr = ForestReprV2 {
            crate_version: "0.1.0".into(),
            params: f.params.clone(),
            n_classes: 0,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
        };
        // Format 2 (no first tree index) is the same model.
        assert_eq!(Forest::from_bytes(&file(2, &repr)).unwrap(), f);
        for (r, t) in repr.trees.iter_mut().zip(&f.trees) {
            assert_eq!(r.impurity.len(), t.len().div_ceil(2)); // leaves only
            r.impurity = t.node_stats().impurity;
        }
        let g = Forest::from_bytes(&file(1, &repr)).unwrap();
        assert_eq!(g, f);
        // Written by this version, the same tree as read through version 2.
        assert!(Forest::from_bytes(&f.to_bytes().unwrap()).unwrap() == f);
    }

    /// A part of a forest keeps the index of its first tree through its bytes; an index no
    /// fit could make is refused.
    #[test]
    fn first_tree_round_trips_and_is_bounded() {
        let f = tiny_forest();
        let part = Forest::concat(vec![f.clone(), f.clone()]);
        assert!(part.is_err()); // two first trees
        let mut part = f.clone();
        part.params.first_tree = 1;
        let back = Forest::from_bytes(&part.to_bytes().unwrap()).unwrap();
        assert_eq!(back, part);
        assert_eq!(back.first_tree(), 1);
        let repr = ForestRepr {
            crate_version: "0.1.0".into(),
            params: f.params.clone(),
            n_classes: 2,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
            first_tree: u64::MAX - 1,
            assembled: false,
        };
        let err = Forest::from_bytes(&file(FORMAT_VERSION, &repr)).unwrap_err();
        assert!(
            err.to_string().contains("inconsistent model parameters"),
            "{err}"
        );
    }
}

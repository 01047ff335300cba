//! The versioned binary model format.
//!
//! ```text
//! offset  size  field
//! 0       4     magic b"FIMP"
//! 4       2     format version (little-endian u16)
//! 6       2     flags (0)
//! 8       8     payload length (little-endian u64)
//! 16      4     CRC-32 of the payload (little-endian u32)
//! 20      …     payload: postcard encoding of `ForestRepr`, then (version 3) of the
//!               missing-value exceptions `Vec<(tree, node)>`, the index of the first
//!               tree (varint) and whether the forest was assembled (a byte), then
//!               (version 4) the outputs `Vec<u32>` of a multi-output forest, then
//!               (version 5) every tree's `[impurity, value]` of each node in pre-order
//! ```
//! A single-output forest is written as version 3, byte for byte as before multi-output
//! forests existed; only a multi-output forest is written as version 4, and only an
//! absolute-error forest (whose internal medians are not derived from the leaves) as
//! version 5.
//! A split node sends missing values (NaN) to the side with more training samples unless
//! it learned otherwise; only the nodes that learned the other side are stored, as
//! increasing `(tree, node)` pairs (`crate::tree` derives the rest), so a model fitted
//! without NaN has an empty list and the bytes of version 2 but for the version and one
//! byte.
//! Only primary data is written (split structure, thresholds, leaf statistics), which is
//! also all a [`crate::Tree`] keeps in memory, so a loaded model equals the saved one. Loading
//! validates everything a later traversal relies on (child ids, feature ids, array lengths,
//! parameters), so no input can make it panic.

use serde::{Deserialize, Serialize};

use crate::error::{ForestError, Result};
use crate::forest::Forest;
use crate::params::{CriterionKind, Resolved, SplitterKind};
use crate::tree::TreeRepr;

/// First bytes of every model.
pub const MAGIC: &[u8; 4] = b"FIMP";
/// Version written by this build; it reads this version and older ones.
///
/// * 1: regression trees store the impurity of every node;
/// * 2: regression trees store leaf impurities only (internal ones are derived from them);
/// * 3: the split nodes whose missing values go to the side with fewer training samples,
///   the index of the first tree (`Resolved::first_tree`, for a part of a forest) and
///   whether the forest was assembled from patches (`Resolved::assembled`).
///
/// * 4: version 3, then the values of each output in a node's value (class counts, or 1
///   per regression output) of a multi-output forest. Written for multi-output forests
///   only: a single-output forest keeps version 3 and its bytes.
/// * 5: version 4 (outputs empty), then every node's impurity and value as grown, for the
///   absolute-error forests and those grown under monotonic constraints (`Tree::grown`).
///
/// The criterion is written as its [`crate::CriterionKind`] index (0 Gini, 1 entropy,
/// 2 squared error, 3 Poisson, 4 absolute error); a reader older than a criterion refuses
/// its models with a decode error. `ccp_alpha` is not written (the stored trees are pruned
/// already).
pub const FORMAT_VERSION: u16 = 5;
/// The version a multi-output forest is written in.
const MULTI_OUTPUT_VERSION: u16 = 4;
/// The version a single-output forest is written in (its bytes never changed).
pub const SINGLE_OUTPUT_VERSION: u16 = 3;
const HEADER: usize = 20;

#[derive(Serialize, Deserialize)]
struct ForestRepr {
    crate_version: String,
    params: Resolved,
    n_classes: u32,
    trees: Vec<TreeRepr>,
}

/// Version 3: version 2's fields, then the missing-value exceptions and the part fields
/// (postcard writes the fields of a nested struct inline, so the prefix is a version-2
/// payload).
#[derive(Serialize, Deserialize)]
struct ForestReprV3 {
    forest: ForestRepr,
    missing_exceptions: Vec<(u32, u32)>,
    /// `Resolved::first_tree` (0 but for a part of a forest).
    first_tree: u64,
    /// `Resolved::assembled`.
    assembled: bool,
}

/// Version 4: version 3's fields, then the outputs of a multi-output forest.
#[derive(Serialize, Deserialize)]
struct ForestReprV4 {
    v3: ForestReprV3,
    /// `Forest::outputs` (never empty in a version-4 file, empty in a version-5 one).
    outputs: Vec<u32>,
}

/// Version 5: version 4's fields, then each tree's `Tree::grown`.
#[derive(Serialize, Deserialize)]
struct ForestReprV5 {
    v4: ForestReprV4,
    grown: Vec<Vec<f64>>,
}

/// Checks the outputs read from a version-4 file against the task: at least one output
/// (at most 64 per training sample, a bound on what a file may make us allocate), class counts summing to `n_classes` for classification,
/// ones for regression. Returns their sum, the width of a node's value.
fn check_outputs(outputs: &[usize], n_classes: usize, p: &Resolved) -> Result<usize> {
    let ok = !outputs.is_empty()
        && outputs.len() <= p.n_samples.max(1) * 64
        && !matches!(
            p.criterion,
            CriterionKind::Poisson | CriterionKind::AbsoluteError
        )
        && match p.criterion.is_regression() {
            true => outputs.iter().all(|&c| c == 1) && n_classes == 0,
            false => {
                outputs.iter().all(|&c| c >= 1 && c <= p.n_samples)
                    && outputs.iter().try_fold(0usize, |a, &c| a.checked_add(c)) == Some(n_classes)
            }
        };
    if ok {
        Ok(outputs.iter().sum())
    } else {
        Err(decode_err("inconsistent outputs of a multi-output model"))
    }
}

/// The value `payload` encodes, with no byte left over.
fn decode_exact<'a, T: Deserialize<'a>>(payload: &'a [u8]) -> Result<T> {
    let (value, rest) =
        postcard::take_from_bytes(payload).map_err(|e| decode_err(e.to_string()))?;
    if !rest.is_empty() {
        return Err(decode_err("bytes left over after the model"));
    }
    Ok(value)
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

/// Sets the missing-value side of every split node of `trees` from the stored
/// `exceptions` (increasing `(tree, node)` pairs naming split nodes).
/// `multiway`: the trees are multiway trees, whose sides are derived per logical split.
fn route_missing(
    trees: &mut [crate::Tree],
    exceptions: &[(u32, u32)],
    multiway: bool,
) -> Result<()> {
    if !exceptions.windows(2).all(|w| w[0] < w[1]) {
        return Err(decode_err(
            "missing-value exceptions not in increasing order",
        ));
    }
    let mut rest = exceptions;
    for (k, t) in trees.iter_mut().enumerate() {
        let n = rest.partition_point(|&(tree, _)| tree as usize == k);
        let nodes: Vec<u32> = rest[..n].iter().map(|&(_, node)| node).collect();
        rest = &rest[n..];
        if !t.route_missing_except(&nodes, multiway) {
            return Err(decode_err(
                "missing-value exception on a leaf or unknown node",
            ));
        }
    }
    if rest.is_empty() {
        Ok(())
    } else {
        Err(decode_err("missing-value exception on an unknown tree"))
    }
}

impl Forest {
    /// Serializes the model into the versioned format described in [`crate::persist`].
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let forest = ForestRepr {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            params: self.params.clone(),
            n_classes: self.n_classes as u32,
            trees: self.trees.iter().map(TreeRepr::from_tree).collect(),
        };
        let mut missing_exceptions = Vec::new();
        let multiway = self.params.splitter == SplitterKind::Multiway;
        for (k, t) in self.trees.iter().enumerate() {
            let nodes = t.missing_exceptions(multiway).into_iter();
            missing_exceptions.extend(nodes.map(|node| (k as u32, node)));
        }
        let repr = ForestReprV3 {
            forest,
            missing_exceptions,
            first_tree: self.params.first_tree as u64,
            assembled: self.params.assembled,
        };
        let encode = |e: postcard::Error| ForestError::Encode(e.to_string());
        if self.trees.iter().any(|t| !t.grown().is_empty()) {
            let v4 = ForestReprV4 {
                v3: repr,
                outputs: Vec::new(),
            };
            let grown = self.trees.iter().map(|t| t.grown().to_vec()).collect();
            let payload = postcard::to_allocvec(&ForestReprV5 { v4, grown }).map_err(encode)?;
            return Ok(envelope(FORMAT_VERSION, &payload));
        }
        if self.outputs.is_empty() {
            let payload = postcard::to_allocvec(&repr).map_err(encode)?;
            return Ok(envelope(SINGLE_OUTPUT_VERSION, &payload));
        }
        let repr = ForestReprV4 {
            v3: repr,
            outputs: self.outputs.iter().map(|&c| c as u32).collect(),
        };
        let payload = postcard::to_allocvec(&repr).map_err(encode)?;
        Ok(envelope(MULTI_OUTPUT_VERSION, &payload))
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
        let (r4, grown) = match version {
            5.. => {
                let r: ForestReprV5 = decode_exact(payload)?;
                (Some(r.v4), Some(r.grown))
            }
            4 => (Some(decode_exact::<ForestReprV4>(payload)?), None),
            _ => (None, None),
        };
        let (repr, exceptions, first_tree, assembled, outputs) = if let Some(r) = r4 {
            let outputs: Vec<usize> = r.outputs.iter().map(|&c| c as usize).collect();
            let r = r.v3;
            (
                r.forest,
                r.missing_exceptions,
                r.first_tree,
                r.assembled,
                outputs,
            )
        } else if version == 3 {
            // Exact: a multi-output payload read as version 3 must not pass for a forest of
            // one output with all their classes.
            let r: ForestReprV3 = decode_exact(payload)?;
            (
                r.forest,
                r.missing_exceptions,
                r.first_tree,
                r.assembled,
                Vec::new(),
            )
        } else {
            let r: ForestRepr =
                postcard::from_bytes(payload).map_err(|e| decode_err(e.to_string()))?;
            (r, Vec::new(), 0, false, Vec::new())
        };
        let n_classes = repr.n_classes as usize;
        check_params(&repr.params, n_classes, repr.trees.len())?;
        // Tree indices are hashed as u64 with the seed; a part of a forest is a fit's.
        if first_tree >= u64::from(u32::MAX) {
            return Err(decode_err("inconsistent model parameters"));
        }
        let width = match version == 4 {
            true => check_outputs(&outputs, n_classes, &repr.params)?,
            false => n_classes.max(1),
        };
        // Version 5: forests of one output whose trees keep their nodes as grown, a list a
        // tree; every absolute-error forest (monotonic ones too).
        let absolute = repr.params.criterion == CriterionKind::AbsoluteError;
        let fits = |g: &Vec<Vec<f64>>| g.len() == repr.trees.len() && outputs.is_empty();
        if (absolute && grown.is_none()) || grown.as_ref().is_some_and(|g| !fits(g)) {
            return Err(decode_err("absolute-error node statistics amiss"));
        }
        let (criterion, p) = (repr.params.criterion, repr.params.n_features);
        let mut trees = repr
            .trees
            .into_iter()
            .map(|t| t.into_tree(criterion, width, p, version, &outputs))
            .collect::<Result<Vec<_>>>()?;
        let multiway = repr.params.splitter == SplitterKind::Multiway;
        route_missing(&mut trees, &exceptions, multiway)?;
        for (t, g) in trees.iter_mut().zip(grown.into_iter().flatten()) {
            t.set_grown(g)?;
        }
        let mut params = repr.params;
        params.first_tree = first_tree as usize;
        params.assembled = assembled;
        Ok(Forest {
            params,
            n_classes,
            outputs,
            trees,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Forest, ForestParams, Layout, Matrix, Targets};

    /// A model file of format `version` around `repr` (from version 3, without
    /// missing-value exceptions, first tree 0, not assembled: one zero byte each).
    fn file(version: u16, repr: &ForestRepr) -> Vec<u8> {
        let mut payload = postcard::to_allocvec(repr).unwrap();
        if version >= 3 {
            payload.extend([0, 0, 0]);
        }
        envelope(version, &payload)
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
        let g = Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr)).unwrap();
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
            let err = Forest::from_bytes(&envelope(SINGLE_OUTPUT_VERSION, &payload)).unwrap_err();
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
            }
        };
        assert!(Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr(&|_| ()))).is_ok());
        let edits: [&dyn Fn(&mut Resolved); 3] = [
            &|p| p.n_draws = 1 << 60,
            &|p| p.n_features = 1 << 40,
            &|p| p.n_samples = u32::MAX as usize,
        ];
        for edit in edits {
            let err = Forest::from_bytes(&file(SINGLE_OUTPUT_VERSION, &repr(edit))).unwrap_err();
            assert!(
                err.to_string().contains("inconsistent model parameters"),
                "{err}"
            );
        }
    }

    /// Missing-value exceptions round-trip, and a list naming a leaf, an unknown tree or
    /// out of order is refused.
    #[test]
    fn missing_value_exceptions_are_validated() {
        let mut x: Vec<f64> = (0..60).map(f64::from).collect();
        x.extend([f64::NAN; 20]);
        let y: Vec<u32> = (0..80).map(|i| u32::from(!(30..60).contains(&i))).collect();
        let m = Matrix::new(&x, 80, 1, Layout::RowMajor).unwrap();
        let mut p = ForestParams::random_forest(CriterionKind::Gini);
        p.n_estimators = 2;
        let f = Forest::fit(&p, m, Targets::classes(&y, 2).unwrap(), None).unwrap();
        let g = Forest::from_bytes(&f.to_bytes().unwrap()).unwrap();
        assert!(g == f);
        let repr = ForestRepr {
            crate_version: "0.1.0".into(),
            params: f.params.clone(),
            n_classes: 2,
            trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
        };
        let leaf = (0..f.trees[0].len())
            .find(|&t| f.trees[0].is_leaf(t))
            .unwrap() as u32;
        for bad in [vec![(0, leaf)], vec![(2, 0)], vec![(1, 0), (0, 0)]] {
            let v3 = ForestReprV3 {
                forest: repr_clone(&repr),
                missing_exceptions: bad,
                first_tree: 0,
                assembled: false,
            };
            let bytes = envelope(FORMAT_VERSION, &postcard::to_allocvec(&v3).unwrap());
            assert!(matches!(
                Forest::from_bytes(&bytes),
                Err(ForestError::Decode(_))
            ));
        }
    }

    fn repr_clone(r: &ForestRepr) -> ForestRepr {
        postcard::from_bytes(&postcard::to_allocvec(r).unwrap()).unwrap()
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

    /// A part of a forest keeps the index of its first tree through its bytes, and an
    /// assembled forest its flag; an index no fit could make is refused.
    #[test]
    fn part_fields_round_trip_and_are_bounded() {
        let f = tiny_forest();
        let mut part = f.clone();
        part.params.first_tree = 1;
        part.params.assembled = true;
        let back = Forest::from_bytes(&part.to_bytes().unwrap()).unwrap();
        assert_eq!(back, part);
        let repr = ForestReprV3 {
            forest: ForestRepr {
                crate_version: "0.1.0".into(),
                params: f.params.clone(),
                n_classes: 2,
                trees: f.trees.iter().map(TreeRepr::from_tree).collect(),
            },
            missing_exceptions: Vec::new(),
            first_tree: u64::MAX - 1,
            assembled: false,
        };
        let bytes = envelope(
            SINGLE_OUTPUT_VERSION,
            &postcard::to_allocvec(&repr).unwrap(),
        );
        let err = Forest::from_bytes(&bytes).unwrap_err();
        assert!(
            err.to_string().contains("inconsistent model parameters"),
            "{err}"
        );
    }

    /// Version 4 carries the outputs of a multi-output forest; outputs that do not match
    /// the task or the trees are refused, and a single-output forest stays version 3.
    #[test]
    fn outputs_round_trip_and_are_checked() {
        let single = tiny_forest();
        assert_eq!(
            single.to_bytes().unwrap()[4..6],
            SINGLE_OUTPUT_VERSION.to_le_bytes()
        );
        let x = [0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [0u32, 0, 0, 1, 1, 0, 1, 1, 2, 1, 2, 1];
        let m = Matrix::new(&x, 6, 1, Layout::ColumnMajor).unwrap();
        let mut p = ForestParams::random_forest(CriterionKind::Gini);
        p.n_estimators = 2;
        let t = Targets::multi_classes(&y, &[3, 2]).unwrap();
        let f = Forest::fit(&p, m, t, None).unwrap();
        let bytes = f.to_bytes().unwrap();
        assert_eq!(bytes[4..6], MULTI_OUTPUT_VERSION.to_le_bytes());
        assert_eq!(Forest::from_bytes(&bytes).unwrap(), f);
        let v4: ForestReprV4 = postcard::from_bytes(&bytes[HEADER..]).unwrap();
        let v3 = v4.v3;
        // ([5] or [2, 3] would be forests of the same width, as a file may hold.)
        for outputs in [vec![], vec![2, 3, 0], vec![2, 2], vec![7], vec![0, 5]] {
            let repr = ForestReprV4 {
                v3: postcard::from_bytes(&postcard::to_allocvec(&v3).unwrap()).unwrap(),
                outputs,
            };
            let payload = postcard::to_allocvec(&repr).unwrap();
            assert!(Forest::from_bytes(&envelope(MULTI_OUTPUT_VERSION, &payload)).is_err());
        }
        // A version-3 reading of a multi-output payload fails on its trailing bytes, never
        // builds a forest of one output.
        let mut as_v3 = bytes.clone();
        as_v3[4..6].copy_from_slice(&SINGLE_OUTPUT_VERSION.to_le_bytes());
        assert!(Forest::from_bytes(&as_v3).is_err());
    }
}

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
//! forests existed; only a multi-output forest is written as version 4, only a
//! single-output absolute-error or monotonic forest (whose internal values are not derived
//! from the leaves) as version 5, and only a multi-output absolute-error forest as
//! version 6 (version 5's payload with its outputs).
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
use crate::params::{CategoryGuards, CriterionKind, Resolved, SplitterKind};
use crate::tree::{Tree, TreeRepr};

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
/// * 6: version 5 with the outputs of a multi-output absolute-error forest (never empty);
///   a version-5 file keeps its bytes.
/// * 7: version 6 (outputs and node statistics as grown possibly empty), then each tree's
///   category sets (`crate::tree::categories`): the forests with categorical splits; the
///   others keep the version and bytes they had.
/// * 8: version 7, then the fit's categorical flags and the guards of its best categorical
///   sets (`Resolved::categorical`, `Resolved::category_guards`), which shape the growth
///   of more trees (warm start): the forests fitted with categorical features. A version-7
///   file (flags lost) still loads.
///
/// The criterion is written as its [`crate::CriterionKind`] index (0 Gini, 1 entropy,
/// 2 squared error, 3 Poisson, 4 absolute error); a reader older than a criterion refuses
/// its models with a decode error. `ccp_alpha` is not written (the stored trees are pruned
/// already).
pub const FORMAT_VERSION: u16 = 8;
/// The version a multi-output forest with node statistics as grown is written in.
const MULTI_OUTPUT_GROWN_VERSION: u16 = 6;
/// The version a forest with categorical splits was written in before its flags were.
const CATEGORICAL_VERSION: u16 = 7;
/// The version a forest fitted with categorical features is written in.
const CATEGORICAL_FIT_VERSION: u16 = 8;
/// The version a multi-output forest is written in.
const MULTI_OUTPUT_VERSION: u16 = 4;
/// The version a single-output forest with node statistics as grown is written in.
const GROWN_VERSION: u16 = 5;
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
    /// `Forest::outputs` (never empty in a version-4 or version-6 file, empty in a
    /// version-5 one).
    outputs: Vec<u32>,
}

/// Version 5: version 4's fields, then each tree's `Tree::grown`.
#[derive(Serialize, Deserialize)]
struct ForestReprV5 {
    v4: ForestReprV4,
    grown: Vec<Vec<f64>>,
}

/// Version 7: version 5's fields (each tree's `Tree::grown` may be empty), then each tree's
/// category sets (`crate::tree::categories`).
#[derive(Serialize, Deserialize)]
struct ForestReprV7 {
    v5: ForestReprV5,
    categories: Vec<Vec<u64>>,
}

/// Version 8: version 7's fields, then the fit's categorical flags and guards
/// `(smoothing, min_samples, min_share, max_side, penalty)`.
#[derive(Serialize, Deserialize)]
struct ForestReprV8 {
    v7: ForestReprV7,
    categorical: Vec<bool>,
    guards: (f64, u64, f64, u64, f64),
}

/// The flags and guards of a version-8 file, checked against the forest's `n_features`.
fn growth_of(
    (flags, g): (Vec<bool>, (f64, u64, f64, u64, f64)),
    n_features: usize,
) -> Result<(Vec<bool>, CategoryGuards)> {
    let size = |v: u64| usize::try_from(v).map_err(|_| decode_err("guard out of range"));
    let guards = CategoryGuards {
        smoothing: g.0,
        min_samples: size(g.1)?,
        min_share: g.2,
        max_side: size(g.3)?,
        penalty: g.4,
    };
    let checked = guards
        .check()
        .map_err(|_| decode_err("invalid category guards"));
    if flags.len() != n_features || !flags.contains(&true) {
        return Err(decode_err("categorical flags of the wrong features"));
    }
    checked.map(|()| (flags, guards))
}

/// Checks the outputs read from a version-4 or version-6 (`grown`) file against the task:
/// at least one output (at most 64 per training sample, a bound on what a file may make us
/// allocate), class counts summing to `n_classes` for classification, ones for regression;
/// a criterion the multi-output fit grows, absolute error exactly when `grown`. Returns
/// their sum, the width of a node's value.
fn check_outputs(outputs: &[usize], n_classes: usize, p: &Resolved, grown: bool) -> Result<usize> {
    let ok = !outputs.is_empty()
        && outputs.len() <= p.n_samples.max(1) * 64
        && p.criterion != CriterionKind::Poisson
        && (p.criterion == CriterionKind::AbsoluteError) == grown
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
        && crate::params::draws_in_bounds(p.n_draws, p.n_samples)
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
        let outputs: Vec<u32> = self.outputs.iter().map(|&c| c as u32).collect();
        let categorical = self.params.categorical.is_some();
        if categorical || self.trees.iter().any(Tree::has_categorical_splits) {
            let v4 = ForestReprV4 { v3: repr, outputs };
            let grown = self.trees.iter().map(|t| t.grown().to_vec()).collect();
            let v5 = ForestReprV5 { v4, grown };
            let categories = self
                .trees
                .iter()
                .map(|t| t.category_pool().to_vec())
                .collect();
            let v7 = ForestReprV7 { v5, categories };
            let Some(flags) = &self.params.categorical else {
                let payload = postcard::to_allocvec(&v7).map_err(encode)?;
                return Ok(envelope(CATEGORICAL_VERSION, &payload));
            };
            let g = self.params.category_guards;
            let (min_samples, max_side) = (g.min_samples as u64, g.max_side as u64);
            let v8 = ForestReprV8 {
                v7,
                categorical: flags.clone(),
                guards: (g.smoothing, min_samples, g.min_share, max_side, g.penalty),
            };
            let payload = postcard::to_allocvec(&v8).map_err(encode)?;
            return Ok(envelope(CATEGORICAL_FIT_VERSION, &payload));
        }
        if self.trees.iter().any(|t| !t.grown().is_empty()) {
            let version = match outputs.is_empty() {
                true => GROWN_VERSION,
                false => MULTI_OUTPUT_GROWN_VERSION,
            };
            let v4 = ForestReprV4 { v3: repr, outputs };
            let grown = self.trees.iter().map(|t| t.grown().to_vec()).collect();
            let payload = postcard::to_allocvec(&ForestReprV5 { v4, grown }).map_err(encode)?;
            return Ok(envelope(version, &payload));
        }
        if self.outputs.is_empty() {
            let payload = postcard::to_allocvec(&repr).map_err(encode)?;
            return Ok(envelope(SINGLE_OUTPUT_VERSION, &payload));
        }
        let repr = ForestReprV4 { v3: repr, outputs };
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
        let (r4, grown, pools, growth) = match version {
            CATEGORICAL_FIT_VERSION.. => {
                let r: ForestReprV8 = decode_exact(payload)?;
                let (v5, pools) = (r.v7.v5, Some(r.v7.categories));
                (
                    Some(v5.v4),
                    Some(v5.grown),
                    pools,
                    Some((r.categorical, r.guards)),
                )
            }
            CATEGORICAL_VERSION => {
                let r: ForestReprV7 = decode_exact(payload)?;
                (Some(r.v5.v4), Some(r.v5.grown), Some(r.categories), None)
            }
            5 | 6 => {
                let r: ForestReprV5 = decode_exact(payload)?;
                (Some(r.v4), Some(r.grown), None, None)
            }
            4 => (
                Some(decode_exact::<ForestReprV4>(payload)?),
                None,
                None,
                None,
            ),
            _ => (None, None, None, None),
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
        let width = match version {
            4 | 6 => check_outputs(&outputs, n_classes, &repr.params, version == 6)?,
            CATEGORICAL_VERSION.. if !outputs.is_empty() => {
                let absolute = repr.params.criterion == CriterionKind::AbsoluteError;
                check_outputs(&outputs, n_classes, &repr.params, absolute)?
            }
            _ => n_classes.max(1),
        };
        // Versions 5 and 6: forests whose trees keep their nodes as grown, a list a tree;
        // every absolute-error forest (monotonic ones too), of several outputs in 6 only.
        let absolute = repr.params.criterion == CriterionKind::AbsoluteError;
        // Version 7: any outputs, and a tree's list is empty unless its nodes were kept as
        // grown (every absolute-error tree's).
        let categorical = version >= CATEGORICAL_VERSION;
        let fits = |g: &Vec<Vec<f64>>| {
            g.len() == repr.trees.len()
                && (categorical || outputs.is_empty() == (version == GROWN_VERSION))
                && !(absolute && g.iter().any(Vec::is_empty))
        };
        if (absolute && grown.is_none()) || grown.as_ref().is_some_and(|g| !fits(g)) {
            return Err(decode_err("absolute-error node statistics amiss"));
        }
        let mut pools = pools.unwrap_or_else(|| vec![Vec::new(); repr.trees.len()]);
        if pools.len() != repr.trees.len() {
            return Err(decode_err("category sets of an unknown tree"));
        }
        let (criterion, p) = (repr.params.criterion, repr.params.n_features);
        let mut trees = repr
            .trees
            .into_iter()
            .zip(pools.drain(..))
            .map(|(t, pool)| t.into_tree(criterion, width, p, version, &outputs, pool))
            .collect::<Result<Vec<_>>>()?;
        let multiway = repr.params.splitter == SplitterKind::Multiway;
        route_missing(&mut trees, &exceptions, multiway)?;
        for (t, g) in trees.iter_mut().zip(grown.into_iter().flatten()) {
            if !g.is_empty() || !categorical {
                t.set_grown(g)?;
            }
        }
        let mut params = repr.params;
        params.first_tree = first_tree as usize;
        params.assembled = assembled;
        if let Some(growth) = growth {
            (params.categorical, params.category_guards) = {
                let (flags, guards) = growth_of(growth, params.n_features)?;
                (Some(flags), guards)
            };
        }
        Ok(Forest {
            params,
            n_classes,
            outputs,
            trees,
        })
    }
}

#[cfg(test)]
mod tests;

//! The versioned binary format of a [`Booster`].
//!
//! ```text
//! offset  size  field
//! 0       4     magic b"FIMB"
//! 4       2     format version (little-endian u16)
//! 6       2     flags (0)
//! 8       8     payload length (little-endian u64)
//! 16      4     CRC-32 of the payload (little-endian u32)
//! 20      …     payload: postcard encoding of `BoosterRepr`
//! ```
//! The trees travel as a complete forest model (`crate::persist`, magic `FIMP`) inside the
//! payload, so their validation is the forests' own and the forest format is unchanged. On
//! the way back everything the booster adds is checked against those trees (one value per
//! leaf, `k` trees per round, scores per round), so no bytes can make a later walk panic.
//!
//! Version 2 appends to the payload the postcard encoding of each round's `subsample`
//! (`Vec<f64>`), written only when a warm start changed it: a booster whose rounds share one
//! `subsample` (its parameter) is written as version 1, byte for byte as before.

use serde::{Deserialize, Serialize};

use super::params::tree_params;
use super::{BoostParams, Booster, Loss};
use crate::error::{ForestError, Result};
use crate::forest::Forest;

/// First bytes of a booster model.
pub const MAGIC: &[u8; 4] = b"FIMB";
/// Newest version written by this build; it reads this version and older ones.
pub const FORMAT_VERSION: u16 = 2;
const HEADER: usize = 20;

#[derive(Serialize, Deserialize)]
struct BoosterRepr {
    crate_version: String,
    /// The boosting parameters (the trees' come from `forest` and `ccp_alpha`).
    params: BoostParams,
    ccp_alpha: f64,
    n_classes: u32,
    k: u32,
    init: Vec<f64>,
    leaf_values: Vec<Vec<f64>>,
    train_score: Vec<f64>,
    oob_scores: Vec<f64>,
    oob_improvement: Vec<f64>,
    /// The trees as a forest model (`Forest::to_bytes`).
    forest: Vec<u8>,
}

fn decode_err(msg: impl Into<String>) -> ForestError {
    ForestError::Decode(msg.into())
}

impl Booster {
    /// Serializes the model into the versioned format above.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut resolved = self.resolved.clone();
        resolved.n_estimators = self.trees.len();
        let forest = Forest {
            params: resolved,
            n_classes: 0,
            trees: self.trees.clone(),
            outputs: Vec::new(),
        };
        let repr = BoosterRepr {
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            params: self.params.clone(),
            ccp_alpha: self.params.tree.ccp_alpha,
            n_classes: self.n_classes as u32,
            k: self.k as u32,
            init: self.init.clone(),
            leaf_values: self.leaf_values.clone(),
            train_score: self.train_score.clone(),
            oob_scores: self.oob_scores.clone(),
            oob_improvement: self.oob_improvement.clone(),
            forest: forest.to_bytes()?,
        };
        let encode = |e: postcard::Error| ForestError::Encode(e.to_string());
        let mut payload = postcard::to_allocvec(&repr).map_err(encode)?;
        let uniform = self
            .round_subsample
            .iter()
            .all(|&s| s == self.params.subsample);
        let version: u16 = if uniform { 1 } else { 2 };
        if !uniform {
            payload.extend(postcard::to_allocvec(&self.round_subsample).map_err(encode)?);
        }
        let mut out = Vec::with_capacity(HEADER + payload.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(payload.as_slice()).to_le_bytes());
        out.extend_from_slice(&payload);
        Ok(out)
    }

    /// Reads a model written by [`Booster::to_bytes`]; any damage gives an error, never a
    /// panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Booster> {
        if bytes.len() < HEADER || &bytes[..4] != MAGIC {
            return Err(decode_err(
                "not a forestimp booster (bad magic or shorter than the header)",
            ));
        }
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version > FORMAT_VERSION {
            return Err(ForestError::Version {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if version == 0 || bytes[6..8] != [0, 0] {
            return Err(decode_err("unknown format version or flags"));
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&bytes[8..16]);
        let payload = &bytes[HEADER..];
        if payload.len() as u64 != u64::from_le_bytes(len) {
            return Err(decode_err(
                "payload length differs from the header (truncated?)",
            ));
        }
        let crc = u32::from_le_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
        if crc32fast::hash(payload) != crc {
            return Err(decode_err("checksum mismatch (corrupted bytes)"));
        }
        let (r, rest): (BoosterRepr, &[u8]) =
            postcard::take_from_bytes(payload).map_err(|e| decode_err(e.to_string()))?;
        let round_subsample: Option<Vec<f64>> = match version {
            1 if rest.is_empty() => None,
            2 => Some(postcard::from_bytes(rest).map_err(|e| decode_err(e.to_string()))?),
            _ => return Err(decode_err("bytes follow the booster")),
        };
        let forest = Forest::from_bytes(&r.forest)?;
        let (k, n_classes) = (r.k as usize, r.n_classes as usize);
        let trees = forest.trees;
        let mut params = r.params;
        params.tree = tree_params(&forest.params, r.ccp_alpha);
        let rounds = trees.len().checked_div(k).unwrap_or(0);
        let expected_k = match (params.loss, n_classes) {
            (Loss::LogLoss, c) if c > 2 => c,
            _ => 1,
        };
        let scores_ok = |v: &[f64], optional: bool| v.len() == rounds || (optional && v.is_empty());
        let alpha_ok = match params.loss {
            Loss::Huber { alpha } | Loss::Quantile { alpha } => alpha > 0.0 && alpha < 1.0,
            _ => true,
        };
        let ok = k == expected_k
            && params.loss.is_classification() == (n_classes > 0)
            && (params.loss != Loss::Exponential || n_classes == 2)
            && alpha_ok
            && trees.len().checked_rem(k) == Some(0)
            && rounds >= 1
            && rounds <= params.n_estimators
            && r.init.len() == k
            && params.learning_rate.is_finite()
            && r.init.iter().all(|v| v.is_finite())
            && params.n_estimators <= crate::params::MAX_TREES
            && r.leaf_values.len() == trees.len()
            && trees
                .iter()
                .zip(&r.leaf_values)
                .all(|(t, v)| v.len() == t.n_leaves() && v.iter().all(|x| x.is_finite()))
            && scores_ok(&r.train_score, false)
            && scores_ok(&r.oob_scores, true)
            && r.oob_improvement.len() == r.oob_scores.len();
        let round_subsample = round_subsample.unwrap_or_else(|| vec![params.subsample; rounds]);
        // Every round drew rows (out-of-bag scores) or none did.
        let sampled = !r.oob_scores.is_empty();
        let ok = ok
            && round_subsample.len() == rounds
            && round_subsample
                .iter()
                .all(|&s| s > 0.0 && s <= 1.0 && (s < 1.0) == sampled);
        if !ok {
            return Err(decode_err("inconsistent booster"));
        }
        let mut resolved = forest.params;
        resolved.n_estimators = 1;
        resolved.ccp_alpha = r.ccp_alpha;
        Ok(Booster {
            params,
            n_features: resolved.n_features,
            resolved,
            n_classes,
            k,
            init: r.init,
            trees,
            leaf_values: r.leaf_values,
            train_score: r.train_score,
            oob_scores: r.oob_scores,
            oob_improvement: r.oob_improvement,
            round_subsample,
        })
    }
}

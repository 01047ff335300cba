//! Context-dependent importances from one forest grown without the context variable
//! (Sutera, PhD thesis, ch. 6, Eqs. 6.10–6.12), with permutation p-values over the context.
//!
//! Every sample is routed once per tree; the statistics of a node are then the sums of its
//! leaves' statistics, split by context value. Because nodes are in pre-order, children have
//! larger ids than their parent and one reverse scan builds every node's statistics. A
//! permutation of the context only changes which context slot each sample's statistics land
//! in, so the routing is reused by every permutation. `nodes` holds that per-tree part:
//! routing, per-(node, context) statistics and their impurities, one tree's scores.
//!
//! Invariant: every score is a sum over trees taken in tree order, and permutation `k` draws
//! its shuffle from `(seed, k)` alone, so results do not depend on the thread count or on how
//! trees are grouped into blocks.

use crate::data::{Feature, Matrix, Targets};
use crate::error::{invalid, ForestError, Result};
use crate::forest::Forest;
use crate::parallel::{chunks_mut, map_ordered};
use crate::rng::{stream, tree_seed, TreeRng};

mod nodes;
pub use nodes::EmptyContext;
use nodes::{accumulate, checked_impurity, route, ContextStats, Scores};

/// At most this many context values: the scores need `nodes × contexts × classes` floats
/// per tree, and a context is a categorical variable.
pub const MAX_CONTEXTS: usize = 256;
/// Routed sample slots kept at once (`trees in a block × samples`), bounding memory.
const BLOCK_SLOTS: usize = 1 << 22;

/// Options of [`Forest::context_importances`].
#[derive(Clone, Copy, Debug)]
pub struct ContextOptions {
    /// Convention for nodes without samples of a context value.
    pub empty: EmptyContext,
    /// Number of random permutations of the context labels (0: no p-values).
    pub n_permutations: usize,
    /// Seed of the permutations.
    pub seed: u64,
}

/// Context-dependent scores; `p × K` arrays are row-major (feature, context value).
#[derive(Clone, Debug, PartialEq)]
pub struct ContextImportances {
    /// Number of features `p`.
    pub n_features: usize,
    /// Number of context values `K`.
    pub n_contexts: usize,
    /// `Imp(X_m) = (1/N_T) Σ_T Σ_{t: v(t)=m} p(t) I(Y; S_t | t)`: the raw MDI when the data
    /// are the forest's training set and every tree saw all of it.
    pub importances: Vec<f64>,
    /// `Imp^|(X_m | x_c) = (1/N_T) Σ_T Σ_{t: v(t)=m} p(t) |I(Y;S_t|t) − I(Y;S_t|t,x_c)|` (Eq. 6.10).
    pub absolute: Vec<f64>,
    /// `Imp^Δ(X_m | x_c)`: the same without the absolute value (Eq. 6.12).
    pub signed: Vec<f64>,
    /// `Imp^Δ(X_m | X_c) = (1/N_T) Σ_T Σ_t p(t) (I(Y;S_t|t) − Σ_{x_c} P(x_c|t) I(Y;S_t|t,x_c))`.
    pub global_signed: Vec<f64>,
    /// `(1 + #{k: Imp^|_k ≥ Imp^|}) / (1 + n_permutations)`, `p × K`; None without permutations.
    pub pvalues_absolute: Option<Vec<f64>>,
    /// Two-sided: `(1 + #{k: |Imp^Δ_k| ≥ |Imp^Δ|}) / (1 + n_permutations)`.
    pub pvalues_signed: Option<Vec<f64>>,
    /// `Imp^|` under each permutation, `n_permutations × p × K`.
    pub null_absolute: Vec<f64>,
    /// `Imp^Δ` under each permutation, `n_permutations × p × K`.
    pub null_signed: Vec<f64>,
}

impl Forest {
    /// Context-dependent importances of `forest` on the data `(x, targets)` with context codes
    /// `context[i] ∈ 0..n_contexts` and optional sample weights.
    ///
    /// `p(t)` and every `I(·|t)` are measured on the samples given here, all of them (not only
    /// a tree's in-bag rows), as the thesis grows its forest on all samples: with bootstrap or
    /// subsampled trees the scores are those of the given data routed through the trees, and
    /// `Imp` no longer equals the forest's MDI. `I(Y; S_t | t)` is the decrease of the forest's
    /// impurity (entropy in bits, Gini, or variance, Sutera Eq. 6.13) at the binary split `S_t`;
    /// it equals `I(Y; X_m | t)` when `X_m` is binary.
    pub fn context_importances<T: Feature>(
        &self,
        x: Matrix<'_, T>,
        targets: Targets<'_>,
        context: &[u32],
        n_contexts: usize,
        sample_weight: Option<&[f64]>,
        options: &ContextOptions,
    ) -> Result<ContextImportances> {
        let forest = self;
        forest.check_single_output("context importance")?;
        forest.check_input(&x)?;
        let n = x.n_rows();
        check_context(context, n_contexts, n)?;
        let weights = checked_weights(sample_weight, n)?;
        let impurity = checked_impurity(forest, targets, n, weights.as_deref())?;
        if n == 0 {
            return Err(ForestError::Shape("X has no rows".into()));
        }
        let total: f64 = weights.as_deref().map_or(n as f64, |w| w.iter().sum());
        if total <= 0.0 {
            return Err(ForestError::InvalidTarget(
                "the sample weights sum to zero".into(),
            ));
        }
        let (p, k, s) = (forest.n_features(), n_contexts, impurity.width());
        let weight = |i: usize| weights.as_deref().map_or(1.0, |w| w[i]);
        let trees = forest.trees();
        let n_perm = options.n_permutations;
        let mut observed = Scores::zeros(p, k, true);
        let mut nulls: Vec<Scores> = (0..n_perm).map(|_| Scores::zeros(p, k, false)).collect();
        let block = (BLOCK_SLOTS / n.max(1)).clamp(1, trees.len().max(1));
        let mut start = 0;
        while start < trees.len() {
            let end = (start + block).min(trees.len());
            let routed = map_ordered(end - start, |j| {
                route(&trees[start + j], &x, &impurity, &weight, total)
            });
            let per_tree = map_ordered(end - start, |j| {
                let mut out = Scores::zeros(p, k, true);
                let mut scratch = ContextStats::new();
                let tree = &trees[start + j];
                scratch.fill(tree, &routed[j], context, k, &impurity, &weight);
                accumulate(tree, &routed[j], &scratch, k, s, options.empty, &mut out);
                out
            });
            per_tree.iter().for_each(|s| observed.add(s));
            chunks_mut(&mut nulls, 1, |perm, acc| {
                let shuffled = permuted(context, options.seed, perm);
                let mut scratch = ContextStats::new();
                for (j, r) in routed.iter().enumerate() {
                    let tree = &trees[start + j];
                    scratch.fill(tree, r, &shuffled, k, &impurity, &weight);
                    accumulate(tree, r, &scratch, k, s, options.empty, &mut acc[0]);
                }
            });
            start = end;
        }
        let scale = 1.0 / trees.len().max(1) as f64;
        let mut result = finish(observed, &nulls, scale, p, k);
        if n_perm == 0 {
            result.pvalues_absolute = None;
            result.pvalues_signed = None;
        }
        Ok(result)
    }
}

fn check_context(context: &[u32], n_contexts: usize, n: usize) -> Result<()> {
    if context.len() != n {
        return Err(ForestError::Shape(format!(
            "context has {} values but X has {n} rows",
            context.len()
        )));
    }
    if n_contexts == 0 || n_contexts > MAX_CONTEXTS {
        return Err(invalid(
            "context",
            format!(
                "expected 1 to {MAX_CONTEXTS} distinct context values (a categorical variable), got {n_contexts}"
            ),
        ));
    }
    if let Some((i, &c)) = context
        .iter()
        .enumerate()
        .find(|(_, &c)| c as usize >= n_contexts)
    {
        return Err(invalid(
            "context",
            format!("context[{i}] = {c} is not a code in 0..{n_contexts}"),
        ));
    }
    Ok(())
}

fn checked_weights(sample_weight: Option<&[f64]>, n: usize) -> Result<Option<Vec<f64>>> {
    let Some(w) = sample_weight else {
        return Ok(None);
    };
    if w.len() != n {
        return Err(ForestError::Shape(format!(
            "sample_weight has {} values but X has {n} rows",
            w.len()
        )));
    }
    if let Some(i) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err(ForestError::InvalidTarget(format!(
            "sample_weight[{i}] = {} is not a finite non-negative number",
            w[i]
        )));
    }
    Ok(Some(w.to_vec()))
}

/// The context codes under permutation `perm` (Fisher–Yates from `(seed, perm)`).
fn permuted(context: &[u32], seed: u64, perm: usize) -> Vec<u32> {
    let mut rng = TreeRng::new(tree_seed(seed, perm as u64, stream::CONTEXT_PERMUTATIONS));
    let mut out = context.to_vec();
    let n = out.len();
    rng.partial_shuffle(&mut out, n);
    out
}

/// Scales the sums by `1/N_T` and counts the permutations at least as extreme.
fn finish(obs: Scores, nulls: &[Scores], scale: f64, p: usize, k: usize) -> ContextImportances {
    let sc = |v: Vec<f64>| v.into_iter().map(|a| a * scale).collect::<Vec<_>>();
    let absolute = sc(obs.absolute);
    let signed = sc(obs.signed);
    // A permuted score counts as extreme when it reaches the observed one up to a relative
    // 1e-9: a score that is 0 in exact arithmetic (a context-independent feature on
    // exhaustive data) comes out as rounding noise, and a tie must count as a tie.
    let ge = |a: f64, b: f64| a >= b - 1e-9 * b.abs();
    let mut p_abs = vec![1.0; p * k];
    let mut p_sig = vec![1.0; p * k];
    let mut null_absolute = Vec::with_capacity(nulls.len() * p * k);
    let mut null_signed = Vec::with_capacity(nulls.len() * p * k);
    for null in nulls {
        null_absolute.extend(null.absolute.iter().map(|a| a * scale));
        null_signed.extend(null.signed.iter().map(|a| a * scale));
    }
    for j in 0..p * k {
        let (mut ca, mut cs) = (0usize, 0usize);
        for q in 0..nulls.len() {
            ca += usize::from(ge(null_absolute[q * p * k + j], absolute[j]));
            cs += usize::from(ge(null_signed[q * p * k + j].abs(), signed[j].abs()));
        }
        let denom = (1 + nulls.len()) as f64;
        p_abs[j] = (1 + ca) as f64 / denom;
        p_sig[j] = (1 + cs) as f64 / denom;
    }
    ContextImportances {
        n_features: p,
        n_contexts: k,
        importances: sc(obs.importances),
        absolute,
        signed,
        global_signed: sc(obs.global),
        pvalues_absolute: Some(p_abs),
        pvalues_signed: Some(p_sig),
        null_absolute,
        null_signed,
    }
}

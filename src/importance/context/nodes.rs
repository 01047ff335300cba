//! One tree's part of the context importances: route the samples to the leaves, sum the
//! statistics of every (node, context value) bottom-up, and add the tree's scores.
//! Impurities are the criteria's own (`crate::tree::criterion`), so `Imp` equals the MDI
//! when the samples are the tree's.

use crate::data::{Feature, Matrix, Targets};
use crate::error::{ForestError, Result};
use crate::forest::Forest;
use crate::params::CriterionKind;
use crate::tree::criterion::{
    xlog2x, ClassImpurity, Criterion, GiniIndex, ShannonEntropy, SquaredError,
};
use crate::tree::Tree;

/// What `I(Y; X_m | t, X_c = x_c)` is when node `t` holds no sample with `X_c = x_c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmptyContext {
    /// `I(·|t, x_c) := 0`: the node adds `p(t)·I(Y; X_m | t)` to both scores. This is the
    /// convention that reproduces Sutera's Table 6.3 (the information of the split is
    /// entirely absent from context `x_c`).
    Zero,
    /// The node is left out of the scores of `x_c`.
    Skip,
}

/// Accumulators of `Imp^|`, `Imp^Δ` (p × K) and, for the observed context, `Imp` and the
/// global `Imp^Δ` (p).
pub(super) struct Scores {
    pub(super) absolute: Vec<f64>,
    pub(super) signed: Vec<f64>,
    pub(super) importances: Vec<f64>,
    pub(super) global: Vec<f64>,
}

impl Scores {
    pub(super) fn zeros(p: usize, k: usize, with_global: bool) -> Self {
        let g = if with_global { p } else { 0 };
        Scores {
            absolute: vec![0.0; p * k],
            signed: vec![0.0; p * k],
            importances: vec![0.0; g],
            global: vec![0.0; g],
        }
    }

    pub(super) fn add(&mut self, other: &Scores) {
        for (a, b) in [
            (&mut self.absolute, &other.absolute),
            (&mut self.signed, &other.signed),
            (&mut self.importances, &other.importances),
            (&mut self.global, &other.global),
        ] {
            a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
        }
    }
}

/// Targets with the impurity of the forest: per-slot statistics `[w, c_0 … c_{C−1}]` (class
/// counts) or `[w, Σ w y, Σ w y²]`.
pub(super) enum Impurity<'a> {
    Classes {
        y: &'a [u32],
        n_classes: usize,
        entropy: bool,
        /// `k log₂ k` for `k = 0..=W` when every weight is an integer: the entropy of integer
        /// counts is then `(W log₂ W − Σ c log₂ c) / W` with table look-ups instead of
        /// logarithms, which dominate the cost of a permutation.
        xlogx: Vec<f64>,
    },
    Variance(&'a [f64]),
}

impl Impurity<'_> {
    pub(super) fn width(&self) -> usize {
        match self {
            Impurity::Classes { n_classes, .. } => 1 + n_classes,
            Impurity::Variance(_) => 3,
        }
    }

    #[inline]
    fn add(&self, slot: &mut [f64], i: usize, w: f64) {
        slot[0] += w;
        match self {
            Impurity::Classes { y, .. } => slot[1 + y[i] as usize] += w,
            Impurity::Variance(y) => {
                slot[1] += w * y[i];
                slot[2] += w * y[i] * y[i];
            }
        }
    }

    /// `i(t)` of a statistics slot (0 for an empty one): entropy in bits, Gini, or variance,
    /// the criteria's own impurities (`crate::tree::criterion`). Only integer-weighted
    /// entropy has its own form here, by table look-ups.
    fn of(&self, slot: &[f64]) -> f64 {
        let w = slot[0];
        if w <= 0.0 {
            return 0.0;
        }
        match self {
            Impurity::Classes {
                entropy: true,
                xlogx,
                ..
            } if !xlogx.is_empty() => {
                let t = |c: f64| xlogx[c as usize];
                (t(w) - slot[1..].iter().map(|&c| t(c)).sum::<f64>()) / w
            }
            Impurity::Classes { entropy: true, .. } => ShannonEntropy::impurity(&slot[1..], w),
            Impurity::Classes { .. } => GiniIndex::impurity(&slot[1..], w),
            Impurity::Variance(_) => SquaredError { y: &[] }.impurity(slot),
        }
    }
}

/// A split node reached by the data, with the context-free part of its scores.
struct ReachedSplit {
    node: usize,
    feature: usize,
    /// `p(t) = w_t / W`.
    mass: f64,
    /// `I(Y; S_t | t)` from all samples of the node.
    info: f64,
}

/// One tree's routing of the data: the leaf of every sample and its reached splits.
pub(super) struct Routed {
    leaf: Vec<u32>,
    splits: Vec<ReachedSplit>,
}

/// Per-tree scratch of per-(node, context) statistics and impurities.
pub(super) struct ContextStats {
    stats: Vec<f64>,
    imp: Vec<f64>,
}

/// Largest total weight for which entropies use a table of `k log₂ k` (8 MiB).
const MAX_TABLE: usize = 1 << 20;

pub(super) fn checked_impurity<'a>(
    forest: &Forest,
    targets: Targets<'a>,
    n: usize,
    weights: Option<&[f64]>,
) -> Result<Impurity<'a>> {
    if targets.len() != n {
        return Err(ForestError::Shape(format!(
            "y has {} values but X has {n} rows",
            targets.len()
        )));
    }
    match (targets, forest.params().criterion) {
        (Targets::Classes { y, n_classes }, c) if forest.n_classes() == n_classes => {
            let entropy = c == CriterionKind::Entropy;
            let integral = weights.is_none_or(|w| w.iter().all(|v| v.fract() == 0.0));
            let total = weights.map_or(n as f64, |w| w.iter().sum());
            let xlogx = if entropy && integral && total <= MAX_TABLE as f64 {
                (0..=total as usize).map(|k| xlog2x(k as f64)).collect()
            } else {
                Vec::new()
            };
            Ok(Impurity::Classes {
                y,
                n_classes,
                entropy,
                xlogx,
            })
        }
        (Targets::Regression(_), c @ (CriterionKind::Poisson | CriterionKind::AbsoluteError)) => {
            let name = match c {
                CriterionKind::Poisson => "poisson",
                _ => "absolute_error",
            };
            Err(ForestError::Unsupported(format!(
                "context importances recompute node impurities as variances; they are not \
                 available for a forest grown with criterion='{name}'"
            )))
        }
        (Targets::Regression(y), _) if forest.n_classes() == 0 => {
            Targets::regression(y)?;
            Ok(Impurity::Variance(y))
        }
        _ => Err(ForestError::InvalidTarget(format!(
            "the targets do not match the forest ({} classes; 0 means regression)",
            forest.n_classes()
        ))),
    }
}

/// Routes every sample of `x` through `tree` and computes `p(t)` and `I(Y; S_t | t)` of each
/// split reached by a positive weight.
pub(super) fn route<T: Feature>(
    tree: &Tree,
    x: &Matrix<'_, T>,
    impurity: &Impurity<'_>,
    weight: &(impl Fn(usize) -> f64 + Sync),
    total: f64,
) -> Routed {
    let s = impurity.width();
    let mut leaf = vec![0u32; x.n_rows()];
    tree.leaves(x, 0, &mut leaf);
    let mut stats = vec![0.0; tree.len() * s];
    for (i, &l) in leaf.iter().enumerate() {
        impurity.add(
            &mut stats[l as usize * s..(l as usize + 1) * s],
            i,
            weight(i),
        );
    }
    let mut imp = vec![0.0; tree.len()];
    let mut splits = Vec::new();
    for t in (0..tree.len()).rev() {
        if let Some((l, r)) = tree.children(t) {
            for q in 0..s {
                stats[t * s + q] = stats[l * s + q] + stats[r * s + q];
            }
        }
        imp[t] = impurity.of(&stats[t * s..(t + 1) * s]);
        if let Some((l, r)) = tree.children(t) {
            let wt = stats[t * s];
            if wt > 0.0 {
                let info = imp[t] - stats[l * s] / wt * imp[l] - stats[r * s] / wt * imp[r];
                splits.push(ReachedSplit {
                    node: t,
                    feature: tree.feature(t) as usize,
                    mass: wt / total,
                    info,
                });
            }
        }
    }
    splits.reverse(); // pre-order, so per-feature sums run in a fixed node order
    Routed { leaf, splits }
}

impl ContextStats {
    pub(super) fn new() -> Self {
        ContextStats {
            stats: Vec::new(),
            imp: Vec::new(),
        }
    }

    /// Statistics and impurity of every (node, context value) for the context `ctx`.
    pub(super) fn fill(
        &mut self,
        tree: &Tree,
        routed: &Routed,
        ctx: &[u32],
        k: usize,
        impurity: &Impurity<'_>,
        weight: &(impl Fn(usize) -> f64 + Sync),
    ) {
        let s = impurity.width();
        let ks = k * s;
        self.stats.clear();
        self.stats.resize(tree.len() * ks, 0.0);
        self.imp.clear();
        self.imp.resize(tree.len() * k, 0.0);
        for (i, &l) in routed.leaf.iter().enumerate() {
            let at = l as usize * ks + ctx[i] as usize * s;
            impurity.add(&mut self.stats[at..at + s], i, weight(i));
        }
        for t in (0..tree.len()).rev() {
            if let Some((l, r)) = tree.children(t) {
                for q in 0..ks {
                    self.stats[t * ks + q] = self.stats[l * ks + q] + self.stats[r * ks + q];
                }
            }
            for c in 0..k {
                let at = t * ks + c * s;
                self.imp[t * k + c] = impurity.of(&self.stats[at..at + s]);
            }
        }
    }
}

/// Adds one tree's contributions to `out` (`Imp` and the global score only if `out` has them).
pub(super) fn accumulate(
    tree: &Tree,
    routed: &Routed,
    scratch: &ContextStats,
    k: usize,
    s: usize,
    empty: EmptyContext,
    out: &mut Scores,
) {
    let ks = k * s;
    let with_global = !out.global.is_empty();
    for sp in &routed.splits {
        let (t, m) = (sp.node, sp.feature);
        let (l, r) = (t + 1, tree.children(t).map_or(t, |c| c.1));
        let wt_all = sp.mass;
        let mut conditional = 0.0; // Σ_c P(c|t) I(·|t,c)
        let mut w_node = 0.0;
        for c in 0..k {
            let wtc = scratch.stats[t * ks + c * s];
            let info_c = if wtc > 0.0 {
                let wl = scratch.stats[l * ks + c * s];
                let wr = scratch.stats[r * ks + c * s];
                scratch.imp[t * k + c]
                    - wl / wtc * scratch.imp[l * k + c]
                    - wr / wtc * scratch.imp[r * k + c]
            } else if empty == EmptyContext::Zero {
                0.0
            } else {
                continue;
            };
            let d = sp.info - info_c;
            out.absolute[m * k + c] += wt_all * d.abs();
            out.signed[m * k + c] += wt_all * d;
            conditional += wtc * info_c;
            w_node += wtc;
        }
        if with_global {
            out.importances[m] += wt_all * sp.info;
            if w_node > 0.0 {
                out.global[m] += wt_all * (sp.info - conditional / w_node);
            }
        }
    }
}

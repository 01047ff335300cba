//! What defines how a booster is grown ([`BoostParams`]), checked; the trees' parameters in
//! the canonical form a booster stores; and those a warm start may change.

use super::Loss;
use crate::error::{invalid, Result};
use crate::params::{CriterionKind, FeatureCount, ForestParams, Resolved};

/// Everything that defines how a booster is grown.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BoostParams {
    /// The loss.
    pub loss: Loss,
    /// Shrinkage of every leaf value.
    pub learning_rate: f64,
    /// Number of rounds.
    pub n_estimators: usize,
    /// Fraction of the rows each round grows its trees on, drawn without replacement.
    pub subsample: f64,
    /// Start from 0 instead of the loss's optimal constant (scikit-learn's `init="zero"`).
    pub init_zero: bool,
    /// Stop when the validation loss has not improved by `tol` for this many rounds.
    pub n_iter_no_change: Option<usize>,
    /// Improvement that counts for early stopping.
    pub tol: f64,
    /// The trees: splitter, `max_features`, per-tree feature subset (`tree_features`), the
    /// size rules and `seed`; its criterion, `n_estimators` and row sampling are not read.
    #[cfg_attr(feature = "serde", serde(skip, default = "default_tree_params"))]
    pub tree: ForestParams,
}

#[cfg(feature = "serde")]
fn default_tree_params() -> ForestParams {
    ForestParams::random_forest(CriterionKind::SquaredError)
}

/// Copies into a kept booster's parameters the trees' size rules of a warm start's new ones
/// (given, `tree`, and resolved, `r`): the rules a warm start may change.
pub(super) fn adopt_size_rules(
    kept: &mut ForestParams,
    kept_r: &mut Resolved,
    tree: &ForestParams,
    r: &Resolved,
) {
    kept.max_features = tree.max_features;
    kept.max_depth = tree.max_depth;
    kept.min_samples_split = tree.min_samples_split;
    kept.min_samples_leaf = tree.min_samples_leaf;
    kept.min_weight_fraction_leaf = tree.min_weight_fraction_leaf;
    kept.min_impurity_decrease = tree.min_impurity_decrease;
    kept.max_leaf_nodes = tree.max_leaf_nodes;
    kept.tree_features = tree.tree_features;
    kept.ccp_alpha = tree.ccp_alpha;
    kept_r.max_features = r.max_features;
    kept_r.max_depth = r.max_depth;
    kept_r.min_samples_split = r.min_samples_split;
    kept_r.min_samples_leaf = r.min_samples_leaf;
    kept_r.min_weight_fraction_leaf = r.min_weight_fraction_leaf;
    kept_r.min_impurity_decrease = r.min_impurity_decrease;
    kept_r.max_leaf_nodes = r.max_leaf_nodes;
    kept_r.tree_features = r.tree_features;
    kept_r.ccp_alpha = r.ccp_alpha;
}

/// The tree parameters of `r` (a booster's session) as a [`ForestParams`]: the form a
/// booster stores, and rebuilds from its model bytes.
pub(crate) fn tree_params(r: &Resolved, ccp_alpha: f64) -> ForestParams {
    let mut t = ForestParams::random_forest(CriterionKind::SquaredError);
    t.splitter = r.splitter;
    t.n_estimators = 1;
    t.max_features = FeatureCount::Count(r.max_features);
    t.max_depth = (r.max_depth != usize::MAX).then_some(r.max_depth);
    t.min_samples_split = r.min_samples_split;
    t.min_samples_leaf = r.min_samples_leaf;
    t.min_weight_fraction_leaf = r.min_weight_fraction_leaf;
    t.min_impurity_decrease = r.min_impurity_decrease;
    t.max_leaf_nodes = r.max_leaf_nodes;
    t.bootstrap = false;
    t.tree_features =
        (r.tree_features < r.n_features).then_some(FeatureCount::Count(r.tree_features));
    t.seed = r.seed;
    t.ccp_alpha = ccp_alpha;
    t.categorical = r.categorical.clone();
    t.category_guards = r.category_guards;
    t
}

impl BoostParams {
    /// Refuses values out of range, and a loss that does not fit the task.
    pub(super) fn check(&self, n_classes: usize) -> Result<()> {
        if !(self.learning_rate >= 0.0 && self.learning_rate.is_finite()) {
            return Err(invalid("learning_rate", "must be a finite value >= 0"));
        }
        crate::params::check_n_estimators(self.n_estimators)?;
        if !(self.subsample > 0.0 && self.subsample <= 1.0) {
            return Err(invalid("subsample", "must be in (0, 1]"));
        }
        if !(self.tol >= 0.0 && self.tol.is_finite()) {
            return Err(invalid("tol", "must be a finite value >= 0"));
        }
        if self.n_iter_no_change == Some(0) {
            return Err(invalid("n_iter_no_change", "must be at least 1 (or None)"));
        }
        if let Loss::Huber { alpha } | Loss::Quantile { alpha } = self.loss {
            if !(alpha > 0.0 && alpha < 1.0) {
                return Err(invalid("alpha", "must be in (0, 1)"));
            }
        }
        match (self.loss, n_classes) {
            (Loss::LogLoss, c) if c < 2 => {
                Err(invalid("loss", "log_loss needs at least 2 classes"))
            }
            (Loss::Exponential, c) if c != 2 => Err(invalid(
                "loss",
                "exponential requires 2 classes; use log_loss for more",
            )),
            (l, c) if l.is_classification() == (c == 0) => {
                Err(invalid("loss", "the loss does not match the task"))
            }
            _ => Ok(()),
        }
    }
}

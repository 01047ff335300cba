//! Hyper-parameters of trees and forests, and their validation against a data shape.
//!
//! [`ForestParams`] is what a user states (`"sqrt"`, fractions, ...); [`Resolved`] is what
//! the engine runs with once `n_samples` and `n_features` are known. Fitting code only ever
//! sees `Resolved`, so it never meets an invalid value.

use crate::error::{invalid, Result};

/// Impurity measure used to choose splits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CriterionKind {
    /// Gini index `1 − Σ_k p_k²`.
    Gini,
    /// Shannon entropy `−Σ_k p_k log₂ p_k`, in bits.
    Entropy,
    /// Weighted variance of the output (regression).
    SquaredError,
    /// Half Poisson deviance `Σ w y log(y / ȳ) / Σ w` (regression, `y ≥ 0`; scikit-learn's
    /// `"poisson"`). Variants are appended: the enum index is part of the model bytes.
    Poisson,
    /// Weighted mean absolute deviation from the weighted median, `Σ w |y − m| / Σ w`
    /// (regression; scikit-learn's `"absolute_error"`): nodes predict the median `m`.
    /// Grown by the exact and random splitters only (`tree::split::median`).
    AbsoluteError,
}

impl CriterionKind {
    /// Whether the criterion is for regression (a real output, leaf impurities stored).
    pub fn is_regression(self) -> bool {
        matches!(
            self,
            CriterionKind::SquaredError | CriterionKind::Poisson | CriterionKind::AbsoluteError
        )
    }
}

/// How the threshold of a candidate feature is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SplitterKind {
    /// CART: the best mid-point between consecutive distinct node values.
    Best,
    /// Extra-Trees: one threshold drawn uniformly in `(min, max)` of the node values.
    Random,
    /// Multiway splits on integer-coded categorical inputs (one child per observed value),
    /// candidates drawn among the variables not yet used on the branch; see
    /// `tree::multiway`. Appended last: the enum index is part of the model bytes.
    Multiway,
    /// CART on histograms: each feature is binned once into at most `max_bins` (2..=256)
    /// one-byte codes ([`crate::data::Binned`]) and the best boundary between bins is chosen;
    /// the stored threshold is the real value between the bins.
    Histogram {
        /// Bins per feature.
        max_bins: u16,
    },
}

/// Number of features, stated absolutely or relative to the number available.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FeatureCount {
    /// All features.
    All,
    /// `max(1, floor(sqrt(p)))`.
    Sqrt,
    /// `max(1, floor(log2(p)))`.
    Log2,
    /// Exactly this many (1 ≤ k ≤ p).
    Count(usize),
    /// `max(1, floor(f · p))` for `0 < f ≤ 1`.
    Fraction(f64),
}

impl FeatureCount {
    fn resolve(self, name: &'static str, p: usize) -> Result<usize> {
        let k = match self {
            FeatureCount::All => p,
            FeatureCount::Sqrt => ((p as f64).sqrt() as usize).max(1),
            FeatureCount::Log2 => ((p as f64).log2() as usize).max(1),
            FeatureCount::Count(k) => k,
            FeatureCount::Fraction(f) => {
                if !(f > 0.0 && f <= 1.0) {
                    return Err(invalid(
                        name,
                        format!("fraction must be in (0, 1], got {f}"),
                    ));
                }
                ((f * p as f64) as usize).max(1)
            }
        };
        if k == 0 || k > p {
            return Err(invalid(
                name,
                format!("must select between 1 and {p} features, got {k}"),
            ));
        }
        Ok(k)
    }
}

/// Number of rows drawn for each tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SampleCount {
    /// Exactly this many rows (1 ≤ m, and m ≤ n without replacement).
    Count(usize),
    /// `max(1, round(f · n))` for `0 < f ≤ 1`.
    Fraction(f64),
}

/// Everything that defines how a forest is grown.
///
/// Bagging is `bootstrap = true`; Pasting is `bootstrap = false` with `max_samples`;
/// Random Subspace is `tree_features`; Random Patches is both (Louppe 2014, ch. 8).
#[derive(Clone, Debug, PartialEq)]
pub struct ForestParams {
    /// Impurity measure.
    pub criterion: CriterionKind,
    /// Threshold search strategy.
    pub splitter: SplitterKind,
    /// Number of trees.
    pub n_estimators: usize,
    /// Candidate features drawn at each node (K), relative to the tree's feature subset.
    pub max_features: FeatureCount,
    /// Maximum depth (root has depth 0); `None` grows until the other rules stop.
    pub max_depth: Option<usize>,
    /// A node with fewer samples is a leaf.
    pub min_samples_split: usize,
    /// Each child must keep at least this many samples.
    pub min_samples_leaf: usize,
    /// Each child must keep at least this fraction of the tree's total sample weight.
    pub min_weight_fraction_leaf: f64,
    /// A split must decrease the weighted impurity `N_t/N · Δi(t)` by at least this much.
    pub min_impurity_decrease: f64,
    /// Grow best-first with at most this many leaves.
    pub max_leaf_nodes: Option<usize>,
    /// Draw rows with replacement (bootstrap) rather than without.
    pub bootstrap: bool,
    /// Rows drawn per tree; `None` means `n_samples`.
    pub max_samples: Option<SampleCount>,
    /// Random feature subset per tree; `None` keeps all features.
    pub tree_features: Option<FeatureCount>,
    /// Re-weight classes per tree from the in-bag class counts (sklearn's "balanced_subsample").
    pub balanced_subsample: bool,
    /// Master seed; tree `i` depends only on `(seed, i)`.
    pub seed: u64,
    /// Minimal cost-complexity pruning of each grown tree (scikit-learn's `ccp_alpha`,
    /// `tree::prune`); 0 keeps the trees as grown.
    pub ccp_alpha: f64,
    /// Monotonic constraint per feature (scikit-learn's `monotonic_cst`): `1` increasing,
    /// `-1` decreasing, `0` free; for a binary classifier, on the probability of the second
    /// class. Single-output regression and binary classification only
    /// (`tree::monotone`).
    pub monotonic_cst: Option<Vec<i8>>,
    /// Per feature, whether it is categorical: its values are category codes `0, 1, …`
    /// (NaN missing), and nodes split it by sets of categories (`tree::categories`). The
    /// exact and random splitters only.
    pub categorical: Option<Vec<bool>>,
    /// The best split's guards against fitting rare categories of the categorical features.
    pub category_guards: CategoryGuards,
}

/// The best split's guards against fitting rare categories
/// (`crate::tree::split::scan::categories`; LightGBM's `cat_smooth` and `max_cat_threshold`,
/// and its rare-category cut-off as one pooled group). [`CategoryGuards::NONE`] guards
/// nothing: the search is then exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CategoryGuards {
    /// Rows of the node's mean added to each category's sums to order it: a category of
    /// few rows is ordered near the node's mean.
    pub smoothing: f64,
    /// Categories with fewer rows in the node are ordered as one group, and so go together.
    pub min_samples: usize,
    /// At most this many groups on the smaller side of a cut (0: no limit).
    pub max_side: usize,
    /// Categories holding a smaller share of the node's rows are rare too.
    pub min_share: f64,
    /// How much of the gain that `L` groups win over one cut by chance alone (`L − 2` times
    /// the criterion's `independent_gain`, times the share an ordered cut keeps:
    /// `crate::tree::criterion::Criterion`) a best categorical split gives up when it is
    /// compared with the node's other candidates.
    /// Within a feature the best set is still the exact one: this only keeps a column of
    /// many noisy levels from winning every node where it is drawn.
    pub penalty: f64,
}

impl CategoryGuards {
    /// No guard: every cut of the order of the categories' own values, compared as is.
    pub const NONE: CategoryGuards = CategoryGuards {
        smoothing: 0.0,
        min_samples: 1,
        max_side: 0,
        min_share: 0.0,
        penalty: 0.0,
    };

    /// The default: the exact best set of each feature, compared with the other features
    /// net of its chance gain (`penalty` 1).
    pub const DEFAULT: CategoryGuards = CategoryGuards {
        penalty: 1.0,
        ..CategoryGuards::NONE
    };

    /// Refuses a negative or non-finite smoothing or penalty, a share outside `[0, 1)` and a
    /// zero `min_samples`.
    pub(crate) fn check(&self) -> Result<()> {
        if !(self.smoothing >= 0.0 && self.smoothing.is_finite()) {
            return Err(invalid("category_smoothing", "must be a finite value >= 0"));
        }
        if !(0.0..1.0).contains(&self.min_share) {
            return Err(invalid("min_category_share", "must be in [0, 1)"));
        }
        if !(self.penalty >= 0.0 && self.penalty.is_finite()) {
            return Err(invalid("category_penalty", "must be a finite value >= 0"));
        }
        if self.min_samples == 0 {
            return Err(invalid("min_category_samples", "must be at least 1"));
        }
        Ok(())
    }
}

impl Default for CategoryGuards {
    fn default() -> Self {
        CategoryGuards::DEFAULT
    }
}

impl ForestParams {
    fn base(criterion: CriterionKind, splitter: SplitterKind, bootstrap: bool) -> Self {
        ForestParams {
            criterion,
            splitter,
            n_estimators: 100,
            max_features: FeatureCount::Sqrt,
            max_depth: None,
            min_samples_split: 2,
            min_samples_leaf: 1,
            min_weight_fraction_leaf: 0.0,
            min_impurity_decrease: 0.0,
            max_leaf_nodes: None,
            bootstrap,
            max_samples: None,
            tree_features: None,
            balanced_subsample: false,
            seed: 0,
            ccp_alpha: 0.0,
            monotonic_cst: None,
            categorical: None,
            category_guards: CategoryGuards::DEFAULT,
        }
    }

    /// Breiman's Random Forest: bootstrap, best splits, K = sqrt(p).
    pub fn random_forest(criterion: CriterionKind) -> Self {
        Self::base(criterion, SplitterKind::Best, true)
    }

    /// Geurts' Extra-Trees: whole learning set, random thresholds, K = sqrt(p).
    pub fn extra_trees(criterion: CriterionKind) -> Self {
        Self::base(criterion, SplitterKind::Random, false)
    }

    /// Totally randomized trees: Extra-Trees with K = 1, fully grown.
    pub fn totally_randomized(criterion: CriterionKind) -> Self {
        ForestParams {
            max_features: FeatureCount::Count(1),
            ..Self::extra_trees(criterion)
        }
    }

    /// Louppe's Random Patches: each tree on `α_s·N` rows × `α_f·p` features drawn without
    /// replacement, Extra-Trees splits over all features of the patch.
    pub fn random_patches(criterion: CriterionKind, alpha_s: f64, alpha_f: f64) -> Self {
        ForestParams {
            max_features: FeatureCount::All,
            max_samples: Some(SampleCount::Fraction(alpha_s)),
            tree_features: Some(FeatureCount::Fraction(alpha_f)),
            ..Self::extra_trees(criterion)
        }
    }

    /// Checks every value against the data shape and resolves relative sizes.
    pub fn resolve(
        &self,
        n_samples: usize,
        n_features: usize,
        classification: bool,
    ) -> Result<Resolved> {
        if n_samples == 0 || n_features == 0 {
            return Err(crate::ForestError::Shape(format!(
                "need at least one sample and one feature, got {n_samples} x {n_features}"
            )));
        }
        if n_samples >= u32::MAX as usize || n_features >= u32::MAX as usize {
            return Err(crate::ForestError::Shape(
                "more than 2^32 - 1 rows or columns".into(),
            ));
        }
        match (self.criterion.is_regression(), classification) {
            (true, true) => {
                return Err(invalid(
                    "criterion",
                    "squared_error, absolute_error and poisson are for regression",
                ))
            }
            (false, false) => {
                return Err(invalid(
                    "criterion",
                    "gini and entropy are for classification",
                ))
            }
            _ => {}
        }
        check_n_estimators(self.n_estimators)?;
        if self.max_depth == Some(0) {
            return Err(invalid("max_depth", "must be at least 1 (or None)"));
        }
        if self.min_samples_split < 2 {
            return Err(invalid(
                "min_samples_split",
                format!("must be at least 2, got {}", self.min_samples_split),
            ));
        }
        if self.min_samples_leaf < 1 {
            return Err(invalid("min_samples_leaf", "must be at least 1"));
        }
        if !(0.0..=0.5).contains(&self.min_weight_fraction_leaf) {
            return Err(invalid(
                "min_weight_fraction_leaf",
                format!("must be in [0, 0.5], got {}", self.min_weight_fraction_leaf),
            ));
        }
        if !(self.min_impurity_decrease >= 0.0 && self.min_impurity_decrease.is_finite()) {
            return Err(invalid(
                "min_impurity_decrease",
                "must be a finite value >= 0",
            ));
        }
        if !(self.ccp_alpha >= 0.0 && self.ccp_alpha.is_finite()) {
            return Err(invalid("ccp_alpha", "must be a finite value >= 0"));
        }
        if self.splitter == SplitterKind::Multiway && self.ccp_alpha > 0.0 {
            return Err(invalid(
                "ccp_alpha",
                "pruning is not available with multiway splits (it would cut their chains)",
            ));
        }
        if self.splitter == SplitterKind::Multiway && self.max_leaf_nodes.is_some() {
            return Err(invalid(
                "max_leaf_nodes",
                "best-first growth is not available with multiway splits",
            ));
        }
        if self.criterion == CriterionKind::AbsoluteError
            && !matches!(self.splitter, SplitterKind::Best | SplitterKind::Random)
        {
            // Bins and multiway chains score sums per bin or per level; a median is not a
            // sum, and an order-statistic search over bins is not written.
            return Err(crate::ForestError::Unsupported(
                "criterion=\"absolute_error\" is grown by the exact and random splitters \
                 only (splitter=\"best\" or \"random\"), not by splitter=\"hist\" or \
                 multiway=True"
                    .into(),
            ));
        }
        if let SplitterKind::Histogram { max_bins } = self.splitter {
            if !(2..=256).contains(&max_bins) {
                return Err(invalid(
                    "max_bins",
                    format!("must be between 2 and 256, got {max_bins}"),
                ));
            }
        }
        if let Some(m) = self.max_leaf_nodes {
            if m < 2 {
                return Err(invalid(
                    "max_leaf_nodes",
                    format!("must be at least 2, got {m}"),
                ));
            }
        }
        let monotonic_cst = crate::tree::monotone::resolve(
            self.monotonic_cst.as_deref(),
            n_features,
            classification,
            self.splitter,
        )?;
        let categorical = self.resolve_categorical(n_features, monotonic_cst.as_deref())?;
        self.category_guards.check()?;
        let tree_features = match self.tree_features {
            None => n_features,
            Some(c) => c.resolve("tree_features", n_features)?,
        };
        let max_features = self.max_features.resolve("max_features", tree_features)?;
        let n_draws = match self.max_samples {
            None => n_samples,
            Some(SampleCount::Count(m)) => m,
            Some(SampleCount::Fraction(f)) => {
                if !(f > 0.0 && f <= 1.0) {
                    return Err(invalid(
                        "max_samples",
                        format!("fraction must be in (0, 1], got {f}"),
                    ));
                }
                ((f * n_samples as f64).round() as usize).max(1)
            }
        };
        if n_draws == 0 || (!self.bootstrap && n_draws > n_samples) {
            return Err(invalid(
                "max_samples",
                format!("must be between 1 and n_samples = {n_samples}, got {n_draws}"),
            ));
        }
        if !draws_in_bounds(n_draws, n_samples) {
            return Err(invalid(
                "max_samples",
                format!(
                    "must be below 2^32 and at most {MAX_DRAWS_PER_ROW} draws per training \
                     row ({n_samples} rows), got {n_draws}"
                ),
            ));
        }
        Ok(Resolved {
            criterion: self.criterion,
            splitter: self.splitter,
            n_estimators: self.n_estimators,
            max_features,
            max_depth: self.max_depth.unwrap_or(usize::MAX),
            min_samples_split: self.min_samples_split,
            min_samples_leaf: self.min_samples_leaf,
            min_weight_fraction_leaf: self.min_weight_fraction_leaf,
            min_impurity_decrease: self.min_impurity_decrease,
            max_leaf_nodes: self.max_leaf_nodes,
            bootstrap: self.bootstrap,
            n_draws,
            n_samples,
            n_features,
            tree_features,
            balanced_subsample: self.balanced_subsample && classification,
            seed: self.seed,
            first_tree: 0,
            assembled: false,
            ccp_alpha: self.ccp_alpha,
            // The guards shape categorical features only: without any, the defaults, so
            // that the parameters a model file keeps (it writes guards with flags) compare
            // equal to a refit's.
            category_guards: match categorical {
                Some(_) => self.category_guards,
                None => CategoryGuards::DEFAULT,
            },
            monotonic_cst,
            categorical,
        })
    }

    /// The categorical flags, checked against the features and the rest of the
    /// parameters; None when no feature is categorical.
    fn resolve_categorical(
        &self,
        n_features: usize,
        monotonic: Option<&[i8]>,
    ) -> Result<Option<Vec<bool>>> {
        let Some(flags) = self.categorical.as_ref().filter(|c| c.iter().any(|&b| b)) else {
            return Ok(None);
        };
        if flags.len() != n_features {
            return Err(invalid(
                "categorical_features",
                format!("has {} flags for {n_features} features", flags.len()),
            ));
        }
        if self.splitter == SplitterKind::Multiway {
            return Err(crate::error::ForestError::Unsupported(
                "multiway=True splits every integer-coded feature into one child per value: \
                 declare no categorical_features with it"
                    .into(),
            ));
        }
        if self.criterion == CriterionKind::AbsoluteError {
            return Err(crate::error::ForestError::Unsupported(
                "categorical features are not split under criterion=\"absolute_error\"".into(),
            ));
        }
        let constrained = |f: usize| monotonic.is_some_and(|m| m[f] != 0);
        if let Some(f) = (0..n_features).find(|&f| flags[f] && constrained(f)) {
            return Err(invalid(
                "monotonic_cst",
                format!("feature {f} is categorical: its categories have no order to keep"),
            ));
        }
        Ok(Some(flags.clone()))
    }
}

/// Validated parameters with every size made absolute; stored inside the model.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Resolved {
    /// Impurity measure.
    pub criterion: CriterionKind,
    /// Threshold search strategy.
    pub splitter: SplitterKind,
    /// Number of trees.
    pub n_estimators: usize,
    /// K, candidate features per node.
    pub max_features: usize,
    /// Depth limit (`usize::MAX` when unlimited).
    pub max_depth: usize,
    /// See [`ForestParams::min_samples_split`].
    pub min_samples_split: usize,
    /// See [`ForestParams::min_samples_leaf`].
    pub min_samples_leaf: usize,
    /// See [`ForestParams::min_weight_fraction_leaf`].
    pub min_weight_fraction_leaf: f64,
    /// See [`ForestParams::min_impurity_decrease`].
    pub min_impurity_decrease: f64,
    /// See [`ForestParams::max_leaf_nodes`].
    pub max_leaf_nodes: Option<usize>,
    /// Rows drawn with replacement.
    pub bootstrap: bool,
    /// Rows drawn per tree.
    pub n_draws: usize,
    /// Rows of the learning set (needed to regenerate in-bag sets).
    pub n_samples: usize,
    /// Columns of the learning set.
    pub n_features: usize,
    /// Features seen by each tree.
    pub tree_features: usize,
    /// Per-tree class re-weighting.
    pub balanced_subsample: bool,
    /// Master seed.
    pub seed: u64,
    /// Index, in the sequence of trees the seed defines, of this forest's first tree: 0,
    /// except for a part of a forest ([`crate::forest::parts`]). Tree `k` of the forest is
    /// tree `first_tree + k` of the sequence, which is what its rows, features and splits
    /// are drawn for. Written by the model format itself, not inside the parameters.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub first_tree: usize,
    /// Put together from forests grown on other rows or columns ([`crate::Forest::assemble`]):
    /// the rows of its trees cannot be drawn again, so it has no out-of-bag estimates, and
    /// the other fields are those of its first part (but the feature count). Written by the
    /// model format itself.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub assembled: bool,
    /// See [`ForestParams::ccp_alpha`]. Not in the model bytes (the stored trees are
    /// already pruned, and models grown without pruning keep their bytes): a loaded model
    /// reads 0.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub ccp_alpha: f64,
    /// The monotonic constraints the trees were grown with, as internal signs
    /// (`tree::monotone::resolve`; `None` when every sign is 0). Not in the model
    /// bytes, like `ccp_alpha`: they shape growth only, and the trees store their values.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub monotonic_cst: Option<Vec<i8>>,
    /// Per feature, whether it is categorical (None: none is). Not in the model bytes: it
    /// shapes growth only, and each categorical split stores its set.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub categorical: Option<Vec<bool>>,
    /// The guards of the categorical searches (not in the model bytes either).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub category_guards: CategoryGuards,
}

impl Resolved {
    /// Whether some rows are left out of some trees, so OOB estimates exist.
    pub fn has_oob(&self) -> bool {
        !self.assembled && (self.bootstrap || self.n_draws < self.n_samples)
    }
}

/// The most rows a tree may draw per training row. More draws add nothing to a bootstrap
/// sample but time, here and in every out-of-bag pass, which replays the draws: the bound
/// keeps a model file from asking for hours of work it holds nothing for.
pub const MAX_DRAWS_PER_ROW: usize = 1024;

/// Whether `n_draws` rows drawn per tree from `n_samples` are within the bounds a fit takes
/// (and a model file is checked against).
pub(crate) fn draws_in_bounds(n_draws: usize, n_samples: usize) -> bool {
    n_draws < u32::MAX as usize && n_draws <= n_samples.saturating_mul(MAX_DRAWS_PER_ROW)
}

/// The most trees a forest or a booster may have: the model format and the seeds' streams
/// index trees with `u32`.
pub const MAX_TREES: usize = u32::MAX as usize - 1;

/// `n_estimators` in `[1, MAX_TREES]`, and as many trees as memory can hold at the least (a
/// tree's record, before any node): more is refused before the fit starts, not after hours.
pub(crate) fn check_n_estimators(n_estimators: usize) -> Result<()> {
    if !(1..=MAX_TREES).contains(&n_estimators) {
        return Err(invalid(
            "n_estimators",
            format!("must be in [1, {MAX_TREES}], got {n_estimators}"),
        ));
    }
    crate::error::ensure_allocatable(
        n_estimators,
        std::mem::size_of::<crate::tree::Tree>(),
        "the trees (n_estimators)",
    )
}

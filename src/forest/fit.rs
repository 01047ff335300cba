//! Fitting: validation once, then trees grown independently from their own seeds.
//!
//! [`FitSession`] lets a caller grow any range of trees, or watch a fit from another thread
//! and stop it (the Python binding checks for Ctrl-C and reports progress that way);
//! because tree `i` depends only on `(seed, i)`, ranges and thread count never change the
//! result.

use super::class_weight::reweigh_balanced;
use super::target_checks::{check_multi_output, check_poisson_targets};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::sampling::{in_bag_counts, split_rng, tree_features};
use super::Forest;
use crate::data::{check_sums, check_weights, Binned, Feature, Levels, Matrix, RowIndex, Targets};
use crate::error::{invalid, ForestError, Result};
use crate::parallel::map_ordered;
use crate::params::{CriterionKind, ForestParams, Resolved, SplitterKind};
use crate::tree::builder::Grower;
use crate::tree::criterion::{
    AbsoluteError, Criterion, Entropy, Gini, MultiAbsoluteError, MultiEntropy, MultiGini,
    MultiSquaredError, Poisson, SquaredError,
};
use crate::tree::growing::GrowingTree;
use crate::tree::multiway;
use crate::tree::split::{BestThreshold, HistThreshold, RandomThreshold, SpareBins, ThresholdRule};
use crate::tree::Tree;

/// Trees grown between two waits in [`FitSession::fit_range_watched`].
const WATCHED_WINDOW: usize = 1024;

/// A validated learning problem, ready to grow any tree of the forest.
pub struct FitSession<'a, T> {
    x: Matrix<'a, T>,
    targets: Targets<'a>,
    sample_weight: Option<&'a [f64]>,
    params: Resolved,
    /// Bin codes of `x`, for the histogram splitter only.
    binned: Option<Binned>,
    /// Per column of `x`, whether it holds NaN (its bin code [`crate::data::NAN_CODE`] is
    /// then its missing-values bin), for the histogram splitter of X with NaN only.
    nan_bins: Option<Vec<bool>>,
    /// Lossless codes of the columns of `x` with few values, for the exact splitter
    /// (which then grows the same trees faster).
    levels: Option<Levels>,
    /// The entries of a sparse `x` by row, which tell a node's constant features.
    by_row: Option<RowIndex>,
}

impl<'a, T: Feature> FitSession<'a, T> {
    /// Checks shapes, finiteness, weights and parameters.
    pub fn new(
        params: &ForestParams,
        x: Matrix<'a, T>,
        targets: Targets<'a>,
        sample_weight: Option<&'a [f64]>,
    ) -> Result<Self> {
        Self::with_bins(params, x, targets, sample_weight, None)
    }

    /// [`FitSession::new`] where the histogram splitter reads `bins`, made once from the
    /// stored matrix `x` views, instead of binning `x` (the same codes: [`Binned::view_of`];
    /// bins made with another `max_bins` are not used). Selections fit many forests on views
    /// of one X and bin it once.
    pub fn with_bins(
        params: &ForestParams,
        x: Matrix<'a, T>,
        targets: Targets<'a>,
        sample_weight: Option<&'a [f64]>,
        bins: Option<(&Binned, usize)>,
    ) -> Result<Self> {
        Self::open(params, x, targets, sample_weight, bins, false)
    }

    /// The session of a booster's trees, fitted on the regression target `y`: its trees
    /// sum gradients in any order ([`FitSession::grow_on`]), so columns with up to 65 535
    /// levels get wide codes whatever `y` and the weights are.
    pub(crate) fn for_booster(
        params: &ForestParams,
        x: Matrix<'a, T>,
        y: &'a [f64],
        sample_weight: Option<&'a [f64]>,
    ) -> Result<Self> {
        Self::open(
            params,
            x,
            Targets::regression(y)?,
            sample_weight,
            None,
            true,
        )
    }

    fn open(
        params: &ForestParams,
        x: Matrix<'a, T>,
        targets: Targets<'a>,
        sample_weight: Option<&'a [f64]>,
        bins: Option<(&Binned, usize)>,
        sums_in_any_order: bool,
    ) -> Result<Self> {
        let n = x.n_rows();
        if targets.len() != n {
            return Err(ForestError::Shape(format!(
                "X has {n} rows but y has {} values",
                targets.len()
            )));
        }
        let class_counts: &[usize] = match &targets {
            Targets::Classes { n_classes, .. } => std::slice::from_ref(n_classes),
            Targets::MultiClasses { n_classes, .. } => n_classes,
            _ => &[],
        };
        // Every node stores n_classes values: more classes than samples is a caller error,
        // and refusing it keeps memory bounded by the data.
        if let Some(&n_classes) = class_counts.iter().find(|&&c| c > n.max(1)) {
            return Err(ForestError::InvalidTarget(format!(
                "n_classes = {n_classes} exceeds the number of samples ({n})"
            )));
        }
        let classification = targets.is_classification();
        check_multi_output(&targets, params)?;
        let params = params.resolve(n, x.n_cols(), classification)?;
        let single = matches!(targets, Targets::Regression(_))
            || matches!(targets, Targets::Classes { n_classes, .. } if n_classes <= 2);
        if params.monotonic_cst.is_some() && !single {
            // scikit-learn's rule: a constraint orders one value per node.
            return Err(crate::error::invalid(
                "monotonic_cst",
                "constraints are supported for single-output regression and binary \
                 classification only (not multiclass or multi-output targets)",
            ));
        }
        let missing = if x.is_sparse() {
            if !matches!(params.splitter, SplitterKind::Best | SplitterKind::Random) {
                // Bins and integer codes are dense per column: they would undo the sparse
                // input.
                return Err(ForestError::Unsupported(
                    "sparse X is fitted by the exact and random splitters only (not by \
                     splitter=\"hist\" or multiway=True); pass X.toarray() for those"
                        .into(),
                ));
            }
            // Missing values are not read from a sparse X (whatever the dense rule): its
            // gather knows no NaN side.
            x.check_finite()?;
            None
        } else {
            x.missing_columns()?
        };
        if params.splitter == SplitterKind::Multiway {
            multiway::check_integer_codes(&x)?;
        }
        if let Some(categorical) = &params.categorical {
            if x.is_sparse() {
                return Err(ForestError::Unsupported(
                    "categorical features are split in dense X only: pass X.toarray()".into(),
                ));
            }
            crate::tree::categories::check_codes(&x, categorical)?;
        }
        match targets {
            Targets::Regression(y) => {
                Targets::regression(y)?;
                if params.criterion == CriterionKind::Poisson {
                    check_poisson_targets(y)?;
                }
            }
            Targets::MultiRegression { y, n_outputs } => {
                Targets::multi_regression(y, n_outputs)?;
            }
            Targets::MultiClasses { y, n_classes } => {
                Targets::multi_classes(y, n_classes)?;
            }
            Targets::Classes { .. } => {}
        }
        if let Some(w) = sample_weight {
            if w.len() != n {
                return Err(ForestError::Shape(format!(
                    "sample_weight has {} values for {n} rows",
                    w.len()
                )));
            }
            check_weights(w, "sample_weight")?;
        }
        check_sums(&targets, sample_weight)?;
        let (binned, nan_bins) = match params.splitter {
            SplitterKind::Histogram { max_bins } => {
                let max_bins = usize::from(max_bins);
                // (Bins made for a selection bin no column by category.)
                let categorical = params.categorical.as_deref();
                let cached = bins.filter(|&(_, made_with)| made_with == max_bins);
                let view = cached.filter(|_| categorical.is_none());
                let view = view.and_then(|(b, _)| b.view_of(&x));
                let made = || {
                    let (seed, missing) = (params.seed, missing.as_deref());
                    let binned = Binned::with_missing(&x, max_bins, seed, missing);
                    match categorical {
                        Some(c) => binned.with_categories(&x, c, max_bins, seed, missing),
                        None => binned,
                    }
                };
                (Some(view.unwrap_or_else(made)), missing.clone())
            }
            _ => (None, None),
        };
        // Codes save the exact search a sort per candidate; random thresholds read the
        // values once per candidate and were no faster from codes (BENCHMARKS.md).
        // Columns with NaN are flagged with the codes, for the gathered search. Lossless
        // codes are a byte per row and column: never made for a sparse X.
        // Wide codes (257 to 65 535 levels) serve only trees whose sums are whole (the
        // per-tree test is `Grower::new`'s): made for integer weights and classes or
        // integer targets, or for a booster.
        let whole = |v: &[f64]| v.iter().all(|t| t.fract() == 0.0);
        let wide = sums_in_any_order
            || sample_weight.is_none_or(whole)
                && !matches!(targets, Targets::Regression(y) if !whole(y));
        // The median search sorts a candidate's values; it reads no codes.
        let codes = params.criterion != CriterionKind::AbsoluteError;
        // A booster grows many trees on the same X: its depth-first exact trees read the
        // columns in an order sorted once ([`Levels::with_ranks`]).
        let ranks = sums_in_any_order && params.max_leaf_nodes.is_none();
        // A categorical column is split by sets of its codes, never by their order.
        let coded = || Levels::without(Levels::new(&x, wide), params.categorical.as_deref());
        let levels = match params.splitter {
            SplitterKind::Best if codes && !x.is_sparse() && ranks => {
                Levels::with_ranks(Levels::with_missing(coded(), missing), &x)
            }
            SplitterKind::Best if codes && !x.is_sparse() => Levels::with_missing(coded(), missing),
            SplitterKind::Best | SplitterKind::Random => Levels::with_missing(None, missing),
            _ => None,
        };
        // (A view that has its row index already is given it by the caller.)
        let without = x.csc_index().filter(|c| c.by_row().is_none());
        let by_row = without.map(|c| RowIndex::new(&c, n));
        Ok(FitSession {
            x,
            targets,
            sample_weight,
            params,
            binned,
            nan_bins,
            levels,
            by_row,
        })
    }

    /// The lossless codes, ranks and NaN flags of X's columns (tests).
    #[cfg(test)]
    pub(crate) fn levels(&self) -> Option<&Levels> {
        self.levels.as_ref()
    }

    /// The resolved parameters.
    pub fn params(&self) -> &Resolved {
        &self.params
    }

    /// Grows the trees with indices in `range`, in parallel on the current pool.
    pub fn fit_range(&self, range: Range<usize>) -> Vec<Tree> {
        let start = range.start;
        map_ordered(range.len(), |k| self.fit_tree(start + k))
    }

    /// [`FitSession::fit_range`] that another thread can watch and stop: `grown` counts the
    /// trees finished, and once `stop` is set no tree starts and the result is `None`.
    /// Trees never wait for each other, except every [`WATCHED_WINDOW`] trees, so that an
    /// absurd range is not allocated up front.
    pub fn fit_range_watched(
        &self,
        range: Range<usize>,
        stop: &AtomicBool,
        grown: &AtomicUsize,
    ) -> Option<Vec<Tree>> {
        let mut trees = Vec::with_capacity(range.len().min(WATCHED_WINDOW));
        for start in range.clone().step_by(WATCHED_WINDOW) {
            let end = (start + WATCHED_WINDOW).min(range.end);
            let part = map_ordered(end - start, |k| {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
                let tree = self.fit_tree(start + k);
                grown.fetch_add(1, Ordering::Relaxed);
                Some(tree)
            });
            trees.extend(part.into_iter().collect::<Option<Vec<_>>>()?);
        }
        Some(trees)
    }

    /// Assembles the forest from all its trees, in index order.
    pub fn finish(&self, trees: Vec<Tree>) -> Result<Forest> {
        if trees.len() != self.params.n_estimators {
            return Err(ForestError::Unsupported(format!(
                "expected {} trees, got {}",
                self.params.n_estimators,
                trees.len()
            )));
        }
        Ok(self.finish_unchecked(trees))
    }

    /// The forest of `trees` with the session's parameters, whatever their number.
    pub(super) fn finish_unchecked(&self, trees: Vec<Tree>) -> Forest {
        let n_classes = match self.targets {
            Targets::Classes { n_classes, .. } => n_classes,
            Targets::MultiClasses { .. } => self.targets.width(),
            Targets::Regression(_) | Targets::MultiRegression { .. } => 0,
        };
        Forest {
            params: self.params.clone(),
            n_classes,
            outputs: self.targets.outputs(),
            trees,
        }
    }

    /// Warm start: `previous`, a forest fitted by a session with the same parameters on the
    /// same problem and at most as many trees, followed by `more`, the trees with the next
    /// indices. The result is the forest of all the trees grown at once, bit for bit, since
    /// tree `i` depends only on `(seed, i)`.
    pub fn finish_after(&self, previous: &Forest, more: Vec<Tree>) -> Result<Forest> {
        let mut same = previous.params.clone();
        same.n_estimators = self.params.n_estimators;
        if same != self.params || previous.trees.len() > self.params.n_estimators {
            return Err(invalid(
                "warm_start",
                "more trees need the parameters (other than n_estimators), the random seed \
                 and the shape of the training data of the first fit",
            ));
        }
        let mut trees = Vec::with_capacity(self.params.n_estimators);
        trees.extend_from_slice(&previous.trees);
        trees.extend(more);
        let forest = self.finish(trees)?;
        if forest.n_classes != previous.n_classes || forest.outputs != previous.outputs {
            return Err(invalid(
                "warm_start",
                "the classes differ from the first fit's",
            ));
        }
        Ok(forest)
    }

    /// Grows tree `index`.
    pub fn fit_tree(&self, index: usize) -> Tree {
        let p = &self.params;
        let counts = in_bag_counts(p, index);
        // The rows that grow the tree (drawn, positive weight) and their weights
        // `count × sample_weight`; nothing of length n_samples outlives this block.
        let weight_of = |i: usize| match self.sample_weight {
            Some(sw) => f64::from(counts[i]) * sw[i],
            None => f64::from(counts[i]),
        };
        let mut samples: Vec<u32> = (0..counts.len() as u32)
            .filter(|&i| weight_of(i as usize) > 0.0)
            .collect();
        let mut ws: Vec<f64> = samples.iter().map(|&i| weight_of(i as usize)).collect();
        if p.balanced_subsample {
            match self.targets {
                Targets::Classes { y, n_classes } => {
                    reweigh_balanced(&mut ws, &samples, &counts, y, &[n_classes]);
                }
                Targets::MultiClasses { y, n_classes } => {
                    reweigh_balanced(&mut ws, &samples, &counts, y, n_classes);
                }
                _ => {}
            }
        }
        drop(counts);
        let mut features = tree_features(p, index);
        let mut rng = split_rng(p, index);
        let width = self.targets.width();
        let x = match &self.by_row {
            Some(by_row) => self.x.with_row_index(by_row),
            None => self.x,
        };
        macro_rules! grow_with {
            ($crit:expr) => {
                grow(
                    x,
                    self.binned.as_ref().map(|b| (b, self.nan_bins.as_deref())),
                    self.levels.as_ref(),
                    &$crit,
                    ws,
                    &mut samples,
                    &mut features,
                    p,
                    width,
                    &mut rng,
                    None,
                )
            };
        }
        // resolve() has matched the criterion to the task, so Classes is Gini or Entropy.
        let mut tree = match self.targets {
            Targets::Classes { y, n_classes } if p.criterion == CriterionKind::Entropy => {
                grow_with!(Entropy::new(y, n_classes))
            }
            Targets::Classes { y, n_classes } => grow_with!(Gini::new(y, n_classes)),
            Targets::Regression(y) if p.criterion == CriterionKind::Poisson => {
                grow_with!(Poisson { y })
            }
            Targets::Regression(y) if p.criterion == CriterionKind::AbsoluteError => {
                grow_with!(AbsoluteError { y })
            }
            Targets::Regression(y) => grow_with!(SquaredError { y }),
            // The generic multi-output paths (`criterion::multi`, `criterion::absolute`):
            // check_multi_output has refused Poisson.
            Targets::MultiClasses { y, n_classes } if p.criterion == CriterionKind::Entropy => {
                grow_with!(MultiEntropy::new(y, n_classes))
            }
            Targets::MultiClasses { y, n_classes } => grow_with!(MultiGini::new(y, n_classes)),
            Targets::MultiRegression { y, n_outputs }
                if p.criterion == CriterionKind::AbsoluteError =>
            {
                grow_with!(MultiAbsoluteError::new(y, n_outputs))
            }
            Targets::MultiRegression { y, n_outputs } => {
                grow_with!(MultiSquaredError::new(y, n_outputs))
            }
        };
        if samples.is_empty() {
            // Only zero-weight rows were drawn: predict the uniform distribution.
            match self.targets {
                Targets::Classes { .. } => tree.fill_values(1.0 / width as f64),
                Targets::MultiClasses { n_classes, .. } => tree.fill_uniform(n_classes),
                _ => {}
            }
        }
        let outputs = self.targets.outputs();
        if !outputs.is_empty() {
            tree.set_outputs(outputs);
        }
        let tree = tree.finish();
        match p.ccp_alpha > 0.0 {
            true => tree.pruned(p.ccp_alpha).unwrap_or(tree),
            false => tree,
        }
    }

    /// A squared-error regression tree on `y` (a booster's negative gradients) over the
    /// rows `samples` with weights `ws` (all positive), with the session's splitter, rules,
    /// codes and the feature subset and split randomness of tree `index`: the booster's
    /// one way to grow a tree, so that boosting and forests share one tree learner. Its
    /// best-first histogram trees keep node bins ([`Grower::with_best_first_bins`]) and its
    /// exact search bins coded columns ([`Grower::with_sums_in_any_order`]). Returns the
    /// tree, and `samples` as its growth left them: leaf after leaf, in the order of
    /// [`Tree::leaves_in_order`]. The node bins reuse the buffers of earlier trees in
    /// `booster`'s spare bins, and leave theirs there; once its stop flag is set (Ctrl-C),
    /// every node left becomes a leaf and the tree ends at once.
    pub(crate) fn grow_on(
        &self,
        y: &[f64],
        mut samples: Vec<u32>,
        ws: Vec<f64>,
        index: usize,
        booster: (&SpareBins, &AtomicBool),
    ) -> (Tree, Vec<u32>) {
        let p = &self.params;
        let mut features = tree_features(p, index);
        let mut rng = split_rng(p, index);
        let x = match &self.by_row {
            Some(by_row) => self.x.with_row_index(by_row),
            None => self.x,
        };
        let crit = SquaredError { y };
        let tree = grow(
            x,
            self.binned.as_ref().map(|b| (b, self.nan_bins.as_deref())),
            self.levels.as_ref(),
            &crit,
            ws,
            &mut samples,
            &mut features,
            p,
            1,
            &mut rng,
            Some(booster),
        )
        .finish();
        let tree = match p.ccp_alpha > 0.0 {
            true => tree.pruned(p.ccp_alpha).unwrap_or(tree),
            false => tree,
        };
        (tree, samples)
    }
}

/// The single point where criterion and splitter become static types. `binned`: the
/// histogram codes, with the flags of the columns whose code 255 is the missing-values bin.
fn grow<T: Feature, C: Criterion>(
    x: Matrix<'_, T>,
    binned: Option<(&Binned, Option<&[bool]>)>,
    levels: Option<&Levels>,
    crit: &C,
    ws: Vec<f64>,
    samples: &mut [u32],
    features: &mut [u32],
    p: &Resolved,
    width: usize,
    rng: &mut crate::rng::TreeRng,
    booster: Option<(&SpareBins, &AtomicBool)>,
) -> GrowingTree {
    fn binary<T: Feature, C: Criterion, R: ThresholdRule>(
        x: Matrix<'_, T>,
        (levels, nan_bins): (Option<&Levels>, Option<&[bool]>),
        crit: &C,
        ws: Vec<f64>,
        samples: &mut [u32],
        features: &mut [u32],
        p: &Resolved,
        width: usize,
        rng: &mut crate::rng::TreeRng,
        booster: Option<(&SpareBins, &AtomicBool)>,
    ) -> GrowingTree {
        let mut g = Grower::new(x, levels, crit, ws, samples, p, width);
        if let Some(categorical) = &p.categorical {
            g = g.with_categorical(categorical, p.category_guards);
        }
        if let Some(missing) = nan_bins {
            g = g.with_nan_bins(missing);
        }
        if let Some((spare, stop)) = booster {
            g = (g.with_best_first_bins().with_sums_in_any_order()).with_spare_bins(spare);
            g = g.with_stop(stop);
        }
        g.grow::<R>(samples, features, rng);
        if let Some((spare, _)) = booster {
            g.give_back_bins(spare);
        }
        g.tree
    }
    match (p.splitter, binned) {
        (SplitterKind::Histogram { .. }, Some((b, nan_bins))) => {
            let mut tree = binary::<u8, C, HistThreshold>(
                b.matrix(),
                (None, nan_bins),
                crit,
                ws,
                samples,
                features,
                p,
                width,
                rng,
                booster,
            );
            // "Non-missing left, missing right" keeps its threshold +∞, and a categorical
            // split its reference to a set, whose bins become categories.
            tree.map_thresholds(|feature, code| match code.is_finite() {
                true => b.threshold(feature, code as usize),
                false => code,
            });
            tree.map_category_sets(|feature, bins, unseen_left| {
                let table = b.category_table(feature);
                table.map(|t| t.categories_left(bins, unseen_left))
            });
            tree
        }
        (SplitterKind::Random, _) => binary::<T, C, RandomThreshold>(
            x,
            (levels, None),
            crit,
            ws,
            samples,
            features,
            p,
            width,
            rng,
            None,
        ),
        (SplitterKind::Multiway, _) => {
            multiway::grow(x, crit, ws, samples, features, p, width, rng)
        }
        // Best (a histogram session always has its codes).
        _ => binary::<T, C, BestThreshold>(
            x,
            (levels, None),
            crit,
            ws,
            samples,
            features,
            p,
            width,
            rng,
            booster,
        ),
    }
}

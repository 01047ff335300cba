"""The estimators: Random Forests, Extra-Trees, Random Patches and totally randomized trees.

All of them are one engine with different defaults (Louppe 2014, ch. 4 and 8):

=============================  ==========  ==============  ================  ============
estimator                      thresholds  rows per tree   features / tree   K per node
=============================  ==========  ==============  ================  ============
RandomForest*                  best|hist   bootstrap       all               max_features
ExtraTrees*                    random      all             all               max_features
RandomPatches*                 any         max_samples     max_features      max_features_node
TotallyRandomizedTrees*        random      all             all               1
=============================  ==========  ==============  ================  ============

``splitter="hist"`` (Random Forests and Random Patches) bins every feature once into at most
``max_bins`` (<= 256) quantile bins of one byte and chooses the best boundary between bins:
the histogram search is linear in the node size (no sort) and the codes take 4x less memory
than float32 X, which is then read once, in any memory order, and never copied. A feature with
at most ``max_bins`` distinct values is split exactly as by ``splitter="best"``; the stored
thresholds are real values, so prediction and importances work on raw X.

``multiway=True`` (Extra-Trees and totally randomized trees) replaces the random thresholds by
multiway splits on integer-coded categorical inputs (X must hold integers, else ``DataError``):
every node splits on one variable into one child per value observed in the node. The K
candidates (``max_features``; 1 for totally randomized trees) are drawn uniformly among the
variables *not yet used on the branch*, those constant in the node included; the largest
decrease ``Δi = i(t) − Σ_v (N_v / N_t) i(t_v)`` wins, ties uniformly at random. A winner
constant in the node is a no-op level of the tree: ``max_depth`` counts it, so a node at depth
k is conditioned on exactly k variables and ``forestimp.importance.mdi(est, by_depth=True)``
estimates the terms of Thm 1 of Louppe et al. (2013) by interaction degree k. Values unseen at
fit go to the nearest observed value; NaN is a category of its own (one more child).
``max_leaf_nodes`` is not available with multiway splits.

``categorical_features`` (every estimator; scikit-learn ``HistGradientBoosting*``'s forms,
``"from_dtype"`` by default: pandas ``category`` columns) splits a categorical column by sets
of its categories rather than by codes: the best set by ordering the categories
(``splitter="best"`` and ``"hist"``), a random set (random thresholds). Categories are
learned at fit (``categories_``) and matched by value at predict. The best set is searched
within guards against fitting rare categories (after LightGBM's): ``category_smoothing``
(rows of the node's mean added to each category's sums before it is ordered),
``min_category_samples`` and ``min_category_share`` (categories with fewer rows, or a smaller
share of the node's rows, are ordered as one group) and ``max_category_side`` (at most that
many groups on the smaller side of a cut; None: no limit); these default to none. Each
feature's best set is the exact best; ``category_penalty`` (1 by default, 0: off) compares it
with the node's other candidates net of what its ``L`` levels gain over one cut by chance
(``L − 2`` times the node's impurity, or ``(K − 1) / (2 ln 2)`` bits with entropy, times the
share of it an ordered cut keeps, ``2/π`` for a continuous target: the bias of impurity
towards many-valued variables, Louppe 2014 §7.2), so that a column of thousands of noisy
levels does not win every node it is drawn in. See ``docs/categorical.md``.

``store_leaf_values=True`` (the regressors) keeps each leaf's in-bag training rows and
weights, and ``predict_quantiles(X, quantiles, interpolation="linear")`` then gives the
conditional quantiles of quantile regression forests (Meinshausen 2006): the training
targets weighted by the leaves ``X`` reaches, read as numpy's ``quantile`` would
(``forestimp._quantiles``). ``predict_interval(X, alpha, method)`` gives prediction
intervals from the forest's own out-of-bag rows or quantiles (jackknife+-after-bootstrap,
out-of-bag conformal, quantile forest) and ``predict_se(X)`` the infinitesimal jackknife's
standard errors of the mean prediction (``forestimp._intervals``, ``docs/intervals.md``).

Criteria and scikit-learn's other parameters, for every estimator and splitter:

* classifiers: ``criterion="gini"``, ``"entropy"`` or its alias ``"log_loss"``. Entropy is in
  bits, as scikit-learn's tree impurities (``tree_.impurity``): raw MDI is in bits.
* regressors: ``"squared_error"``; ``"poisson"``, the half Poisson deviance
  ``Σ w y log(y / ȳ) / Σ w`` (y must be >= 0 with a positive sum, ``DataError`` otherwise;
  no split leaves a child whose targets sum to 0; MDI sums Poisson deviance decreases). As
  scikit-learn, a node's impurity is computed from its rows; a node whose targets are all 0
  has impurity 0 here, ``inf`` there (a leaf in both). ``"friedman_mse"`` is
  ``"squared_error"`` with a ``FutureWarning``, as scikit-learn 1.9 deprecates it (there at
  construction, here at fit). Multiway trees accept ``"poisson"`` without the zero-sum rule
  (each value gets its child). ``"absolute_error"``, scikit-learn's: a node predicts the
  weighted median of its targets (scikit-learn's rule: the first target whose cumulative
  weight exceeds half the total, the mid-point of two when a cumulative weight equals it),
  its impurity is the weighted mean absolute deviation from it (``tree_.impurity``), and MDI
  sums its decreases. Splits are searched in ``O(n log n)`` per candidate (the sorts, then
  ``O(n)`` deletions from a linked list of the node's ranked targets). Exact and random
  splitters only, NaN in X included (the same scans as below): ``splitter="hist"`` and
  ``multiway=True`` raise ``InvalidParameterError``. With ``monotonic_cst`` the constraint is
  on the medians, as scikit-learn's (a cut is tested on its children's medians, the bounds
  split at their mean, each node's median clipped; ``docs/monotonic.md``). A 2-D ``y`` gives
  each output its median, and the impurity is the mean of the outputs' deviations
  (scikit-learn's). Its models are written in format version 5, or 6 with several outputs
  (older readers refuse them).
* ``ccp_alpha`` (>= 0): each grown tree is pruned by minimal cost-complexity pruning,
  scikit-learn's weakest-link rule on ``R(t) = (w_t / w_root) i(t)`` (with entropy in bits,
  as scikit-learn). Not with ``multiway=True``. It is not written in the model bytes: a
  loaded model's trees are pruned already, but it cannot be warm-started with
  ``ccp_alpha > 0``.
* ``bootstrap`` must be a bool. For Random Forests, Extra-Trees and totally randomized trees,
  ``max_samples`` follows scikit-learn 1.9: only with ``bootstrap=True``, an int >= 1 or a
  float > 0 (above 1 too), a fraction of ``n_samples`` or, with sample or class weights, of
  their sum, rounded down (scikit-learn's warning when that gives few rows). Random Patches
  keeps Bagging's rules: an int in [1, n] or a fraction in (0, 1] of ``n_samples``, rounded,
  drawn without replacement unless ``bootstrap``.
* ``monotonic_cst``: None, or one of -1, 0, 1 per feature (prediction decreasing, free,
  increasing in it), with scikit-learn 1.9's rules and messages: single-output regression
  and binary classification only (on the probability of ``classes_[1]``), with every
  splitter (``"best"``, ``"random"``, ``"hist"``, NaN and sparse X). A cut on a constrained
  feature is kept only when its children's values are ordered and inside the node's bounds;
  children are bounded at the mean of their two values, and node values clipped to their
  bounds; the values are means, or medians with ``criterion="absolute_error"``. Not with
  ``multiway=True`` (unless every sign is 0). Not written in the model
  bytes; the trees keep each node's impurity of its rows, so MDI is scikit-learn's
  (``docs/monotonic.md``).
Missing values: X may hold NaN, in fit and predict, with scikit-learn 1.9's semantics. Each
split learns the side its NaN rows go to: ``splitter="best"`` scores every threshold with the
NaN rows on the left and on the right, and also "non-missing | missing"; random thresholds
(Extra-Trees, totally randomized trees) send them to a side drawn at random. NaN met at
predict time by a split that saw none in training goes to the child with more training
samples. ``splitter="hist"`` gives NaN its own bin and scores the same candidates (with at
most 255 distinct values per column, the trees of ``splitter="best"``); ``multiway=True``
makes NaN one more category, with its own child. Infinite values are refused everywhere.
Details and the differences from scikit-learn: ``docs/missing-values.md``.

Sparse X (``scipy.sparse`` matrices and arrays, any format) is read as compressed sparse
columns without densifying: a node's values of a feature are its stored entries at the node's
rows and 0 elsewhere, so the forest is that of ``X.toarray()`` (same dtype, same
``random_state``), byte for byte. ``predict``, ``apply``, ``decision_path``, ``score`` and
out-of-bag scores read it the same way. Sparse X needs ``splitter="best"`` or ``"random"``
(``"hist"`` and ``multiway`` raise ``TypeError``). Unlike scikit-learn, which converts a
sparse X to float32, the dtype is kept (float32 or float64), 64-bit indices are accepted, and
duplicate entries are summed (as ``toarray()`` does); a malformed matrix raises ``DataError``.

``warm_start=True`` follows scikit-learn (details: ``forestimp._warm_start``). A larger
``n_estimators`` keeps the fitted trees and grows trees ``k..n`` on the data given; the same
``n_estimators`` warns and fits nothing, computing only a missing ``oob_score_`` when
``oob_score`` asks for it (from the training data); a smaller one raises. What the identity
covers, exactly: on the training data of the fitted trees (same rows, same order, same y, as
checked by the fingerprint of fit), with the same sample weights (not checked), parameters
and seed (an int ``random_state``, or the seed drawn at the first fit), 10 trees then 25 are
the 25 grown at once, bit for bit, for any ``n_jobs``, also after a pickle or a file (but for
``ccp_alpha > 0`` and ``monotonic_cst``, which model bytes do not keep); another parameter
or seed then raises ``InvalidParameterError``. On other data (other rows, another y,
any number of rows), trees ``k..n`` are those the same seed grows on that data, with the
parameters as they are now; the features, outputs, classes, criterion and splitter must be
the first fit's (``DataError`` / ``InvalidParameterError``, the estimator left as fitted).
Such a forest has no common training set, hence no out-of-bag rows: ``oob_score=True`` is
refused, as are out-of-bag importances (scikit-learn would score old trees on rows they were
not drawn from). As scikit-learn, ``class_weight="balanced"`` or ``"balanced_subsample"``
with ``warm_start`` warns.

``class_weight="balanced_subsample"`` weighs each tree's classes by its drawn rows,
scikit-learn's rule; with a 2-D y, by the product of the outputs' weights, as scikit-learn
(each tree then grown by its own engine call: ``forestimp._class_weight``).

``verbose`` (a bool or an int >= 0, as scikit-learn) prints joblib's ``Done k out of n |
elapsed: ...`` progress lines on stderr, and from ``verbose > 1`` scikit-learn's ``building
tree i of n`` on stdout, one per tree grown (``forestimp._verbose``); it changes no model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _model_kinds, _state
from . import _params as P
from ._base import BaseForest, ForestClassifierMixin, ForestRegressorMixin
from ._categorical import MAX_SIDE, MIN_SAMPLES, MIN_SHARE, PENALTY, SMOOTHING
from ._core import InvalidParameterError
from ._intervals import IntervalsMixin


def _store(est: Any, params: dict[str, Any]) -> None:
    # scikit-learn's contract: __init__ stores its arguments unchanged and validates nothing.
    for name, value in params.items():
        if name not in ("self", "__class__"):
            setattr(est, name, value)


def _engine_splitter(multiway: object, default: str) -> str:
    """The engine splitter: ``"multiway"`` when ``multiway`` is true, else ``default``."""
    if not isinstance(multiway, (bool, np.bool_)):
        raise InvalidParameterError(f"The 'multiway' parameter must be a bool, got {multiway!r}.")
    return "multiway" if multiway else default


class _RandomForestLayout:
    """Best splits, exact (sorted values) or on histograms, over K = ``max_features``."""

    # Parameters of the estimators this layout is mixed into (declared for type checkers).
    splitter: str
    max_features: Any

    def _engine_layout(self, n_features: int) -> tuple[str, int | None, int]:
        splitter = P.check_choice("splitter", self.splitter, ("best", "hist"))
        return splitter, None, P.resolve_features("max_features", self.max_features, n_features)


class _ExtraTreesLayout:
    """Random thresholds, or multiway splits, over K = ``max_features`` candidates."""

    max_features: Any
    multiway: bool

    def _engine_layout(self, n_features: int) -> tuple[str, int | None, int]:
        k = P.resolve_features("max_features", self.max_features, n_features)
        return _engine_splitter(self.multiway, "random"), None, k


class RandomForestClassifier(_RandomForestLayout, ForestClassifierMixin, BaseForest):
    """Breiman's Random Forest classifier: bootstrap samples, best split over K features.

    Parameters follow :class:`sklearn.ensemble.RandomForestClassifier`. ``criterion="entropy"``
    (alias ``"log_loss"``) uses log base 2, so :attr:`mdi_importances_` is in bits.
    ``splitter="hist"`` splits between at most ``max_bins`` quantile bins per feature (module
    docstring): several times faster on large data, one byte per value of X while fitting.
    """

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, class_weight=None, max_samples=None, splitter="best",
                 max_bins=255, ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY):  # fmt: skip
        _store(self, locals())


class RandomForestRegressor(_RandomForestLayout, IntervalsMixin, ForestRegressorMixin, BaseForest):
    """Breiman's Random Forest regressor, as scikit-learn's (``criterion="squared_error"`` or
    ``"poisson"``, module docstring); ``splitter="hist"`` and ``max_bins`` as in
    :class:`RandomForestClassifier`."""

    _is_classifier = False

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, max_samples=None, splitter="best", max_bins=255,
                 ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY,
                 store_leaf_values=False):  # fmt: skip
        _store(self, locals())


class ExtraTreesClassifier(_ExtraTreesLayout, ForestClassifierMixin, BaseForest):
    """Extremely randomized trees (Geurts et al. 2006): one random threshold per candidate
    feature, drawn uniformly between the node's min and max, whole learning set per tree.

    ``multiway=True``: multiway splits on integer-coded categorical inputs (module docstring).
    """

    _splitter = "random"

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features="sqrt", max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=False, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, class_weight=None, max_samples=None,
                 multiway=False, ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY):  # fmt: skip
        _store(self, locals())


class ExtraTreesRegressor(_ExtraTreesLayout, IntervalsMixin, ForestRegressorMixin, BaseForest):
    """Extremely randomized trees for regression.

    ``multiway=True``: multiway splits on integer-coded categorical inputs (module docstring).
    """

    _splitter = "random"
    _is_classifier = False

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=False, oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, max_samples=None, multiway=False,
                 ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY,
                 store_leaf_values=False):  # fmt: skip
        _store(self, locals())


class _PatchesLayout:
    """Random Patches: ``max_features`` is the per-tree feature subset (BaggingClassifier's
    convention), ``max_features_node`` the K drawn at each node among them."""

    splitter: str
    max_features: Any
    max_features_node: Any

    bootstrap: Any
    max_samples: Any

    def _rows_per_tree(self, n: int, sample_weight: np.ndarray | None) -> tuple[bool, int | None]:
        """Bagging's rules: rows drawn with (``bootstrap``) or without replacement, an int in
        [1, n] (any int >= 1 with replacement) or a fraction in (0, 1] of n, rounded."""
        bootstrap = P.check_bool(type(self).__name__, "bootstrap", self.bootstrap)
        return bootstrap, P.resolve_max_samples(self.max_samples, n, bootstrap)

    def _engine_layout(self, n_features: int) -> tuple[str, int | None, int]:
        splitter = P.check_choice("splitter", self.splitter, ("random", "best", "hist"))
        q = P.resolve_features("max_features", self.max_features, n_features)
        k = P.resolve_features("max_features_node", self.max_features_node, q)
        return splitter, (q if q < n_features else None), k


class RandomPatchesClassifier(_PatchesLayout, ForestClassifierMixin, BaseForest):
    """Random Patches (Louppe & Geurts 2012): each tree on a random subset of ``max_samples``
    rows (without replacement unless ``bootstrap``) and ``max_features`` features.

    ``max_samples=1.0`` gives Random Subspace, ``max_features=1.0`` Pasting.
    """

    def __init__(self, n_estimators=100, *, max_samples=0.5, max_features=0.5,
                 splitter="random", max_features_node=None, criterion="gini", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=False,
                 oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, class_weight=None, max_bins=255,
                 ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY):  # fmt: skip
        _store(self, locals())


class RandomPatchesRegressor(_PatchesLayout, IntervalsMixin, ForestRegressorMixin, BaseForest):
    """Random Patches for regression; see :class:`RandomPatchesClassifier`."""

    _is_classifier = False

    def __init__(self, n_estimators=100, *, max_samples=0.5, max_features=0.5,
                 splitter="random", max_features_node=None, criterion="squared_error",
                 max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=False, oob_score=False, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False, max_bins=255,
                 ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY,
                 store_leaf_values=False):  # fmt: skip
        _store(self, locals())


class _TotallyRandomizedLayout:
    """K = 1: each node splits on one feature drawn uniformly among those not constant in
    the node, at a random threshold (the trees of Louppe et al. 2013, Thm 1)."""

    multiway: bool

    def _engine_layout(self, n_features: int) -> tuple[str, int | None, int]:
        return _engine_splitter(self.multiway, "random"), None, 1


class TotallyRandomizedTreesClassifier(_TotallyRandomizedLayout, ForestClassifierMixin, BaseForest):
    """Totally randomized trees; grown fully, their raw MDI in bits converges to the exact
    importances of Louppe et al. (2013) (see ``forestimp.theory``).

    ``multiway=True``: multiway splits on integer-coded categorical inputs (module docstring).
    """

    def __init__(self, n_estimators=100, *, criterion="entropy", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=False,
                 oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, class_weight=None, max_samples=None,
                 multiway=False, ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY):  # fmt: skip
        _store(self, locals())


class TotallyRandomizedTreesRegressor(
    _TotallyRandomizedLayout, IntervalsMixin, ForestRegressorMixin, BaseForest
):
    """Totally randomized trees for regression (variance impurity).

    ``multiway=True``: multiway splits on integer-coded categorical inputs (module docstring).
    """

    _is_classifier = False

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=False,
                 oob_score=False, n_jobs=None, random_state=None, verbose=0,
                 warm_start=False, max_samples=None, multiway=False,
                 ccp_alpha=0.0, monotonic_cst=None,
                 categorical_features="from_dtype", category_smoothing=SMOOTHING,
                 min_category_samples=MIN_SAMPLES, min_category_share=MIN_SHARE,
                 max_category_side=MAX_SIDE, category_penalty=PENALTY,
                 store_leaf_values=False):  # fmt: skip
        _store(self, locals())


# The classes a forestimp file can name (forestimp.persistence finds them there by name).
_model_kinds.register(
    _state,
    "forest_",
    RandomForestClassifier,
    RandomForestRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomPatchesClassifier,
    RandomPatchesRegressor,
    TotallyRandomizedTreesClassifier,
    TotallyRandomizedTreesRegressor,
)

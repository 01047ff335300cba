"""The machinery of forestimp's gradient-boosting estimators (:mod:`forestimp.boosting`):
parameter validation, the call into the engine (``forestimp._core.Booster``), early stopping's
split, warm start, staged and raw predictions, importances and scikit-learn trees."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, TypeVar

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import (
    _boosting_params,
    _boosting_state,
    _categorical,
    _float32_routing,
    _frames,
    _oob,
    _sparse,
    _state,
    _verbose,
)
from . import _params as P
from ._core import Booster, DataError, InvalidParameterError

_Self = TypeVar("_Self", bound="BaseGradientBoosting")

# float32 and float64 reach the engine as they are; any other numeric dtype becomes float64.
_DTYPES = [np.float64, np.float32]

# Staged predictions are computed this many raw values (rows × rounds × K) at a time.
_STAGE_BLOCK = 1 << 22


class BaseGradientBoosting(BaseEstimator):
    """Base class; not for direct use."""

    _is_classifier = False
    _losses: tuple[str, ...] = ()
    _seed_: int
    classes_: np.ndarray

    def __init__(
        self,
        *,
        loss: str,
        learning_rate: float = 0.1,
        n_estimators: int = 100,
        subsample: float = 1.0,
        criterion: str = "deprecated",
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_depth: int | None = 3,
        min_impurity_decrease: float = 0.0,
        init: Any = None,
        random_state: Any = None,
        max_features: Any = None,
        alpha: float = 0.9,
        verbose: int = 0,
        max_leaf_nodes: int | None = None,
        warm_start: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int | None = None,
        tol: float = 1e-4,
        ccp_alpha: float = 0.0,
        splitter: str = "best",
        max_bins: int = 255,
        tree_features: Any = None,
        n_jobs: int | None = None,
        categorical_features: Any = "from_dtype",
        category_smoothing: float = _categorical.SMOOTHING,
        min_category_samples: int = _categorical.MIN_SAMPLES,
        min_category_share: float = _categorical.MIN_SHARE,
        max_category_side: int | None = _categorical.MAX_SIDE,
        category_penalty: float = _categorical.PENALTY,
    ) -> None:
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.criterion = criterion
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.init = init
        self.random_state = random_state
        self.max_features = max_features
        self.alpha = alpha
        self.verbose = verbose
        self.max_leaf_nodes = max_leaf_nodes
        self.warm_start = warm_start
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.ccp_alpha = ccp_alpha
        self.splitter = splitter
        self.max_bins = max_bins
        self.tree_features = tree_features
        self.n_jobs = n_jobs
        self.categorical_features = categorical_features
        self.category_smoothing = category_smoothing
        self.min_category_samples = min_category_samples
        self.min_category_share = min_category_share
        self.max_category_side = max_category_side
        self.category_penalty = category_penalty

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # NaN is a missing value for every splitter (the histogram codes give it its own
        # bin, docs/missing-values.md).
        tags.input_tags.allow_nan = True
        # A sparse X is densified once (the engine's boosting reads dense X).
        tags.input_tags.sparse = True
        return tags

    # ---------------------------------------------------------------- validation
    def _check_params(self) -> dict[str, Any]:
        """The engine's parameters that do not depend on the data (InvalidParameterError):
        :func:`forestimp._boosting_params.checked`."""
        return _boosting_params.checked(self)

    def _validate_X(self, X: Any, reset: bool, y: Any = None, fit: bool = False) -> Any:
        # NaN reaches the engine at fit (it refuses infinite values); prediction follows
        # the allow_nan tag.
        nan_ok = fit or self.__sklearn_tags__().input_tags.allow_nan
        finite = "allow-nan" if nan_ok else True
        # Before validate_data and toarray(): scipy's conversions read the index unchecked.
        X = _sparse.checked(X)
        if fit and reset:
            # Categorical columns become codes of the categories learned here (a warm
            # start keeps the first fit's): forestimp._categorical.
            mask = _categorical.resolve_mask(X, self.categorical_features)
            self.is_categorical_ = mask
            self.categories_ = None if mask is None else _categorical.learn(X, mask)
        categories = getattr(self, "categories_", None)
        if categories is not None:
            X = _categorical.encode(X, categories)
        _frames.check_numeric(X)  # a text or category column: DataError naming it
        common = {
            "dtype": _DTYPES,
            "ensure_all_finite": finite,
            "accept_sparse": ["csr", "csc", "coo"],
            "reset": reset,
        }
        if not fit:
            X = validate_data(self, X, **common)
        else:
            X, y = validate_data(self, X, y, y_numeric=not self._is_classifier, **common)
        if issparse(X):
            X = X.toarray()
        if not (X.flags.c_contiguous or X.flags.f_contiguous):
            X = np.ascontiguousarray(X)
        return (X, y) if fit else X

    def _encode_y(self, y: np.ndarray, sample_weight: np.ndarray | None) -> tuple[np.ndarray, int]:
        """``(targets as float64, n_classes)``: class codes for classifiers, else values."""
        return np.ascontiguousarray(y, dtype=np.float64), 0

    # ----------------------------------------------------------------------- fit
    def fit(self: _Self, X: Any, y: Any, sample_weight: Any = None, monitor: Any = None) -> _Self:
        """Fit the gradient boosting model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs (float32/float64 as given; sparse X is densified once). NaN is a
            missing value, for every splitter (``docs/missing-values.md``).
        y : array-like of shape (n_samples,)
            Class labels or regression targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.
        monitor : callable, default=None
            As scikit-learn's: ``monitor(i, self, locals_)`` is called after round ``i``
            (0-based), when ``self`` holds the model of its first ``i + 1`` rounds
            (``booster_``, ``n_estimators_``, ``train_score_``, predictions); returning True
            ends the fit there, with ``n_estimators_ == i + 1``. ``locals_`` is a dict with
            ``i``, ``X``, ``y``, ``sample_weight`` (the training part, with early stopping)
            and ``self``, not scikit-learn's full local namespace. It is asked before the
            early-stopping test, as in scikit-learn. The rounds run without the GIL; the
            monitor runs with it, and an exception it raises ends the fit and propagates.

        Returns
        -------
        self
        """
        if monitor is not None and not callable(monitor):
            raise InvalidParameterError(
                f"The 'monitor' argument must be callable, got {monitor!r}."
            )
        params = self._check_params()
        previous = getattr(self, "booster_", None) if self.warm_start else None
        X, y = self._validate_X(X, reset=previous is None, y=y, fit=True)
        n, p = X.shape
        sw_given = sample_weight is not None
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64) if sw_given else None
        codes, n_classes = self._encode_y(y, sw)
        k_node, k_tree = self._node_features(p), self._tree_features(p)
        min_split = P.resolve_min_samples("min_samples_split", self.min_samples_split, n, 2)
        min_leaf = P.resolve_min_samples("min_samples_leaf", self.min_samples_leaf, n, 1)
        n_jobs = P.check_n_jobs(self.n_jobs)
        if previous is not None and params["n_estimators"] < previous.n_rounds:
            raise InvalidParameterError(
                f"n_estimators={params['n_estimators']} must be larger or equal to "
                f"estimators_.shape[0]={previous.n_rounds} when warm_start==True"
            )
        seed = self._seed_ if previous is not None else P.seed_from(self.random_state)
        held_out: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        X_train, y_train, sw_train = X, codes, sw
        if params["n_iter_no_change"] is not None:
            w_all = sw if sw is not None else np.ones(n)
            stratify = codes if self._is_classifier else None
            X_train, X_val, y_train, y_val, w_train, w_val = train_test_split(
                X,
                codes,
                w_all,
                random_state=self.random_state,
                test_size=self.validation_fraction,
                stratify=stratify,
            )
            if self._is_classifier and np.unique(y_train).shape[0] != n_classes:
                raise DataError(
                    "The training data after the early stopping split is missing some "
                    "classes. Try using another random seed."
                )
            sw_train = w_train if sw_given else None
            X_train, X_val = (np.ascontiguousarray(a) for a in (X_train, X_val))
            held_out = (X_val, np.ascontiguousarray(y_val), np.ascontiguousarray(w_val))
        offset = offset_val = None
        if self._init_estimator():
            if previous is None:
                self.init_ = self._fit_init(X_train, y_train, sw_train)
            offset = self._init_raw(X_train).ravel()
            if held_out is not None:
                offset_val = self._init_raw(held_out[0]).ravel()
        validation = None if held_out is None else (*held_out, offset_val)
        hook = reporter = None
        if params["verbose"]:
            first = 0 if previous is None else previous.n_rounds
            reporter = _verbose.BoostingReporter(
                params["verbose"], params["n_estimators"], params["subsample"], first
            )
        if monitor is not None or reporter is not None:
            frame = {"X": X_train, "y": y_train, "sample_weight": sw_train, "self": self}

            def hook(i: int, so_far: Booster) -> bool:
                # scikit-learn reports the round, then asks the monitor.
                if reporter is not None:
                    reporter.update(i, so_far)
                if monitor is None:
                    return False
                self._seed_ = seed
                self._set_fitted(so_far, k_node)
                return bool(monitor(i, self, {"i": i, **frame}))

        booster = Booster.fit(
            X_train,
            np.ascontiguousarray(y_train, dtype=np.float64),
            sw_train,
            n_classes=n_classes,
            loss=params["loss"],
            alpha=params["alpha"],
            learning_rate=params["learning_rate"],
            n_estimators=params["n_estimators"],
            subsample=params["subsample"],
            init_zero=params["init_zero"],
            splitter=params["splitter"],
            max_bins=params["max_bins"],
            max_features=k_node,
            tree_features=k_tree,
            max_depth=params["max_depth"],
            min_samples_split=min_split,
            min_samples_leaf=min_leaf,
            min_weight_fraction_leaf=params["min_weight_fraction_leaf"],
            min_impurity_decrease=params["min_impurity_decrease"],
            max_leaf_nodes=params["max_leaf_nodes"],
            ccp_alpha=params["ccp_alpha"],
            random_state=seed,
            n_iter_no_change=params["n_iter_no_change"],
            tol=params["tol"],
            validation=validation,
            previous=previous,
            n_jobs=n_jobs,
            offset=offset,
            monitor=hook,
            categorical=self._categorical_flags(),
            category_guards=_categorical.guards(self),
        )
        self._seed_ = seed
        self._set_fitted(booster, k_node)
        _oob.warn_rounds_without_rows(getattr(self, "oob_scores_", None), stacklevel=2)
        _float32_routing.record(self, booster, X, 0)  # every round's, on every row given
        return self

    def _categorical_flags(self) -> list[bool] | None:
        """Per feature, whether it is categorical (None: none is)."""
        mask = getattr(self, "is_categorical_", None)
        return None if mask is None else [bool(b) for b in mask]

    def _init_estimator(self) -> bool:
        """Whether ``init`` is an estimator (not None or a string)."""
        return self.init is not None and not isinstance(self.init, str)

    def _fit_init(self, X: np.ndarray, y: np.ndarray, sw: np.ndarray | None) -> Any:
        """A clone of the ``init`` estimator fitted on the training rows (class codes for
        classifiers), with the sample weights when there are some, as scikit-learn."""
        est = clone(self.init)
        if sw is None:
            return est.fit(X, y)
        try:
            return est.fit(X, y, sample_weight=sw)
        except TypeError as e:
            if "sample_weight" in str(e):
                raise InvalidParameterError(
                    f"The initial estimator {type(est).__name__} does not support sample weights."
                ) from e
            raise

    def _init_raw(self, X: np.ndarray) -> np.ndarray:
        """The ``init`` estimator's raw predictions ``(n, K)``: its predictions (regression)
        or the loss's link of its probabilities clipped to ``[ε, 1 − ε]``, as scikit-learn's
        ``_init_raw_predictions``."""
        if not self._is_classifier:
            return np.asarray(self.init_.predict(X), dtype=np.float64).reshape(-1, 1)
        eps = np.finfo(np.float64).eps
        proba = np.clip(np.asarray(self.init_.predict_proba(X), dtype=np.float64), eps, 1 - eps)
        if proba.shape[1] == 2:
            logit = np.log(proba[:, 1] / (1 - proba[:, 1]))
            return (0.5 * logit if self.loss == "exponential" else logit).reshape(-1, 1)
        log_p = np.log(proba)
        return log_p - log_p.mean(axis=1, keepdims=True)

    def _offset(self, X: np.ndarray) -> np.ndarray | float:
        """What the ``init`` estimator adds to the booster's raw predictions of ``X``."""
        return self._init_raw(X) if self._init_estimator() else 0.0

    def _tree_features(self, p: int) -> int | None:
        """Features drawn per tree (Random Patches inside boosting), None for all."""
        if self.tree_features is None:
            return None
        return P.resolve_features("tree_features", self.tree_features, p)

    def _node_features(self, p: int) -> int:
        """K, the candidates per node, at most the tree's features."""
        k = P.resolve_features("max_features", self.max_features, p)
        k_tree = self._tree_features(p)
        return k if k_tree is None else min(k, k_tree)

    def __getstate__(self) -> dict[str, Any]:
        """Parameters and other attributes as they are, the fitted ones as plain data with
        the booster as its bytes (``forestimp._boosting_state``, shared with :meth:`save`),
        checked on the way back as a file is."""
        return _state.pickled(self, _boosting_state)

    def __setstate__(self, state: dict[str, Any]) -> None:
        _state.unpickled(self, state, _boosting_state)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this fitted estimator to ``path`` as data, without pickle; read it back with
        :func:`forestimp.load` (:mod:`forestimp.persistence`)."""
        from .persistence import save

        save(self, path)

    def _set_fitted(self, booster: Booster, max_features: int) -> None:
        self.booster_ = booster
        self.max_features_ = max_features
        self.n_estimators_ = booster.n_rounds
        self.n_trees_per_iteration_ = booster.trees_per_round
        self.train_score_ = booster.train_score
        if not self._init_estimator():
            self.init_ = "zero" if self.init == "zero" else booster.init
        oob = booster.oob_scores
        for name in ("oob_improvement_", "oob_scores_", "oob_score_"):
            self.__dict__.pop(name, None)
        if len(oob):
            self.oob_scores_ = oob
            self.oob_improvement_ = booster.oob_improvement
            self.oob_score_ = float(oob[-1])

    # ---------------------------------------------------------------- prediction
    def _engine_input(self, X: Any) -> Any:
        check_is_fitted(self, "booster_")
        return self._validate_X(X, reset=False)

    def _raw_predict(self, X: Any) -> np.ndarray:
        X = self._engine_input(X)
        return self.booster_.raw_predict(X, n_jobs=P.check_n_jobs(self.n_jobs)) + self._offset(X)

    def _staged_raw_predict(self, X: Any) -> Iterator[np.ndarray]:
        X = self._engine_input(X)
        b = self.booster_
        raw = np.tile(b.init, (X.shape[0], 1)) + self._offset(X)
        step = max(1, _STAGE_BLOCK // max(1, X.shape[0] * b.trees_per_round))
        n_jobs = P.check_n_jobs(self.n_jobs)
        for start in range(0, b.n_rounds, step):
            block = b.round_contributions(X, start, start + step, n_jobs=n_jobs)
            for contribution in block:
                raw = raw + contribution
                yield raw.copy()

    def apply(self, X: Any) -> np.ndarray:
        """Leaf node index of every sample in every tree, shape (n_samples, n_estimators, K)
        (K = 1 for regression and binary classification; regressors drop that axis)."""
        X = self._engine_input(X)
        return self.booster_.apply(X, n_jobs=P.check_n_jobs(self.n_jobs))

    @property
    def estimators_(self) -> np.ndarray:
        """The trees as fitted scikit-learn ``DecisionTreeRegressor`` objects, an object array
        of shape (n_estimators_, K), rebuilt from the model on every access (nothing is
        refitted): the leaves hold the line-searched values, internal nodes the mean negative
        gradient, as in scikit-learn's boosting trees, and thresholds are float32 numbers
        that route every training row as the booster does (``forestimp._float32_routing``).
        ``init + learning_rate * Σ tree.predict(X)`` is the raw prediction."""
        from sklearn.tree import DecisionTreeRegressor
        from sklearn.tree._tree import Tree

        from ._sklearn_trees import _sklearn_tree_state

        check_is_fitted(self, "booster_")
        b = self.booster_
        p = self.n_features_in_
        out = np.empty((b.n_rounds, b.trees_per_round), dtype=object)
        for index in range(b.n_rounds * b.trees_per_round):
            tree = DecisionTreeRegressor(
                max_depth=self.max_depth,
                min_samples_split=self.min_samples_split,
                min_samples_leaf=self.min_samples_leaf,
                min_weight_fraction_leaf=self.min_weight_fraction_leaf,
                min_impurity_decrease=self.min_impurity_decrease,
                max_features=self.max_features_,
                max_leaf_nodes=self.max_leaf_nodes,
                ccp_alpha=self.ccp_alpha,
            )
            tree.n_features_in_ = p
            tree.n_outputs_ = 1
            tree.max_features_ = self.max_features_
            core = Tree(p, np.array([1], dtype=np.intp), 1)
            arrays = b.tree_arrays(index)
            cuts = _float32_routing.tree_cuts(self, index, arrays["threshold"])
            core.__setstate__(_sklearn_tree_state(arrays, [1], cuts))
            tree.tree_ = core
            out[divmod(index, b.trees_per_round)] = tree
        return out

    def to_sklearn(self) -> Any:
        """This model as a fitted scikit-learn ``GradientBoostingRegressor`` /
        ``GradientBoostingClassifier`` (nothing is refitted), so that tools that read
        scikit-learn's models (``shap.TreeExplainer``, ``sklearn.inspection``) read it.

        The trees are :attr:`estimators_` (line-searched leaf values, thresholds cut to
        float32, as scikit-learn stores them; its ``predict`` multiplies by the learning
        rate). ``init_`` is the fitted ``init`` estimator, ``"zero"``, or a fitted
        ``DummyRegressor(strategy="constant")`` / ``DummyClassifier(strategy="prior")``
        whose constant or class priors give this model's initial raw prediction through
        the loss's link, as scikit-learn's default ``init_``. Predictions agree with this
        model's on float32 inputs up to rounding.
        """
        from sklearn.dummy import DummyClassifier, DummyRegressor
        from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

        check_is_fitted(self, "booster_")
        b = self.booster_
        p = self.n_features_in_
        cls = GradientBoostingClassifier if self._is_classifier else GradientBoostingRegressor
        # scikit-learn's own parameters (splitter, max_bins, tree_features, n_jobs are ours).
        names = (
            "loss learning_rate n_estimators subsample min_samples_split min_samples_leaf "
            "min_weight_fraction_leaf max_depth alpha min_impurity_decrease random_state "
            "max_features max_leaf_nodes warm_start validation_fraction n_iter_no_change tol "
            "ccp_alpha"
        ).split()
        kw = {k: getattr(self, k) for k in names if k in cls().get_params()}
        sk = cls(**kw, init=self.init_ if self._init_estimator() else self.init)
        for attr in ("n_features_in_", "feature_names_in_", "classes_", "n_classes_"):
            if hasattr(self, attr):
                setattr(sk, attr, getattr(self, attr))
        for attr in ("train_score_", "oob_improvement_", "oob_scores_", "oob_score_"):
            if hasattr(self, attr):
                setattr(sk, attr, np.array(getattr(self, attr)))
        sk.estimators_ = self.estimators_
        sk.n_estimators_ = self.n_estimators_
        sk.n_trees_per_iteration_ = self.n_trees_per_iteration_
        sk.max_features_ = self.max_features_
        sk._loss = sk._get_loss(sample_weight=None)
        if self._init_estimator():
            sk.init_ = self.init_
        elif self.init == "zero":
            sk.init_ = "zero"
        elif not self._is_classifier:
            init = float(b.init[0])
            sk.init_ = DummyRegressor(strategy="constant", constant=init).fit(
                np.zeros((1, p)), [init]
            )
        else:
            raw = np.asarray(b.init, dtype=np.float64)
            if len(raw) == 1:  # the binary link: logit (exponential loss: half of it)
                p1 = 1.0 / (1.0 + np.exp(-(2.0 if self.loss == "exponential" else 1.0) * raw[0]))
                prior = np.array([1.0 - p1, p1])
            else:  # symmetric multinomial link: log p − mean log p
                e = np.exp(raw - raw.max())
                prior = e / e.sum()
            k = len(prior)
            sk.init_ = DummyClassifier(strategy="prior").fit(np.zeros((k, p)), np.arange(k))
            sk.init_.class_prior_ = prior
        return sk

    # -------------------------------------------------------------- importances
    @property
    def feature_importances_(self) -> np.ndarray:
        """scikit-learn's boosting MDI: each tree's split gains (squared-error decreases of
        its negative gradients, ``Σ w_t i(t) − w_l i(l) − w_r i(r)`` over the root weight)
        averaged over the trees with a split, then normalized to sum to 1."""
        check_is_fitted(self, "booster_")
        return self.booster_.feature_importances()

    def split_importances(self, kind: str = "gain", per_class: bool = False) -> np.ndarray:
        """XGBoost/LightGBM-style importances, shape (n_features,) or, with ``per_class``,
        (K, n_features) (one row per class of a multinomial model):

        * ``"gain"``: the total gain of the splits on the feature, summed over the nodes and
          the trees, ``Σ w_t i(t) − w_l i(l) − w_r i(r)`` on the negative gradients, weights
          as fitted (not divided by the root weight, unlike ``tree_importances``);
        * ``"split"``: the number of splits on the feature, summed over the trees;
        * ``"cover"``: the mean weight of the rows reaching a split on the feature, averaged
          over those splits (0 for a feature never split on).

        None is normalized, and the learning rate enters none (it scales leaf values, not
        the splits' gains)."""
        P.check_choice("kind", kind, ("gain", "split", "cover"))
        check_is_fitted(self, "booster_")
        k = self.n_trees_per_iteration_
        stats = self.booster_.split_stats().reshape(self.n_estimators_, k, 3, -1).sum(axis=0)
        if kind == "gain":
            out = stats[:, 0]
        elif kind == "split":
            out = stats[:, 1]
        else:
            cover, count = stats[:, 2], stats[:, 1]
            if not per_class:
                cover, count = cover.sum(axis=0), count.sum(axis=0)
            return np.divide(cover, count, out=np.zeros_like(cover), where=count > 0)
        return out if per_class else out.sum(axis=0)

    def tree_importances(self) -> np.ndarray:
        """Unnormalized MDI of every tree, shape (n_estimators_, K, n_features)."""
        check_is_fitted(self, "booster_")
        imp = self.booster_.tree_importances()
        return imp.reshape(self.n_estimators_, self.n_trees_per_iteration_, -1)

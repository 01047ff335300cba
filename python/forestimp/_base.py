"""Machinery shared by every forestimp estimator: input validation, the call into the Rust
engine, out-of-bag scores and importance accessors.

Subclasses only choose defaults and how their parameters map onto the engine
(:meth:`BaseForest._engine_layout`).
"""

from __future__ import annotations

import functools
import os
import warnings
import zlib
from typing import Any, TypeVar

import numpy as np
from scipy.sparse import csr_matrix, issparse
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import (
    _categorical,
    _class_weight,
    _core,
    _float32_routing,
    _frames,
    _oob,
    _outputs,
    _quantiles,
    _sparse,
    _state,
    _verbose,
    _warm_start,
)
from . import _params as P
from ._core import DataError, Forest, InvalidParameterError
from ._sklearn_forest import SklearnEnsembleMixin

# float32 and float64 reach the engine as they are; any other numeric dtype becomes float64.
_DTYPES = [np.float64, np.float32]

# Sparse formats validate_data keeps as they are (others become CSC there); the engine
# then reads CSC (forestimp._sparse).
_SPARSE = ["csc", "csr"]

_Self = TypeVar("_Self", bound="BaseForest")

# Rows of X hashed into the training fingerprint (evenly spaced, first and last included).
_FINGERPRINT_ROWS = 1024


def _fingerprint(X: Any, y: np.ndarray) -> tuple[int, int, int]:
    """``(n_samples, n_features, crc)`` of training data: the CRC-32 of up to 1024 evenly
    spaced rows of X (as float64, so the memory order and a float32/float64 round trip do not
    matter) and of all of y (class codes or values, as float64). O(p + n), no copy of X."""
    n = X.shape[0]
    rows = _fingerprint_rows(n)
    if issparse(X):
        # The CRC of its dense twin, a few rows at a time (CRC-32 runs on): a dense copy of
        # 1024 rows of a wide sparse X would take more memory than X.
        X = X.tocsr()
        step = max(1, (1 << 20) // max(1, X.shape[1]))
        crc = 0
        for k in range(0, len(rows), step):
            block = X[rows[k : k + step]].toarray().astype(np.float64)
            crc = zlib.crc32(np.ascontiguousarray(block).tobytes(), crc)
    else:
        crc = _core.rows_crc32(X, rows)
    crc = zlib.crc32(np.ascontiguousarray(y, dtype=np.float64).data, crc)
    return n, X.shape[1], crc


@functools.lru_cache(maxsize=16)
def _fingerprint_rows(n: int) -> np.ndarray:
    """The rows of an X of ``n`` rows that :func:`_fingerprint` hashes (read-only: shared
    between calls)."""
    rows = np.unique(np.linspace(0, n - 1, num=min(n, _FINGERPRINT_ROWS)).astype(np.int64))
    rows.flags.writeable = False
    return rows


def _as_engine_matrix(X: Any) -> Any:
    """C- and Fortran-contiguous arrays are read in place (fit and predict); anything else is
    copied once. Fitting gathers one feature over scattered rows, which the engine prefetches
    ahead, so it runs as fast on rows as on columns and never needs a second copy of X.
    A sparse X becomes the engine's CSC (:func:`forestimp._sparse.engine_csc`)."""
    if issparse(X):
        return _sparse.engine_csc(X)
    if X.flags.c_contiguous or X.flags.f_contiguous:
        return X
    return np.ascontiguousarray(X)


class BaseForest(SklearnEnsembleMixin, BaseEstimator):
    """Base class; not for direct use. Per-tree scikit-learn estimators (``estimators_``,
    ``forest[i]``, ``to_sklearn()``) come from :class:`SklearnEnsembleMixin`."""

    _splitter = "best"
    _is_classifier = True

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # NaN is read by every splitter (docs/missing-values.md); a sparse X by the exact
        # and random splitters only (forestimp._sparse).
        multiway = bool(getattr(self, "multiway", False))
        tags.input_tags.sparse = not (getattr(self, "splitter", None) == "hist" or multiway)
        tags.input_tags.allow_nan = True
        # A 2-D y fits trees shared by its outputs (forestimp._outputs), as scikit-learn's
        # forests (MultiOutputMixin; classifiers are multi-label).
        tags.target_tags.multi_output = True
        return tags

    @property
    def _multi_output(self) -> bool:
        """Whether the fitted forest has several outputs (a 2-D y; ``docs/multi-output.md``)."""
        return getattr(self, "n_outputs_", 1) > 1

    # ----------------------------------------------------------------- subclass hooks
    def _engine_layout(self, n_features: int) -> tuple[str, int | None, int]:
        """``(splitter, tree_features, max_features_per_node)`` resolved for ``n_features``."""
        k = P.resolve_features("max_features", self.max_features, n_features)
        return self._splitter, None, k

    def _rows_per_tree(self, n: int, sample_weight: np.ndarray | None) -> tuple[bool, int | None]:
        """``(bootstrap, rows drawn per tree or None for n)``, checked as scikit-learn 1.9's
        forests do (``max_samples`` only with ``bootstrap=True``; a float is a fraction of
        the sum of the weights); Random Patches overrides it with Bagging's rules."""
        name = type(self).__name__
        bootstrap = P.check_bool(name, "bootstrap", self.bootstrap)
        max_samples = P.resolve_forest_max_samples(
            name, self.max_samples, bootstrap, n, sample_weight
        )
        return bootstrap, max_samples

    def _criteria(self) -> tuple[str, ...]:
        if self._is_classifier:
            return ("gini", "entropy", "log_loss")
        return ("squared_error", "friedman_mse", "absolute_error", "poisson")

    # -------------------------------------------------------------------- persistence
    def __getstate__(self) -> dict[str, Any]:
        """Parameters and other attributes as they are, the fitted ones as plain data with
        the model as its bytes (``forestimp._state``, shared with :meth:`save`)."""
        return _state.pickled(self, _state)

    def __setstate__(self, state: dict[str, Any]) -> None:
        _state.unpickled(self, state, _state, view_ok=True)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write this fitted estimator to ``path`` as data, without pickle; read it back with
        :func:`forestimp.load`. Parameters must be plain data (an int ``random_state``, no
        callable ``oob_score``); see :mod:`forestimp.persistence` for the format."""
        from .persistence import save

        save(self, path)

    # ------------------------------------------------------------------------ fitting
    def fit(self: _Self, X: Any, y: Any, sample_weight: Any = None) -> _Self:
        """Grow the forest on ``(X, y)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs. float32/float64 C- or F-ordered arrays are used without a
            copy. NaN is a missing value: each split learns the side its NaN rows go to
            (scikit-learn's rule, ``docs/missing-values.md``; with ``splitter="hist"``, NaN
            has its own bin; with ``multiway=True``, it is a category with its own child).
            Infinite values are rejected. A ``scipy.sparse`` matrix or array is read as CSC
            without densifying (other formats are converted once); it grows the trees of
            ``X.toarray()``. Sparse X needs ``splitter="best"`` or ``"random"`` (not
            ``"hist"``, not ``multiway``) and no NaN.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Class labels (any hashable values) or regression targets. A 2-D y grows trees
            shared by its outputs, the impurity being the mean over outputs
            (``docs/multi-output.md``); a column vector warns and is read as 1-D, as in
            scikit-learn.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; multiplied with bootstrap counts and class weights.

        Returns
        -------
        self
        """
        kept = _warm_start.saved(self)
        try:
            return self._fit(X, y, sample_weight, kept=kept)
        except BaseException:
            if kept is not None:  # a warm start that raises leaves the fitted estimator
                _warm_start.restore(self, kept)
            raise

    def _fit(
        self: _Self,
        X: Any,
        y: Any,
        sample_weight: Any,
        shadows: bool | np.ndarray = False,
        columns: np.ndarray | None = None,
        bins: Any = None,
        trees: tuple[int, int] | None = None,
        classes: np.ndarray | None = None,
        kept: dict[str, Any] | None = None,
        encoded: tuple[Any, Any] | None = None,
    ) -> _Self:
        """``fit``; with ``trees=(start, stop)`` only those trees are grown, as a part of the
        forest (``Forest.concat``, :mod:`forestimp.dask`), and out-of-bag scores are left
        to the whole forest. ``classes`` (sorted labels) codes ``y`` against classes that it
        may not all hold (a block of rows, :func:`forestimp.dask.fit_patches`). With
        ``shadows`` or ``columns`` the forest is grown on a view of X
        (``Forest.fit``: the ``columns`` of X, then virtual permuted copies of columns, as
        ``forestimp.importance.unbiased`` and ``forestimp.selection`` use them), and nothing
        else is computed: such a forest is read through its engine object only. ``bins``
        (``_core.Bins`` of X) spares the histogram splitter binning X again. ``kept``: the
        fitted attributes a warm start extends (:mod:`forestimp._warm_start`), read for a
        whole forest only. ``encoded``: ``(is_categorical_, categories_)`` of a fitted
        estimator whose engine input X is (its categorical columns already codes)."""
        # Before validate_data: its format conversions read the index unchecked (a sparse
        # y too, which it accepts for a multi-output y).
        X, y = _sparse.checked(X), _sparse.checked(y, "y")
        # Categorical columns become codes of the categories learned here (by category, not
        # by their order): forestimp._categorical.
        if encoded is not None:
            self.is_categorical_, self.categories_ = encoded
        else:
            mask = _categorical.resolve_mask(X, getattr(self, "categorical_features", None))
            self.is_categorical_ = mask
            self.categories_ = None if mask is None else _categorical.learn(X, mask)
            if self.categories_ is not None:
                X = _categorical.encode(X, self.categories_)
        _frames.check_numeric(X)  # a text or category column: DataError naming it
        X, y = validate_data(
            self,
            X,
            y,
            dtype=_DTYPES,
            ensure_all_finite="allow-nan",
            y_numeric=not self._is_classifier,
            accept_sparse=_SPARSE,
            multi_output=True,
        )
        y = _outputs.single_or_columns(y)
        n, p = X.shape
        # max_features counts the columns the forest is grown on. Independent shadows are
        # columns of that data (Boruta); shared ones are not (ranger's impurity_corrected).
        seen = p if columns is None else len(columns)
        if isinstance(shadows, np.ndarray):
            seen += len(shadows)
        splitter, tree_features, k = self._engine_layout(seen)
        if issparse(X) and (splitter not in ("best", "random") or shadows is not False):
            raise TypeError(
                "A sparse X is fitted by splitter='best' or 'random' only (not 'hist', "
                "multiway or shadow features): pass X.toarray()."
            )
        X = _as_engine_matrix(X)
        sw = None
        if sample_weight is not None:
            sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        output_classes: list[int] | None = None
        # A list per output with several outputs (scikit-learn's convention).
        self.classes_: Any
        self.n_classes_: Any
        if self._is_classifier and y.ndim == 2:
            # Several outputs (forestimp._outputs): one list entry per output.
            check_classification_targets(y)
            self.classes_, y_engine = _outputs.class_codes(y, classes)
            output_classes = [len(c) for c in self.classes_]
            self.n_classes_ = list(output_classes)
            sw = _class_weight.sample_weight_of(self, y, sw)
            n_classes = 0
        elif self._is_classifier:
            check_classification_targets(y)
            self.classes_, codes = _outputs.column_codes(y, classes)
            self.n_classes_ = len(self.classes_)
            # uint32 codes are read in place by the engine: 4 bytes a sample while it fits.
            y_engine = codes.astype(np.uint32)
            del codes
            sw = _class_weight.sample_weight_of(self, y, sw)
            n_classes = self.n_classes_
        else:
            y_engine = np.ascontiguousarray(y, dtype=np.float64)
            n_classes = 0
        self.n_outputs_ = 1 if y.ndim == 1 else y.shape[1]
        if sw is not None and not np.any(sw > 0):
            raise DataError("Sample weights must contain at least one positive value.")

        criterion = P.check_choice("criterion", self.criterion, self._criteria())
        if criterion == "log_loss":
            criterion = "entropy"
        elif criterion == "friedman_mse":
            # scikit-learn 1.9 maps it to squared_error with this warning (in __init__;
            # here at fit, since __init__ stores parameters unchanged).
            warnings.warn(
                'Value `"friedman_mse"` for `criterion` is deprecated (scikit-learn 1.9). It '
                'maps to `"squared_error"` as both were always equivalent. Use '
                '`criterion="squared_error"` to remove this warning.',
                FutureWarning,
                stacklevel=3,
            )
            criterion = "squared_error"
        monotonic_cst = P.monotonic_cst_of_view(
            P.resolve_monotonic_cst(
                getattr(self, "monotonic_cst", None),
                p,
                self.n_outputs_,
                n_classes if self._is_classifier else None,
            ),
            columns,
            shadows,
        )
        bootstrap, max_samples = self._rows_per_tree(n, sw)
        sw, subsample = _class_weight.per_tree_or_balanced(self, y, sw, bootstrap, max_samples)
        oob = self.oob_score
        if oob and not (bootstrap or (max_samples is not None and max_samples < n)):
            raise InvalidParameterError(
                "Out of bag estimation only available if bootstrap=True or max_samples < n_samples"
            )
        if oob and self._is_classifier and y.ndim == 2:
            _outputs.check_oob_target(y_engine)  # the codes, as scikit-learn checks them
        n_jobs = P.check_n_jobs(self.n_jobs)
        verbose = P.check_verbose(self.verbose)
        n_estimators = P.check_int("n_estimators", self.n_estimators, 1, P.MAX_TREES)
        whole = shadows is False and columns is None and trees is None
        fingerprint = _fingerprint(X, y_engine) if whole else None
        plan = None
        if kept is not None and fingerprint is not None:
            plan = _warm_start.plan(self, kept, X, fingerprint, n_estimators, oob)
            if plan is None:
                _warm_start.keep_fitted(self, kept, X, y, fingerprint, oob)
                return self
        engine = dict(
            n_classes=n_classes,
            criterion=criterion,
            splitter=splitter,
            n_estimators=n_estimators,
            max_features=k,
            max_depth=P.check_int("max_depth", self.max_depth, 1, none_ok=True),
            min_samples_split=P.resolve_min_samples(
                "min_samples_split", self.min_samples_split, n, 2
            ),
            min_samples_leaf=P.resolve_min_samples("min_samples_leaf", self.min_samples_leaf, n, 1),
            min_weight_fraction_leaf=P.check_real(
                "min_weight_fraction_leaf", self.min_weight_fraction_leaf, 0.0, 0.5
            ),
            min_impurity_decrease=P.check_real(
                "min_impurity_decrease", self.min_impurity_decrease, 0.0, np.inf
            ),
            max_leaf_nodes=P.check_int("max_leaf_nodes", self.max_leaf_nodes, 2, none_ok=True),
            bootstrap=bootstrap,
            max_samples=max_samples,
            tree_features=tree_features,
            balanced_subsample=subsample,
            random_state=plan.seed(self.random_state) if plan else P.seed_from(self.random_state),
            n_jobs=n_jobs,
            shadows=shadows,
            columns=columns,
            max_bins=P.check_int("max_bins", getattr(self, "max_bins", 255), 2, 256),
            bins=bins,
            ccp_alpha=P.check_real("ccp_alpha", getattr(self, "ccp_alpha", 0.0), 0.0, np.inf),
            output_classes=output_classes,
            monotonic_cst=monotonic_cst,
            categorical=self._categorical_of_view(columns, shadows),
            category_guards=_categorical.guards(self),
        )
        progress = None
        if verbose:
            progress = _verbose.ForestProgress(type(self).__name__, verbose, n_jobs)
        span = trees if plan is None else plan.trees
        grown = Forest.fit(X, y_engine, sw, **engine, trees=span, progress=progress)
        self.forest_ = grown if plan is None else plan.joined(grown, p)
        if shadows is not False or columns is not None:
            return self
        first = 0 if span is None else span[0]
        _float32_routing.record(self, grown, X, first, kept if plan else None)
        # No reference to the caller's X is kept (it may be changed in place, and a pickle
        # could not restore it): out-of-bag measures take the training data again and check
        # it against this fingerprint (_training_input).
        self._training_fingerprint = fingerprint if fingerprint else _fingerprint(X, y_engine)
        if trees is None:
            _warm_start.drop_oob(self)
            if oob:
                self._set_oob_score(X, y)
            self._leaf_values = None
            if getattr(self, "store_leaf_values", False):
                _quantiles.store(self, X, y_engine, sw, n_jobs)
        return self

    def _target_codes(self, y: Any, n_samples: int, output: int | None = None) -> np.ndarray:
        """Targets as the engine reads them: class codes (classifiers) or values, float64;
        all the columns of a multi-output y, for a measure of one ``output``."""
        y = np.asarray(y)
        if self._multi_output:
            return _outputs.engine_targets(self, y, n_samples, output)
        if y.ndim != 1 or y.shape[0] != n_samples:
            raise DataError(f"y must have shape ({n_samples},), got {y.shape}.")
        if not self._is_classifier:
            values = np.ascontiguousarray(y, dtype=np.float64)
            if not np.all(np.isfinite(values)):
                raise DataError("y contains NaN or infinite values.")
            return values
        classes = self.classes_
        codes, unknown = _outputs.label_codes(classes, y)
        if unknown.any():
            raise DataError(
                f"y contains labels the classifier was not fitted on, e.g. {y[unknown][0]!r}."
            )
        return codes.astype(np.float64)

    def _training_input(
        self, X: Any, y: Any, sparse: bool = False, output: int | None = None
    ) -> tuple[Any, np.ndarray]:
        """``(X, y_codes)`` for an out-of-bag measure, checked to be the training data
        (a multi-output forest: ``output``'s column, checked with the others).

        The in-bag/out-of-bag rows of every tree are regenerated from its seed by row
        *position*, so any other matrix would silently give a wrong answer. The check
        compares the shape, up to 1024 evenly spaced rows of X and all of y with the
        fingerprint taken at fit: it catches other data, a subset, reordered rows and any
        change of y, but not an in-place edit of X rows outside the sampled ones. With
        ``sparse``, a sparse X is accepted (as in :meth:`_engine_input`).
        """
        if X is None or y is None:
            raise InvalidParameterError(
                "Out-of-bag importances need the training data: pass the X and y given to fit."
            )
        Xe = self._engine_input(X, sparse=sparse)
        codes = self._target_codes(y, Xe.shape[0], output)
        want = getattr(self, "_training_fingerprint", None)
        if want is not None and _fingerprint(Xe, codes) != want:
            n = want[0]
            got = "" if Xe.shape[0] == n else f" ({Xe.shape[0]} rows given, {n} at fit)"
            raise DataError(
                "Out-of-bag importances need the exact training data (same rows, same order, "
                f"unchanged): X, y differ from those given to fit{got}."
            )
        return Xe, np.ascontiguousarray(codes[:, output]) if codes.ndim == 2 else codes

    def _set_oob_score(self, X: np.ndarray, y: np.ndarray) -> None:
        values, counts = self.forest_.oob_predict(X, n_jobs=P.check_n_jobs(self.n_jobs))
        seen = counts > 0
        scorer = self.oob_score if callable(self.oob_score) else None
        if self._multi_output:
            _outputs.set_oob_attributes(self, values, seen, y, scorer)
        elif self._is_classifier:
            self.oob_decision_function_ = values
            classes = self.classes_
            self.oob_score_ = _oob.score(
                scorer or accuracy_score, y,
                lambda rows: classes[np.argmax(np.nan_to_num(values[rows]), axis=1)],
                seen, stacklevel=4,
            )  # fmt: skip
        else:
            self.oob_prediction_ = values[:, 0]
            self.oob_score_ = _oob.score(
                scorer or r2_score, y, lambda rows: values[rows, 0], seen, stacklevel=4
            )

    def _categorical_of_view(self, columns: Any, shadows: Any) -> list[bool] | None:
        """The categorical flags of the columns the forest is grown on (None: none)."""
        mask = getattr(self, "is_categorical_", None)
        if mask is None:
            return None
        flags = [bool(b) for b in mask]
        # As Forest.fit reads the view: the columns in their order, then the shadows (a
        # shadow of a categorical column is categorical).
        seen = flags if columns is None else [flags[int(c)] for c in columns]
        if shadows is True:
            seen = seen + seen
        elif isinstance(shadows, np.ndarray):
            seen = seen + [flags[int(s)] for s in shadows]
        return seen

    # --------------------------------------------------------------------- prediction
    def _engine_input(self, X: Any, sparse: bool = False) -> Any:
        """X checked against the fit and ready for the engine; with ``sparse``, a sparse X
        is accepted (the engine's CSC), otherwise refused with ``TypeError``."""
        check_is_fitted(self, "forest_")
        X = _sparse.checked(X)  # a malformed sparse X: DataError even where sparse is refused
        categories = getattr(self, "categories_", None)
        if categories is not None:
            X = _categorical.encode(X, categories)
        _frames.check_numeric(X)
        # NaN is read at predict as at fit (the allow_nan tag; every splitter allows it).
        finite = "allow-nan" if self.__sklearn_tags__().input_tags.allow_nan else True
        X = validate_data(
            self,
            X,
            dtype=_DTYPES,
            ensure_all_finite=finite,
            reset=False,
            accept_sparse=_SPARSE if sparse else False,
        )
        return _as_engine_matrix(X)

    def _jobs(self) -> int | None:
        """The engine's ``n_jobs`` for this estimator's work (checked)."""
        return P.check_n_jobs(self.n_jobs)

    def apply(self, X: Any) -> np.ndarray:
        """Index of the leaf each sample reaches in each tree, shape (n_samples, n_estimators)."""
        X = self._engine_input(X, sparse=True)
        return self.forest_.apply(X, n_jobs=self._jobs())

    def decision_path(self, X: Any) -> tuple[csr_matrix, np.ndarray]:
        """Node indicator matrix (n_samples, total nodes) and the tree offsets ``n_nodes_ptr``."""
        X = self._engine_input(X, sparse=True)
        indptr, indices, n_nodes_ptr = self.forest_.decision_path(X, n_jobs=self._jobs())
        data = np.ones(len(indices), dtype=np.int64)
        shape = (len(indptr) - 1, int(n_nodes_ptr[-1]))
        return csr_matrix((data, indices, indptr), shape=shape), n_nodes_ptr

    # -------------------------------------------------------------------- importances
    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalized MDI, as scikit-learn's ``feature_importances_`` (sums to 1)."""
        check_is_fitted(self, "forest_")
        return self.forest_.importances(True, n_jobs=self._jobs())

    @property
    def mdi_importances_(self) -> np.ndarray:
        """Raw MDI (Louppe 2014, Eq. 6.2): ``(1/M) Σ_trees Σ_{t splits on X_m} p(t) Δi(t)``.

        In bits for ``criterion="entropy"``; for fully grown totally randomized trees the
        values sum to the mutual information ``I(X; Y)`` of the learning set.
        """
        check_is_fitted(self, "forest_")
        return self.forest_.importances(False, n_jobs=self._jobs())

    def tree_importances(self, normalize: bool = False) -> np.ndarray:
        """Raw MDI of every tree, shape (n_estimators, n_features).

        With ``normalize=True`` each row is divided by its sum (rows summing to 0 stay 0).
        The spread over rows gives standard errors: ``std(axis=0) / sqrt(n_estimators)``.
        """
        check_is_fitted(self, "forest_")
        imp = self.forest_.tree_importances(n_jobs=self._jobs())
        if normalize:
            s = imp.sum(axis=1, keepdims=True)
            imp = np.divide(imp, s, out=np.zeros_like(imp), where=s > 0)
        return imp

    @property
    def importances_std_(self) -> np.ndarray:
        """Standard deviation over trees (``ddof=0``) of the normalized per-tree MDI, in the
        units of ``feature_importances_`` (``mdi(est, normalize=True).importances_std``)."""
        return self.tree_importances(normalize=True).std(axis=0)


class ForestClassifierMixin(ClassifierMixin):
    """Soft-voting prediction for forestimp classifiers."""

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # Multi-label y (binary outputs) is a multi-output y, as for scikit-learn's forests.
        tags.classifier_tags.multi_label = True
        return tags

    def predict_proba(self, X: Any) -> Any:
        """Mean of the trees' leaf class frequencies, shape (n_samples, n_classes); with
        several outputs, a list of one such array per output."""
        X = self._engine_input(X, sparse=True)
        proba = self.forest_.predict(X, n_jobs=P.check_n_jobs(self.n_jobs))
        if self._multi_output:
            return _outputs.split(proba, self.n_classes_)
        return proba

    def predict_log_proba(self, X: Any) -> Any:
        """Logarithm of :meth:`predict_proba` (``-inf`` for probability 0); a list of
        arrays with several outputs."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(p) for p in proba] if self._multi_output else np.log(proba)

    def predict(self, X: Any) -> np.ndarray:
        """The class with the largest mean probability (first on ties); shape (n_samples,),
        or (n_samples, n_outputs) of each output's labels."""
        proba = self.predict_proba(X)
        if self._multi_output:
            return _outputs.labels_of(proba, self.classes_)
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """scikit-learn's accuracy, once a sparse ``y`` is checked (its metrics accept one
        and convert it unchecked; a malformed one raises ``DataError``)."""
        return float(super().score(X, _sparse.checked(y, "y"), sample_weight=sample_weight))


class ForestRegressorMixin(_quantiles.QuantilesMixin, RegressorMixin):
    """Mean prediction for forestimp regressors."""

    def predict(self, X: Any) -> np.ndarray:
        """Mean of the trees' leaf values, shape (n_samples,), or (n_samples, n_outputs)."""
        X = self._engine_input(X, sparse=True)
        out = self.forest_.predict(X, n_jobs=P.check_n_jobs(self.n_jobs))
        return out if self._multi_output else out[:, 0]

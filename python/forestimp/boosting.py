"""Gradient boosting on forestimp's tree engine: ``GradientBoostingRegressor`` and
``GradientBoostingClassifier`` with scikit-learn 1.9's parameters and semantics.

Each round fits one regression tree (K for multinomial log loss) on the negative gradients of
the loss with the engine that grows the forests, re-optimizes every leaf for the loss
(Friedman's terminal-region update, as ``sklearn.ensemble.GradientBoosting*``) and adds
``learning_rate`` times the leaf values to the raw predictions. With ``subsample=1``,
``max_features=None`` and continuous features without ties, the trees and predictions are
scikit-learn's (up to rounding). Beyond scikit-learn: ``splitter`` (``"best"``, ``"random"``
or ``"hist"``, the forests' histogram codes, binned once per fit), ``max_bins``,
``tree_features`` (a random feature subset per tree: Random Patches inside boosting) and
``n_jobs`` (parallelism inside a round; the model bytes do not depend on it) and
``categorical_features`` (as ``HistGradientBoosting*``'s, ``"from_dtype"`` by default:
categorical columns are split by sets of categories with either splitter, the best set
within ``category_smoothing``, ``min_category_samples``, ``min_category_share``,
``max_category_side`` and ``category_penalty`` as the forests', see
``docs/categorical.md``; ``categories_`` and ``is_categorical_`` after fit).
Rows of a round (``subsample < 1``) and the trees' random draws come from
``(random_state, round)``, not from scikit-learn's generator, so those models differ from
scikit-learn's in their draws, not in their rules. ``init`` is None, ``"zero"`` or an
estimator, as in scikit-learn. ``criterion`` is accepted and ignored with scikit-learn
1.9's ``FutureWarning`` (it has no effect there either), so existing grid searches run.
See ``docs/boosting.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets

from . import _boosting_state, _categorical, _model_kinds, _sparse
from ._boosting_base import BaseGradientBoosting
from ._core import DataError, InvalidParameterError
from ._outputs import label_codes


class GradientBoostingRegressor(RegressorMixin, BaseGradientBoosting):
    """Gradient boosting for regression (scikit-learn's ``GradientBoostingRegressor``).

    ``loss`` is ``"squared_error"``, ``"absolute_error"``, ``"huber"`` or ``"quantile"``
    (``alpha``: Huber's residual quantile, or the quantile estimated). See the module
    docstring for the extra parameters ``splitter``, ``max_bins``, ``tree_features``,
    ``n_jobs`` and ``categorical_features``.
    """

    _losses = ("squared_error", "absolute_error", "huber", "quantile")

    def __init__(
        self,
        *,
        loss: str = "squared_error",
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
        super().__init__(
            loss=loss,
            learning_rate=learning_rate,
            n_estimators=n_estimators,
            subsample=subsample,
            criterion=criterion,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_depth=max_depth,
            min_impurity_decrease=min_impurity_decrease,
            init=init,
            random_state=random_state,
            max_features=max_features,
            alpha=alpha,
            verbose=verbose,
            max_leaf_nodes=max_leaf_nodes,
            warm_start=warm_start,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            ccp_alpha=ccp_alpha,
            splitter=splitter,
            max_bins=max_bins,
            tree_features=tree_features,
            n_jobs=n_jobs,
            categorical_features=categorical_features,
            category_smoothing=category_smoothing,
            min_category_samples=min_category_samples,
            min_category_share=min_category_share,
            max_category_side=max_category_side,
            category_penalty=category_penalty,
        )

    def predict(self, X: Any) -> np.ndarray:
        """Predicted values, shape (n_samples,)."""
        return self._raw_predict(X).ravel()

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Predictions after each round."""
        for raw in self._staged_raw_predict(X):
            yield raw.ravel()

    def apply(self, X: Any) -> np.ndarray:
        """Leaf node index of every sample in every tree, shape (n_samples, n_estimators)."""
        return super().apply(X)[:, :, 0]


class GradientBoostingClassifier(ClassifierMixin, BaseGradientBoosting):
    """Gradient boosting for classification (scikit-learn's ``GradientBoostingClassifier``).

    ``loss`` is ``"log_loss"`` (binomial: one tree per round; multinomial: one per class) or
    ``"exponential"`` (binary only). See the module docstring for the extra parameters.
    """

    _is_classifier = True
    _losses = ("log_loss", "exponential")

    def __init__(
        self,
        *,
        loss: str = "log_loss",
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
        super().__init__(
            loss=loss,
            learning_rate=learning_rate,
            n_estimators=n_estimators,
            subsample=subsample,
            criterion=criterion,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_depth=max_depth,
            min_impurity_decrease=min_impurity_decrease,
            init=init,
            random_state=random_state,
            max_features=max_features,
            verbose=verbose,
            max_leaf_nodes=max_leaf_nodes,
            warm_start=warm_start,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            ccp_alpha=ccp_alpha,
            splitter=splitter,
            max_bins=max_bins,
            tree_features=tree_features,
            n_jobs=n_jobs,
            categorical_features=categorical_features,
            category_smoothing=category_smoothing,
            min_category_samples=min_category_samples,
            min_category_share=min_category_share,
            max_category_side=max_category_side,
            category_penalty=category_penalty,
        )

    def _encode_y(self, y: np.ndarray, sample_weight: np.ndarray | None) -> tuple[np.ndarray, int]:
        check_classification_targets(y)
        if getattr(self, "booster_", None) is not None and self.warm_start:
            classes = self.classes_
            codes, unknown = label_codes(classes, y)
            if unknown.any():
                raise DataError("y holds labels the first fit did not see.")
        else:
            classes, codes = np.unique(y, return_inverse=True)
        present = np.bincount(codes, weights=sample_weight, minlength=len(classes))
        n_present = int(np.count_nonzero(present))
        if n_present < 2:
            raise DataError(
                f"y contains {n_present} class after sample_weight trimmed classes with "
                "zero weights, while a minimum of 2 classes are required."
            )
        if self.loss == "exponential" and len(classes) != 2:
            raise InvalidParameterError(
                f"loss='exponential' is only suitable for a binary classification problem, "
                f"you have n_classes={len(classes)}. Please use loss='log_loss' instead."
            )
        self.classes_ = classes
        self.n_classes_ = len(classes)
        return codes.astype(np.float64), len(classes)

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw predictions: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        raw = self._raw_predict(X)
        return raw.ravel() if raw.shape[1] == 1 else raw

    def staged_decision_function(self, X: Any) -> Iterator[np.ndarray]:
        """Raw predictions after each round."""
        for raw in self._staged_raw_predict(X):
            yield raw.ravel() if raw.shape[1] == 1 else raw

    def _proba(self, raw: np.ndarray) -> np.ndarray:
        if raw.shape[1] > 1:
            return softmax(raw, axis=1)
        scale = 2.0 if self.loss == "exponential" else 1.0
        p1 = expit(scale * raw[:, 0])
        return np.column_stack([1.0 - p1, p1])

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes)."""
        return self._proba(self._raw_predict(X))

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        return np.log(self.predict_proba(X))

    def staged_predict_proba(self, X: Any) -> Iterator[np.ndarray]:
        """Class probabilities after each round."""
        for raw in self._staged_raw_predict(X):
            yield self._proba(raw)

    def _classes_of(self, raw: np.ndarray) -> np.ndarray:
        codes = (raw[:, 0] >= 0).astype(int) if raw.shape[1] == 1 else np.argmax(raw, axis=1)
        return self.classes_[codes]

    def predict(self, X: Any) -> np.ndarray:
        """The predicted class (for two classes: the positive one when the raw score is >= 0)."""
        return self._classes_of(self._raw_predict(X))

    def staged_predict(self, X: Any) -> Iterator[np.ndarray]:
        """Predicted classes after each round."""
        for raw in self._staged_raw_predict(X):
            yield self._classes_of(raw)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """scikit-learn's accuracy, once a sparse ``y`` is checked (its metrics accept one
        and convert it unchecked; a malformed one raises ``DataError``)."""
        return float(super().score(X, _sparse.checked(y, "y"), sample_weight=sample_weight))


# The classes a forestimp file can name (forestimp.persistence finds them there by name).
_model_kinds.register(
    _boosting_state, "booster_", GradientBoostingClassifier, GradientBoostingRegressor
)

__all__ = ["GradientBoostingClassifier", "GradientBoostingRegressor"]

"""Permutation importance (mean decrease of accuracy, MDA) of fitted forestimp forests.

Two estimators of how much the forest relies on feature ``X_m``:

* **out-of-bag** (Breiman 2001; Liaw & Wiener's ``importance()``), when ``X`` is None: for
  each tree ``t`` with out-of-bag rows ``O_t``,
  ``VI_t(m) = err_t(X_m permuted among O_t) − err_t(O_t)``, where ``err_t`` is the tree's
  mean 0/1 loss (majority class of its leaf) or squared error on ``O_t``; the importance is
  ``(1/M) Σ_t VI_t(m)``;
* **held-out**, with ``X, y``: ``score(y, f(X)) − score(y, f(X with column m permuted))`` for
  the forest's predictions ``f`` and any score.

Neither copies X: the engine sends a permuted *row index* down the nodes that split on ``m``
and skips the trees that never split on it (their loss is unchanged). Permutations depend on
``(random_state, tree, feature, repeat)`` only, so results are identical for any ``n_jobs``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    explained_variance_score,
    log_loss,
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    roc_auc_score,
)
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d

from .. import _params as P
from .._core import (
    DataError,
    InvalidParameterError,
    local_permutation_importance,
    oob_permutation_importance,
    permuted_predictions,
)

__all__ = ["PermutationImportance", "local_permutation", "permutation"]

Pred = np.ndarray  # (n_samples, width): probabilities, or values in one column
Score = Callable[[Pred], float]


@dataclass(frozen=True)
class PermutationImportance:
    """Result of :func:`permutation`.

    Attributes
    ----------
    importances_mean : ndarray of shape (n_features,)
        The mean importance, or, with ``scaled=True``, ``raw_importances_mean /
        standard_error`` (0 where the standard error is 0).
    raw_importances_mean : ndarray of shape (n_features,)
        The unscaled mean importance.
    importances_std : ndarray of shape (n_features,)
        Population standard deviation (ddof = 0) over trees (OOB) or repeats (held-out).
    standard_error : ndarray of shape (n_features,)
        ``importances_std / sqrt(n)``, n = number of trees (OOB; Liaw & Wiener's ``SD``) or
        of repeats (held-out).
    importances : ndarray of shape (n_features, n_repeats)
        Importance of every repeat (for OOB: averaged over trees).
    baseline_score : float or None
        Held-out: the score of the unpermuted predictions. OOB: None.
    per_tree : ndarray of shape (n_estimators, n_features) or None
        OOB: ``VI_t(m)`` averaged over repeats; exactly 0 where tree ``t`` never splits on
        ``m`` or has no out-of-bag row. Held-out: None.
    oob_error : ndarray of shape (n_estimators,) or None
        OOB: each tree's ``err_t(O_t)`` (NaN without out-of-bag rows). Held-out: None.
    method : {"oob", "held_out"}
    scaled : bool
    seed : int
        Engine seed of the permutations (rebuild them with
        ``forestimp._core.permutation_indices``).
    """

    importances_mean: np.ndarray
    raw_importances_mean: np.ndarray
    importances_std: np.ndarray
    standard_error: np.ndarray
    importances: np.ndarray
    baseline_score: float | None
    per_tree: np.ndarray | None
    oob_error: np.ndarray | None
    method: str
    scaled: bool
    seed: int


def _forest_of(est: Any) -> Any:
    check_is_fitted(est, "forest_")
    return est.forest_


def _is_classifier(est: Any) -> bool:
    return _forest_of(est).n_classes > 0


def _held_out_data(est: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    if X is None or y is None:
        raise InvalidParameterError(
            "Pass both X and y (held-out importance), or neither (out-of-bag importance)."
        )
    Xe = est._engine_input(X)
    y = column_or_1d(np.asarray(y), warn=True)
    check_consistent_length(Xe, y)
    if not _is_classifier(est):
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise DataError("y contains NaN or infinite values.")
    return Xe, y


def _class_codes(est: Any, y: np.ndarray) -> np.ndarray:
    classes = est.classes_
    codes = np.searchsorted(classes, y)
    codes = np.clip(codes, 0, len(classes) - 1)
    if not np.array_equal(classes[codes], y):
        raise DataError("y contains labels the classifier was not fitted on.")
    return codes.astype(np.float64)


def _scorer(est: Any, scoring: Any, y: np.ndarray) -> Score:
    """``score(pred)`` of forest predictions ``pred`` (probabilities or a value column)."""
    clf = _is_classifier(est)
    if scoring is None:
        scoring = "accuracy" if clf else "r2"
    if callable(scoring):
        if clf:
            return lambda pred: float(scoring(y, est.classes_[np.argmax(pred, axis=1)]))
        return lambda pred: float(scoring(y, pred[:, 0]))
    if clf:
        classes = est.classes_
        on_labels = {"accuracy": accuracy_score, "balanced_accuracy": balanced_accuracy_score}
        if scoring in on_labels:
            f = on_labels[scoring]
            return lambda pred: float(f(y, classes[np.argmax(pred, axis=1)]))
        if scoring == "neg_log_loss":
            return lambda pred: -float(log_loss(y, pred, labels=classes))
        if scoring == "roc_auc":
            if len(classes) == 2:
                return lambda pred: float(roc_auc_score(y, pred[:, 1]))
            return lambda pred: float(roc_auc_score(y, pred, multi_class="ovr", labels=classes))
        names = [*on_labels, "neg_log_loss", "roc_auc"]
    else:
        on_values: dict[str, Callable[[Pred], float]] = {
            "r2": lambda p: r2_score(y, p[:, 0]),
            "explained_variance": lambda p: explained_variance_score(y, p[:, 0]),
            "neg_mean_squared_error": lambda p: -mean_squared_error(y, p[:, 0]),
            "neg_root_mean_squared_error": lambda p: -np.sqrt(mean_squared_error(y, p[:, 0])),
            "neg_mean_absolute_error": lambda p: -mean_absolute_error(y, p[:, 0]),
        }
        if scoring in on_values:
            g = on_values[scoring]
            return lambda pred: float(g(pred))
        names = list(on_values)
    raise InvalidParameterError(
        f"The 'scoring' parameter must be None, a callable score(y_true, y_pred) or one of "
        f"{', '.join(map(repr, names))} for this estimator, got {scoring!r}."
    )


def _summary(
    spread: np.ndarray, scaled: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(mean, raw mean, std, standard error) of ``spread`` (n_draws, n_features)."""
    raw = spread.mean(axis=0)
    std = spread.std(axis=0)
    se = std / np.sqrt(spread.shape[0])
    mean = np.divide(raw, se, out=np.zeros_like(raw), where=se > 0) if scaled else raw
    return mean, raw, std, se


def permutation(
    est: Any,
    X: Any = None,
    y: Any = None,
    *,
    n_repeats: int = 1,
    scoring: str | Callable[[np.ndarray, np.ndarray], float] | None = None,
    scaled: bool = False,
    n_jobs: int | None = None,
    random_state: Any = None,
) -> PermutationImportance:
    """Permutation importance (MDA): out-of-bag (``X=None``) or on held-out ``X, y``.

    **Out-of-bag** (Breiman 2001, Liaw & Wiener's ``importance(type=1)``): for tree ``t``
    with out-of-bag rows ``O_t`` (regenerated from the seed), feature ``m`` and repeat
    ``r``, ``VI_{r,t}(m) = err_t(X_m permuted among O_t) − err_t(O_t)``, with ``err_t`` the
    unweighted mean over ``O_t`` of the tree's 0/1 loss (majority class of the leaf, first
    on ties) or squared error. ``per_tree`` is ``VI_t = mean_r VI_{r,t}``, the importance
    ``(1/M) Σ_t VI_t(m)`` and its standard error ``std_t(VI_t) / sqrt(M)`` (ddof 0). A tree
    that never splits on ``m`` (or has no OOB row) contributes exactly 0 and still counts
    in ``M``. Needs the training data kept by the estimator and ``bootstrap=True`` or
    ``max_samples < n_samples``; ``scoring`` does not apply.

    **Held-out**: for every repeat ``r`` a permutation ``π`` of the rows of ``X``;
    ``importance_r(m) = score(y, f(X)) − score(y, f(X with X[:, m] := X[π, m]))`` where ``f``
    is the forest's soft-vote prediction, and the standard error is
    ``std_r / sqrt(n_repeats)`` (ddof 0).

    Parameters
    ----------
    est : fitted forestimp estimator
    X : array-like of shape (n_samples, n_features) or None
        Held-out data; None for out-of-bag importance on the training data.
    y : array-like of shape (n_samples,) or None
        Held-out targets (labels for classifiers).
    n_repeats : int, default=1
        Permutations per feature (per tree and feature for OOB).
    scoring : str, callable or None, default=None
        Held-out only. None: ``"accuracy"`` (classifier) or ``"r2"`` (regressor). Strings:
        ``"accuracy"``, ``"balanced_accuracy"``, ``"neg_log_loss"``, ``"roc_auc"``
        (classifiers); ``"r2"``, ``"explained_variance"``, ``"neg_mean_squared_error"``,
        ``"neg_root_mean_squared_error"``, ``"neg_mean_absolute_error"`` (regressors).
        A callable ``score(y_true, y_pred)`` (greater is better) receives predicted labels
        for classifiers and predicted values for regressors.
    scaled : bool, default=False
        Report ``importances_mean = mean / standard_error`` (randomForest's ``scale=TRUE``,
        0 where the standard error is 0). Held-out scaling needs ``n_repeats >= 2``.
    n_jobs : int or None, default=None
        Threads (None: 1, -1: all cores). Results do not depend on it.
    random_state : int, RandomState or None, default=None
        Seeds the permutations.

    Returns
    -------
    PermutationImportance
    """
    forest = _forest_of(est)
    n_repeats = P.check_int("n_repeats", n_repeats, 1)  # type: ignore[assignment]
    n_jobs = P.check_n_jobs(n_jobs)
    seed = P.seed_from(random_state)
    if X is None and y is None:
        if scoring is not None:
            raise InvalidParameterError(
                "The 'scoring' parameter applies to held-out data only: out-of-bag "
                "importance uses each tree's 0/1 loss (classifier) or squared error (regressor)."
            )
        Xt, yt = est._training_data()
        per_rep, oob_error, _ = oob_permutation_importance(
            forest, Xt, yt, n_repeats=n_repeats, seed=seed, n_jobs=n_jobs
        )
        per_tree = per_rep.mean(axis=0)
        mean, raw, std, se = _summary(per_tree, scaled)
        return PermutationImportance(
            importances_mean=mean,
            raw_importances_mean=raw,
            importances_std=std,
            standard_error=se,
            importances=per_rep.mean(axis=1).T,
            baseline_score=None,
            per_tree=per_tree,
            oob_error=oob_error,
            method="oob",
            scaled=bool(scaled),
            seed=seed,
        )
    Xe, y = _held_out_data(est, X, y)
    if scaled and n_repeats < 2:
        raise InvalidParameterError(
            "scaled=True on held-out data needs n_repeats >= 2 (the standard error is taken "
            "over repeats)."
        )
    score = _scorer(est, scoring, y)
    baseline = score(forest.predict(Xe, n_jobs=n_jobs))
    imp = np.empty((Xe.shape[1], n_repeats))
    for m in range(Xe.shape[1]):
        preds = permuted_predictions(forest, Xe, m, n_repeats=n_repeats, seed=seed, n_jobs=n_jobs)
        imp[m] = [baseline - score(p) for p in preds]
    mean, raw, std, se = _summary(imp.T, scaled)
    return PermutationImportance(
        importances_mean=mean,
        raw_importances_mean=raw,
        importances_std=std,
        standard_error=se,
        importances=imp,
        baseline_score=baseline,
        per_tree=None,
        oob_error=None,
        method="held_out",
        scaled=bool(scaled),
        seed=seed,
    )


def local_permutation(
    est: Any,
    X: Any = None,
    y: Any = None,
    *,
    level: str = "tree",
    n_jobs: int | None = None,
    random_state: Any = None,
) -> np.ndarray:
    """Casewise (per-sample) permutation importance, shape (n_samples, n_features).

    ``level="tree"`` (ranger's ``local.importance``, randomForest's ``localImp``):
    ``C[i, m] = (1/|T_i|) Σ_{t ∈ T_i} [L_t(x_i with x_im permuted) − L_t(x_i)]``, with
    ``L_t`` tree ``t``'s 0/1 loss (classifier) or squared error (regressor). Out-of-bag
    (``X=None``): ``T_i`` = the trees for which row ``i`` is out of bag, with the
    permutations of ``permutation(est, n_repeats=1, random_state=random_state)`` (NaN for a
    row in every bag), so ``Σ_i |T_i| C[i, m] = Σ_t |O_t| per_tree[t, m]``. Held-out:
    ``T_i`` = all trees and one permutation ``π_m`` of the rows of ``X`` per feature, those
    of ``permutation(est, X, y, n_repeats=1, random_state=random_state)``; then
    ``mean_i C[i, m] = (1/M) Σ_t [err_t(X^{π_m}) − err_t(X)]``.

    ``level="forest"`` (held-out only) uses the forest's prediction instead of each tree's:
    ``C[i, m] = L(f(x_i^{π_m})) − L(f(x_i))`` with 0/1 loss of the predicted class or
    squared error; then ``mean_i C[i, m]`` is exactly the held-out importance
    ``permutation(est, X, y, scoring=s, n_repeats=1, random_state=...)`` with
    ``s = "accuracy"`` (classifier) or ``"neg_mean_squared_error"`` (regressor).

    Parameters
    ----------
    est : fitted forestimp estimator
    X, y : held-out data, or None for out-of-bag on the training data
    level : {"tree", "forest"}, default="tree"
    n_jobs : int or None, default=None
    random_state : int, RandomState or None, default=None

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    forest = _forest_of(est)
    n_jobs = P.check_n_jobs(n_jobs)
    seed = P.seed_from(random_state)
    level = P.check_choice("level", level, ("tree", "forest"))
    if X is None and y is None:
        if level != "tree":
            raise InvalidParameterError("level='forest' needs held-out X and y.")
        Xt, yt = est._training_data()
        return local_permutation_importance(forest, Xt, yt, oob=True, seed=seed, n_jobs=n_jobs)
    Xe, y = _held_out_data(est, X, y)
    clf = _is_classifier(est)
    yc = _class_codes(est, y) if clf else y
    if level == "tree":
        return local_permutation_importance(forest, Xe, yc, oob=False, seed=seed, n_jobs=n_jobs)

    def loss(pred: np.ndarray) -> np.ndarray:
        if clf:
            return (np.argmax(pred, axis=1) != yc).astype(np.float64)
        return (y - pred[:, 0]) ** 2

    base = loss(forest.predict(Xe, n_jobs=n_jobs))
    out = np.empty(Xe.shape)
    for m in range(Xe.shape[1]):
        pred = permuted_predictions(forest, Xe, m, n_repeats=1, seed=seed, n_jobs=n_jobs)[0]
        out[:, m] = loss(pred) - base
    return out

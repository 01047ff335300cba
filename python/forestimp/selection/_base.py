"""What every selector in :mod:`forestimp.selection` shares.

* the scikit-learn selector contract (:class:`BaseSelector`: ``fit`` sets ``support_`` and
  ``ranking_``; ``transform``, ``get_support`` and ``get_feature_names_out`` come from
  :class:`~sklearn.feature_selection.SelectorMixin`);
* the default model (``estimator=None``: a classifier or a regressor by the target, as
  ``forestimp rank --task auto`` decides) and the one place where an ``importance=`` name is
  turned into numbers (:func:`importances_of`), for forestimp forests and for any fitted
  scikit-learn estimator with ``feature_importances_`` (GradientBoosting, LightGBM);
* the record of each step, :class:`SelectionStep`, kept in ``history_``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone, is_classifier
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from .. import _sparse
from .._core import InvalidParameterError
from .._params import check_choice, check_random_state
from .._task import infer_task, warn_if_unlike_sklearn

# Names accepted by ``importance=``; each is a measure of ``forestimp.importance``.
#   "mdi"          normalized MDI (``feature_importances_``; the only one a foreign model has)
#   "permutation"  out-of-bag permutation importance (forestimp forests grown with bootstrap);
#                  held-out on the training data for other models (sklearn's function)
#   "air"          MDI corrected with shadow features (``importance.unbiased``)
#   "mdi_oob"      out-of-bag MDI (``importance.unbiased(method="mdi_oob")``)
IMPORTANCES = ("mdi", "permutation", "air", "mdi_oob")


def is_forestimp(est: Any) -> bool:
    """Whether ``est`` is one of forestimp's own forests (it has the engine's measures)."""
    from .._base import BaseForest

    return isinstance(est, BaseForest)


def default_estimator(y: Any, random_state: Any, n_jobs: int | None) -> Any:
    """The model of ``estimator=None``: a forestimp random forest (bootstrap, so every
    out-of-bag measure is available) for the task :func:`is_classification` reads in ``y``."""
    from ..ensemble import RandomForestClassifier, RandomForestRegressor

    cls = RandomForestClassifier if is_classification(None, y) else RandomForestRegressor
    return cls(n_estimators=100, random_state=random_state, n_jobs=n_jobs)


def resolve_estimator(estimator: Any, y: Any, random_state: Any, n_jobs: int | None) -> Any:
    """An unfitted clone of ``estimator``, or the default model; forestimp models get the
    selector's ``random_state`` and ``n_jobs`` unless the user set their own, and any other
    model with a ``random_state`` parameter left at None gets the selector's (so that the
    selector's ``random_state`` makes a boosting model's selection repeatable too)."""
    if estimator is None:
        return default_estimator(y, random_state, n_jobs)
    est = clone(estimator)
    params = est.get_params(deep=False)
    update: dict[str, Any] = {}
    if "random_state" in params and params["random_state"] is None and random_state is not None:
        update["random_state"] = random_state
    if is_forestimp(est) and params.get("n_jobs") is None and n_jobs is not None:
        update["n_jobs"] = n_jobs
    est.set_params(**update)
    return est


def on_columns(est: Any, columns: np.ndarray, p: int) -> Any:
    """An unfitted clone of ``est`` for the ``columns`` of a ``p``-column X (in that order,
    repeats allowed: probes): categorical features declared by mask or indices
    (``categorical_features``, the forests' and boosters') follow their columns."""
    est = clone(est)
    spec = est.get_params(deep=False).get("categorical_features")
    if spec is None or isinstance(spec, str):
        return est  # none, or read from each fit's DataFrame dtypes
    from .._categorical import resolve_mask

    mask = resolve_mask(np.empty((0, p)), spec)
    kept = None if mask is None else mask[np.asarray(columns, dtype=np.intp)]
    return est.set_params(categorical_features=kept if kept is not None and kept.any() else None)


def check_importance(importance: object, estimator: Any) -> str:
    """``importance`` validated against what ``estimator`` (None: the default) offers."""
    name = check_choice("importance", importance, IMPORTANCES)
    if estimator is not None and not is_forestimp(estimator) and name in ("air", "mdi_oob"):
        raise InvalidParameterError(
            f"importance={name!r} needs a forestimp forest; {type(estimator).__name__} "
            "offers 'mdi' (its feature_importances_) and 'permutation'."
        )
    return name


def importances_of(
    est: Any, X: Any, y: Any, importance: str, *, random_state: Any = None, n_jobs: Any = None
) -> np.ndarray:
    """The ``importance`` of each column of ``X`` for ``est``, fitted on ``(X, y)``."""
    if importance == "mdi":
        return np.asarray(est.feature_importances_, dtype=np.float64)
    if not is_forestimp(est):
        from sklearn.inspection import permutation_importance

        res = permutation_importance(est, X, y, random_state=random_state, n_jobs=n_jobs)
        return np.asarray(res.importances_mean, dtype=np.float64)
    from .. import importance as imp

    if importance == "permutation":
        if not est.bootstrap and est.max_samples is None:
            raise InvalidParameterError(
                "importance='permutation' is out-of-bag: the forest needs bootstrap=True or "
                "max_samples < n_samples."
            )
        perm = imp.permutation(est, X, y, oob=True, random_state=random_state, n_jobs=n_jobs)
        assert not isinstance(perm, dict)  # one scorer: one result
        return np.asarray(perm.importances_mean, dtype=np.float64)
    result = imp.unbiased(est, X, y, method=importance, random_state=random_state, n_jobs=n_jobs)
    return np.asarray(result.importances_mean, dtype=np.float64)


def is_classification(estimator: Any, y: Any) -> bool:
    """Whether the selection models a class label: the estimator's kind, or, with no
    estimator, the rule of ``forestimp rank --task auto`` (:func:`forestimp._task.infer_task`:
    text, booleans or at most 20 distinct integers), with a ``TaskGuessWarning`` where
    scikit-learn's ``type_of_target`` would read the other task (a count with 585 distinct
    values is a regression target, not 585 classes)."""
    if estimator is not None:
        return bool(is_classifier(estimator))
    task, reason = infer_task(y)
    warn_if_unlike_sklearn(y, task, reason)
    return task == "classification"


@dataclass(frozen=True, kw_only=True, eq=False)
class SelectionStep:
    """One step of a selection, as kept in a selector's ``history_``.

    Attributes
    ----------
    step : int
        0-based position in the history.
    features : ndarray of int
        Columns (indices into the input) the model of this step saw.
    scores : ndarray of float
        Their importances, in the order of ``features``.
    kept : ndarray of int
        Columns still selected (or found) after the step.
    dropped : ndarray of int
        Columns removed (or rejected) at this step.
    """

    step: int
    features: np.ndarray
    scores: np.ndarray
    kept: np.ndarray
    dropped: np.ndarray

    def summary(self) -> dict[str, Any]:
        """The step's scalar fields, with array fields reduced to their lengths."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                out[f"n_{f.name}"] = len(value)
            else:
                out[f.name] = value
        return out


def history_frame(history: list[SelectionStep]) -> Any:
    """``history`` as a pandas DataFrame, one row per step (array fields as counts)."""
    import pandas as pd

    return pd.DataFrame([s.summary() for s in history])


class BaseSelector(SelectorMixin, BaseEstimator):
    """A feature selector whose ``fit`` sets ``support_`` (bool, one per column),
    ``ranking_`` (1 = best; selected columns rank before the rest) and ``history_``."""

    support_: np.ndarray
    ranking_: np.ndarray
    history_: list[SelectionStep]

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    # scikit-learn's transforms convert and index a sparse X without checking its index.
    def transform(self, X: Any) -> Any:
        """The selected columns of ``X`` (scikit-learn's, a sparse X checked first)."""
        return super().transform(_sparse.checked(X))

    def inverse_transform(self, X: Any) -> Any:
        """``X`` with zero columns where columns were dropped (scikit-learn's, a sparse X
        checked first)."""
        return super().inverse_transform(_sparse.checked(X))

    def history_frame(self) -> Any:
        """``history_`` as a pandas DataFrame, one row per step."""
        check_is_fitted(self, "history_")
        return history_frame(self.history_)

    #: How :meth:`plot` draws this kind of selection: a function of ``_plots`` taking the
    #: fitted selector, set by each selector class (``_plots`` imports none of them).
    _draw: Any = None

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Draw the selection (``forestimp.selection._plots``; needs matplotlib).

        Returns
        -------
        matplotlib.axes.Axes
        """
        check_is_fitted(self, "history_")
        if self._draw is None:
            raise TypeError(f"no plot for {type(self).__name__}")
        return self._draw(self, ax, **kwargs)

    def _report(self, step: SelectionStep) -> bool:
        """Hand ``step`` to the ``callback`` parameter as soon as it is recorded (progress
        bars, logging, early stops); True means stop after this step."""
        callback = getattr(self, "callback", None)
        return bool(callback is not None and callback(step))

    #: Whether ``fit`` passes NaN in X on to the model (Boruta refuses it).
    _passes_nan = True

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        # NaN in X (a missing value) is allowed when the model allows it, as forestimp's
        # default models do.
        est = getattr(self, "estimator", None)
        model_allows = est is None or get_tags(est).input_tags.allow_nan
        tags.input_tags.allow_nan = self._passes_nan and model_allows
        return tags


def ranking_from(order_of_removal: list[np.ndarray], n_features: int) -> np.ndarray:
    """``ranking_`` from the groups of columns in the order they were eliminated: the last
    group (the survivors) ranks 1, the group removed just before ranks 2, and so on."""
    ranking = np.zeros(n_features, dtype=np.intp)
    for rank, group in enumerate(reversed(order_of_removal), start=1):
        ranking[np.asarray(group, dtype=np.intp)] = rank
    return ranking


def draw_seeds(random_state: Any, n: int) -> list[int]:
    """``n`` independent int seeds from ``random_state`` (None / int / RandomState), drawn once
    at the start of ``fit``: every model and every random draw of a selection gets its own,
    so the selection depends on ``random_state`` only, never on ``n_jobs`` or on call order."""
    rng = check_random_state(random_state)
    return [int(s) for s in rng.randint(np.iinfo(np.int32).max, size=n)]

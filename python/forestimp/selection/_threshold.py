"""Selection by an importance threshold: :class:`SelectFromImportance`.

One model is fitted, every column gets an importance (``importance=``), and the columns that
pass a threshold are kept. The thresholds are scikit-learn's ``SelectFromModel`` ones
("mean", "median", "k*mean", "k*median", a float; ``importance >= threshold``; ``max_features``
caps the count after thresholding, ties broken by column position) plus the random-probe
threshold of Stoppiglia et al. (2003): the model is fitted on the real columns and
``n_probes`` permuted copies (:mod:`._probes`), and a column is kept when its importance is
strictly above the best probe's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.validation import validate_data

from .. import _frames, _sparse
from .._core import InvalidParameterError
from .._params import check_int, check_n_jobs
from ._base import (
    BaseSelector,
    SelectionStep,
    check_importance,
    draw_seeds,
    importances_of,
    resolve_estimator,
)
from ._plots import threshold_bars
from ._probes import probe_importances


@dataclass(frozen=True, kw_only=True, eq=False)
class ThresholdStep(SelectionStep):
    """The single step of :class:`SelectFromImportance` (fields of :class:`SelectionStep`).

    Attributes
    ----------
    threshold : float
        The importance a column had to reach (probe threshold: to exceed).
    """

    threshold: float


def threshold_value(threshold: object, importances: np.ndarray) -> float:
    """The number a threshold stands for, for these ``importances``.

    Parameters
    ----------
    threshold : str or float
        ``"mean"``, ``"median"``, ``"k*mean"`` or ``"k*median"`` (``k`` a float, as in
        scikit-learn's ``SelectFromModel``), or a number.
    importances : ndarray of shape (n_features,)

    Returns
    -------
    float
    """
    if isinstance(threshold, str):
        scale, _, reference = threshold.rpartition("*")
        refs: dict[str, Callable[[np.ndarray], Any]] = {"mean": np.mean, "median": np.median}
        reducer = refs.get(reference.strip())
        try:
            k = float(scale) if scale.strip() else 1.0
        except ValueError:
            reducer = None
        if reducer is None:
            raise InvalidParameterError(
                "The 'threshold' parameter must be 'mean', 'median', 'k*mean', 'k*median' "
                f"(k a number), 'probe' or a float, got {threshold!r}."
            )
        return k * float(reducer(importances))
    if isinstance(threshold, (bool, np.bool_)) or not isinstance(
        threshold, (int, float, np.integer, np.floating)
    ):
        raise InvalidParameterError(
            f"The 'threshold' parameter must be a string or a float, got {threshold!r}."
        )
    return float(threshold)


def support_mask(
    importances: np.ndarray, threshold: float, max_features: int | None, strict: bool = False
) -> np.ndarray:
    """Columns at or above ``threshold`` (above it when ``strict``), at most ``max_features``
    of them: the most important first, ties to the earlier column (``SelectFromModel``)."""
    mask = importances > threshold if strict else importances >= threshold
    if max_features is not None:
        top = np.zeros_like(mask)
        top[np.argsort(-importances, kind="mergesort")[:max_features]] = True
        mask &= top
    return mask


class SelectFromImportance(BaseSelector):
    """Keep the columns whose importance passes a threshold.

    Parameters
    ----------
    estimator : estimator, default=None
        The model whose importances are thresholded, cloned and fitted in ``fit``. None: a
        forestimp random forest of 100 trees (classifier or regressor after ``y``). Any
        scikit-learn estimator with ``feature_importances_`` also works.
    importance : {"mdi", "permutation", "air", "mdi_oob"}, default="mdi"
        The measure (see :data:`forestimp.selection.IMPORTANCES`).
    threshold : str, float or None, default="mean"
        ``"mean"``, ``"median"``, ``"k*mean"``, ``"k*median"`` or a float: a column is kept
        when its importance is ``>= threshold``. ``"probe"``: a column is kept when its
        importance is ``>`` the best of ``n_probes`` random probes fitted with it. None:
        ``"mean"``, as in scikit-learn.
    max_features : int, callable or None, default=None
        At most this many columns are kept, the most important first, after thresholding;
        ``threshold=-np.inf`` keeps exactly the top ``max_features`` (scikit-learn's
        convention). A callable gets ``X`` and returns the int.
    n_probes : int or None, default=None
        Number of random probes; giving it selects the probe threshold. With
        ``threshold="probe"`` and ``n_probes=None`` it is ``n_features``: an irrelevant
        column and the probes are exchangeable, so each irrelevant column beats the best of
        ``m`` probes with probability ``1 / (m + 1)``, and ``m = n_features`` keeps the
        expected number of irrelevant columns selected below one.
    random_state : int, RandomState instance or None, default=None
        Seeds the model (when it has no ``random_state`` of its own), the probes and the
        permutations; the same value gives the same selection for any ``n_jobs``.
    n_jobs : int or None, default=None
        Threads of forestimp models and of the importance computation.
    callback : callable or None, default=None
        Called with the :class:`ThresholdStep` once it is recorded (as every selector's).

    Attributes
    ----------
    estimator_ : estimator
        The fitted model the importances come from (with the probe threshold, it was fitted
        on the real columns followed by the probes).
    importances_ : ndarray of shape (n_features_in_,)
    threshold_ : float
        The threshold the importances were compared with.
    probe_importances_ : ndarray of shape (n_probes,)
        The probes' importances (probe threshold only; an empty array otherwise).
    support_ : ndarray of bool, shape (n_features_in_,)
    ranking_ : ndarray of int, shape (n_features_in_,)
        1 for the most important column, ties to the earlier column.
    history_ : list of ThresholdStep
        One step: every column with its importance, kept and dropped columns, threshold.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` has string column names.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from forestimp.selection import SelectFromImportance
    >>> X, y = make_classification(1000, 20, n_informative=3, n_redundant=0,
    ...                            shuffle=False, random_state=0)
    >>> sel = SelectFromImportance(random_state=0).fit(X, y)
    >>> [int(j) for j in sel.get_support(indices=True)]
    [0, 1, 2]
    >>> sel.transform(X).shape
    (1000, 3)
    """

    _draw = staticmethod(threshold_bars)

    def __init__(
        self,
        estimator: Any = None,
        *,
        importance: str = "mdi",
        threshold: Any = "mean",
        max_features: int | Callable[[Any], int] | None = None,
        n_probes: int | None = None,
        random_state: Any = None,
        n_jobs: int | None = None,
        callback: Any = None,
    ) -> None:
        self.estimator = estimator
        self.importance = importance
        self.threshold = threshold
        self.max_features = max_features
        self.n_probes = n_probes
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback

    def _n_probes(self, n_features: int) -> int | None:
        """The number of probes, or None for the other thresholds."""
        n_probes = check_int("n_probes", self.n_probes, 1, none_ok=True)
        if n_probes is None:
            return n_features if self.threshold == "probe" else None
        if self.threshold not in ("probe", "mean"):
            # "mean" is the default and cannot be told from an explicit "mean".
            raise InvalidParameterError(
                f"n_probes={n_probes} selects the probe threshold; it cannot be combined with "
                f"threshold={self.threshold!r} (use threshold='probe')."
            )
        return n_probes

    def _max_features(self, X: np.ndarray) -> int | None:
        value = self.max_features(X) if callable(self.max_features) else self.max_features
        return check_int("max_features", value, 0, X.shape[1], none_ok=True)

    def fit(self, X: Any, y: Any, **fit_params: Any) -> SelectFromImportance:
        """Fit the model, compute the importances and threshold them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Passed to the model's ``fit`` (e.g. ``sample_weight``).

        Returns
        -------
        self
        """
        X, y = _sparse.checked(X), _sparse.checked(y, "y")
        _frames.check_numeric(X)  # a text or category column: DataError naming it
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan"
        )
        p = X.shape[1]
        importance = check_importance(self.importance, self.estimator)
        n_jobs = check_n_jobs(self.n_jobs)
        max_features = self._max_features(X)
        n_probes = self._n_probes(p)
        model_seed, draw_seed = draw_seeds(self.random_state, 2)
        est = resolve_estimator(self.estimator, y, model_seed, n_jobs)
        if n_probes is not None:
            probed = probe_importances(
                est,
                X,
                y,
                n_probes=n_probes,
                importance=importance,
                random_state=draw_seed,
                n_jobs=n_jobs,
                fit_params=fit_params,
            )
            imp, est = probed.importances, probed.estimator
            self.probe_importances_ = probed.probes
            self.threshold_ = probed.threshold
        else:
            est.fit(X, y, **fit_params)
            imp = importances_of(est, X, y, importance, random_state=draw_seed, n_jobs=n_jobs)
            self.probe_importances_ = np.empty(0)
            threshold = "mean" if self.threshold is None else self.threshold
            self.threshold_ = threshold_value(threshold, imp)
        self.estimator_ = est
        self.importances_ = imp
        self.support_ = support_mask(imp, self.threshold_, max_features, n_probes is not None)
        self.ranking_ = np.empty(p, dtype=np.intp)
        self.ranking_[np.argsort(-imp, kind="mergesort")] = np.arange(1, p + 1)
        self.history_ = [
            ThresholdStep(
                step=0,
                features=np.arange(p),
                scores=imp,
                kept=np.flatnonzero(self.support_),
                dropped=np.flatnonzero(~self.support_),
                threshold=self.threshold_,
            )
        ]
        self._report(self.history_[0])
        return self

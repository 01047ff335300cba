"""Telling signal from noise: p-values for importances."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from .. import _sparse
from .._core import DataError, InvalidParameterError
from .._fitted import checked_model
from .._params import check_choice, check_int, generator_from
from ._mdi import mdi
from ._result import Importances
from ._unbiased import unbiased

MEASURES = ("air", "mdi_oob", "mdi")


@dataclass(frozen=True, kw_only=True, eq=False)
class Significance(Importances):
    """Importances with one p-value per feature.

    An :class:`Importances` of the tested measure (``importances_mean``, its per-tree
    ``importances`` and standard errors) with ``method`` the test (``"altmann"`` or
    ``"janitza"``) and:

    Attributes
    ----------
    pvalues : ndarray of shape (n_features,)
        Small values: the importance is larger than the null distribution explains.
    null : ndarray
        The null sample: (n_permutations, n_features) for Altmann, 1-D for Janitza.
    measure : str
        The measure tested (``"air"``, ``"mdi_oob"`` or ``"mdi"``).
    """

    pvalues: np.ndarray
    null: np.ndarray
    measure: str

    def selected(self, alpha: float = 0.05) -> np.ndarray:
        """Indices of the features with ``pvalue < alpha``."""
        return np.flatnonzero(self.pvalues < alpha)


def janitza_pvalues(importances: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Janitza, Celik & Boulesteix (2018): p-values from the importances alone.

    For a measure that is symmetric around 0 for irrelevant features (AIR, permutation
    importance), the negative scores can only come from noise; mirrored around 0 (with the
    zeros) they sample the null distribution ``F0``, and ``p_j = #{null >= I_j} / #null``.
    Valid when most features are irrelevant (high-dimensional data); raises when no score is
    negative and warns when fewer than 100 are.
    """
    imp = np.asarray(importances, dtype=float)
    neg = imp[imp < 0]
    if len(neg) == 0:
        raise DataError(
            "no negative importance: the Janitza null distribution is empty; use method='altmann'"
        )
    if len(neg) < 100:
        warnings.warn(
            f"only {len(neg)} negative importances: Janitza p-values are coarse; consider "
            "method='altmann'",
            UserWarning,
            stacklevel=2,
        )
    null = np.sort(np.concatenate([neg, -neg, imp[imp == 0]]))
    below = np.searchsorted(null, imp, side="left")
    return 1.0 - below / len(null), null


def significance(
    est: Any,
    X: Any,
    y: Any,
    *,
    method: str = "altmann",
    importance: str = "air",
    n_permutations: int = 100,
    random_state: int | None = None,
) -> Significance:
    """p-values saying which importances are signal.

    ``method="altmann"`` (Altmann, Toloşi, Sander & Lengauer 2010): the output is permuted
    ``n_permutations`` times, a forest with the estimator's parameters is refitted on each,
    and ``p_j = (1 + #{null_j >= I_j}) / (1 + n_permutations)``. Works with any measure and
    any number of features; costs ``n_permutations`` fits.
    ``method="janitza"``: :func:`janitza_pvalues` of one measure that is centred on 0 for
    noise (``importance="air"``); free, but needs many irrelevant features.

    Parameters
    ----------
    est : fitted forestimp estimator
    X, y : the training data
        Exactly those given to ``fit`` (checked, :class:`~forestimp.exceptions.DataError`
        otherwise): the null forests are refitted on ``X``, and the observed importance is
        that of ``est``.
    method : {"altmann", "janitza"}, default="altmann"
    importance : {"air", "mdi_oob", "mdi"}
        The measure tested. Raw MDI is never negative and biased: Altmann only.
    n_permutations : int, default=100
        Altmann: permutations of the output (refits).
    random_state : int or None, default=None
        Altmann: seed of the output permutations.

    Returns
    -------
    Significance
    """
    est = checked_model(est, "significance")
    X, y = _sparse.checked(X), _sparse.checked(y, "y")
    importance = check_choice("importance", importance, MEASURES)
    method = check_choice("method", method, ("altmann", "janitza"))
    est._training_input(X, y)  # raises unless X, y are the training data
    if method == "janitza":
        if importance == "mdi":
            raise InvalidParameterError(
                "Janitza p-values need a measure centred on 0 for noise: 'air' or 'mdi_oob'"
            )
        observed = _measure(est, X, y, importance)
        p, null = janitza_pvalues(observed.importances_mean)
        return _result(observed, p, null, method, importance)
    n_permutations = check_int("n_permutations", n_permutations, 1)
    observed = _measure(est, X, y, importance)
    rng = generator_from(random_state)
    y = np.asarray(y)
    null = np.empty((n_permutations, len(observed.importances_mean)))
    for k in range(n_permutations):
        y_null = y[rng.permutation(len(y))]
        null[k] = _measure(clone(est).fit(X, y_null), X, y_null, importance).importances_mean
    p = (1.0 + (null >= observed.importances_mean).sum(axis=0)) / (1.0 + n_permutations)
    return _result(observed, p, null, method, importance)


def _result(
    observed: Importances, p: np.ndarray, null: np.ndarray, method: str, measure: str
) -> Significance:
    return Significance(
        importances_mean=observed.importances_mean,
        importances=observed.importances,
        feature_names=observed.feature_names,
        draws=observed.draws,
        method=method,
        pvalues=p,
        null=null,
        measure=measure,
    )


def _measure(est: Any, X: Any, y: Any, importance: str) -> Importances:
    """``importance`` of ``est``, fitted on ``(X, y)``."""
    if importance == "mdi":
        return mdi(est)
    return unbiased(est, X, y, method=importance)

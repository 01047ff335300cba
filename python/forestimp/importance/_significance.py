"""Telling signal from noise: p-values for importances."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from ._unbiased import unbiased

MEASURES = ("air", "mdi_oob", "mdi")


@dataclass(frozen=True)
class Significance:
    """Importances with one p-value per feature.

    Attributes
    ----------
    importances : ndarray of shape (n_features,)
    pvalues : ndarray of shape (n_features,)
        Small values: the importance is larger than the null distribution explains.
    null : ndarray
        The null sample: (n_permutations, n_features) for Altmann, 1-D for Janitza.
    method : str
    measure : str
    """

    importances: np.ndarray
    pvalues: np.ndarray
    null: np.ndarray
    method: str
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
        raise ValueError(
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
    X: Any = None,
    y: Any = None,
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
    X, y : training data (default: kept by ``fit``)
    importance : {"air", "mdi_oob", "mdi"}
        The measure tested. Raw MDI is never negative and biased: Altmann only.
    """
    if importance not in MEASURES:
        raise ValueError(f"importance must be one of {MEASURES}, got {importance!r}")
    if X is None and y is None:
        X, y_codes = est._training_data()
        y = est.classes_[y_codes.astype(np.intp)] if hasattr(est, "classes_") else y_codes
    elif X is None or y is None:
        raise ValueError("pass both X and y, or neither (the training data)")
    if method == "janitza":
        if importance == "mdi":
            raise ValueError("Janitza p-values need a measure centred on 0 for noise: 'air'")
        observed = _measure(est, X, y, importance)
        p, null = janitza_pvalues(observed)
        return Significance(observed, p, null, method, importance)
    if method != "altmann":
        raise ValueError(f"method must be 'altmann' or 'janitza', got {method!r}")
    if not (isinstance(n_permutations, int | np.integer) and n_permutations >= 1):
        raise ValueError(f"n_permutations must be an integer >= 1, got {n_permutations!r}")
    observed = _measure(est, X, y, importance)
    rng = np.random.default_rng(random_state)
    y = np.asarray(y)
    null = np.empty((n_permutations, len(observed)))
    for k in range(n_permutations):
        y_null = y[rng.permutation(len(y))]
        null[k] = _measure(clone(est).fit(X, y_null), X, y_null, importance)
    p = (1.0 + (null >= observed).sum(axis=0)) / (1.0 + n_permutations)
    return Significance(observed, p, null, method, importance)


def _measure(est: Any, X: Any, y: Any, importance: str) -> np.ndarray:
    """``importance`` of ``est``, fitted on ``(X, y)``."""
    if importance == "mdi":
        return est.mdi_importances_
    return unbiased(est, X, y, method=importance).importances

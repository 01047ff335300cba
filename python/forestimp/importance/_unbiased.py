"""Impurity importances corrected for the bias of MDI towards high-cardinality features."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from .. import _core
from .._params import check_n_jobs
from ._result import Importances

METHODS = ("air", "mdi_oob")


def unbiased(
    est: Any,
    X: Any = None,
    y: Any = None,
    *,
    method: str = "air",
    sample_weight: Any = None,
    random_state: int | None = None,
    n_jobs: int | None = None,
) -> Importances:
    """Impurity importance without MDI's preference for noisy, many-valued features.

    Raw MDI credits a feature with every impurity decrease of its splits, including those
    that only fit noise; features with many distinct values offer more such splits and so
    look important even when independent of the output (Strobl et al. 2007; Louppe 2014,
    §7.2). Two corrections:

    ``method="air"`` — *actual impurity reduction* (Nembrini, König & Wright 2018, ranger's
        ``"impurity_corrected"``). A forest with the estimator's parameters is grown on the
        ``p`` features and ``p`` *shadows* (feature ``j`` read at a random row permutation,
        virtual: X is not copied); ``AIR(X_j) = MDI(X_j) - MDI(shadow_j)``. A shadow has the
        same marginal distribution as its feature but no link to ``y``, so an irrelevant
        feature scores about 0, sometimes below (which :func:`significance` with
        ``method="janitza"`` uses). Needs the data: ``X, y`` (default: the training data).
    ``method="mdi_oob"`` — MDI-oob (Li, Wang, Basu, Kumbier & Yu 2019) of the fitted forest:
        along the path of each out-of-bag sample, the change of the node value times the
        sample's centred target, ``sum_t <v(t_x) - v(t), y - v(root)>``, averaged over the
        OOB samples of each tree and over trees. On in-bag samples the same sum is exactly the
        Gini / variance MDI. Needs ``bootstrap=True`` (or ``max_samples < n``) and the
        training ``X, y`` (default: those kept by ``fit``).

    Returns
    -------
    Importances
        ``importances`` (p,), ``per_tree`` (n_estimators, p) and standard errors.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    names = getattr(est, "feature_names_in_", None)
    if X is None or y is None:
        if X is not None or y is not None:
            raise ValueError("pass both X and y, or neither (the training data)")
        X, y_codes = est._training_data()
    else:
        X = est._engine_input(X)
        y_codes = _codes(est, y)
    jobs = check_n_jobs(est.n_jobs if n_jobs is None else n_jobs)
    if method == "mdi_oob":
        mean, per_tree = _core.mdi_oob(est.forest_, X, y_codes, n_jobs=jobs)
        return Importances(mean, per_tree, method, names)
    shadow = clone(est)
    if random_state is not None:
        shadow.set_params(random_state=random_state)
    if n_jobs is not None:
        shadow.set_params(n_jobs=n_jobs)
    y_fit = est.classes_[y_codes.astype(np.intp)] if hasattr(est, "classes_") else y_codes
    shadow._fit(X, y_fit, sample_weight, shadows=True)
    both = shadow.forest_.tree_importances(n_jobs=jobs)
    p = both.shape[1] // 2
    per_tree = both[:, :p] - both[:, p:]
    return Importances(per_tree.mean(axis=0), per_tree, method, names)


def _codes(est: Any, y: Any) -> np.ndarray:
    """Targets as the engine sees them: class codes (float64) or float64 values."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if not hasattr(est, "classes_"):
        return np.ascontiguousarray(y, dtype=np.float64)
    codes = np.searchsorted(est.classes_, y)
    codes = np.clip(codes, 0, len(est.classes_) - 1)
    unknown = est.classes_[codes] != y
    if unknown.any():
        raise ValueError(f"y has labels unseen in fit, e.g. {y[unknown][0]!r}")
    return codes.astype(np.float64)

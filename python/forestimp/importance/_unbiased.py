"""Impurity importances corrected for the bias of MDI towards high-cardinality features."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from .. import _core, _sparse
from .._core import InvalidParameterError
from .._fitted import checked_model
from .._params import check_choice, check_int, check_n_jobs
from ._result import Importances, feature_names_of

METHODS = ("air", "mdi_oob")


def unbiased(
    est: Any,
    X: Any,
    y: Any,
    *,
    method: str = "air",
    sample_weight: Any = None,
    random_state: int | None = None,
    n_jobs: int | None = None,
    output: int | None = None,
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
        ``method="janitza"`` uses). ``X, y`` are the data the shadow forest is grown on:
        pass the training data for the importance of ``est``'s model.
    ``method="mdi_oob"`` — MDI-oob (Li, Wang, Basu, Kumbier & Yu 2019) of the fitted forest:
        along the path of each out-of-bag sample, the change of the node value times the
        sample's centred target, ``sum_t <v(t_x) - v(t), y - v(root)>``, averaged over the
        OOB samples of each tree and over trees. On in-bag samples the same sum is exactly the
        Gini / variance MDI. Needs ``bootstrap=True`` (or ``max_samples < n``) and the exact
        training ``X, y`` (checked: :class:`~forestimp.exceptions.DataError` otherwise).

    Parameters
    ----------
    est : fitted forestimp estimator
    X : array-like of shape (n_samples, n_features)
        The training inputs (the estimator keeps no reference to them).
    y : array-like of shape (n_samples,)
        The training targets.
    method : {"air", "mdi_oob"}, default="air"
    sample_weight : array-like of shape (n_samples,), default=None
        ``"air"``: weights of the shadow forest's fit.
    random_state : int or None, default=None
        ``"air"``: seed of the shadow forest (default: the estimator's).
    n_jobs : int or None, default=None
        Threads (default: the estimator's ``n_jobs``).
    output : int or None, default=None
        ``"mdi_oob"`` of a multi-output forest (``docs/multi-output.md``, required there):
        the MDI-oob of output ``output``, its node values and its column of the training
        ``y`` (the whole ``y`` is passed, and checked). AIR refuses several outputs for now.

    Returns
    -------
    Importances
        ``importances_mean`` (p,) and ``importances`` (p, n_estimators), one column per
        tree (NaN for a tree without out-of-bag rows, ``"mdi_oob"``), with
        ``importances_std`` / ``standard_error`` over trees (``ddof=0``).
    """
    X, y = _sparse.checked(X), _sparse.checked(y, "y")
    method = check_choice("method", method, METHODS)
    est = checked_model(est, "unbiased")
    names = feature_names_of(est, est.forest_.n_features)
    jobs = check_n_jobs(est.n_jobs if n_jobs is None else n_jobs)
    if output is not None:
        output = check_int("output", output, 0, est.forest_.n_outputs - 1)
        if method != "mdi_oob":
            raise InvalidParameterError("output= applies to method='mdi_oob' only.")
    if method == "mdi_oob":
        Xt, y_codes = est._training_input(X, y, output=output)
        multi = est.forest_.n_outputs > 1
        mean, per_tree = _core.mdi_oob(
            est.forest_, Xt, y_codes, n_jobs=jobs, output=output if multi else None
        )
        return Importances(
            importances_mean=mean,
            importances=per_tree.T,
            method=method,
            feature_names=names,
            draws="trees",
        )
    if X is None or y is None:
        raise InvalidParameterError("AIR grows a shadow forest: pass X and y (training data).")
    X = est._engine_input(X)
    y_codes = est._target_codes(y, X.shape[0])
    shadow = clone(est)
    if random_state is not None:
        shadow.set_params(random_state=random_state)
    if n_jobs is not None:
        shadow.set_params(n_jobs=n_jobs)
    y_fit = est.classes_[y_codes.astype(np.intp)] if hasattr(est, "classes_") else y_codes
    # X holds est's category codes: the shadow forest reads them as est does.
    encoded = (getattr(est, "is_categorical_", None), getattr(est, "categories_", None))
    shadow._fit(X, y_fit, sample_weight, shadows=True, encoded=encoded)
    both = shadow.forest_.tree_importances(n_jobs=jobs)
    p = both.shape[1] // 2
    per_tree = both[:, :p] - both[:, p:]
    return Importances(
        importances_mean=per_tree.mean(axis=0),
        importances=per_tree.T,
        method=method,
        feature_names=names,
        draws="trees",
    )

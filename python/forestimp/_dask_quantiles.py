"""Quantiles and prediction intervals of the forest regressors on a Dask cluster (#53).

**Fitting.** :func:`forestimp.dask.fit` grows ranges of trees as *parts* of the forest, and a
part keeps no leaf values (``BaseForest._fit`` builds them only for a whole forest). With
``store_leaf_values=True`` the task that runs once the parts are put together (the one that
computes the out-of-bag score) rebuilds them on a worker with :func:`store`: the whole
forest, all the training rows, and the engine's X, y and weights as ``_fit`` makes them, passed
to the same ``_quantiles.store``. A training row's in-bag counts are regenerated from its
trees' seeds, so the arrays are one machine's, bit for bit. One worker routes every row
through every tree, as for the out-of-bag score.

:func:`forestimp.dask.fit_patches` refuses ``store_leaf_values=True`` (:func:`refuse`): its
trees are grown on blocks of consecutive rows and on patches of columns, not on draws from
all the rows that the leaf values regenerate, and it serves data larger than a worker, where
leaf values (about ``0.63 · n_samples`` entries a bootstrapped tree) would be larger still.

**Prediction.** A row's quantiles, and its interval for every method, depend only on that row
and the fitted estimator, which carries its leaf values when it is pickled to the workers.
``forestimp.dask.predict_quantiles`` and ``predict_interval`` therefore map the estimator's
own method over the row blocks (``forestimp.dask._map``), giving the numbers of one call on
all the rows. This module checks the arguments on the client, before any task, and says the
shape each method gives a row (``(n,) + tail``), which every block is checked against.
``predict_se`` (the infinitesimal jackknife) is mapped the same way: a row's standard error
reads only that row's tree predictions and the trees' draws, regenerated from their seeds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import _params as P
from . import _quantiles
from ._core import InvalidParameterError


def wants(estimator: Any) -> bool:
    """Whether ``estimator`` (fitted or not) asks for leaf values."""
    return bool(estimator.get_params().get("store_leaf_values", False))


def store(est: Any, X: Any, y: Any, sample_weight: Any) -> None:
    """The leaf values of fitted ``est`` (its whole forest), built on a worker from the
    training data as read there: the engine's X, y (``(n,)``; several outputs ``(n, m)``)
    and sample weights made as ``BaseForest._fit`` makes them, checked against the
    fingerprint taken at fit."""
    from ._base import _fingerprint

    Xe = est._engine_input(X, sparse=True)
    # The engine's targets: one output's values, or with several outputs all of them.
    y_engine = est._target_codes(y, Xe.shape[0], output=0)
    if _fingerprint(Xe, y_engine) != est._training_fingerprint:
        raise RuntimeError("the leaf values' task read other data than the trees were grown on")
    sw = None
    if sample_weight is not None:
        sw = _check_sample_weight(sample_weight, Xe, dtype=np.float64, ensure_non_negative=True)
    _quantiles.store(est, Xe, y_engine, sw, P.check_n_jobs(est.n_jobs))


def refuse(estimator: Any) -> None:
    """``fit_patches`` with ``store_leaf_values=True``: InvalidParameterError."""
    if wants(estimator):
        raise InvalidParameterError(
            "forestimp.dask.fit_patches cannot store leaf values (store_leaf_values=True): "
            "its trees are grown on blocks of rows and patches of columns. Fit with "
            "forestimp.dask.fit, or on one machine, to predict quantiles."
        )


def quantiles_call(
    estimator: Any, quantiles: Any, interpolation: Any
) -> tuple[dict[str, Any], tuple[int, ...]]:
    """``(keyword arguments, tail)`` of ``predict_quantiles`` on the workers, checked here:
    a fitted regressor with leaf values, quantiles in [0, 1], a known interpolation. The
    tail: ``()`` for one quantile, ``(n_quantiles,)`` for a list, after ``(n_outputs,)``
    with several outputs."""
    _fitted_with(estimator, "predict_quantiles")
    _quantiles.stored(estimator)  # none: the typed error naming store_leaf_values
    qs, scalar = _quantiles.checked_quantiles(quantiles)
    how = _quantiles.checked_interpolation(interpolation)
    tail = _outputs(estimator) + (() if scalar else (len(qs),))
    return {"quantiles": quantiles, "interpolation": how}, tail


def interval_call(
    estimator: Any, alpha: Any, method: Any
) -> tuple[dict[str, Any], tuple[int, ...]]:
    """``(keyword arguments, tail)`` of ``predict_interval`` on the workers, checked here by
    the estimator's own rules (``forestimp._intervals``); ``method`` None: the estimator's
    default. The tail: ``(2,)`` (lower, upper), after ``(n_outputs,)`` with several
    outputs."""
    _fitted_with(estimator, "predict_interval")
    from . import _intervals

    kwargs: dict[str, Any] = {"alpha": _intervals.checked_alpha(alpha)}
    if method is not None:
        kwargs["method"] = _intervals.checked_method(method)
    _quantiles.stored(estimator)  # every method reads the leaf values
    return kwargs, (*_outputs(estimator), 2)


def se_call(estimator: Any) -> tuple[dict[str, Any], tuple[int, ...]]:
    """``(keyword arguments, tail)`` of ``predict_se``: ``()``, ``(n_outputs,)`` with
    several outputs."""
    _fitted_with(estimator, "predict_se")
    return {}, _outputs(estimator)


def _fitted_with(estimator: Any, method: str) -> None:
    if not callable(getattr(estimator, method, None)):
        raise InvalidParameterError(
            f"{type(estimator).__name__} has no {method}: it is a forest regressor's method "
            "(fitted with store_leaf_values=True for quantiles)."
        )
    check_is_fitted(estimator, "forest_")


def _outputs(estimator: Any) -> tuple[int, ...]:
    m = int(getattr(estimator, "n_outputs_", 1))
    return (m,) if m > 1 else ()

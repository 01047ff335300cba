"""Quantile regression forests (Meinshausen 2006) on forestimp's regressors (issue #53).

A regressor fitted with ``store_leaf_values=True`` keeps, for every leaf of every tree, the
in-bag training rows that reached it with their bootstrap counts and weights
(``_core.LeafValues``, ``src/forest/leaf_values.rs``). ``predict_quantiles`` weighs the
training targets by Meinshausen's weights and reads their quantiles in Rust, every row at
once, in the ``n_jobs`` pool. The leaf values travel in pickles and model files as the
arrays of :func:`file_state`, checked against the forest when they come back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core import DataError, InvalidParameterError, LeafValues, leaf_values

INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")
# The arrays of a model file, in the order of ``LeafValues.parts``.
PARTS = ("y", "tree_starts", "starts", "rows", "counts", "weights")
_FILE_NAMES = tuple(f"leaf_values[{p}]" for p in PARTS)


def store(
    est: Any, X: Any, y: np.ndarray, sample_weight: np.ndarray | None, n_jobs: int | None
) -> None:
    """Build the leaf values of ``est``'s fitted forest from its training data (the engine's
    ``X``, ``y`` and weights) and keep them on ``est``."""
    values = leaf_values(est.forest_, X, y, sample_weight, n_jobs=n_jobs)
    est._leaf_values = values


def stored(est: Any) -> LeafValues:
    """The leaf values of fitted ``est``; a typed error naming the parameter to set when
    there are none."""
    values = est.__dict__.get("_leaf_values")
    if values is None:
        raise InvalidParameterError(
            f"{type(est).__name__} was fitted without leaf values: set "
            "store_leaf_values=True and fit again to predict quantiles."
        )
    return values


def checked_quantiles(quantiles: Any) -> tuple[list[float], bool]:
    """``(quantiles as floats, whether a scalar was given)``, each in [0, 1]."""
    q = np.asarray(quantiles, dtype=np.float64) if not isinstance(quantiles, str) else None
    if q is None or q.ndim > 1 or q.size == 0 or not np.all((q >= 0.0) & (q <= 1.0)):
        raise InvalidParameterError(
            f"quantiles must be a number or a 1-D list of numbers in [0, 1], got {quantiles!r}."
        )
    return [float(v) for v in np.atleast_1d(q)], q.ndim == 0


def checked_interpolation(interpolation: Any) -> str:
    if interpolation not in INTERPOLATIONS:
        raise InvalidParameterError(
            f"interpolation must be one of {', '.join(INTERPOLATIONS)}; got {interpolation!r}."
        )
    return str(interpolation)


def is_file_array(name: str) -> bool:
    """Whether ``name`` is one of the leaf-value arrays a model file holds."""
    return name in _FILE_NAMES


def file_state(est: Any) -> dict[str, np.ndarray]:
    """The leaf values of fitted ``est`` as the arrays a model file holds (none without)."""
    values = est.__dict__.get("_leaf_values")
    if values is None:
        return {}
    return dict(zip(_FILE_NAMES, values.parts(), strict=True))


def restored(state: dict[str, Any], forest: Any) -> dict[str, Any]:
    """``_leaf_values`` from the arrays of :func:`file_state` in ``state``, checked against
    ``forest`` (None when there are none)."""
    from ._core import ModelFormatError

    names = {k for k in state if is_file_array(k)}
    if not names:
        return {"_leaf_values": None}
    if names != set(_FILE_NAMES):
        raise ModelFormatError("the leaf values stored are incomplete")
    dtypes = dict(zip(_FILE_NAMES, ("<f8", *["<u4"] * 4, "<f8"), strict=True))
    parts = []
    for name in _FILE_NAMES:
        arr = state[name]
        good = isinstance(arr, np.ndarray) and arr.ndim == 1
        if not good or arr.dtype.newbyteorder("<").str != dtypes[name]:
            raise ModelFormatError(f"{name} must be a 1-D array of dtype {dtypes[name]}")
        parts.append(np.ascontiguousarray(arr, dtype=dtypes[name]))
    try:
        return {"_leaf_values": LeafValues.from_parts(forest, *parts)}
    except (DataError, ValueError, OverflowError) as exc:
        raise ModelFormatError(f"the leaf values stored are inconsistent: {exc}") from exc


class QuantilesMixin:
    """``predict_quantiles`` of the forest regressors."""

    def predict_quantiles(
        self, X: Any, quantiles: Any = 0.5, interpolation: str = "linear"
    ) -> np.ndarray:
        """Conditional quantiles of the target at each row of ``X`` (Meinshausen 2006): the
        weighted quantiles of the training targets, each weighted by the share it holds of
        the leaves ``X`` reaches (its bootstrap count and sample weight over the leaf's),
        averaged over the trees.

        ``quantiles``: a number in [0, 1] (result of shape ``(n_samples,)``) or a list of
        them (``(n_samples, n_quantiles)``). ``interpolation`` between two training
        values, as numpy's ``quantile(method=...)``: ``"linear"``, ``"lower"``,
        ``"higher"``, ``"nearest"`` or ``"midpoint"``; with whole weights (no sample weights)
        the quantiles are numpy's of the training targets repeated as often as the leaves
        hold them. Needs ``store_leaf_values=True`` at fit.
        """
        from . import _params as P

        values = stored(self)
        qs, scalar = checked_quantiles(quantiles)
        how = checked_interpolation(interpolation)
        if getattr(self, "_multi_output", False):
            raise InvalidParameterError("predict_quantiles takes a single-output regressor.")
        X = self._engine_input(X, sparse=True)  # type: ignore[attr-defined]
        n_jobs = P.check_n_jobs(self.n_jobs)  # type: ignore[attr-defined]
        out = values.quantiles(self.forest_, X, qs, how, False, n_jobs)  # type: ignore[attr-defined]
        return out[:, 0] if scalar else out

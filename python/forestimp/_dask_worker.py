"""What every Dask task of forestimp shares on its worker: one fit at a time, with all the
worker's threads, the split of ``0..n`` into consecutive ranges, and the categories of the
categorical features (learned once, over all the rows, then given to every task).

:mod:`forestimp.dask`, ``_dask_patches`` and ``_dask_srs`` all import these from here, the one
home below them, so none of those modules imports another that imports it.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from distributed import get_worker

from . import _categorical

# A worker process fits one part at a time, with all its threads (forestimp.dask._fit_part):
# the engine runs n_jobs = the worker's threads, and the lock keeps a second task on the same
# worker from running beside it.
_FIT_LOCK = threading.Lock()


def _worker_threads() -> int | None:
    """The thread count of the worker this task runs on; None off a worker (a synchronous
    scheduler), where the engine picks its own."""
    try:
        return int(get_worker().state.nthreads)
    except ValueError:  # not on a worker (a synchronous scheduler)
        return None


def tree_ranges(n_estimators: int, n_tasks: int) -> list[tuple[int, int]]:
    """``n_tasks`` consecutive, nearly equal ranges covering ``0..n_estimators`` (fewer
    when there are fewer trees than tasks)."""
    n_tasks = max(1, min(int(n_tasks), int(n_estimators)))
    bounds = np.linspace(0, n_estimators, n_tasks + 1).round().astype(int)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


Encoded = tuple[Any, Any]  # (is_categorical_, categories_), both None without categories


def learned(X: Any, spec: Any) -> Encoded:
    """``(is_categorical_, categories_)`` of ``X`` under ``categorical_features=spec``, as
    ``BaseForest._fit`` learns them (``forestimp._categorical``); ``(None, None)`` when no
    column is categorical. ``X`` must hold every row: categories learned from a block of
    rows would give other codes than another block's."""
    mask = _categorical.resolve_mask(X, spec)
    if mask is None:
        return None, None
    return mask, _categorical.learn(X, mask)


def encoded(X: Any, categories: Any) -> Any:
    """``X`` with its categorical columns as codes of ``categories``, the values
    ``_categorical.encode(X, categories)`` gives. A numeric array is copied once as float64
    and only its categorical columns go through ``encode``: no object copy of the whole
    matrix on a worker."""
    if categories is None:
        return X
    if isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "biuf":
        out = np.array(X, dtype=np.float64)
        for j, cats in enumerate(categories):
            if cats is not None:
                out[:, j] = _categorical.encode(X[:, j : j + 1], [cats])[:, 0]
        return out
    return _categorical.encode(X, categories)


def categories_state(mask: Any, categories: Any) -> dict[str, np.ndarray]:
    """The fitted state's arrays of these categories (``_categorical.file_state``)."""
    if mask is None:
        return {}
    state = {"is_categorical_": np.asarray(mask, dtype=bool)}
    for j in np.flatnonzero(mask):
        state[f"categories_[{j}]"] = np.asarray(categories[j])
    return state

"""What every Dask task of forestimp shares on its worker: one fit at a time, with all the
worker's threads, and the split of ``0..n`` into consecutive ranges.

:mod:`forestimp.dask`, ``_dask_patches`` and ``_dask_srs`` all import these from here, the one
home below them, so none of those modules imports another that imports it.
"""

from __future__ import annotations

import threading

import numpy as np
from distributed import get_worker

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

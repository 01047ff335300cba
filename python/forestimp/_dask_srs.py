"""Sequential Random Subspace on a Dask cluster: the B fits of each batched round run in
parallel on the workers, the found set F stays on the client.

The rounds are those of ``SequentialRandomSubspace(batch_size=B)`` (``selection/_srs_rounds``):
the client draws the round's B subspaces from F in a fixed order, the workers fit them, and
the client merges the results in that order. A fit depends only on its subspace and its two
seeds, so the selection is the in-process one for any number of workers.

Each task reads only its q columns (found ones included) on its worker: a ``.npy`` or
Parquet path is opened there (``selection/_columns.py``: positional reads, column
projection); an in-memory array or DataFrame is scattered once to every worker. Back come q
importances, the probes' and the bytes read. The model travels as its class and parameters,
never as a pickled fitted object. Each task runs the engine with its worker's thread count
and holds ``forestimp._dask_worker._FIT_LOCK`` while it reads and fits, so a worker holds one
block of q columns at a time and rayon never oversubscribes it.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from sklearn.base import clone

from . import _categorical
from ._core import DataError, InvalidParameterError
from ._dask_tasks import Shipment, gather, worker_count
from ._dask_worker import _FIT_LOCK, _worker_threads
from .selection._columns import ColumnSource, open_source
from .selection._srs import SequentialRandomSubspace
from .selection._srs_rounds import FitSpec, SubspaceFit, SubspaceTask, fit_subspace

try:
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, default_client
except ImportError as e:  # pragma: no cover - exercised without the extra only
    raise ImportError(
        "forestimp.dask needs dask and distributed: pip install 'forestimp[dask]'"
    ) from e


def _refuse_category_columns(X: Any) -> None:
    """DataError for a DataFrame with category columns (``docs/categorical.md``, "Not
    yet"), on the client, before any worker reads a column."""
    if not _categorical._is_frame(X):
        return
    found = [repr(c) for j, c in enumerate(X.columns) if _categorical._is_category(X.iloc[:, j])]
    if found:
        raise DataError(
            f"X has category column(s) {', '.join(found[:8])}: Sequential Random Subspace "
            "reads numbers only. Give the category codes (missing values as NaN) "
            "and declare those columns by the estimator's categorical_features as a mask or "
            "indices, which follow them into every subspace's fit (docs/categorical.md)."
        )


class DaskExecutor:
    """Runs the fits of a round on the workers of ``client``, one task per fit, and
    returns their results in the order of the tasks.

    Parameters
    ----------
    client : distributed.Client
    X : path, ndarray or pandas DataFrame
        What ``fit`` was given: a path is opened by each worker, anything else scattered.
    target : str or None
        The name of the target column of a Parquet file or DataFrame ``X`` (not a feature).
    y : ndarray
        The target, read on the client (scattered to every worker once).
    spec : FitSpec
    """

    def __init__(self, client: Client, X: Any, target: str | None, y: Any, spec: Any) -> None:
        self.client = client
        worker_count(client)  # a cluster without workers fails here, not mid-selection
        if isinstance(X, (str, os.PathLike)):
            path = os.fspath(X)
            self.X = Shipment(lambda: path)
        else:
            self.X = Shipment(lambda: client.scatter(X, broadcast=True, hash=False))
        self.target = target
        y = np.asarray(y)
        self.y = Shipment(lambda: client.scatter(y, broadcast=True, hash=False))
        # The model as its class and parameters; each worker sets its own thread count.
        self.model = (type(spec.base), spec.base.get_params(deep=False))
        self.shared = (spec.n_probes, spec.importance)

    def run(self, tasks: list[SubspaceTask]) -> list[SubspaceFit]:
        # A task run again, after a worker loss, gives the same numbers.
        def submit(task: SubspaceTask) -> Any:
            return self.client.submit(
                _fit_on_worker,
                self.X.get(),
                self.target,
                self.y.get(),
                self.model,
                self.shared,
                task,
                pure=False,
            )

        return gather(self.client, submit, tasks, "forestimp.dask.srs")


def _fit_on_worker(
    X: Any,
    target: str | None,
    y: np.ndarray,
    model: tuple[type, dict[str, Any]],
    shared: tuple[int, str],
    task: SubspaceTask,
) -> SubspaceFit:
    """One subspace's fit on a worker: read its q columns, fit with the probes."""
    threads = _worker_threads()
    kind, params = model
    if "n_jobs" in params:
        params = {**params, "n_jobs": threads}
    spec = FitSpec(base=kind(**params), n_probes=shared[0], importance=shared[1], n_jobs=threads)
    source, _ = open_source(X, target=target)
    with source, _FIT_LOCK:
        return fit_subspace(source, y, spec, task)


def srs(
    selector: SequentialRandomSubspace,
    X: Any,
    y: Any,
    *,
    true_support: Any = None,
    client: Client | None = None,
) -> SequentialRandomSubspace:
    """Fit a batched :class:`~forestimp.selection.SequentialRandomSubspace` with the fits
    of each round spread over the workers of a Dask cluster.

    Parameters
    ----------
    selector : SequentialRandomSubspace
        Unfitted, with ``batch_size`` set (B subspaces per round: the result depends on B
        and ``random_state``, not on the number of workers). It is not modified.
    X : path to a ``.npy`` or Parquet file, ndarray or pandas DataFrame
        A path must be readable at that path on every worker; each worker reads only the
        columns of the subspaces it fits. An array or DataFrame is sent once to every
        worker.
    y : array-like of shape (n_samples,), or str
        The target, or the name of its column in a Parquet file or DataFrame ``X``.
    true_support : array-like, optional
        The truly relevant columns, for F1 in the trace (as in ``fit``).
    client : distributed.Client, optional
        Default: the current client.

    Returns
    -------
    SequentialRandomSubspace
        A fitted clone of ``selector``: the same ``support_``, ``importances_`` and
        ``history_`` as ``selector.fit(X, y)`` in one process.

    Raises
    ------
    InvalidParameterError
        ``selector`` is not a SequentialRandomSubspace, ``batch_size`` is None, or ``X`` is
        a Dask collection (write it to Parquet or ``.npy`` first: SRS reads columns).
    DataError
        ``X`` is a DataFrame with category columns, which SRS does not read yet: give the
        category codes, declared by the estimator's ``categorical_features`` as a mask or
        indices (they follow the columns into every subspace's fit).
    """
    if not isinstance(selector, SequentialRandomSubspace):
        raise InvalidParameterError(
            f"selector must be a SequentialRandomSubspace, got {type(selector).__name__}."
        )
    if isinstance(X, (da.Array, dd.DataFrame)):
        raise InvalidParameterError(
            "X must be a path to a .npy or Parquet file, an array or a pandas DataFrame; "
            "write a Dask collection to Parquet (or .npy) first: each SRS fit reads a few "
            "of its columns."
        )
    _refuse_category_columns(X)
    client = client or default_client()
    fitted = clone(selector)
    fitted._check_batch_size()
    target = y if isinstance(y, str) else None

    def executor(source: ColumnSource, y_values: np.ndarray, spec: FitSpec) -> DaskExecutor:
        return DaskExecutor(client, X, target, y_values, spec)

    return fitted._fit_input(X, y, true_support, executor)

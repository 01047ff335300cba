"""Forests on a Dask cluster (``dask.distributed``), identical to one machine.

Tree ``i`` of a forest depends only on the data and ``(random_state, i)``, so the trees can
be grown anywhere. :func:`fit` spreads ranges of tree indices over the workers; each task
grows its trees as a *part* of the forest (``Forest.fit(trees=(start, stop))``) and sends
back its model bytes with the fitted attributes as plain data (never a pickled estimator);
``Forest.concat`` puts the parts together in index order. The result is the estimator
``estimator.fit(X, y)`` gives on one machine, with the same model bytes.

Nothing large passes through the scheduler: a path (``.npy``, Parquet, Zarr) is read by
each worker itself (``.npy`` memory-mapped), a Dask collection is computed on the workers,
and an in-memory array is scattered to each worker once. Each task fits with ``n_jobs`` equal to
its worker's thread count, and a worker runs one fitting task at a time, so the engine's
threads never oversubscribe a worker. A task lost with its worker is run again elsewhere, and
gives the same trees, even when every worker dies at once; a cluster left without workers ends
the call with a ``ClusterError`` (``forestimp._dask_tasks``).

:func:`predict`, :func:`predict_proba` and :func:`shap_values` map a fitted estimator over
the blocks of a Dask array or DataFrame; :func:`predict_quantiles`, :func:`predict_interval`
and :func:`predict_se` too, for a regressor fitted with ``store_leaf_values=True``, whose
leaf values :func:`fit` builds as one machine does (``forestimp._dask_quantiles``).
:func:`permutation` computes :func:`forestimp.importance.permutation` with its trees
(out-of-bag) or its features (held-out) shared out over the workers, with the same numbers
as one machine. :func:`srs` runs the batched rounds of Sequential Random Subspace with each
round's fits on the workers (``forestimp._dask_srs``).

:func:`fit_patches` grows Random Patches block by block, for data larger than a worker's
memory (``_dask_patches``).

Categorical features (``categorical_features``, ``docs/categorical.md``) are learned once over
all the rows, never per task or per block, and every task codes X by those categories
(``BaseForest._fit(..., encoded=...)``); prediction gives an estimator fitted on a DataFrame
each partition of a Dask DataFrame as a DataFrame, matched by category (``docs/dask.md``).

Requires the ``dask`` extra: ``pip install 'forestimp[dask]'``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from sklearn.base import clone

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, default_client
except ImportError as e:  # pragma: no cover - exercised without the extra only
    raise ImportError(
        "forestimp.dask needs dask and distributed: pip install 'forestimp[dask]'"
    ) from e

from . import _categorical, _dask_quantiles, _float32_routing, _frames, _sparse, _state
from ._core import Forest, InvalidParameterError, oob_permutation_importance
from ._dask_patches import fit_patches as _fit_patches
from ._dask_read import is_path, read, suffix
from ._dask_srs import srs as _srs
from ._dask_tasks import Shipment, gather, worker_count
from ._dask_worker import _FIT_LOCK, Encoded, _worker_threads, encoded, learned, tree_ranges
from .importance._permutation import Draws, _held_out_scores, _permutation

__all__ = [
    "fit",
    "fit_patches",
    "permutation",
    "predict",
    "predict_interval",
    "predict_proba",
    "predict_quantiles",
    "predict_se",
    "shap_values",
    "srs",
    "tree_ranges",
]


def _checked(X: Any, y: Any, categorical: Any = None) -> tuple[Any, Any]:
    """``X, y`` checked on the client, before anything is sent or a client looked up: a
    malformed sparse matrix or a text, category or date column of X that
    ``categorical`` (``categorical_features``, or a fitted ``is_categorical_``) does not
    declare categorical is a DataError here rather than on a worker; a bad
    ``categorical`` an InvalidParameterError."""
    _frames.check_numeric(_numeric_part(X, categorical))
    return _sparse.checked(X), _sparse.checked(y, "y")


def _numeric_part(X: Any, categorical: Any) -> Any:
    """The columns of ``X`` that must hold numbers: those ``categorical`` does not declare
    categorical (a Dask DataFrame's read from its dtypes, nothing computed). Anything
    other than a DataFrame or a 2-D numpy array is returned as it is."""
    view = X._meta if isinstance(X, dd.DataFrame) else X
    frame = _categorical._is_frame(view)
    if categorical is None or not (frame or (isinstance(view, np.ndarray) and view.ndim == 2)):
        return X
    mask = _categorical.resolve_mask(view, categorical)
    if mask is None:
        return X
    return view.iloc[:, ~mask] if frame else view[:, ~mask]


def _spec(estimator: Any) -> Any:
    """The ``categorical_features`` of an unfitted estimator (None without the parameter)."""
    return estimator.get_params().get("categorical_features")


@functools.wraps(_fit_patches)
def fit_patches(estimator: Any, X: Any, y: Any, **kwargs: Any) -> Any:
    # A sparse X, y checked here, before the client cuts X into patches.
    X, y = _checked(X, y, _spec(estimator))
    _dask_quantiles.refuse(estimator)
    return _fit_patches(estimator, X, y, **kwargs)


def fit(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    sample_weight: Any = None,
    client: Client | None = None,
    n_tasks: int | None = None,
) -> Any:
    """Fit ``estimator`` (any forestimp forest) on the workers of a Dask cluster.

    Parameters
    ----------
    estimator : forestimp estimator
        Unfitted (its parameters are used; it is not modified).
    X : ndarray, DataFrame, dask Array or DataFrame, or path
        Training inputs. A path (``str`` or ``os.PathLike``) to a ``.npy`` file, a Parquet
        file or a Zarr array is read by every worker itself; the file must be readable at
        that path on every worker.
    y : array-like, dask Array or Series, path, or str
        Targets; with a Parquet ``X``, a ``str`` names the target column of that file
        (dropped from X). A ``.npy`` path is read by the workers.
    sample_weight : array-like, optional
    client : distributed.Client, optional
        Default: the current client (``distributed.default_client()``).
    n_tasks : int, optional
        Number of tree ranges (default: one per worker). Smaller tasks balance unequal
        workers and lose less work to a failure; each reads the data once.

    Returns
    -------
    estimator
        A fitted clone of ``estimator``: the same model bytes as ``estimator.fit(X, y)`` on
        one machine (out-of-bag scores and the leaf values of ``store_leaf_values=True``
        included, computed on one worker once the trees are grown).

    Notes
    -----
    Categorical features (``categorical_features``, ``docs/categorical.md``) are learned
    once over all the rows, on the client for an in-memory X, else by one task on a worker,
    before any tree is grown; every fitting task then codes X by those categories.
    """
    # Here, before anything is sent: a worker's conversions would read the index unchecked.
    X, y = _checked(X, y, _spec(estimator))
    client = client or default_client()
    n_estimators = estimator.get_params()["n_estimators"]
    ranges = tree_ranges(n_estimators, n_tasks or worker_count(client))
    data = Shipment(lambda: _data_on_workers(client, X, y, sample_weight))
    kind, params = type(estimator), estimator.get_params()
    categories = _categories(client, _spec(estimator), X, data)

    def submit(trees: tuple[int, int]) -> Any:
        return client.submit(_fit_part, kind, params, data.get(), *trees, categories, pure=False)

    state = _merged_state(gather(client, submit, ranges, "forestimp.dask.fit"))
    if getattr(estimator, "oob_score", False) or _dask_quantiles.wants(estimator):
        state = gather(
            client,
            lambda _: client.submit(_whole_forest, kind, params, state, data.get(), pure=False),
            [None],
            "forestimp.dask.fit (out-of-bag score, leaf values)",
        )[0]
    fitted = clone(estimator)
    _state.restore_fitted_state(fitted, state)
    return fitted


def _data_on_workers(client: Client, X: Any, y: Any, sample_weight: Any) -> dict[str, Any]:
    """What each task reads: paths as they are, Dask collections as futures of their
    computed values (gathered worker to worker), other arrays scattered to every worker."""
    data: dict[str, Any] = {}
    if is_path(X) and suffix(X) not in (".npy", ".parquet", ".zarr"):
        raise InvalidParameterError(
            f"cannot read {X!r}: X paths must be .npy, Parquet (.parquet) or Zarr (.zarr)"
        )
    target_column = isinstance(y, str) and is_path(X) and suffix(X) == ".parquet"
    for name, value in (("X", X), ("y", y), ("sample_weight", sample_weight)):
        if value is None or is_path(value) or (name == "y" and target_column):
            data[name] = value
        elif isinstance(value, (da.Array, dd.DataFrame, dd.Series)):
            data[name] = client.compute(value)
        else:
            # On every worker: each one fits on all rows anyway, and scattered data lost
            # with a worker could not be made again.
            data[name] = client.scatter(value, broadcast=True, hash=False)
    data["target_column"] = target_column
    return data


def _categories(client: Client, spec: Any, X: Any, data: Shipment) -> Encoded:
    """``(is_categorical_, categories_)`` of the whole X, learned once: on the client when
    X is in its memory, else by one task that reads all of X on a worker (a Dask
    collection's computed value, or the file at a path). No task when nothing can be
    categorical: ``categorical_features=None``, or ``"from_dtype"`` for numbers only (a
    ``.npy`` or Zarr path, a Dask Array, a Dask DataFrame without category columns)."""
    if spec is None:
        return None, None
    if not (is_path(X) or isinstance(X, (da.Array, dd.DataFrame))):
        return learned(X, spec)
    if isinstance(X, dd.DataFrame) and _categorical.resolve_mask(X._meta, spec) is None:
        return None, None
    if isinstance(X, da.Array) and X.ndim == 2:
        if _categorical.resolve_mask(np.empty((0, X.shape[1])), spec) is None:
            return None, None
    if is_path(X) and suffix(X) in (".npy", ".zarr") and isinstance(spec, str):
        return None, None  # "from_dtype": arrays have no dtypes
    found = gather(
        client,
        lambda _: client.submit(_learn, spec, data.get(), pure=False),
        [None],
        "forestimp.dask.fit (categories)",
    )[0]
    return found[0], found[1]


def _learn(spec: Any, data: dict[str, Any]) -> Encoded:
    """The categories of all of X, read on a worker."""
    X, _, _ = read(data)
    return learned(X, spec)


def _fit_part(
    kind: type,
    params: dict[str, Any],
    data: dict[str, Any],
    start: int,
    stop: int,
    categories: Encoded = (None, None),
) -> dict[str, Any]:
    """Grows the trees ``start..stop`` on a worker; returns the part's fitted state.
    ``categories``: ``(is_categorical_, categories_)`` learned once for the whole X
    (:func:`_categories`), by which X is coded here.

    The engine runs ``n_jobs`` = the worker's threads; the lock keeps a second task of the
    same worker (more tasks than workers, or one moved there) from running beside it."""
    X, y, sw = read(data)
    est = kind(**{**params, "n_jobs": _worker_threads(), "verbose": 0, "warm_start": False})
    with _FIT_LOCK:
        X = encoded(X, categories[1])
        est._fit(X, y, sw, trees=(start, stop), encoded=categories)
    state = _state.fitted_state(est)
    assert state is not None
    return state


def _merged_state(states: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole forest's state from its parts': the same attributes, models concatenated,
    and the parts' moved export thresholds (global tree indices) put together."""
    per_part = {"model", *_float32_routing.ATTRIBUTES}
    first = states[0]
    for other in states[1:]:
        if other.keys() - per_part != first.keys() - per_part or any(
            not np.array_equal(np.asarray(other[k]), np.asarray(first[k]))
            for k in first
            if k not in per_part
        ):
            raise RuntimeError("the workers read different training data (shape, classes)")
    forest = Forest.concat([Forest.from_bytes(s["model"]) for s in states])
    merged = {k: v for k, v in first.items() if k not in per_part}
    merged["model"] = forest.to_bytes()
    _float32_routing.merge(states, merged)
    return merged


def _whole_forest(
    kind: type, params: dict[str, Any], state: dict[str, Any], data: dict[str, Any]
) -> dict[str, Any]:
    """The state with what needs the whole forest and every training row, computed on a
    worker: the out-of-bag scores (``oob_score``) and the leaf values
    (``store_leaf_values``, :func:`forestimp._dask_quantiles.store`)."""
    X, y, sw = read(data)
    est = kind(**{**params, "n_jobs": _worker_threads()})
    _state.restore_fitted_state(est, state)
    if getattr(est, "oob_score", False):
        Xe, _ = est._training_input(X, y)
        est._set_oob_score(Xe, np.asarray(y))
    if _dask_quantiles.wants(est):
        with _FIT_LOCK:
            _dask_quantiles.store(est, X, y, sw)
    out = _state.fitted_state(est)
    assert out is not None
    return out


def _restore(kind: type, params: dict[str, Any], state: dict[str, Any]) -> Any:
    """The fitted estimator on a worker, from its parameters and fitted state (model bytes)."""
    est = kind(**{**params, "n_jobs": _worker_threads()})
    _state.restore_fitted_state(est, state)
    return est


def _oob_part(kind, params, state, data, start, stop, n_repeats, seed) -> tuple:
    """Out-of-bag permutation draws of the trees ``start..stop``: (R, stop − start, p)."""
    X, y, _ = read(data)
    est = _restore(kind, params, state)
    Xt, yt = est._training_input(X, y)
    part = est.forest_.part(start, stop)
    with _FIT_LOCK:
        per_rep, oob_error, _ = oob_permutation_importance(
            part, Xt, yt, n_repeats=n_repeats, seed=seed, n_jobs=est.n_jobs
        )
    return per_rep, oob_error


def _held_out_part(kind, params, state, data, features, n_repeats, scoring, seed) -> tuple:
    """Held-out permutation scores of the columns ``features`` only."""
    X, y, sw = read(data)
    est = _restore(kind, params, state)
    with _FIT_LOCK:
        baseline, imp, multi = _held_out_scores(
            est, X, y, n_repeats, scoring, sw, seed, est.n_jobs, features
        )
    return baseline, {k: v[features] for k, v in imp.items()}, multi


class _OnCluster(Draws):
    """The draws of :func:`forestimp.importance.permutation`, shared out over a cluster."""

    def __init__(self, client: Client | None, n_tasks: int | None) -> None:
        self.client = client or default_client()
        self.n_tasks = n_tasks or worker_count(self.client)

    def _submit(self, fn, est, X, y, sw, pieces) -> list:
        client = self.client
        # One object: a dict is scattered value by value under its own keys ("classes_",
        # ...), which a second call re-sent while the first one's were being released.
        fitted = _state.fitted_state(est)
        state = Shipment(lambda: client.scatter([fitted], broadcast=True, hash=False)[0])
        data = Shipment(lambda: _data_on_workers(client, X, y, sw))
        kind, params = type(est), est.get_params()

        def submit(piece: tuple) -> Any:
            return client.submit(fn, kind, params, state.get(), data.get(), *piece, pure=False)

        return gather(client, submit, pieces, "forestimp.dask.permutation")

    def oob(self, est, X, y, n_repeats, seed, n_jobs) -> tuple:
        ranges = tree_ranges(est.forest_.n_estimators, self.n_tasks)
        pieces = [(a, b, n_repeats, seed) for a, b in ranges]
        parts = self._submit(_oob_part, est, X, y, None, pieces)
        return (
            np.concatenate([per_rep for per_rep, _ in parts], axis=1),
            np.concatenate([err for _, err in parts]),
        )

    def held_out(self, est, X, y, n_repeats, scoring, sw, seed, n_jobs) -> tuple:
        p = est.forest_.n_features
        groups = [list(range(a, b)) for a, b in tree_ranges(p, self.n_tasks)]
        parts = self._submit(
            _held_out_part, est, X, y, sw, [(g, n_repeats, scoring, seed) for g in groups]
        )
        baseline, _, multi = parts[0]
        imp = {k: np.empty((p, n_repeats)) for k in baseline}
        for group, (_, rows, _) in zip(groups, parts, strict=True):
            for k, v in rows.items():
                imp[k][group] = v
        return baseline, imp, multi


def permutation(
    est: Any,
    X: Any,
    y: Any,
    *,
    oob: bool = False,
    n_repeats: int = 1,
    scoring: Any = None,
    sample_weight: Any = None,
    scaled: bool = False,
    random_state: Any = None,
    client: Client | None = None,
    n_tasks: int | None = None,
) -> Any:
    """:func:`forestimp.importance.permutation` on a Dask cluster: out-of-bag draws split
    over ranges of trees, held-out draws over groups of features, each task reading ``X``
    and ``y`` as :func:`fit` does (arrays, Dask collections or paths). The result is the
    one machine's, number for number: permutations depend only on ``(random_state, tree,
    feature, repeat)``."""
    # Before any client is looked up.
    X, y = _checked(X, y, getattr(est, "is_categorical_", None))
    draws = _OnCluster(client, n_tasks)
    return _permutation(
        est, X, y, oob, n_repeats, scoring, sample_weight, scaled, None, random_state, draws
    )


def srs(
    selector: Any, X: Any, y: Any, *, true_support: Any = None, client: Client | None = None
) -> Any:
    """Sequential Random Subspace with the B fits of each round on the workers: see
    :func:`forestimp._dask_srs.srs` (the same selection as ``selector.fit`` in one process,
    for any number of workers)."""
    X, y = _checked(X, y)
    return _srs(selector, X, y, true_support=true_support, client=client)


def shap_values(estimator: Any, X: Any) -> Any:
    """TreeSHAP values (:func:`forestimp.importance.shap_values`) of the rows of a Dask
    array or DataFrame, block by block: a lazy Dask array (n, n_features, width), width the
    number of classes or 1. The expected value is that of any row's result."""
    _check_rows(estimator, X)
    width = len(getattr(estimator, "classes_", [0]))
    if _by_partition(estimator, X):
        p = len(X.columns)
        return _over_partitions(X, _shap_block, estimator, (), (p, width), np.float64)
    X = _as_rows(X)
    p = X.shape[1]
    return X.map_blocks(
        _shap_block,
        estimator,
        dtype=np.float64,
        chunks=(X.chunks[0], (p,), (width,)),
        new_axis=2,
        meta=np.empty((0, 0, 0)),
    )


def _shap_block(block: np.ndarray, estimator: Any) -> np.ndarray:
    from .importance import shap_values as local_shap

    width = len(getattr(estimator, "classes_", [0]))
    if block.shape[0] == 0:
        return np.empty((0, block.shape[1], width))
    values = local_shap(estimator, block, n_jobs=_worker_threads()).values
    return values.reshape(block.shape[0], block.shape[1], width)


def predict(estimator: Any, X: Any) -> Any:
    """``estimator.predict`` over the blocks of a Dask array or DataFrame (lazy)."""
    return _map(estimator, X, "predict")


def predict_proba(estimator: Any, X: Any) -> Any:
    """``estimator.predict_proba`` over the blocks of a Dask array or DataFrame (lazy)."""
    return _map(estimator, X, "predict_proba")


def predict_quantiles(
    estimator: Any, X: Any, quantiles: Any = 0.5, interpolation: str = "linear"
) -> Any:
    """``estimator.predict_quantiles(X, quantiles, interpolation)`` over the blocks of a
    Dask array or DataFrame (lazy): shape ``(n,)`` for one quantile, ``(n, n_quantiles)``
    for a list, the numbers of one call on all the rows. The arguments and the leaf values
    (``store_leaf_values=True``) are checked here, before any task."""
    kwargs, tail = _dask_quantiles.quantiles_call(estimator, quantiles, interpolation)
    return _map(estimator, X, "predict_quantiles", kwargs, tail)


def predict_interval(estimator: Any, X: Any, alpha: float = 0.1, method: str | None = None) -> Any:
    """``estimator.predict_interval(X, alpha, method)`` over the blocks of a Dask array or
    DataFrame (lazy): ``(n, 2)``, the bounds of one call on all the rows. ``method`` None:
    the estimator's default."""
    kwargs, tail = _dask_quantiles.interval_call(estimator, alpha, method)
    return _map(estimator, X, "predict_interval", kwargs, tail)


def predict_se(estimator: Any, X: Any) -> Any:
    """``estimator.predict_se`` over the blocks of a Dask array or DataFrame (lazy)."""
    return _map(estimator, X, "predict_se", *_dask_quantiles.se_call(estimator))


def _by_partition(estimator: Any, X: Any) -> bool:
    """Whether the blocks of ``X`` reach ``estimator`` as pandas DataFrames, one per
    partition: a Dask DataFrame, for an estimator fitted on a DataFrame (its column names
    are checked, its category columns matched by category in every partition, whatever
    categories each partition's dtype declares)."""
    return isinstance(X, dd.DataFrame) and getattr(estimator, "feature_names_in_", None) is not None


def _over_partitions(
    X: Any, fn: Any, estimator: Any, args: tuple, tail: tuple[int, ...], dtype: Any
) -> Any:
    """``fn(partition, estimator, *args)`` over the partitions of the Dask DataFrame ``X``
    as a lazy Dask array of shape ``(n,) + tail`` (the partitions' lengths are computed, as
    ``to_dask_array(lengths=True)`` does)."""
    lengths = [int(n) for n in X.map_partitions(len).compute()]
    model = dask.delayed(estimator, pure=True)
    blocks = [
        da.from_delayed(
            dask.delayed(fn, pure=True)(part, model, *args),
            shape=(n, *tail),
            dtype=dtype,
            meta=np.empty((0,) * (1 + len(tail)), dtype=dtype),
        )
        for part, n in zip(X.to_delayed(), lengths, strict=True)
    ]
    return da.concatenate(blocks, axis=0)


def _check_rows(estimator: Any, X: Any) -> None:
    """A text column of ``X`` that ``estimator`` did not fit as categorical: DataError
    here, not in a task later; a malformed scipy.sparse X: DataError (any is refused)."""
    _sparse.checked(X)
    _frames.check_numeric(_numeric_part(X, getattr(estimator, "is_categorical_", None)))


def _as_rows(X: Any) -> Any:
    """``X`` as a Dask array in row blocks (every column in each block)."""
    if isinstance(X, dd.DataFrame):
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise InvalidParameterError("X must be a 2-D dask Array or a dask DataFrame")
    return X.rechunk({1: -1}) if X.numblocks[1] != 1 else X


def _map(
    estimator: Any,
    X: Any,
    method: str,
    kwargs: dict[str, Any] | None = None,
    tail: tuple[int, ...] | None = None,
) -> Any:
    """``estimator.<method>(block, **kwargs)`` over the row blocks of ``X``: a lazy Dask
    array of shape ``(n,) + tail``. ``tail`` None: ``predict``'s ``()`` (a classifier's
    labels) or ``predict_proba``'s ``(n_classes,)``; given, each block is checked to have
    it, in float64."""
    _check_rows(estimator, X)
    dtype: Any = np.float64
    if tail is not None:
        shape = tail
    elif method == "predict_proba":
        shape = (len(estimator.classes_),)
    else:
        shape = ()
        dtype = estimator.classes_.dtype if hasattr(estimator, "classes_") else np.float64
    args = (method, kwargs or {}, tail)
    if _by_partition(estimator, X):
        return _over_partitions(X, _apply, estimator, args, shape, dtype)
    X = _as_rows(X)
    axes: dict[str, Any] = {"drop_axis": 1} if not shape else {}
    if len(shape) > 1:
        axes["new_axis"] = list(range(2, 1 + len(shape)))
    # One key for the estimator, sent once to each worker: as a plain argument it was
    # unpickled by every task (leaf values of 72 MB, 20 blocks: 12-18 s, not 4 s).
    return X.map_blocks(
        _apply,
        dask.delayed(estimator, pure=True),
        *args,
        dtype=dtype,
        chunks=(X.chunks[0], *((k,) for k in shape)),
        meta=np.empty((0,) * (1 + len(shape)), dtype),
        **axes,
    )


def _apply(
    block: Any,
    estimator: Any,
    method: str,
    kwargs: dict[str, Any] | None = None,
    tail: tuple[int, ...] | None = None,
) -> np.ndarray:
    n = block.shape[0]
    if n == 0:  # an empty partition
        if tail is not None:
            return np.empty((0, *tail))
        if method == "predict_proba":
            return np.empty((0, len(estimator.classes_)))
        return np.empty(0, dtype=getattr(estimator, "classes_", np.empty(0)).dtype)
    out = getattr(estimator, method)(block, **(kwargs or {}))
    if tail is not None and out.shape != (n, *tail):
        raise RuntimeError(
            f"{method} gave a block of shape {out.shape}, not {(n, *tail)} as declared "
            "(forestimp._dask_quantiles)"
        )
    return out

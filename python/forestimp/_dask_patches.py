"""Random Patches fitted block by block on a Dask cluster, for data larger than a worker.

Louppe & Geurts (2012) proposed Random Patches for data too large for one machine: each tree
sees a random subset of rows *and* of columns, so it can be grown from that patch alone.
:func:`fit_patches` cuts the rows into consecutive blocks and gives each task one block and a
random subset of the columns: the task reads only that patch, grows a sub-forest on it and
returns its model bytes, its columns and the out-of-bag predictions of its own rows.
``Forest.assemble`` reads every sub-forest's splits as splits on the whole matrix's columns.

What differs from one machine's forest: each tree is grown on one block of rows (as with
``max_samples`` = the block's share, but the rows of a block are consecutive, not drawn), and
on the patch's columns (as ``RandomPatches*``' ``max_features``). Out-of-bag estimates exist
only within a patch: a row's out-of-bag prediction averages the trees of its own block for
which it was out of bag. MDI is additive: the forest's MDI is the tree-weighted mean of the
sub-forests' MDI, each on its columns.

Categorical features (``categorical_features``) are learned once over all the rows before any
patch is fitted: a pandas DataFrame's on the client, an array's or a file's from the distinct
values of each row block (one small task per block, reading only the categorical columns),
merged on the client. Every patch codes its columns by those categories, so a category has
one code in every sub-forest, even one that its block does not hold.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import clone

from . import _categorical, _oob, _state
from . import _params as P
from ._core import Forest, InvalidParameterError
from ._dask_read import load_npy
from ._dask_tasks import Shipment, gather
from ._dask_worker import (
    _FIT_LOCK,
    _worker_threads,
    categories_state,
    encoded,
    learned,
    tree_ranges,
)


def fit_patches(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    n_row_blocks: int | None = None,
    n_patches: int | None = None,
    max_features: float = 1.0,
    client: Any = None,
) -> Any:
    """Fit ``estimator`` as Random Patches, each patch on one block of rows and a random
    subset of columns, read by the worker that fits it (module docstring).

    Parameters
    ----------
    estimator : forestimp estimator
        Unfitted; its ``n_estimators`` trees are shared out over the patches, and each
        patch fits a copy of it (with its own seed drawn from ``random_state``).
    X : path to a ``.npy`` file or a Zarr array, ndarray, pandas DataFrame, or dask Array
        Paths are read by the workers, a patch at a time (a memory-mapped ``.npy`` or a Zarr
        selection reads only the patch); an ndarray or DataFrame is cut on the client and
        each patch sent to its worker; a dask Array's patches are computed on the workers.
        A Dask DataFrame is refused (``InvalidParameterError``): its rows cannot be cut by
        position. Categorical columns: a DataFrame's category columns (or those named by
        ``categorical_features``); for the others, ``categorical_features`` as a mask or
        indices, whose columns hold category labels as numbers.
    y : array-like, dask Array or path to a ``.npy`` file
    n_row_blocks : int, optional
        Consecutive blocks of rows (default: one per worker).
    n_patches : int, optional
        Sub-forests (default: ``n_row_blocks``); patch ``k`` reads block ``k % n_row_blocks``.
    max_features : int or float, default=1.0
        Columns per patch: a count, or a fraction of the columns.
    client : distributed.Client, optional

    Returns
    -------
    estimator
        A fitted clone, whose forest is ``assembled`` (see ``Forest.assemble``).
    """
    import dask.dataframe as dd
    from distributed import default_client

    if isinstance(X, (dd.DataFrame, dd.Series)):
        raise InvalidParameterError(
            "fit_patches cuts X into blocks of rows by position, which a Dask DataFrame "
            "does not offer: give a dask Array (X.to_dask_array(lengths=True), category "
            "columns as numbers declared by categorical_features=[...]), a pandas "
            "DataFrame, or a .npy or Zarr path; or use forestimp.dask.fit"
        )
    client = client or default_client()
    n_workers = len(client.scheduler_info()["workers"])
    shape = _shape(X)
    n, p = shape
    blocks = P.check_int("n_row_blocks", n_row_blocks or n_workers, 1)
    blocks = min(blocks, n)
    patches = P.check_int("n_patches", n_patches or blocks, 1)
    params = estimator.get_params()
    if patches > params["n_estimators"]:
        raise InvalidParameterError(
            f"n_patches={patches} patches need at least as many trees, got "
            f"n_estimators={params['n_estimators']}"
        )
    q = _columns_per_patch(max_features, p)
    rng = np.random.default_rng(P.seed_from(params.get("random_state")))
    row_blocks = tree_ranges(n, blocks)  # consecutive, nearly equal ranges, as the trees'
    want_y = estimator._is_classifier or params.get("oob_score")
    y_all = _labels(client, y) if want_y else None
    classes = np.unique(np.asarray(y_all)) if estimator._is_classifier else None
    trees = [stop - start for start, stop in tree_ranges(params["n_estimators"], patches)]
    names = _feature_names(X)
    spec = params.get("categorical_features")
    coded = _categorical._is_frame(X)  # a DataFrame is coded on the client
    mask, categories, X = _categories(client, X, spec, row_blocks)
    shipments, seeds, rows, views = [], [], [], []
    for k in range(patches):
        a, b = row_blocks[k % blocks]
        rows.append((a, b))
        columns = np.sort(rng.choice(p, q, replace=False))
        seeds.append(int(rng.integers(2**31 - 1)))
        shipments.append(Shipment(partial(_patch_on_workers, client, X, y, a, b, columns)))
        views.append(None if categories is None else [categories[int(c)] for c in columns])

    def submit(k: int) -> Any:
        args = (params, shipments[k].get(), int(trees[k]), seeds[k], classes, views[k], coded)
        return client.submit(_fit_patch, type(estimator), *args, pure=False)

    results = gather(client, submit, range(patches), "forestimp.dask.fit_patches")
    forest = Forest.assemble(
        [Forest.from_bytes(r["model"]) for r in results],
        [r["columns"].tolist() for r in results],
        p,
    )
    state: dict[str, Any] = {"model": forest.to_bytes(), "n_features_in_": p, "n_outputs_": 1}
    state.update(categories_state(mask, categories))
    if names is not None:
        state["feature_names_in_"] = names
    if classes is not None:
        state["classes_"] = classes
        state["n_classes_"] = len(classes)
    if params.get("oob_score"):
        _within_patch_oob(state, results, rows, n, classes, y_all)
    fitted = clone(estimator)
    _state.restore_fitted_state(fitted, state)
    return fitted


def _within_patch_oob(state, results, rows, n, classes, y) -> None:
    """Out-of-bag predictions and score from each patch's own rows: a row averages the
    trees of its block's patches for which it was out of bag."""
    from sklearn.metrics import accuracy_score, r2_score

    width = 1 if classes is None else len(classes)
    sums, counts = np.zeros((n, width)), np.zeros(n)
    for (a, b), result in zip(rows, results, strict=True):
        if "oob" in result:
            values, seen = result["oob"]
            sums[a:b] += np.nan_to_num(values) * seen[:, None]
            counts[a:b] += seen
    if not any("oob" in result for result in results):
        raise InvalidParameterError(
            "oob_score=True needs out-of-bag rows in the patches: bootstrap=True or max_samples"
        )
    seen = counts > 0
    mean = np.full((n, width), np.nan)
    mean[seen] = sums[seen] / counts[seen, None]
    if classes is None:
        state["oob_prediction_"] = mean[:, 0]
        score = _oob.score(r2_score, y, lambda rows: mean[rows, 0], seen, stacklevel=4)
    else:
        state["oob_decision_function_"] = mean
        score = _oob.score(
            accuracy_score, y, lambda rows: classes[mean[rows].argmax(axis=1)], seen, stacklevel=4
        )
    state["oob_score_"] = float(score)


def _feature_names(X: Any) -> np.ndarray | None:
    """A pandas DataFrame's column names when they are all strings (scikit-learn's rule for
    ``feature_names_in_``), else None."""
    if not _categorical._is_frame(X):
        return None
    names = [c for c in X.columns]
    if not names or not all(isinstance(c, str) for c in names):
        return None
    return np.asarray(names, dtype=object)


def _categories(
    client: Any, X: Any, spec: Any, row_blocks: list[tuple[int, int]]
) -> tuple[Any, Any, Any]:
    """``(is_categorical_, categories_, X)``: the categories of the whole X, learned once,
    and X as the patches are cut from it. A pandas DataFrame is coded here, on the client,
    and becomes a float64 array of codes; an array's, a dask Array's or a file's categories
    are the distinct values of its categorical columns in every row block (the union,
    sorted, as ``_categorical.learn`` would find them in all the rows at once), and each
    patch is coded where it is read."""
    if _categorical._is_frame(X):
        found, learnt = learned(X, spec)
        return found, learnt, np.asarray(encoded(X, learnt))
    # Numbers only: "from_dtype" finds no categorical column, names need a DataFrame.
    mask = _categorical.resolve_mask(np.empty((0, _shape(X)[1])), spec)
    if mask is None:
        return None, None, X
    columns = np.flatnonzero(mask)
    if not (isinstance(X, (str, Path)) or hasattr(X, "compute")):
        return mask, _categorical.learn(X, mask), X
    shipments = [
        Shipment(partial(_patch_on_workers, client, X, None, a, b, columns)) for a, b in row_blocks
    ]

    def submit(k: int) -> Any:
        return client.submit(_block_categories, shipments[k].get(), pure=False)

    per_block = gather(client, submit, range(len(row_blocks)), "forestimp.dask.fit_patches")
    categories: list[np.ndarray | None] = [None] * len(mask)
    for i, j in enumerate(columns):
        seen = np.concatenate([np.asarray(block[i], dtype=object) for block in per_block])
        categories[j] = _categorical.learn(seen[:, None], np.ones(1, dtype=bool))[0]
    return mask, categories, X


def _block_categories(patch: dict) -> list[np.ndarray | None]:
    """The distinct values of every column of one patch (its block of rows)."""
    X, _ = _read_patch(patch)
    return _categorical.learn(X, np.ones(X.shape[1], dtype=bool))


def _shape(X: Any) -> tuple[int, int]:
    shape: tuple[int, ...]
    if isinstance(X, (str, Path)) and str(X).endswith(".npy"):
        shape = load_npy(X).shape
    elif isinstance(X, (str, Path)):
        import zarr

        shape = zarr.open_array(str(X), mode="r").shape
    else:
        shape = tuple(getattr(X, "shape", ()))
    if len(shape) != 2:
        raise InvalidParameterError("X must be 2-D: a .npy or Zarr path, an array or a dask Array")
    return int(shape[0]), int(shape[1])


def _columns_per_patch(max_features: Any, p: int) -> int:
    if P._is_int(max_features) and 1 <= int(max_features) <= p:
        return int(max_features)
    if P._is_real(max_features) and 0.0 < float(max_features) <= 1.0:
        return max(1, int(float(max_features) * p))
    raise InvalidParameterError(
        f"The 'max_features' parameter must be an int in [1, {p}] or a float in (0, 1], "
        f"got {max_features!r}."
    )


def _labels(client: Any, y: Any) -> np.ndarray:
    """All of ``y`` on the client, to fix the classes every patch codes its labels by."""
    if isinstance(y, (str, Path)):
        return np.asarray(load_npy(y))
    if hasattr(y, "compute"):
        return np.asarray(client.compute(y).result())
    return np.asarray(y)


def _patch_on_workers(client: Any, X: Any, y: Any, a: int, b: int, columns: np.ndarray) -> dict:
    """What a task reads: paths and bounds (read on the worker), or the patch itself."""
    if isinstance(X, (str, Path)):
        return {"X": str(X), "y": y, "rows": (a, b), "columns": columns}
    if hasattr(X, "compute"):  # a dask Array: the patch is computed on the workers
        if y is None or not hasattr(y, "compute"):
            y_part = None if y is None else _y_block(y, a, b)
        else:
            y_part = client.compute(y[a:b])
        return {
            "X": client.compute(X[a:b][:, columns]),
            "y": y_part,
            "rows": None,
            "columns": columns,
        }
    X_patch = np.ascontiguousarray(np.asarray(X)[a:b][:, columns])
    y_part = None if y is None else _y_block(y, a, b)
    return {
        "X": client.scatter(X_patch, hash=False),
        "y": None if y_part is None else client.scatter(y_part, hash=False),
        "rows": None,
        "columns": columns,
    }


def _y_block(y: Any, a: int, b: int) -> np.ndarray:
    """The rows ``a..b`` of an in-memory ``y`` or of a ``.npy`` file's, on the client."""
    return np.asarray(load_npy(y)[a:b] if isinstance(y, (str, Path)) else np.asarray(y)[a:b])


def _read_patch(patch: dict) -> tuple[np.ndarray, Any]:
    """``(X, y)`` of one patch on a worker, reading only its rows and columns (y None when
    the patch was sent without it)."""
    X, y, rows, columns = patch["X"], patch["y"], patch["rows"], patch["columns"]
    if rows is None:
        return np.asarray(X), None if y is None else np.asarray(y)
    a, b = rows
    if str(X).endswith(".npy"):
        block = load_npy(X)[a:b]
        every = np.array_equal(columns, np.arange(block.shape[1]))
        # All the columns: the memory map itself, which the engine reads in place.
        X = block if every else np.ascontiguousarray(block[:, columns])
    else:
        import zarr

        X = zarr.open_array(str(X), mode="r").get_orthogonal_selection((slice(a, b), columns))
    if y is None:
        return np.asarray(X), None
    y = load_npy(y)[a:b] if isinstance(y, (str, Path)) else np.asarray(y)[a:b]
    return np.asarray(X), np.asarray(y)


def _fit_patch(
    kind, params, patch, n_trees, seed, classes, categories=None, coded=False
) -> dict[str, Any]:
    """One sub-forest on its patch: model bytes, columns, rows, in-patch OOB predictions.
    ``categories``: those of the patch's columns (None for a numeric one), learned for the
    whole X; None when X has no categorical column. ``coded``: the patch holds codes of
    them already (a DataFrame, coded on the client)."""
    X, y = _read_patch(patch)
    overrides = {"n_estimators": n_trees, "random_state": seed, "oob_score": False}
    est = kind(**{**params, **overrides, "n_jobs": _worker_threads(), "warm_start": False})
    mask = None if categories is None else np.array([c is not None for c in categories])
    with _FIT_LOCK:
        if mask is not None and mask.any():
            # Codes of the whole X's categories (a DataFrame's were coded on the client).
            X = X if coded else encoded(X, categories)
            est._fit(X, y, None, classes=classes, encoded=(mask, categories))
        else:
            # No categorical column among the patch's: none learned from its block either.
            est._fit(X, y, None, classes=classes, encoded=(None, None))
    out: dict[str, Any] = {"model": est.forest_.to_bytes(), "columns": patch["columns"]}
    if params.get("oob_score"):
        # X is coded already: the engine reads it as it is, not coded a second time.
        Xe = X if est.categories_ is not None else est._engine_input(X)
        try:
            out["oob"] = est.forest_.oob_predict(Xe, n_jobs=est.n_jobs)
        except InvalidParameterError:  # no out-of-bag rows in this patch (no row sampling)
            pass
    return out

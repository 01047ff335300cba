"""Reading on a Dask worker what ``forestimp.dask`` sent it: arrays as they arrive, paths
(``.npy`` memory-mapped, Parquet, Zarr) opened by the worker itself, each checked so that a
damaged or truncated file is a ``DataError`` that names it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ._core import DataError
from .selection._columns import _check_npy_size, _npy_header, _open_regular


def is_path(value: Any) -> bool:
    """Whether ``value`` names a file (read on the worker) rather than holding data."""
    return isinstance(value, (str, os.PathLike))


def suffix(path: Any) -> str:
    """The file type of ``path``: its suffix, lower case, ``.pq`` read as ``.parquet``."""
    found = Path(path).suffix.lower()
    return ".parquet" if found in (".parquet", ".pq") else found


def read(data: dict[str, Any]) -> tuple[Any, Any, Any]:
    """``(X, y, sample_weight)`` on a worker: futures arrive resolved; paths are read."""
    X, y, sw = data["X"], data["y"], data["sample_weight"]
    if is_path(X):
        X, y = _read_path(X, y if data["target_column"] else None, y)
    if is_path(y):
        y = load_npy(y)
    if is_path(sw):
        sw = load_npy(sw)
    return X, y, sw


def load_npy(path: Any) -> np.ndarray:
    """The ``.npy`` file at ``path``, memory-mapped once its header is checked against its
    size: a damaged or truncated file is a ``DataError`` that names it. (A file truncated
    while mapped kills its worker; the task, run again, then meets this check.)"""
    path = os.fspath(path)
    fd = _open_regular(path)
    try:
        shape, _, dtype, offset = _npy_header(fd, path)
        if dtype.hasobject:
            raise DataError(f"{path!r} holds Python objects, not numbers.")
        _check_npy_size(path, shape, dtype, os.fstat(fd).st_size - offset)
    finally:
        os.close(fd)
    try:
        return np.load(path, mmap_mode="r")
    except (OSError, ValueError) as e:  # changed since the check
        raise DataError(f"cannot read {path!r}: {e}") from e


def _read_path(path: Any, column: str | None, y: Any) -> tuple[Any, Any]:
    kind = suffix(path)
    if kind == ".npy":
        return load_npy(path), y
    if kind == ".parquet":
        from ._parquet import read_parquet

        frame = read_parquet(path)
        if column is not None:
            return frame.drop(columns=[column]), frame[column].to_numpy()
        return frame, y
    import zarr  # .zarr, the only other suffix _data_on_workers lets through

    return np.asarray(zarr.open(str(path), mode="r")), y

"""Sparse X (``scipy.sparse`` matrices and arrays of any format) as the engine reads it.

The engine reads a sparse X as compressed sparse columns (CSC) with int32 indices, sorted
and without duplicates, in place: fitting gathers a feature's stored entries at a node's
rows (implicit zeros are values 0), prediction and every measure that takes X look up
``x[i, j]`` by bisection in column ``j``. Nothing is densified. The trees are those of the
dense fit on ``X.toarray()`` at the same ``random_state`` (same dtype), byte for byte.

Like scikit-learn's forests, any sparse format is accepted and converted once (CSR, COO...
to CSC: ``O(nnz)``). Unlike scikit-learn, whose trees refuse int64 indices, 64-bit
indices are narrowed to int32 whenever the matrix fits them, and duplicate entries are
summed (as ``toarray()`` does) instead of being read twice.

Stored NaN or infinite values are refused (``ValueError``), even where a dense X may hold
missing values (as scikit-learn's trees refuse missing values in a sparse X). A malformed
matrix (indices out of range, an inconsistent ``indptr``) is refused with
:class:`~forestimp.exceptions.DataError` before scipy or the engine reads it: scipy's own
format conversions do not check index bounds and could write out of bounds.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._core import DataError

_INT32_MAX = np.iinfo(np.int32).max


def checked(X: Any, name: str = "X") -> Any:
    """``X`` itself, once :func:`check_structure` has passed it when it is a scipy.sparse
    matrix or array (anything else passes through unread). Every public entry that takes a
    data argument calls it first: no scipy conversion, fancy index or engine call may read
    a malformed index (they do not check its bounds and could write out of bounds)."""
    if sp.issparse(X):
        check_structure(X, name)
    return X


def check_structure(X: Any, name: str = "X") -> None:
    """Raise :class:`DataError` unless the sparse ``X`` (any scipy format, matrix or array)
    is a consistent 2-D matrix: run before any conversion reads it.

    Nothing is converted, copied or modified: the index arrays are read as they are, with
    numpy only (scipy's own ``check_format`` casts and prunes them in place). Checked:
    the shape (two integers in ``[0, 2**63)``); the arrays' types, dimensions, lengths and
    index dtypes (int32 or int64, native byte order: any other is an edit scipy never
    makes); for CSR/CSC/BSR an ``indptr`` that starts at 0, never decreases and ends at the
    number of stored values, and the block size; every index (coordinates, DIA offsets,
    LIL column lists, DOK keys) within the shape. Unsorted or repeated indices are
    consistent (they read as ``toarray()`` does) and pass."""
    try:
        _check_structure(X)
    except _NotMatrix as e:
        raise DataError(f"{name} must be a 2-D sparse matrix, got {e}") from None
    except _Malformed as e:
        raise DataError(f"{name} is a malformed sparse matrix: {e}") from None
    except (ValueError, TypeError, IndexError, AttributeError, OverflowError) as e:
        # Anything that does not even read as a sparse matrix.
        raise DataError(f"{name} is a malformed sparse matrix: {type(e).__name__}: {e}") from e


class _Malformed(Exception):
    """What :func:`_check_structure` found wrong (made a :class:`DataError` by its caller)."""


class _NotMatrix(_Malformed):
    """A consistent sparse array of another dimension than 2 (scipy's 1-D and n-D arrays)."""


_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
_INT64_MAX = int(np.iinfo(np.int64).max)


def _shape(X: Any) -> tuple[int, int]:
    shape = X.shape
    if not isinstance(shape, tuple):
        raise _Malformed(f"its shape {shape!r} is not a tuple")
    if len(shape) != 2:
        raise _NotMatrix(f"a sparse array of shape {shape!r}")
    dims = []
    for d in shape:
        if not isinstance(d, (int, np.integer)) or isinstance(d, (bool, np.bool_)):
            raise _Malformed(f"its shape {shape!r} is not made of integers")
        if not 0 <= int(d) <= _INT64_MAX:
            raise _Malformed(f"its shape {shape!r} is out of range")
        dims.append(int(d))
    return dims[0], dims[1]


def _array(X: Any, attr: str, ndim: int) -> np.ndarray:
    a = getattr(X, attr)
    if not isinstance(a, np.ndarray) or a.ndim != ndim:
        got = f"a {a.ndim}-D array" if isinstance(a, np.ndarray) else type(a).__name__
        raise _Malformed(f"{attr} must be a {ndim}-D numpy array, got {got}")
    return a


def _index(a: Any, what: str, size: int) -> np.ndarray:
    """``a`` checked as a 1-D index array of values in ``[0, size)``."""
    if not isinstance(a, np.ndarray) or a.ndim != 1:
        raise _Malformed(f"{what} must be a 1-D numpy array")
    if a.dtype not in _INDEX_DTYPES:
        raise _Malformed(f"{what} has dtype {a.dtype}, not int32 or int64 (native byte order)")
    if len(a) and (a.min() < 0 or a.max() >= size):
        raise _Malformed(f"{what} holds an index out of range [0, {size})")
    return a


def _compressed(X: Any, major: int, minor: int, nnz: int, what: str) -> None:
    """The ``indptr`` / ``indices`` of a CSR, CSC or BSR matrix with ``nnz`` stored values
    (or blocks) over ``major`` rows/columns (of blocks) of ``minor`` entries."""
    indptr = _array(X, "indptr", 1)
    if indptr.dtype not in _INDEX_DTYPES:
        raise _Malformed(f"indptr has dtype {indptr.dtype}, not int32 or int64")
    if len(indptr) != major + 1:
        raise _Malformed(
            f"indptr has {len(indptr)} entries for {major} {what} ({major + 1} needed)"
        )
    if indptr[0] != 0 or indptr[-1] != nnz:
        raise _Malformed(
            f"indptr must run from 0 to the number of stored values ({nnz}), got "
            f"{indptr[0]}..{indptr[-1]}"
        )
    if not (indptr[1:] >= indptr[:-1]).all():
        raise _Malformed("indptr decreases")
    indices = _array(X, "indices", 1)
    if len(indices) != nnz:
        raise _Malformed(f"indices has {len(indices)} entries for {nnz} stored values")
    _index(indices, "indices", minor)


def _check_structure(X: Any) -> None:
    fmt = getattr(X, "format", None)
    n_rows, n_cols = _shape(X)
    if fmt in ("csr", "csc"):
        data = _array(X, "data", 1)
        major, minor = (n_rows, n_cols) if fmt == "csr" else (n_cols, n_rows)
        _compressed(X, major, minor, len(data), "rows" if fmt == "csr" else "columns")
    elif fmt == "bsr":
        data = _array(X, "data", 3)
        r, c = data.shape[1:]
        if r < 1 or c < 1 or n_rows % r or n_cols % c:
            raise _Malformed(f"blocks of shape {(r, c)} do not tile its shape {(n_rows, n_cols)}")
        _compressed(X, n_rows // r, n_cols // c, data.shape[0], "rows of blocks")
    elif fmt == "coo":
        data = _array(X, "data", 1)
        coords = getattr(X, "coords", None)
        if coords is None:  # scipy < 1.13
            coords = (X.row, X.col)
        if not isinstance(coords, tuple) or len(coords) != 2:
            raise _Malformed("coords must be a pair of index arrays")
        for axis, (idx, size) in enumerate(zip(coords, (n_rows, n_cols), strict=True)):
            what = ("row", "col")[axis]
            _index(idx, what, size)
            if len(idx) != len(data):
                raise _Malformed(f"{what} has {len(idx)} entries for {len(data)} stored values")
    elif fmt == "dia":
        data = _array(X, "data", 2)
        offsets = _array(X, "offsets", 1)
        if offsets.dtype not in _INDEX_DTYPES:
            raise _Malformed(f"offsets has dtype {offsets.dtype}, not int32 or int64")
        if len(offsets) != data.shape[0]:
            raise _Malformed(f"{len(offsets)} offsets for {data.shape[0]} diagonals of data")
        # Outside [-n_rows, n_cols] a diagonal holds nothing, and scipy's conversion casts
        # the offsets to an index dtype sized by the shape (a wrapped offset would write
        # past the values it counted).
        if len(offsets) and (offsets.min() < -n_rows or offsets.max() > n_cols):
            raise _Malformed(f"an offset lies outside [-{n_rows}, {n_cols}]")
        if len(np.unique(offsets)) != len(offsets):
            raise _Malformed("offsets repeat")
    elif fmt == "lil":
        rows, data = _array(X, "rows", 1), _array(X, "data", 1)
        if rows.dtype != object or data.dtype != object:
            raise _Malformed("rows and data must be object arrays of lists")
        if len(rows) != n_rows or len(data) != n_rows:
            raise _Malformed(f"rows and data must hold {n_rows} lists")
        if not all(type(r) is list for r in rows) or not all(type(d) is list for d in data):
            raise _Malformed("rows and data must hold lists")
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n_rows)
        if not np.array_equal(lengths, np.fromiter(map(len, data), np.int64, count=n_rows)):
            raise _Malformed("a row's column list and value list differ in length")
        _integer_index(list(itertools.chain.from_iterable(rows)), "a column", n_cols)
    elif fmt == "dok":
        keys = list(X.keys())
        if not all(type(k) is tuple and len(k) == 2 for k in keys):
            raise _Malformed("its keys must be (row, column) pairs")
        _integer_index([i for i, _ in keys], "a row", n_rows)
        _integer_index([j for _, j in keys], "a column", n_cols)
    else:
        raise _Malformed(f"its format {fmt!r} is not a scipy.sparse format")


def _integer_index(values: list[Any], what: str, size: int) -> None:
    """Python index values (LIL columns, DOK keys) checked as integers in ``[0, size)``."""
    if not all(
        issubclass(t, (int, np.integer)) and not issubclass(t, (bool, np.bool_))
        for t in set(map(type, values))
    ):
        raise _Malformed(f"{what} index is not an integer")
    if values and (min(values) < 0 or max(values) >= size):
        raise _Malformed(f"{what} index is out of range [0, {size})")


def _canonical(X: Any) -> bool:
    """Whether the rows of every column of the CSC ``X`` strictly increase, read from its
    index (not from scipy's cached flag, which an edit of ``X.indices`` leaves stale)."""
    indices, starts = X.indices, X.indptr[1:-1]
    if len(indices) < 2:
        return True
    increasing = np.diff(indices) > 0
    starts = starts[(starts > 0) & (starts < len(indices))]
    increasing[starts - 1] = True  # a column's first row follows another column's last
    return bool(increasing.all())


def engine_csc(X: Any) -> Any:
    """The validated sparse ``X`` (float32 or float64 values, any format) as the engine's
    CSC: canonical (sorted, no duplicates) with int32 indices. Copies only what must
    change."""
    X = X.tocsc()
    if not np.isfinite(X.data).all():
        # Whatever the rule for a dense X: the sparse fit and prediction know no NaN side.
        raise DataError(
            "Input X contains NaN or infinity: a sparse X must hold finite values (missing "
            "values are supported in dense X only)."
        )
    if not _canonical(X):
        X = X.copy()
        X.has_canonical_format = False  # scipy's flag is a cache, maybe stale: recompute
        X.sum_duplicates()
    if X.nnz > _INT32_MAX or max(X.shape) > _INT32_MAX:
        raise DataError(
            "a sparse X with more than 2**31 - 1 stored values, rows or columns is "
            "not supported (its indices do not fit in int32)."
        )
    arrays = (X.data, X.indices, X.indptr)
    narrow_index = X.indices.dtype != np.int32 or X.indptr.dtype != np.int32
    if narrow_index or not all(a.flags.c_contiguous for a in arrays):
        # Set after construction: scipy's constructor would choose the index dtype. The
        # engine reads contiguous arrays (a strided view of an index is copied).
        narrow = sp.csc_matrix(X.shape, dtype=X.dtype)
        narrow.data = np.ascontiguousarray(X.data)
        narrow.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        narrow.indptr = np.ascontiguousarray(X.indptr, dtype=np.int32)
        X = narrow
    return X

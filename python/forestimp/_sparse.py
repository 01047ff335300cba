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

from typing import Any

import numpy as np
import scipy.sparse as sp

from ._core import DataError

_INT32_MAX = np.iinfo(np.int32).max


def check_structure(X: Any) -> None:
    """Raise :class:`DataError` unless the index of the sparse ``X`` is consistent: run
    before any conversion reads it."""
    try:
        if X.format in ("csr", "csc", "bsr"):
            X.check_format(full_check=True)
        elif X.format == "coo":
            X._check()
            n_rows, n_cols = X.shape
            coords = getattr(X, "coords", None) or (X.row, X.col)
            for axis, (idx, size) in enumerate(zip(coords, (n_rows, n_cols), strict=True)):
                if len(idx) and (idx.min() < 0 or idx.max() >= size):
                    raise ValueError(f"axis {axis} index out of range")
    except (ValueError, IndexError, TypeError) as e:
        raise DataError(f"X is a malformed sparse matrix: {e}") from e


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
    if X.indices.dtype != np.int32 or X.indptr.dtype != np.int32:
        if X.nnz > _INT32_MAX or max(X.shape) > _INT32_MAX:
            raise DataError(
                "a sparse X with more than 2**31 - 1 stored values, rows or columns is "
                "not supported (its indices do not fit in int32)."
            )
        # Set after construction: scipy's constructor would choose the index dtype.
        narrow = sp.csc_matrix(X.shape, dtype=X.dtype)
        narrow.data = X.data
        narrow.indices = X.indices.astype(np.int32)
        narrow.indptr = X.indptr.astype(np.int32)
        X = narrow
    return X

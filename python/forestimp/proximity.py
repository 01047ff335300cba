"""Forest proximities and the leaf embedding (Breiman 2001; Louppe 2014, §4.4.3).

The leaf embedding of a row ``x`` is the one-hot vector of the leaves it reaches, one per
tree, over all the nodes of the forest (Eq. 4.40; the columns of internal nodes stay zero).
The proximity of two rows is the fraction of trees in which they share a leaf (Eq. 4.38),
the dot product of their embeddings over the number of trees (Eq. 4.41): a kernel, used to
find neighbours and prototypes, outliers (a low mean proximity to their class), and for MDS
maps of ``1 - proximity``.

Both are sparse products: nothing of size ``n x n`` is formed unless asked. ``proximity``
returns a sparse matrix of the pairs that share a leaf in at least one tree, or with ``k``
each row's ``k`` nearest rows, computed a block of rows at a time, or with ``dense=True``
the full matrix. Counts are integers, so the result is exact and the same for any
``n_jobs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.sparse import csr_matrix

from . import _sparse
from ._core import InvalidParameterError
from ._fitted import checked_model
from ._params import check_int

# Rows of X per block when only the k nearest rows are kept: bounds the memory of the
# block's sparse product (its pairs that share a leaf).
BLOCK_ROWS = 2048


def leaf_embedding(est: Any, X: Any) -> csr_matrix:
    """The one-hot leaf indicators of the rows of ``X`` (Louppe 2014, Eq. 4.40).

    Parameters
    ----------
    est : fitted forestimp forest
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, total number of nodes), dtype float64
        Row ``i`` has a 1 in column ``offset[t] + leaf_t(x_i)`` for each tree ``t``, where
        ``offset`` is the ``n_nodes_ptr`` of ``est.decision_path``.
    """
    return _embedding(checked_model(est, "leaf_embedding"), X)


def _embedding(est: Any, X: Any) -> csr_matrix:
    leaves = est.apply(_sparse.checked(X))
    counts = np.asarray(est.forest_.node_counts(), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    n, m = leaves.shape
    indices = (leaves + offsets).ravel()  # row-major: each row's leaves, tree by tree
    indptr = np.arange(0, n * m + 1, m, dtype=np.int64)
    data = np.ones(n * m)
    return csr_matrix((data, indices, indptr), shape=(n, int(counts.sum())))


def proximity(
    est: Any,
    X: Any,
    X2: Any = None,
    *,
    k: int | None = None,
    dense: bool = False,
    include_self: bool = True,
) -> Any:
    """Proximities between the rows of ``X`` and those of ``X2`` (default: ``X``).

    Parameters
    ----------
    est : fitted forestimp forest
    X, X2 : array-like of shape (n_samples, n_features)
    k : int or None, default=None
        Keep only each row's ``k`` nearest rows of ``X2`` (the largest proximities, ties to
        the lower index); then ``(indices, proximities)``, two arrays of shape
        ``(n_samples, k)``, are returned. A row that shares a leaf with fewer than ``k``
        rows is padded with index -1 and proximity 0.
    dense : bool, default=False
        Return the full ``(n_samples, n_samples_2)`` array instead of a sparse matrix.
    include_self : bool, default=True
        With ``X2=None``, whether a row counts as its own neighbour (its proximity is 1).
        Only used with ``k``.

    Returns
    -------
    scipy.sparse.csr_matrix, ndarray, or (ndarray of int, ndarray of float)
        Proximities in [0, 1]: the fraction of the trees in which the two rows share a leaf.
    """
    est = checked_model(est, "proximity")
    X, X2 = _sparse.checked(X), _sparse.checked(X2, "X2")
    if dense and k is not None:
        raise InvalidParameterError("Pass either k (nearest rows) or dense=True, not both.")
    left = _embedding(est, X)
    right = left if X2 is None else _embedding(est, X2)
    n_trees = est.forest_.n_estimators
    if k is None:
        shared = (left @ right.T).tocsr()
        shared.data /= n_trees  # a true division: the same bits as counting trees by hand
        return shared.toarray() if dense else shared
    k = check_int("k", k, 1)
    indices = np.full((left.shape[0], k), -1, dtype=np.int64)
    values = np.zeros((left.shape[0], k))
    right_t = right.T.tocsc()
    for start in range(0, left.shape[0], BLOCK_ROWS):
        block = (left[start : start + BLOCK_ROWS] @ right_t).tocsr()
        for r in range(block.shape[0]):
            cols = block.indices[block.indptr[r] : block.indptr[r + 1]]
            counts = block.data[block.indptr[r] : block.indptr[r + 1]]
            if X2 is None and not include_self:
                keep = cols != start + r
                cols, counts = cols[keep], counts[keep]
            best = np.lexsort((cols, -counts))[:k]  # most shared leaves, ties to lower index
            indices[start + r, : len(best)] = cols[best]
            values[start + r, : len(best)] = counts[best] / n_trees
    return indices, values

"""Exported thresholds that send every training value the way the forest does.

forestimp's trees compare ``x <= t`` in float64; the scikit-learn trees they export
(``estimators_``, ``to_sklearn()``, and what reads them: shap, skl2onnx, ``plot_tree``)
compare ``float32(x) <= c``. With ``c = float32_cut(t)``, the largest float32 not above
``t``, the two agree on every float32 ``x``; a float64 ``x`` within half a float32 spacing of
``t`` can be rounded across it.

The training values fix where ``c`` must fall. For a split on feature ``f`` at ``t``, let
``a`` be the largest training value of ``f`` not above ``t`` and ``b`` the smallest above it:
every training value goes the same way in both trees exactly when
``float32(a) <= c < float32(b)`` (rounding to float32 keeps order). :func:`corrections`
moves ``float32_cut(t)`` into that interval, to its nearest end, and keeps it a float32, so
ONNX's float32 thresholds agree too. When ``float32(a) == float32(b)`` no threshold can tell
``a`` from ``b`` once cast: the split keeps ``float32_cut(t)`` and is counted as a *tie*.

What a move gives up: the float32 numbers between ``float32_cut(t)`` and the moved ``c`` (at
most the few between a training value's rounding and ``t``) now go the other way from the
forest's. The training rows are the contract; those inputs lie within a float32 spacing of
a training value on the far side of ``t``, where the forest's own split is arbitrary.

At fit, only the moved thresholds are kept: ``(tree, node)`` pairs and their thresholds, with
the count of ties (``_state`` stores them with the model, in pickles and files). A float32 X,
and every column whose values are all float32 numbers, move nothing and are not sorted.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from scipy.sparse import issparse

from . import _params as P

# The attributes holding the moved thresholds, and the number of ties.
NODES = "_float32_nodes"  # (k, 2) int64: tree index, node index
CUTS = "_float32_cuts"  # (k,) float64: the exported threshold of each of those nodes
TIES = "_float32_ties"
ATTRIBUTES = (NODES, CUTS, TIES)


def float32_cut(threshold: np.ndarray) -> np.ndarray:
    """The largest float32 ``c <= t`` of every threshold ``t``, as float64.

    For every float32 ``x``, ``x <= c`` exactly when ``x <= t``: the threshold under which
    scikit-learn (X cast to float32) and ONNX (float32 thresholds) route like forestimp.
    """
    t = np.asarray(threshold, dtype=np.float64)
    with np.errstate(over="ignore"):
        c = t.astype(np.float32)  # nearest float32, maybe above t; +-inf beyond the range
    above = c.astype(np.float64) > t
    c[above] = np.nextafter(c[above], np.float32(-np.inf))
    return c.astype(np.float64)


def _as32(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to float32 (to nearest), as float64."""
    with np.errstate(over="ignore"):
        return values.astype(np.float32).astype(np.float64)


def _column(X: Any, j: int) -> np.ndarray:
    """Column ``j`` of a dense X, or of a CSC matrix with its implicit zeros as one 0."""
    if not issparse(X):
        return np.asarray(X[:, j], dtype=np.float64)
    stored = np.asarray(X.data[X.indptr[j] : X.indptr[j + 1]], dtype=np.float64)
    return stored if len(stored) == X.shape[0] else np.append(stored, 0.0)


def corrections(
    forest: Any, X: Any, first_tree: int = 0, n_jobs: int | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """The thresholds of the trees of ``forest`` (a ``Forest``, or a ``Booster``: its trees
    in ``tree_arrays`` order) that move (module doc) on the training data ``X``:
    ``(nodes, cuts, ties)`` in tree and node order, tree indices counted from
    ``first_tree``; the columns are shared out over ``n_jobs`` threads."""
    no_moves = (np.empty((0, 2), dtype=np.int64), np.empty(0), 0)
    if not issparse(X) and np.asarray(X).dtype == np.float32:
        return no_moves
    n_trees = getattr(forest, "n_estimators", None)
    if n_trees is None:
        n_trees = forest.n_rounds * forest.trees_per_round
    splits = []  # (tree, node, feature, threshold) of every finite split
    for i in range(n_trees):
        arrays = forest.tree_arrays(i)
        t = arrays["threshold"]
        node = np.flatnonzero((arrays["children_left"] >= 0) & np.isfinite(t))
        tree = np.full(len(node), first_tree + i, dtype=np.int64)
        splits.append((tree, node, arrays["feature"][node].astype(np.int64), t[node]))
    tree, node, feature, t = (np.concatenate(part) for part in zip(*splits, strict=True))
    if not len(t):
        return no_moves
    # Grouped by feature: each column is read and sorted once.
    order = np.argsort(feature, kind="stable")
    tree, node, feature, t = tree[order], node[order], feature[order], t[order]
    columns, starts = np.unique(feature, return_index=True)
    bounds = [*starts, len(t)]
    if issparse(X):
        X = X.tocsc()
    cut = float32_cut(t)
    pieces = [
        (int(j), slice(a, b)) for j, a, b in zip(columns, bounds[:-1], bounds[1:], strict=True)
    ]
    with ThreadPoolExecutor(max(1, min(P.thread_count(n_jobs), len(pieces)))) as pool:
        moved = list(
            pool.map(lambda piece: _moved(X, piece[0], t[piece[1]], cut[piece[1]]), pieces)
        )
    keep = np.concatenate(
        [piece.start + at for (_, piece), (at, _, _) in zip(pieces, moved, strict=True)]
    )
    cuts = np.concatenate([c for _, c, _ in moved])
    ties = sum(n for _, _, n in moved)
    back = np.lexsort((node[keep], tree[keep]))  # in tree, then node order
    return np.stack([tree[keep][back], node[keep][back]], axis=1), cuts[back], ties


def _moved(X: Any, j: int, t: np.ndarray, cut: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """For the thresholds ``t`` of column ``j`` and their ``float32_cut``: the
    positions whose exported threshold moves, those thresholds, and the number of ties."""
    none = (np.empty(0, dtype=np.int64), np.empty(0), 0)
    values = _column(X, j)
    values = values[~np.isnan(values)]
    if np.array_equal(_as32(values), values):
        return none  # float32 numbers: float32_cut is exact
    grid = np.sort(values)
    right = np.searchsorted(grid, t, side="right")  # grid[right - 1] <= t < grid[right]
    at = np.flatnonzero((right > 0) & (right < len(grid)))
    low, high = _as32(grid[right[at] - 1]), _as32(grid[right[at]])
    c = np.maximum(cut[at], low)
    over = c >= high
    c[over] = np.nextafter(high[over].astype(np.float32), np.float32(-np.inf))
    tie = low == high
    c[tie] = cut[at][tie]
    move = c != cut[at]
    return at[move], c[move], int(tie.sum())


def tree_cuts(est: Any, index: int, threshold: np.ndarray) -> np.ndarray:
    """The exported thresholds of tree ``index`` of ``est`` (its float64 ``threshold``
    array): ``float32_cut``, with the moved ones of the fit put in."""
    out = float32_cut(threshold)
    nodes = getattr(est, NODES, None)
    if nodes is not None and len(nodes):
        mine = nodes[:, 0] == index
        out[nodes[mine, 1]] = getattr(est, CUTS)[mine]
    return out


def record(est: Any, forest: Any, X: Any, first_tree: int, kept: Any = None) -> None:
    """Sets ``est``'s moved thresholds for the trees of ``forest`` grown on ``X`` (tree
    indices from ``first_tree``), after those of ``kept`` (an earlier fit's estimator
    state, for a warm start), and the count of ties. Without moved thresholds (a float32
    X, for one) only the count is set."""
    nodes, cuts, ties = corrections(forest, X, first_tree, P.check_n_jobs(est.n_jobs))
    merge([kept or {}, {NODES: nodes, CUTS: cuts, TIES: ties}], est.__dict__)


def merge(states: list[dict[str, Any]], into: dict[str, Any]) -> None:
    """Puts the moved thresholds of ``states`` (fitted states or estimator ``__dict__``s,
    in tree order) together into ``into``: the nodes and thresholds concatenated (left
    out when there are none), the ties summed."""
    for name in ATTRIBUTES:
        into.pop(name, None)
    nodes = [s[NODES] for s in states if NODES in s and len(s[NODES])]
    if nodes:
        into[NODES] = np.concatenate(nodes)
        into[CUTS] = np.concatenate([s[CUTS] for s in states if NODES in s and len(s[NODES])])
    into[TIES] = sum(int(s.get(TIES, 0)) for s in states)

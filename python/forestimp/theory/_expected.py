"""Exact expected MDI of an infinite forest of trees grown on a finite support.

Where no closed form exists — K > 1 (masking, Louppe 2014 §6.4.3) or Extra-Trees binary
splits (§7.2.3, Example 5.2 of Sutera's PhD) — the expectation over the forest's randomness
is still a finite sum: enumerate every node a tree can reach, every candidate subset it can
draw, every threshold it can cut, weight each by its probability and add p(t) Δi(t) to the
chosen variable (Louppe 2014 digest, Appendix A.2):

    E[Imp(X_m)] = Σ_t P(t is reached) Σ_{S} P(S) Σ_{cuts} P(cuts) 1(best split is on X_m)
                  p(t) Δi(t)

Invariant: the probabilities over the subsets S, the cuts and the tie-breaks of a node sum to
1, so every tree that splits until leaves are pure (or have nothing to split) still satisfies
the sum rule Σ_m E[Imp(X_m)] = i(Y) − Σ_leaves p(t) i(t) (Thm 6.2). Nodes are memoized on
(row set, pool), so the cost is the number of distinct nodes, not of trees.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np

from ._common import check_problem, group_impurity

CANDIDATES = ("unused", "non_constant")
SPLITS = ("multiway", "random_binary")
_TIE = 1e-12  # gains this close are exact ties (e.g. LED X2/X5 at the root, both H(0.6))


def _check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


class _Enumerator:
    """Expected weighted impurity decreases of every subtree, memoized per node."""

    def __init__(self, X, y, w, criterion, n_classes, max_features, candidates, splits):
        self.X, self.y, self.w = X, y, w
        self.criterion, self.n_classes = criterion, n_classes
        self.k, self.candidates, self.splits = max_features, candidates, splits
        self.p = X.shape[1]
        self.memo: dict = {}

    def impurity(self, rows: np.ndarray) -> float:
        """p(t) i(t): the node's probability mass times its impurity."""
        groups = np.zeros(len(rows), dtype=np.int64)
        _, wi = group_impurity(
            groups, 1, self.y[rows], self.w[rows], self.criterion, self.n_classes
        )
        return float(wi[0])

    def pure(self, rows: np.ndarray) -> bool:
        return bool((self.y[rows] == self.y[rows[0]]).all())

    def outcomes(self, rows: np.ndarray, j: int):
        """(probability, children) of the splits of the node on X_j.

        Multiway: one child per value present. Random binary (Extra-Trees): threshold
        uniform in [min, max), so the cut between consecutive distinct values v_i < v_{i+1}
        has probability (v_{i+1} − v_i) / (max − min). A constant X_j (possible only with
        ``candidates="unused"``) passes the node through unchanged.
        """
        x = self.X[rows, j]
        values = np.unique(x)
        if len(values) == 1:
            return [(1.0, [rows])]
        if self.splits == "multiway":
            return [(1.0, [rows[x == v] for v in values])]
        span = float(values[-1] - values[0])
        return [
            (float(hi - lo) / span, [rows[x <= lo], rows[x > lo]])
            for lo, hi in zip(values[:-1], values[1:], strict=True)
        ]

    def solve(self, rows: np.ndarray, used: int) -> np.ndarray:
        """Expected Σ p(t) Δi(t) per variable over the subtree rooted at this node."""
        key: bytes | tuple[bytes, int]
        if self.candidates == "unused":
            key = (rows.tobytes(), used)
        else:
            key = rows.tobytes()
        found = self.memo.get(key)
        if found is not None:
            return found
        total = np.zeros(self.p)
        if not self.pure(rows):
            if self.candidates == "unused":
                pool = [j for j in range(self.p) if not used >> j & 1]
            else:
                pool = [j for j in range(self.p) if (self.X[rows, j] != self.X[rows[0], j]).any()]
            if pool:
                total = self._split(rows, used, pool)
        self.memo[key] = total
        return total

    def _split(self, rows, used, pool) -> np.ndarray:
        parent = self.impurity(rows)
        # For each candidate variable and cut: its weighted decrease and the expected
        # importances of the subtree it produces.
        options = {}
        for j in pool:
            opts = []
            for prob, children in self.outcomes(rows, j):
                gain = parent - sum(self.impurity(c) for c in children)
                value = np.zeros(self.p)
                value[j] += gain
                for c in children:
                    value += self.solve(c, used | 1 << j)
                opts.append((prob, gain, value))
            options[j] = opts
        size = min(self.k, len(pool))
        p_subset = 1.0 / comb(len(pool), size)
        total = np.zeros(self.p)
        for subset in itertools.combinations(pool, size):
            for draw in itertools.product(*(options[j] for j in subset)):
                prob = p_subset * float(np.prod([o[0] for o in draw]))
                best = max(o[1] for o in draw)
                tied = [o for o in draw if o[1] >= best - _TIE]
                for o in tied:
                    total += prob / len(tied) * o[2]
        return total


def expected_importances(
    X,
    y,
    weights=None,
    *,
    max_features=1,
    candidates="unused",
    splits="multiway",
    criterion="entropy",
):
    """Exact expected MDI of an infinite forest of randomized trees grown on the support.

    Each tree is grown on the rows ``X`` with probabilities ``weights`` (the distribution
    itself, no bootstrap). At a node t: draw K = min(``max_features``, |pool|) candidate
    variables uniformly without replacement, cut each (multiway, or one Extra-Trees random
    threshold), split on the candidate with the largest decrease Δi (exact ties broken
    uniformly), recurse; pure nodes and nodes with an empty pool are leaves. The result is

        E[Imp(X_m)] = E[ Σ_{t : v(s_t) = X_m} p(t) Δi(s_t, t) ]   (Louppe 2014, Eq. 6.2)

    computed exactly by enumeration (Louppe 2014 digest, Appendix A.2). With K = 1,
    ``candidates="unused"`` and multiway splits it equals Eq. 6.10
    (:func:`asymptotic_importances`) when every input combination has positive probability.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Support rows, integer-coded; thresholds of binary splits use the codes' values.
    y : array-like of shape (n,)
    weights : array-like of shape (n,), optional
        Row probabilities or multiplicities; uniform when None.
    max_features : int
        K, the number of candidate variables per node (1 = totally randomized).
    candidates : {"unused", "non_constant"}
        The pool K is drawn from: variables not yet split on along the branch (Louppe 2014,
        Def. 6.1; a drawn constant variable passes the node through), or variables
        non-constant in the node (forestimp's Extra-Trees; a used variable can be split again
        with binary splits).
    splits : {"multiway", "random_binary"}
        One child per value, or an Extra-Trees cut: threshold uniform in [min, max), each
        gap between consecutive distinct values chosen with probability ∝ its length.
    criterion : {"entropy", "gini", "variance"}

    Returns
    -------
    ndarray of shape (p,)
        Unnormalized expected importances (bits for entropy).
    """
    _check_choice("candidates", candidates, CANDIDATES)
    _check_choice("splits", splits, SPLITS)
    X, y, w, n_classes, _ = check_problem(X, y, weights, criterion)
    p = X.shape[1]
    if isinstance(max_features, bool) or not isinstance(max_features, (int, np.integer)):
        raise ValueError(f"max_features must be an integer, got {max_features!r}")
    if not 1 <= max_features <= p:
        raise ValueError(f"max_features must be in [1, {p}], got {max_features}")
    enum = _Enumerator(X, y, w, criterion, n_classes, int(max_features), candidates, splits)
    return enum.solve(np.arange(X.shape[0]), 0)

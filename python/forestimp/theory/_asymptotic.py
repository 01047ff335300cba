"""Exact asymptotic MDI of totally randomized trees (Louppe et al. 2013, Thm 1).

For a discrete distribution over inputs ``V = {X_1..X_p}`` and output ``Y``, an infinite
forest of fully developed totally randomized multiway trees grown on an infinite sample gives

    Imp(X_m) = Σ_{k=0}^{p−1} w_k Σ_{B ⊆ V^{-m}, |B| = k} I(X_m; Y | B),
    w_k = 1 / (C(p, k) (p − k))

(Louppe 2014, Thm 6.1, Eq. 6.10; Sutera PhD, Thm 5.3, Eq. 5.2), which sums over m to
``I(X_1..X_p; Y)`` (Thm 6.2). The k-th term is the contribution of interactions of degree k;
trees limited to depth q keep only the terms k < q (Louppe 2014, Prop. 6.6, Eq. 6.37). For any
impurity i, I is replaced by G(Y; X_m | B) = i(Y | B) − i(Y | B, X_m) with
i(Y | B) = Σ_b P(B = b) i(Y | B = b) (Eq. 6.29–6.31). Everything is computed exactly by
enumerating the subsets B, so p ≤ 20.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from ._common import check_problem, compact_columns, group_impurity, joint_codes


@dataclass(frozen=True)
class AsymptoticImportances:
    """Result of :func:`asymptotic_importances` (unnormalized, in the criterion's units)."""

    importances: np.ndarray
    """Imp(X_m), shape (p,); bits for ``criterion="entropy"``."""
    by_degree: np.ndarray
    """Contribution of interaction degree k to Imp(X_m), shape (p, p), indexed [m, k]."""
    mutual_information: float
    """Total impurity decrease i(Y) − i(Y | X_1..X_p); for entropy, I(X_1..X_p; Y) in bits."""
    criterion: str = "entropy"
    """Impurity the importances are measured with."""


class ConditionalImpurity:
    """Memoized population conditional impurity i(Y | X_S), S given as a bitmask."""

    def __init__(self, codes, cards, y, w, criterion, n_classes):
        self.codes, self.cards = codes, cards
        self.y, self.w, self.criterion, self.n_classes = y, w, criterion, n_classes
        self.p = codes.shape[1]
        self._memo: dict[int, float] = {}

    def groups(self, mask: int) -> tuple[np.ndarray, int]:
        """Compact codes of the joint variable X_S and their number."""
        cols = [j for j in range(self.p) if mask >> j & 1]
        _, inv = np.unique(joint_codes(self.codes, self.cards, cols), return_inverse=True)
        inv = inv.ravel()
        return inv, int(inv.max()) + 1

    def __call__(self, mask: int) -> float:
        value = self._memo.get(mask)
        if value is None:
            groups, n_groups = self.groups(mask)
            _, wi = group_impurity(groups, n_groups, self.y, self.w, self.criterion, self.n_classes)
            value = self._memo[mask] = float(wi.sum())
        return value


def degree_weight(p: int, k: int) -> float:
    """w_k = 1 / (C(p, k) (p − k)): probability that a given node at depth k tests X_m
    with ancestors B, |B| = k (Louppe 2014, Eq. 6.13–6.14)."""
    return 1.0 / (comb(p, k) * (p - k))


def check_max_depth(max_depth, p: int) -> int:
    if max_depth is None:
        return p
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)):
        raise ValueError(f"max_depth must be a positive integer or None, got {max_depth!r}")
    if max_depth < 1:
        raise ValueError(f"max_depth must be >= 1, got {max_depth}")
    return min(int(max_depth), p)


def asymptotic_importances(X, y, weights=None, *, criterion="entropy", max_depth=None):
    """Exact infinite-sample, infinite-forest MDI of totally randomized multiway trees.

    Imp(X_m) = Σ_{k<D} w_k Σ_{B ⊆ V^{-m}, |B|=k} Σ_b P(B=b) G(Y; X_m | B=b), with
    w_k = 1 / (C(p,k)(p−k)), G(Y; X_m | B=b) = i(Y|B=b) − E[i(Y|B=b, X_m) | B=b] and
    D = ``max_depth`` (p when None). With entropy G is I(X_m; Y | B=b) and this is Louppe
    et al. (2013) Thm 1 = Louppe (2014) Thm 6.1, Eq. 6.10 = Sutera (PhD) Thm 5.3, Eq. 5.2;
    with a depth limit it is Prop. 6.6, Eq. 6.37 (Sutera Prop. 5.13); for Gini and variance
    it is Eq. 6.31 (Louppe 2014, §6.4.1). Without a depth limit the importances sum to the
    total decrease i(Y) − i(Y | X_1..X_p) (Thm 6.2), which is ``mutual_information``.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Support rows of the input distribution, integer-coded (p ≤ 20).
    y : array-like of shape (n,)
        Output of each row (class labels; numbers for ``"variance"``).
    weights : array-like of shape (n,), optional
        Probability (or any non-negative multiplicity) of each row; uniform when None.
    criterion : {"entropy", "gini", "variance"}
        Impurity; entropy is in bits.
    max_depth : int, optional
        Depth of the trees; keeps the interaction degrees k < max_depth.

    Returns
    -------
    AsymptoticImportances
        ``importances`` (p,), ``by_degree`` (p, p) indexed [m, k], ``mutual_information``
        (the total impurity decrease i(Y) − i(Y|X); I(X;Y) in bits for entropy) and
        ``criterion``.

    Raises
    ------
    ValueError
        On bad shapes, non-integer X, NaN, negative weights, p > 20 or an unknown criterion.
    """
    X, y, w, n_classes, _ = check_problem(X, y, weights, criterion)
    p = X.shape[1]
    depth = check_max_depth(max_depth, p)
    codes, cards = compact_columns(X)
    cond = ConditionalImpurity(codes, cards, y, w, criterion, n_classes)
    by_degree = np.zeros((p, p))
    for mask in range(1 << p):
        k = mask.bit_count()
        if k >= depth:
            continue
        base = cond(mask)
        for m in range(p):
            if not mask >> m & 1:
                by_degree[m, k] += degree_weight(p, k) * (base - cond(mask | 1 << m))
    total = cond(0) - cond((1 << p) - 1)
    return AsymptoticImportances(by_degree.sum(axis=1), by_degree, float(total), criterion)

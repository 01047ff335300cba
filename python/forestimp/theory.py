"""Exact asymptotic importances of totally randomized trees (Louppe et al. 2013, Thm 1).

For a discrete distribution over inputs ``V = {X_1..X_p}`` and output ``Y``, infinitely many
fully grown totally randomized trees grown on infinitely many samples give

    Imp(X_m) = Σ_{k=0}^{p-1} 1 / (C(p, k) (p − k)) Σ_{B ⊆ V^{-m}, |B| = k} I(X_m; Y | B),

which sums over m to ``I(X_1..X_p; Y)`` (Thm 2). The k-th term is the contribution of
interactions of degree k; trees limited to depth q keep only the terms k < q (Louppe 2014,
Prop. 6.6). Everything is computed exactly by enumerating the subsets B (p ≤ 20).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np


@dataclass(frozen=True)
class AsymptoticImportances:
    """Result of :func:`asymptotic_importances`."""

    importances: np.ndarray
    """Imp(X_m) in bits, shape (p,)."""
    by_degree: np.ndarray
    """Contribution of interaction degree k to Imp(X_m), shape (p, p), indexed [m, k]."""
    mutual_information: float
    """I(X_1..X_p; Y) in bits."""


def _entropy(weights: np.ndarray) -> float:
    w = weights[weights > 0]
    return float(-(w * np.log2(w)).sum())


def _joint_entropy(columns: np.ndarray, w: np.ndarray) -> float:
    """Entropy of the joint distribution of the given integer columns (rows weighted)."""
    if columns.shape[1] == 0:
        return 0.0
    _, inverse = np.unique(columns, axis=0, return_inverse=True)
    return _entropy(np.bincount(inverse.ravel(), weights=w))


def asymptotic_importances(X, y, weights=None, *, criterion="entropy", max_depth=None):
    """Exact infinite-sample, infinite-forest MDI of totally randomized trees.

    Parameters
    ----------
    X : array-like of shape (n, p)
        Support rows of the input distribution, integer-coded.
    y : array-like of shape (n,)
        Output of each row.
    weights : array-like of shape (n,), optional
        Probability (or any non-negative multiplicity) of each row; uniform when None.
    criterion : {"entropy"}
        Only Shannon entropy (bits) is supported.
    max_depth : int, optional
        Depth of the trees; keeps the interaction degrees k < max_depth.

    Returns
    -------
    AsymptoticImportances
    """
    if criterion != "entropy":
        raise ValueError(f"only criterion='entropy' is supported, got {criterion!r}")
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError("X must be 2-D (support rows)")
    n, p = X.shape
    if p > 20:
        raise ValueError(f"exact enumeration is exponential in p; p = {p} > 20")
    _, y_codes = np.unique(np.asarray(y), return_inverse=True)
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,) or (w < 0).any() or w.sum() <= 0:
        raise ValueError("weights must be n non-negative numbers with a positive sum")
    w = w / w.sum()
    data = np.column_stack([X, y_codes])
    h_s: dict[int, float] = {}  # H(X_S) keyed by subset bitmask
    h_sy: dict[int, float] = {}  # H(X_S, Y)

    def cond_entropy_y(mask: int) -> float:  # H(Y | X_S)
        if mask not in h_s:
            cols = [j for j in range(p) if mask >> j & 1]
            h_s[mask] = _joint_entropy(data[:, cols], w)
            h_sy[mask] = _joint_entropy(data[:, cols + [p]], w)
        return h_sy[mask] - h_s[mask]

    depth = p if max_depth is None else min(int(max_depth), p)
    by_degree = np.zeros((p, p))
    for mask in range(1 << p):
        k = (mask).bit_count()
        if k >= depth:
            continue
        h_given_b = cond_entropy_y(mask)
        for m in range(p):
            if mask >> m & 1:
                continue
            cmi = h_given_b - cond_entropy_y(mask | 1 << m)
            by_degree[m, k] += cmi / (comb(p, k) * (p - k))
    mi = cond_entropy_y(0) - cond_entropy_y((1 << p) - 1)
    return AsymptoticImportances(by_degree.sum(axis=1), by_degree, float(mi))

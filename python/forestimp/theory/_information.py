"""Entropy and (conditional) mutual information of discrete data, with bias corrections.

All quantities are built from joint entropies of the (possibly multi-column) variables, so the
three estimators share one code path:

* H(Y | X) = H(X, Y) − H(X);
* I(X; Y) = H(X) + H(Y) − H(X, Y);
* I(X; Y | Z) = H(X, Z) + H(Y, Z) − H(X, Y, Z) − H(Z)  (Louppe 2014, Eq. 6.4–6.7).

Estimators of H from counts n_i (N = Σ n_i, k = number of non-empty cells), in nats:

* ``"plugin"``: Ĥ = −Σ (n_i/N) ln(n_i/N);
* ``"miller_madow"``: Ĥ + (k − 1) / (2N), the first-order bias of the plug-in estimator
  (Miller 1955; the (|X|−1)(|Y|−1)/(2N ln 2) bits of Sutera PhD Eq. 5.13 for MI);
* ``"grassberger"``: ln N − (1/N) Σ n_i G(n_i), G(n) = ψ(n) + ½ (−1)^n (ψ((n+1)/2) − ψ(n/2))
  (Grassberger 2003, Eq. 35), which needs integer counts.

Results are divided by ln(base); base 2 gives bits.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma

ESTIMATORS = ("plugin", "miller_madow", "grassberger")


def _as_columns(x, name: str, n: int | None = None) -> np.ndarray:
    """A discrete variable as an (n, d) array; a 1-D array is one column."""
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} rows, expected {n}")
    if np.issubdtype(arr.dtype, np.floating) and not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    if arr.dtype == object:
        raise ValueError(f"{name} must be a numeric or string array, not object")
    return arr


def _counts(columns: list[np.ndarray], weights) -> np.ndarray:
    """Total weight (or count) of each distinct joint value of the given columns."""
    codes = np.zeros(columns[0].shape[0], dtype=np.int64)
    for block in columns:
        for j in range(block.shape[1]):
            _, inv = np.unique(block[:, j], return_inverse=True)
            codes = codes * (int(inv.max()) + 1) + inv.ravel()
            _, codes = np.unique(codes, return_inverse=True)
            codes = codes.ravel()
    cells = np.bincount(codes, weights=weights)
    return cells[cells > 0]


def _check_weights(weights, n: int, estimator: str):
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {ESTIMATORS}, got {estimator!r}")
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative, with a positive sum")
    if estimator == "grassberger" and (w != np.round(w)).any():
        raise ValueError("the Grassberger estimator needs integer counts as weights")
    return w


def _entropy_from_counts(counts: np.ndarray, estimator: str) -> float:
    """Entropy in nats of a table of cell counts (or weights) with the given estimator."""
    total = counts.sum()
    if total <= 0:
        return 0.0
    q = counts / total
    if estimator == "grassberger":
        n = counts
        g = digamma(n) + 0.5 * (-1.0) ** n * (digamma((n + 1) / 2) - digamma(n / 2))
        return float(np.log(total) - (n * g).sum() / total)
    h = float(-(q * np.log(q)).sum())
    if estimator == "miller_madow":
        h += (len(counts) - 1) / (2.0 * total)
    return h


def _joint_entropy(blocks, weights, estimator, base) -> float:
    if not blocks:
        return 0.0
    return _entropy_from_counts(_counts(blocks, weights), estimator) / np.log(base)


def _check_base(base) -> float:
    base = float(base)
    if not np.isfinite(base) or base <= 0 or base == 1:
        raise ValueError(f"base must be positive and != 1, got {base}")
    return base


def entropy(x, *, weights=None, estimator="plugin", base=2):
    """Entropy H(X) of the empirical distribution of ``x`` (Louppe 2014, Eq. 6.4).

    H(X) = −Σ_x p(x) log p(x) with p(x) the weighted frequency of x; see the module docstring
    for the ``"miller_madow"`` (+ (k−1)/(2N) nats) and ``"grassberger"`` corrections.

    Parameters
    ----------
    x : array-like of shape (n,) or (n, d)
        Discrete values; a 2-D array is the joint variable of its columns.
    weights : array-like of shape (n,), optional
        Multiplicity of each row (counts; N = Σ weights). Integer for ``"grassberger"``.
    estimator : {"plugin", "miller_madow", "grassberger"}
    base : float
        Logarithm base; 2 gives bits.

    Returns
    -------
    float
    """
    x = _as_columns(x, "x")
    w = _check_weights(weights, x.shape[0], estimator)
    return _joint_entropy([x], w, estimator, _check_base(base))


def conditional_entropy(y, x, *, weights=None, estimator="plugin", base=2):
    """H(Y | X) = H(X, Y) − H(X) (Louppe 2014, Eq. 6.5); x may be 2-D (joint variables)."""
    y = _as_columns(y, "y")
    x = _as_columns(x, "x", y.shape[0])
    w = _check_weights(weights, y.shape[0], estimator)
    b = _check_base(base)
    return _joint_entropy([x, y], w, estimator, b) - _joint_entropy([x], w, estimator, b)


def mutual_information(x, y, *, weights=None, estimator="plugin", base=2):
    """I(X; Y) = H(X) + H(Y) − H(X, Y) (Louppe 2014, Eq. 6.6); x, y may be 2-D.

    The plug-in value of independent variables has mean ≈ (|X|−1)(|Y|−1) / (2N ln 2) bits
    (Sutera PhD, Eq. 5.13), which the Miller–Madow correction removes to first order.
    """
    x = _as_columns(x, "x")
    y = _as_columns(y, "y", x.shape[0])
    w = _check_weights(weights, x.shape[0], estimator)
    b = _check_base(base)
    hx = _joint_entropy([x], w, estimator, b)
    hy = _joint_entropy([y], w, estimator, b)
    return hx + hy - _joint_entropy([x, y], w, estimator, b)


def conditional_mutual_information(x, y, z, *, weights=None, estimator="plugin", base=2):
    """I(X; Y | Z) = H(X, Z) + H(Y, Z) − H(X, Y, Z) − H(Z) (Louppe 2014, Eq. 6.7).

    x, y and z may be 2-D (joint variables); z with zero columns gives I(X; Y).
    """
    x = _as_columns(x, "x")
    n = x.shape[0]
    y = _as_columns(y, "y", n)
    z = _as_columns(z, "z", n)
    w = _check_weights(weights, n, estimator)
    b = _check_base(base)
    zb = [z] if z.shape[1] else []
    return (
        _joint_entropy([x, *zb], w, estimator, b)
        + _joint_entropy([y, *zb], w, estimator, b)
        - _joint_entropy([x, y, *zb], w, estimator, b)
        - _joint_entropy(zb, w, estimator, b)
    )

"""Input validation and weighted node impurities shared by the exact oracles.

Every oracle sees a discrete distribution as its support rows ``X`` (integer-coded), outputs
``y`` and row probabilities ``w``. This module owns the one place where those are checked
(:func:`check_problem`) and where a node's impurity is evaluated (:func:`group_impurity`), so
that the asymptotic, expected and context oracles agree on the criteria:

* ``"entropy"``: i(t) = −Σ_j p(j|t) log2 p(j|t) (bits, Louppe 2014, Eq. 3.20);
* ``"gini"``: i(t) = Σ_j p(j|t)(1 − p(j|t)) (Eq. 3.21);
* ``"variance"``: i(t) = Σ_{x∈t} w(x)(y(x) − ȳ_t)² / w(t) (Eq. 3.22).

Invariant: the weights returned by :func:`check_problem` are positive and sum to 1 (rows of
zero probability are dropped: they change no probability of the distribution).
"""

from __future__ import annotations

import numpy as np

CRITERIA = ("entropy", "gini", "variance")
MAX_FEATURES_EXACT = 20


def check_criterion(criterion) -> str:
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    return criterion


def check_integer_matrix(X, name="X", *, ndim=2) -> np.ndarray:
    """``X`` as an int64 array; floats are accepted when every value is an integer."""
    arr = np.asarray(X)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.int64)
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64)
    if not np.issubdtype(arr.dtype, np.floating):
        raise ValueError(f"{name} must be integer-coded (numeric), got dtype {arr.dtype}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    if (arr != np.round(arr)).any():
        raise ValueError(f"{name} must be integer-coded; it has non-integer values")
    return arr.astype(np.int64)


def check_weights(weights, n: int) -> np.ndarray:
    """Row probabilities: uniform when None, otherwise normalized non-negative multiplicities."""
    if weights is None:
        return np.full(n, 1.0 / n) if n else np.zeros(0)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},), got {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights contain NaN or infinite values")
    if (w < 0).any():
        raise ValueError("weights must be non-negative")
    total = w.sum()
    if total <= 0:
        raise ValueError("weights must have a positive sum")
    return w / total


def check_output(y, n: int, criterion: str) -> tuple[np.ndarray, int]:
    """Class codes 0..J−1 (entropy, Gini) or float values (variance), and J (0 for variance)."""
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"y must be 1-D with {n} values, got shape {arr.shape}")
    if criterion == "variance":
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise ValueError("criterion='variance' needs a numeric y")
        values = arr.astype(float)
        if not np.isfinite(values).all():
            raise ValueError("y contains NaN or infinite values")
        return values, 0
    if np.issubdtype(arr.dtype, np.floating) and not np.isfinite(arr).all():
        raise ValueError("y contains NaN or infinite values")
    classes, codes = np.unique(arr, return_inverse=True)
    return codes.ravel().astype(np.int64), len(classes)


def check_problem(X, y, weights, criterion, *, max_p=MAX_FEATURES_EXACT):
    """Validate a discrete problem; returns ``(X, y, w, n_classes, keep)``.

    ``keep`` is the boolean mask of the rows kept (positive probability), so callers can
    filter companion arrays (a context) the same way.
    """
    criterion = check_criterion(criterion)
    X = check_integer_matrix(X)
    n, p = X.shape
    if n == 0:
        raise ValueError("X has no rows")
    if p == 0:
        raise ValueError("X has no columns")
    if p > max_p:
        raise ValueError(f"exact enumeration is exponential in p; p = {p} > {max_p}")
    y, n_classes = check_output(y, n, criterion)
    w = check_weights(weights, n)
    keep = w > 0
    if not keep.all():
        X, y, w = X[keep], y[keep], w[keep]
        if criterion != "variance":
            # Re-code the classes so that absent ones do not count.
            _, y = np.unique(y, return_inverse=True)
            y = y.ravel()
            n_classes = int(y.max()) + 1
    return X, y, w, n_classes, keep


def compact_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column re-coded to 0..c_j − 1; returns the codes and the cardinalities c_j."""
    codes = np.empty_like(X)
    cards = np.empty(X.shape[1], dtype=np.int64)
    for j in range(X.shape[1]):
        values, inv = np.unique(X[:, j], return_inverse=True)
        codes[:, j] = inv.ravel()
        cards[j] = len(values)
    return codes, cards


def joint_codes(codes: np.ndarray, cards: np.ndarray, cols) -> np.ndarray:
    """One code per distinct value of the joint variable ``X_cols`` (0 for every row if empty).

    Codes are mixed-radix and re-compacted before they could overflow int64.
    """
    out = np.zeros(codes.shape[0], dtype=np.int64)
    span = 1
    for j in cols:
        c = int(cards[j])
        if span * c >= 1 << 62:
            _, out = np.unique(out, return_inverse=True)
            out = out.ravel().astype(np.int64)
            span = int(out.max()) + 1
        out = out * c + codes[:, j]
        span *= c
    return out


def group_impurity(groups, n_groups, y, w, criterion, n_classes):
    """Per group g: the mass W_g = Σ_{x∈g} w(x) and W_g · i(Y | g).

    Summed over groups, Σ_g W_g i(Y|g) is the population conditional impurity
    i(Y | G) = Σ_g P(G = g) i(Y | G = g) (Louppe 2014, Eq. 6.29).
    """
    mass = np.bincount(groups, weights=w, minlength=n_groups)
    if criterion == "variance":
        s1 = np.bincount(groups, weights=w * y, minlength=n_groups)
        mean = np.divide(s1, mass, out=np.zeros_like(s1), where=mass > 0)
        # Two passes (mean, then squared deviations) so the oracle keeps full precision.
        dev = y - mean[groups]
        return mass, np.bincount(groups, weights=w * dev * dev, minlength=n_groups)
    table = np.bincount(groups * n_classes + y, weights=w, minlength=n_groups * n_classes)
    table = table.reshape(n_groups, n_classes)
    denom = np.where(mass > 0, mass, 1.0)[:, None]
    if criterion == "gini":
        return mass, mass - (table * table / denom).sum(axis=1)
    q = table / denom
    logs = np.log2(np.where(table > 0, q, 1.0))
    return mass, -(table * logs).sum(axis=1)

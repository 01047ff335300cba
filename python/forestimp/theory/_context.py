"""Exact context-dependent importance scores (Sutera PhD, ch. 6, §30).

A context X_c ∉ V is observed next to the inputs. Every score below is the asymptotic value
of a statistic of one forest of totally randomized trees grown on V (the context excluded),
so all share the weights w_k = 1 / (C(p,k)(p−k)) of Eq. 6.10 and the **global** P(B = b):

* Imp^|(X_m | x_c) = Σ_k w_k Σ_{|B|=k} Σ_b P(B=b) |G(b) − G_c(b)|       (Eq. 6.10–6.11)
* Imp^Δ(X_m | x_c) = Σ_k w_k Σ_{|B|=k} Σ_b P(B=b) (G(b) − G_c(b))       (Eq. 6.12)
* Imp^Δ(X_m | X_c) = Σ_k w_k Σ_{|B|=k} [G(Y; X_m | B) − G(Y; X_m | B, X_c)]

with G(b) = G(Y; X_m | B=b) and G_c(b) = G(Y; X_m | B=b, X_c=x_c) the impurity decreases
(I(Y; X_m | ·) for entropy) on the rows of the node, respectively the rows of the node that
have the context value. Invariant: a node b with no row of context x_c follows the documented
``empty`` convention — G_c(b) := 0 (``"zero"``, which reproduces Table 6.3) or the term is
dropped (``"skip"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._asymptotic import ConditionalImpurity, asymptotic_importances, degree_weight
from ._common import check_problem, compact_columns, group_impurity

EMPTY = ("zero", "skip")


@dataclass(frozen=True)
class ContextImportances:
    """Result of :func:`context_importances`; columns of the (p, n_ctx) arrays follow
    ``contexts``."""

    contexts: np.ndarray
    """The context values x_c, sorted, shape (n_ctx,)."""
    importances: np.ndarray
    """Imp(X_m) on the whole distribution, shape (p,) (Eq. 6.7)."""
    per_context: np.ndarray
    """Naive Imp(X_m | X_c = x_c): Eq. 6.10 on the rows of context x_c, shape (p, n_ctx)."""
    absolute: np.ndarray
    """Imp^|(X_m | X_c = x_c), shape (p, n_ctx) (Eq. 6.10–6.11)."""
    signed: np.ndarray
    """Imp^Δ(X_m | X_c = x_c), shape (p, n_ctx) (Eq. 6.12); < 0: complementary."""
    global_signed: np.ndarray
    """Imp^Δ(X_m | X_c), shape (p,)."""
    labels: np.ndarray
    """Per (m, x_c): "independent", "complementary", "redundant", "irrelevant" or
    "uncharacterised" (Thm 6.2–6.3), shape (p, n_ctx)."""
    criterion: str = "entropy"


def _node_gains(groups, n_groups, child, n_child, parent_of_child, y, w, crit, n_classes):
    """Per node b: its mass P(B=b) and the decrease G(Y; X_m | B=b) (0 where P(b) = 0)."""
    mass, wi = group_impurity(groups, n_groups, y, w, crit, n_classes)
    _, wi_child = group_impurity(child, n_child, y, w, crit, n_classes)
    weighted = wi - np.bincount(parent_of_child, weights=wi_child, minlength=n_groups)
    gain = np.divide(weighted, mass, out=np.zeros_like(weighted), where=mass > 0)
    return mass, gain


def _label(absolute, signed, imp, tol) -> str:
    """Thm 6.2 (Imp^| = 0 ⇔ independent) and Thm 6.3 (|Imp^Δ| = Imp^| ⇒ the sign tells)."""
    if absolute <= tol:
        return "independent"
    if abs(abs(signed) - absolute) > tol:
        return "uncharacterised"
    if signed < 0:
        return "complementary"
    return "irrelevant" if abs(absolute - imp) <= tol else "redundant"


def context_importances(
    X, y, context, weights=None, *, criterion="entropy", empty="zero", tol=1e-9
):
    """Exact context-dependent importances of totally randomized trees (Sutera PhD, ch. 6).

    For every input X_m and context value x_c (formulas in the module docstring; Sutera PhD
    Eq. 6.7, 6.10–6.12, Thm 6.2–6.3):

    * ``importances``: Imp(X_m) = Σ_k w_k Σ_B Σ_b P(B=b) G(Y; X_m | B=b);
    * ``per_context``: the naive Imp(X_m | X_c=x_c) = Σ_k w_k Σ_B Σ_b P(B=b | x_c)
      G(Y; X_m | B=b, X_c=x_c), i.e. Eq. 6.10 on the rows with that context;
    * ``absolute`` Imp^|, ``signed`` Imp^Δ and ``global_signed`` Imp^Δ(X_m | X_c);
    * ``labels``: "independent" if Imp^| ≤ tol; otherwise, if |Imp^Δ| = Imp^| (within tol),
      "complementary" when Imp^Δ < 0, else "irrelevant" when also Imp^| = Imp, else
      "redundant"; otherwise "uncharacterised".

    Parameters
    ----------
    X : array-like of shape (n, p)
        Support rows of the inputs V (context excluded), integer-coded.
    y : array-like of shape (n,)
    context : array-like of shape (n,)
        The context value of each row (integer-coded).
    weights : array-like of shape (n,), optional
        Row probabilities or multiplicities; uniform when None.
    criterion : {"entropy", "gini", "variance"}
    empty : {"zero", "skip"}
        A node B=b without rows of context x_c: G(Y; X_m | B=b, X_c=x_c) := 0, so the node
        contributes P(b) G(b) (``"zero"``, reproduces Sutera Table 6.3), or the term is left
        out (``"skip"``).
    tol : float
        Tolerance of the equalities behind ``labels``.

    Returns
    -------
    ContextImportances
    """
    if empty not in EMPTY:
        raise ValueError(f"empty must be one of {EMPTY}, got {empty!r}")
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"tol must be a non-negative number, got {tol}")
    ctx_raw = np.asarray(context)
    n = np.shape(X)[0] if np.ndim(X) == 2 else -1
    if ctx_raw.ndim != 1 or ctx_raw.shape[0] != n:
        raise ValueError(f"context must be 1-D with one value per row of X, got {ctx_raw.shape}")
    X, y, w, n_classes, keep = check_problem(X, y, weights, criterion)
    if np.issubdtype(ctx_raw.dtype, np.floating) and not np.isfinite(ctx_raw).all():
        raise ValueError("context contains NaN or infinite values")
    contexts, ctx = np.unique(ctx_raw[keep], return_inverse=True)
    ctx = ctx.ravel()
    p, n_ctx = X.shape[1], len(contexts)
    codes, cards = compact_columns(np.column_stack([X, ctx]))
    cond = ConditionalImpurity(codes, cards, y, w, criterion, n_classes)
    c_bit = 1 << p
    absolute = np.zeros((p, n_ctx))
    signed = np.zeros((p, n_ctx))
    global_signed = np.zeros(p)
    context_weights = [np.where(ctx == c, w, 0.0) for c in range(n_ctx)]
    for mask in range(1 << p):
        k = mask.bit_count()
        groups, n_groups = cond.groups(mask)
        for m in range(p):
            if mask >> m & 1:
                continue
            wk = degree_weight(p, k)
            child, n_child = cond.groups(mask | 1 << m)
            parent = np.zeros(n_child, dtype=np.int64)
            parent[child] = groups
            mass, gain = _node_gains(
                groups, n_groups, child, n_child, parent, y, w, criterion, n_classes
            )
            for c, w_c in enumerate(context_weights):
                mass_c, gain_c = _node_gains(
                    groups, n_groups, child, n_child, parent, y, w_c, criterion, n_classes
                )
                present = mass_c > 0
                diff = gain - np.where(present, gain_c, 0.0)
                if empty == "skip":
                    diff = np.where(present, diff, 0.0)
                absolute[m, c] += wk * float(mass @ np.abs(diff))
                signed[m, c] += wk * float(mass @ diff)
            with_c = cond(mask | c_bit) - cond(mask | c_bit | 1 << m)
            global_signed[m] += wk * ((cond(mask) - cond(mask | 1 << m)) - with_c)
    full = asymptotic_importances(X, y, w, criterion=criterion)
    per_context = np.zeros((p, n_ctx))
    for c in range(n_ctx):
        rows = ctx == c
        per_context[:, c] = asymptotic_importances(
            X[rows], y[rows], w[rows], criterion=criterion
        ).importances
    labels = np.array(
        [
            [_label(absolute[m, c], signed[m, c], full.importances[m], tol) for c in range(n_ctx)]
            for m in range(p)
        ],
        dtype=object,
    )
    return ContextImportances(
        contexts, full.importances, per_context, absolute, signed, global_signed, labels, criterion
    )

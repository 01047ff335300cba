"""Exact local MDI of totally randomized trees, as Shapley values (Sutera et al. 2021).

For a sample ``x`` of a discrete distribution over ``V = {X_1..X_p}`` and ``Y``, the local
MDI of ``X_m`` in a fully developed totally randomized multiway tree grown on the whole
distribution is ``i(Y | X_B = x_B) − i(Y | X_B = x_B, X_m = x_m)``, where ``B`` is the set
of variables tested above ``X_m`` on ``x``'s path. Along that path the variables come in a
uniformly random order (K = 1), so an infinite forest averages these marginal contributions
over all orders: local MDI is the Shapley value of the game

    v_x(S) = i(Y) − i(Y | X_S = x_S),

the impurity of ``Y`` that knowing ``x``'s values on ``S`` removes (Sutera, Louppe,
Huynh-Thu, Wehenkel & Geurts, NeurIPS 2021). In subsets:

    Imp(X_m; x) = Σ_{B ⊆ V^{-m}, |B| < D} w_{|B|} [i(Y | X_B = x_B) − i(Y | X_B = x_B, X_m = x_m)]

with the weights ``w_k = 1 / (C(p, k)(p − k))`` of :func:`asymptotic_importances` (they are
the Shapley weights ``k!(p−k−1)!/p!``). Averaged over ``x`` with its probability, this is
the global formula of Louppe et al. (2013, Thm 1) term by term; summed over ``m``, it is
``v_x(V) = i(Y) − i(Y | X = x)`` (efficiency).

Invariant: each subset's impurities are computed once; the pass over subsets adds
``+w_{|T|} i(Y | x_T)`` to the variables outside ``T`` and ``−w_{|T|−1} i(Y | x_T)`` to those
inside, which is the sum above regrouped, so no subset's values are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._asymptotic import check_max_depth, degree_weight
from ._common import check_problem, compact_columns, group_impurity, joint_codes


@dataclass(frozen=True)
class LocalAsymptoticImportances:
    """Result of :func:`local_asymptotic_importances` (in the criterion's units)."""

    values: np.ndarray
    """Imp(X_m; x) of every support row ``x``, shape (n_rows, p); bits for entropy."""
    rows: np.ndarray
    """Indices, in the ``X`` given, of the rows of ``values`` (those of positive weight)."""
    total_decrease: np.ndarray
    """``v_x(V) = i(Y) − i(Y | X = x)`` per row, shape (n_rows,): the sum of its values
    without a depth limit."""
    probability: np.ndarray
    """Probability of each row (the normalized weights), shape (n_rows,)."""
    criterion: str = "entropy"
    """Impurity the importances are measured with."""


def local_asymptotic_importances(X, y, weights=None, *, criterion="entropy", max_depth=None):
    """Exact infinite-forest local MDI of totally randomized trees: Shapley values of the
    impurity game ``v_x(S) = i(Y) − i(Y | X_S = x_S)`` (Sutera et al. 2021).

    The oracle of :func:`forestimp.importance.local_mdi` for
    ``TotallyRandomizedTrees*(multiway=True)`` grown on the support rows (``bootstrap=False``),
    as :func:`asymptotic_importances` is the oracle of their MDI; the probability-weighted
    mean of ``values`` over the rows is ``asymptotic_importances(...).importances``.

    This is not TreeSHAP's game: TreeSHAP (:func:`forestimp.importance.shap_values`) takes
    the Shapley value of the model's output ``E[f(x) | x_S]``, signed and in the output's
    units, and sums to ``f(x) − E[f]``; this game values what ``x_S`` tells about ``Y`` (an
    impurity decrease, ≥ 0 in total) and sums to ``i(Y) − i(Y | X = x)``.

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
        Depth of the trees: keeps the subsets ``|B| < max_depth`` (the first ``max_depth``
        variables of each order).

    Returns
    -------
    LocalAsymptoticImportances
        ``values`` (n_rows, p) for the rows of positive weight (their indices in ``rows``),
        ``total_decrease``, ``probability`` and ``criterion``.

    Raises
    ------
    ValueError
        On bad shapes, non-integer X, NaN, negative weights, p > 20 or an unknown criterion.
    """
    X, y, w, n_classes, keep = check_problem(X, y, weights, criterion)
    n, p = X.shape
    depth = check_max_depth(max_depth, p)
    codes, cards = compact_columns(X)

    def row_impurity(cols: list[int]) -> np.ndarray:
        """i(Y | X_cols = x_cols) of every row."""
        _, groups = np.unique(joint_codes(codes, cards, cols), return_inverse=True)
        groups = groups.ravel()
        mass, wi = group_impurity(groups, int(groups.max()) + 1, y, w, criterion, n_classes)
        return (wi / mass)[groups]  # every group holds a support row: mass > 0

    values = np.zeros((n, p))
    for mask in range(1 << p):
        k = mask.bit_count()
        if k > depth:
            continue
        inside = np.array([mask >> j & 1 for j in range(p)], dtype=bool)
        impurity = row_impurity(list(np.flatnonzero(inside)))[:, None]
        if k < depth:
            values[:, ~inside] += degree_weight(p, k) * impurity
        if k > 0:
            values[:, inside] -= degree_weight(p, k - 1) * impurity
    total = row_impurity([]) - row_impurity(list(range(p)))
    return LocalAsymptoticImportances(values, np.flatnonzero(keep), total, w, criterion)

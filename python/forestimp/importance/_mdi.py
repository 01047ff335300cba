"""Mean decrease of impurity of any fitted forest: raw or normalized, per tree, by depth."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .. import _core
from .._params import check_n_jobs


def _forest(est: Any) -> _core.Forest:
    if isinstance(est, _core.Forest):
        return est
    check_is_fitted(est, "forest_")
    return est.forest_


def mdi(
    est: Any, *, normalize: bool = False, per_tree: bool = False, by_depth: bool = False
) -> np.ndarray:
    """Mean decrease of impurity (MDI) of a fitted forest.

    A split node ``t`` of a tree earns ``p(t) Δi(t)`` with ``p(t) = N_t / N`` (weighted, in-bag)
    and ``Δi(t) = i(t) − (N_L/N_t) i(t_L) − (N_R/N_t) i(t_R)``; the raw MDI of ``X_m`` is the
    mean over the M trees of the sum over the nodes splitting on ``X_m`` (Louppe 2014,
    Eq. 6.2), in bits for ``criterion="entropy"``. For fully grown trees whose leaves separate
    all distinct input rows it sums to the empirical mutual information ``I(X; Y)``.

    Parameters
    ----------
    est : fitted forestimp estimator or ``forestimp._core.Forest``
    normalize : bool, default=False
        Without ``by_depth`` or ``per_tree``: scikit-learn's ``feature_importances_`` (each
        tree's vector divided by its sum, trees without a split left out, averaged, divided
        by the sum again). With ``per_tree``: each tree divided by its own total. With
        ``by_depth`` alone: the matrix divided by its grand total. Totals of 0 give zeros.
    per_tree : bool, default=False
        Return every tree's MDI instead of the mean over trees.
    by_depth : bool, default=False
        Split each importance by the depth ``d`` of the nodes that earn it:
        ``Imp_d(X_m) = (1/M) Σ_trees Σ_{t splits on X_m, depth(t) = d} p(t) Δi(t)``; summed
        over ``d`` it is the raw MDI. ``D`` = 1 + the deepest split node of the forest. For
        multiway forests (``multiway=True``) depth is the logical depth, the number of
        variables a node is conditioned on; for fully grown multiway totally randomized trees
        column ``k`` then converges to the degree-``k`` term of Thm 1 of Louppe et al. (2013),
        ``forestimp.theory.asymptotic_importances(...).by_degree[:, k]``.

    Returns
    -------
    ndarray of float64, shape (p,), (n_trees, p) with ``per_tree``, (p, D) with
    ``by_depth``, (n_trees, p, D) with both.
    """
    forest = _forest(est)
    jobs = None if isinstance(est, _core.Forest) else check_n_jobs(est.n_jobs)
    if by_depth:
        by = _core.tree_mdi_by_depth if per_tree else _core.mdi_by_depth
        imp = by(forest, n_jobs=jobs)
    elif per_tree:
        imp = forest.tree_importances(n_jobs=jobs)
    else:
        return forest.importances(bool(normalize), n_jobs=jobs)
    if normalize:
        axes = tuple(range(1, imp.ndim)) if per_tree else tuple(range(imp.ndim))
        total = imp.sum(axis=axes, keepdims=True)
        imp = np.divide(imp, total, out=np.zeros_like(imp), where=total > 0)
    return imp

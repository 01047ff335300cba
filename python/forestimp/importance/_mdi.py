"""Mean decrease of impurity of any fitted forest: raw or normalized, per tree, by depth."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from .._core import InvalidParameterError
from .._fitted import checked_model
from .._params import check_n_jobs
from ._result import Importances, feature_names_of


def _forest(est: Any) -> _core.Forest:
    if isinstance(est, _core.Forest):
        return est
    return checked_model(est, "mdi", boosting=True).forest_


@dataclass(frozen=True, kw_only=True, eq=False)
class MDIImportances(Importances):
    """Result of :func:`mdi`: an :class:`Importances` (draws are trees) and, with
    ``by_depth=True``, the split by node depth.

    Attributes
    ----------
    by_depth : ndarray of shape (n_features, D) or None
        ``Imp_d(X_m)``, see :func:`mdi`.
    by_depth_per_tree : ndarray of shape (n_trees, n_features, D) or None
        The same for every tree.
    """

    by_depth: np.ndarray | None = None
    by_depth_per_tree: np.ndarray | None = None
    by_output: np.ndarray | None = None
    by_output_per_tree: np.ndarray | None = None


def mdi(
    est: Any, *, normalize: bool = False, by_depth: bool = False, by_output: bool = False
) -> MDIImportances:
    """Mean decrease of impurity (MDI) of a fitted forest.

    A split node ``t`` of a tree earns ``p(t) Δi(t)`` with ``p(t) = N_t / N`` (weighted, in-bag)
    and ``Δi(t) = i(t) − (N_L/N_t) i(t_L) − (N_R/N_t) i(t_R)``; the raw MDI of ``X_m`` is the
    mean over the M trees of the sum over the nodes splitting on ``X_m`` (Louppe 2014,
    Eq. 6.2), in bits for ``criterion="entropy"``. For fully grown trees whose leaves separate
    all distinct input rows it sums to the empirical mutual information ``I(X; Y)``.

    Parameters
    ----------
    est : fitted forestimp estimator, ``forestimp._core.Forest`` or ``Booster``
        A gradient-boosting model's draws are its trees (K per round for the multinomial
        loss), each tree's MDI that of the negative gradients it was grown on, over its root
        weight (scikit-learn's ``compute_feature_importances(normalize=False)``); with
        ``normalize`` the mean is scikit-learn's boosting ``feature_importances_`` (the raw
        mean over the trees with a split, divided by its sum), and each tree's column is
        divided by its own total (``docs/boosting.md``). ``by_depth`` is not available.
    normalize : bool, default=False
        ``importances_mean`` is scikit-learn's ``feature_importances_`` (each tree's vector
        divided by its sum, trees without a split left out, averaged, divided by the sum
        again); every tree's column of ``importances`` is divided by its own total; the
        ``by_depth`` matrix by its grand total and each tree's by its own. Totals of 0 give
        zeros.
    by_depth : bool, default=False
        Also split each importance by the depth ``d`` of the nodes that earn it:
        ``Imp_d(X_m) = (1/M) Σ_trees Σ_{t splits on X_m, depth(t) = d} p(t) Δi(t)``; summed
        over ``d`` it is the raw MDI. ``D`` = 1 + the deepest split node of the forest. For
        multiway forests (``multiway=True``) depth is the logical depth, the number of
        variables a node is conditioned on; for fully grown multiway totally randomized trees
        column ``k`` then converges to the degree-``k`` term of Thm 1 of Louppe et al. (2013),
        ``forestimp.theory.asymptotic_importances(...).by_degree[:, k]``.
    by_output : bool, default=False
        Also split each importance by output (multi-output forests, ``docs/multi-output.md``).
        A node's impurity is the mean over the ``m`` outputs, ``i(t) = (1/m) Σ_k i_k(t)``,
        so ``p(t) Δi(t) = Σ_k p(t) Δi_k(t) / m``: ``by_output[k, m']`` is output ``k``'s
        share of the raw MDI of ``X_m'`` and the shares sum over outputs to the raw MDI
        (``m · by_output[k]`` is the MDI of these trees measured by output ``k``'s impurity
        alone). One row for a single-output forest. With ``normalize``, divided by their
        grand total.

    Returns
    -------
    MDIImportances
        ``importances_mean`` (p,), ``importances`` (p, n_trees): every tree's MDI, hence
        ``importances_std`` and ``standard_error`` over trees (``ddof=0``); ``by_depth``
        (p, D) and ``by_depth_per_tree`` (n_trees, p, D) with ``by_depth=True``;
        ``by_output`` (n_outputs, p) and ``by_output_per_tree`` (n_trees, n_outputs, p) with
        ``by_output=True``.
    """
    if hasattr(est, "booster_") or isinstance(est, _core.Booster):
        return _boosting_mdi(est, normalize=normalize, by_depth=by_depth)
    forest = _forest(est)
    jobs = None if isinstance(est, _core.Forest) else check_n_jobs(est.n_jobs)
    per_tree = _normalized(forest.tree_importances(n_jobs=jobs), normalize, (1,))
    depth = depth_trees = None
    if by_depth:
        depth = _normalized(_core.mdi_by_depth(forest, n_jobs=jobs), normalize, (0, 1))
        by_tree = _core.tree_mdi_by_depth(forest, n_jobs=jobs)
        depth_trees = _normalized(by_tree, normalize, (1, 2))
    outputs = outputs_trees = None
    if by_output:
        raw = _core.tree_mdi_by_output(forest, n_jobs=jobs)
        outputs = _normalized(raw.mean(axis=0), normalize, (0, 1))
        outputs_trees = _normalized(raw, normalize, (1, 2))
    return MDIImportances(
        importances_mean=forest.importances(bool(normalize), n_jobs=jobs),
        importances=per_tree.T,
        method="mdi",
        feature_names=feature_names_of(est, forest.n_features),
        draws="trees",
        by_depth=depth,
        by_depth_per_tree=depth_trees,
        by_output=outputs,
        by_output_per_tree=outputs_trees,
    )


def _normalized(imp: np.ndarray, normalize: bool, axes: tuple[int, ...]) -> np.ndarray:
    """``imp`` divided by its sum over ``axes`` when ``normalize`` (sums of 0 give zeros)."""
    if not normalize:
        return imp
    total = imp.sum(axis=axes, keepdims=True)
    return np.divide(imp, total, out=np.zeros_like(imp), where=total > 0)


def _boosting_mdi(est: Any, *, normalize: bool, by_depth: bool) -> MDIImportances:
    """:func:`mdi` of a gradient-boosting model (see its ``est``)."""
    if by_depth:
        raise InvalidParameterError("by_depth=True is not available for gradient boosting.")
    booster: _core.Booster = est if isinstance(est, _core.Booster) else est.booster_
    per_tree = booster.tree_importances()
    if normalize:
        mean = booster.feature_importances()
    else:
        split = booster.node_counts() > 1
        mean = per_tree[split].mean(axis=0) if split.any() else np.zeros(per_tree.shape[1])
    return MDIImportances(
        importances_mean=mean,
        importances=_normalized(per_tree, normalize, (1,)).T,
        method="mdi",
        feature_names=feature_names_of(est, booster.n_features),
        draws="trees",
    )

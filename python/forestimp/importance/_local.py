"""Local (per-sample) mean decrease of impurity."""

from __future__ import annotations

from typing import Any

from .. import _core, _sparse
from .._fitted import checked_model
from .._params import check_n_jobs
from ._result import LocalImportances, feature_names_of, local_result


def local_mdi(est: Any, X: Any, *, n_jobs: int | None = None) -> LocalImportances:
    """Local MDI of every sample (Sutera, Louppe, Huynh-Thu, Wehenkel & Geurts, 2021).

    For a sample ``x`` and a tree, every node ``t`` on ``x``'s path that splits on ``X_m``
    adds ``i(t) - i(t_x)``, the impurity of ``t`` minus that of the child ``x`` goes to::

        Imp(X_m; x) = (1/M) sum_trees sum_{t in path(x), v(t) = m} [i(t) - i(t_x)]

    The mean of the local MDI over a tree's (weighted) training samples is that tree's raw
    MDI, so for forests grown without row sampling the mean over the training rows is
    ``est.mdi_importances_`` exactly. Values are in the criterion's units (bits for
    entropy) and may be negative for a sample sent to a child purer than its parent less
    often than not.

    For a gradient-boosting model (:mod:`forestimp.boosting`) the trees are those grown on
    the negative gradients, ``i`` the weighted variance of those gradients (the impurity of
    its MDI), and the sum over trees is *averaged over the trees with a split* (``M`` = their
    number; every class's tree of a round counts), as ``feature_importances_`` averages them
    before it normalizes. Without subsampling, the (``sample_weight``-weighted) mean over the
    training rows is then ``mdi(est).importances_mean`` (the unnormalized boosting MDI);
    ``feature_importances_`` is that divided by its sum. The learning rate does not enter.

    Parameters
    ----------
    est : fitted forestimp estimator (forest or gradient boosting)
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        A sparse X is read in place (as compressed sparse columns), never densified.
    n_jobs : int, optional
        Threads (default: the estimator's ``n_jobs``).

    Returns
    -------
    LocalImportances
        ``values`` (n_samples, n_features); ``importances_mean`` is their mean over the
        samples (the MDI when ``X`` is the training set of a forest grown without row
        sampling), ``importances`` is ``values.T``.
    """
    est = checked_model(est, "local_mdi", boosting=True)
    X = _sparse.checked(X)
    jobs = check_n_jobs(est.n_jobs if n_jobs is None else n_jobs)
    if hasattr(est, "booster_"):
        X = est._engine_input(X)
        values = _core.local_mdi(est.booster_, X, n_jobs=jobs)
        return local_result(values, "local_mdi", feature_names_of(est, X.shape[1]))
    X = est._engine_input(X, sparse=True)
    values = _core.local_mdi(est.forest_, X, n_jobs=jobs)
    return local_result(values, "local_mdi", feature_names_of(est, X.shape[1]))

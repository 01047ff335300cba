"""Local (per-sample) mean decrease of impurity."""

from __future__ import annotations

from typing import Any

from .. import _core
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

    Parameters
    ----------
    est : fitted forestimp estimator
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
    X = est._engine_input(X, sparse=True)
    jobs = check_n_jobs(est.n_jobs if n_jobs is None else n_jobs)
    values = _core.local_mdi(est.forest_, X, n_jobs=jobs)
    return local_result(values, "local_mdi", feature_names_of(est, X.shape[1]))

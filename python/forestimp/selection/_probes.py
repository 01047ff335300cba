"""Random probes (Stoppiglia et al. 2003): artificial irrelevant columns that a real feature
must beat to count as relevant.

Probe ``k`` is real column ``sources[k]`` read through its own random permutation of the
rows: it keeps that column's distribution (its number of distinct values, which MDI is
biased towards) and loses any link with ``y`` and with the other columns. A model is fitted
on the real columns and the probes together, and each real importance is compared with the
probes' (``threshold``: the best probe).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from ._base import importances_of


@dataclass(frozen=True, kw_only=True, eq=False)
class ProbeImportances:
    """Importances of the real columns and of the probes of one fit.

    Attributes
    ----------
    importances : ndarray of shape (n_features,)
    probes : ndarray of shape (n_probes,)
    sources : ndarray of shape (n_probes,)
        The real column each probe permutes.
    estimator : the model fitted on the real columns followed by the probes.
    """

    importances: np.ndarray
    probes: np.ndarray
    sources: np.ndarray
    estimator: Any

    @property
    def threshold(self) -> float:
        """The best probe's importance: a real column must exceed it."""
        return float(self.probes.max()) if len(self.probes) else -np.inf


def with_probes(X: np.ndarray, n_probes: int, random_state: Any) -> tuple[np.ndarray, np.ndarray]:
    """``X`` followed by ``n_probes`` probe columns, and the source column of each probe.

    Sources are drawn without replacement while there are enough columns, then with."""
    rng = check_random_state(random_state)
    n, p = X.shape
    sources = rng.choice(p, size=n_probes, replace=n_probes > p)
    out = np.empty((n, p + n_probes), dtype=X.dtype, order="F")
    out[:, :p] = X
    for k, j in enumerate(sources):
        out[:, p + k] = X[rng.permutation(n), j]
    return out, sources


def probe_importances(
    est: Any,
    X: np.ndarray,
    y: np.ndarray,
    *,
    n_probes: int,
    importance: str,
    random_state: Any = None,
    n_jobs: int | None = None,
    fit_params: dict[str, Any] | None = None,
) -> ProbeImportances:
    """Fit the unfitted ``est`` on ``X`` with ``n_probes`` probes and return both sets of
    importances (``importance`` as :func:`~forestimp.selection._base.importances_of`).
    ``fit_params`` (e.g. ``sample_weight``: per row, so probes do not change it) go to
    ``est.fit``."""
    rng = check_random_state(random_state)
    p = X.shape[1]
    augmented, sources = with_probes(X, n_probes, rng)
    est.fit(augmented, y, **(fit_params or {}))
    imp = importances_of(est, augmented, y, importance, random_state=rng, n_jobs=n_jobs)
    return ProbeImportances(importances=imp[:p], probes=imp[p:], sources=sources, estimator=est)

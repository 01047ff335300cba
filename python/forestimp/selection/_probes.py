"""Random probes (Stoppiglia et al. 2003): artificial irrelevant columns that a real feature
must beat to count as relevant.

Probe ``k`` is real column ``sources[k]`` read through its own random permutation of the
rows: it keeps that column's distribution (its number of distinct values, which MDI is
biased towards) and loses any link with ``y`` and with the other columns. A model is fitted
on the real columns and the probes together, and each real importance is compared with the
probes' (``threshold``: the best probe; ``threshold_at``: a quantile of the probes' law).
Boruta's shadows are the same thing. For a forestimp forest the probes are virtual
(``Forest.fit(shadows=)``: the engine reads the source column at permuted rows), so X is not
copied; any other model gets a real ``[X, probes]`` matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from .. import _core
from .._base import _as_engine_matrix
from ..importance._permutation_core import _result as permutation_result
from ._base import importances_of, is_forestimp, on_columns

# The measures the engine computes on a forest grown with virtual probes.
VIRTUAL = ("mdi", "permutation")


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

    def threshold_at(self, risk: float, n_tests: int) -> float:
        """The importance an irrelevant column exceeds with probability ``risk / n_tests``,
        and at least the best probe.

        Beating the best of m probes lets each irrelevant column through with probability
        about 1/(m + 1), whatever the importances: too lax when many columns are tested
        (Sequential Random Subspace tests q columns per iteration, and false discoveries
        accumulate). Stoppiglia et al. (2003) instead estimate the law of a probe's
        importance and read the threshold at an accepted risk. Its far tail is what matters.
        Over the probes' 75th percentile ``u``, the k excesses are taken as exponential with
        an unknown scale; averaging over that scale (its posterior given the k excesses, mean
        excess ``m``) gives the Lomax tail ``P(imp > u + x) = P(imp > u) (1 + x / (k m))^-k``,
        which tends to the exponential for many probes and stays prudent for few. Measured on
        the MDI of noise columns next to relevant ones (Extra-Trees classifiers, binary and
        Gaussian columns, 2 000 and 10 000 rows, 30 and 100 probes), it lets through at most
        the stated share down to 1e-5; on a 400-row regression with 40 probes, 1.5 to 2 times
        that share at 1e-3 and 1e-4. A gamma fitted by moments (Eq. 5.14 of the thesis)
        matches the bulk but lets 5 to 15 times too many through. The ``risk`` is shared
        among the ``n_tests`` columns (Bonferroni).
        """
        best = self.threshold
        if len(self.probes) < 4:
            return best
        u = float(np.quantile(self.probes, 0.75))
        excess = self.probes[self.probes > u] - u
        level = risk / max(1, n_tests)
        k = len(excess)
        share = k / len(self.probes)
        if not k or level >= share:
            return best
        spread = k * float(excess.mean())
        return max(best, u + spread * float((share / level) ** (1.0 / k) - 1.0))


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


def shadow_importances(
    est: Any, X: np.ndarray, y: np.ndarray, sw: Any, active: np.ndarray, sources: np.ndarray,
    importance: str, seed: int, *, scaled: bool = False, bins: Any = None,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Grow the forestimp forest ``est`` on the ``active`` columns of X (validated) and the
    virtual shadows of ``sources`` (no copy of X), and return both sets of importances:
    ``"mdi"`` or out-of-bag ``"permutation"`` (``scaled``: divided by its standard error
    over the trees, R Boruta's z-score). ``bins``: :func:`histogram_bins` of X, for many
    such forests."""
    est._fit(X, y, sw, shadows=sources.astype(np.int64), columns=active.astype(np.int64),
             bins=bins)  # fmt: skip
    forest = est.forest_
    if importance == "mdi":
        imp = forest.importances(True, n_jobs=est._jobs())
    else:
        # X was validated once by the caller; only the engine's memory-order rule applies.
        Xe = _as_engine_matrix(X)
        per_rep, _, _ = _core.oob_permutation_importance(
            forest, Xe, est._target_codes(y, len(Xe)), n_repeats=1, seed=seed, n_jobs=est._jobs()
        )
        names = np.array([f"x{j}" for j in range(forest.n_features)])
        imp = permutation_result(per_rep.mean(axis=0).T, names, scaled, method="oob",
                                 draws="trees", baseline_score=None, oob_error=None,
                                 seed=seed).importances_mean  # fmt: skip
    q = len(active)
    return imp[:q], imp[q:]


def histogram_bins(est: Any, X: np.ndarray) -> Any:
    """The histogram codes of X for the unfitted forestimp forest ``est`` (``_core.Bins``),
    made once for the many forests a selection grows on views of X; None unless ``est``
    splits on histograms."""
    if not is_forestimp(est) or est._engine_layout(X.shape[1])[0] != "hist":
        return None
    return _core.Bins(_as_engine_matrix(X), max_bins=est.max_bins, n_jobs=est._jobs())


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
    fit_params = fit_params or {}
    if is_forestimp(est) and importance in VIRTUAL and set(fit_params) <= {"sample_weight"}:
        sources = rng.choice(p, size=n_probes, replace=n_probes > p)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        sw = fit_params.get("sample_weight")
        real, probes = shadow_importances(est, X, y, sw, np.arange(p), sources, importance, seed)
        return ProbeImportances(importances=real, probes=probes, sources=sources, estimator=est)
    augmented, sources = with_probes(X, n_probes, rng)
    est = on_columns(est, np.concatenate([np.arange(p), sources]), p)
    est.fit(augmented, y, **fit_params)
    imp = importances_of(est, augmented, y, importance, random_state=rng, n_jobs=n_jobs)
    return ProbeImportances(importances=imp[:p], probes=imp[p:], sources=sources, estimator=est)

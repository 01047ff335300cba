"""The permutation core: the result of :func:`forestimp.importance.permutation`, and how
draws become it, shared by the forests' measure (``_permutation``) and the boosters'
(``_boosting``).

Both measures import this module and neither imports the other's result code back: the
forests' ``permutation`` calls ``_boosting`` for a booster, and ``_boosting`` builds its
result here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._result import Importances, spread

__all__ = ["PermutationImportance", "held_out_results"]


@dataclass(frozen=True, kw_only=True, eq=False)
class PermutationImportance(Importances):
    """Result of :func:`permutation`: an :class:`Importances` with its draws and score.

    ``importances`` holds one column per tree (``method="oob"``, ``draws="trees"``:
    ``VI_t`` averaged over the repeats; exactly 0 where tree ``t`` never splits on ``m`` or
    has no out-of-bag row), per boosting round (``method="oob"``, ``draws="rounds"``, a
    gradient-boosting model) or per repeat (``"held_out"``, ``draws="repeats"``).
    ``importances_std`` and ``standard_error`` are over those draws (``ddof=0``).

    Attributes
    ----------
    raw_importances_mean : ndarray of shape (n_features,)
        The unscaled mean; ``importances_mean`` is ``raw_importances_mean /
        standard_error`` with ``scaled=True`` (0 where the standard error is 0), else equal.
    baseline_score : float or None
        Held-out: the score of the unpermuted predictions. OOB: None.
    oob_error : ndarray of shape (n_estimators,) or None
        OOB: each tree's ``err_t(O_t)`` (NaN without out-of-bag rows), or each boosting
        round's out-of-bag loss ``L_t`` (``oob_scores_``). Held-out: None.
    scaled : bool
    seed : int
        Engine seed of the permutations (rebuild them with
        ``forestimp._core.permutation_indices``).
    """

    raw_importances_mean: np.ndarray
    baseline_score: float | None
    oob_error: np.ndarray | None
    scaled: bool
    seed: int


def _result(
    imp: np.ndarray, names: np.ndarray, scaled: bool, **fields: Any
) -> PermutationImportance:
    """The result of draws ``imp`` (p, n_draws); the mean is scaled by the package's SE."""
    raw = imp.mean(axis=1)
    mean = raw
    if scaled:
        se = spread(imp, len(raw))[1]
        mean = np.divide(raw, se, out=np.zeros_like(raw), where=se > 0)
    return PermutationImportance(
        importances_mean=mean,
        importances=imp,
        feature_names=names,
        raw_importances_mean=raw,
        scaled=bool(scaled),
        **fields,
    )


def held_out_results(
    imp: dict, baseline: dict, multi: bool, names: np.ndarray, scaled: bool, seed: int
) -> PermutationImportance | dict[str, PermutationImportance]:
    """The held-out result of draws ``imp[metric]`` (p, n_repeats) against ``baseline``:
    one result, or one per metric name when the scoring named several (``multi``) or
    is a callable returning a dict (as scikit-learn's ``permutation_importance``)."""
    results = {
        k: _result(
            imp[k],
            names,
            scaled,
            method="held_out",
            draws="repeats",
            baseline_score=baseline[k],
            oob_error=None,
            seed=seed,
        )
        for k in imp
    }
    if multi or None not in results:
        return {str(k): v for k, v in results.items()}
    return results[None]

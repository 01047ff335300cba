"""The arithmetic of recursive feature elimination, apart from any model: the size schedule,
the per-block removals of Subset-RFE, the standard error of an out-of-bag score and
Alonso Liso's choice of the smallest subset within ``alpha`` standard deviations of the best.

Each rule is a pure function so that the tests check it against the printed tables of
Alonso Liso (2016, Tables 4.3.2-4.3.13) without fitting anything.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import InvalidParameterError

# Values of RFE's ``alpha_std``: which standard deviation ``alpha`` counts in.
ALPHA_STDS = ("path", "score")


def next_size(n: int, k: int, step: float | int, anchor: tuple[int, int], min_features: int) -> int:
    """The number of columns kept after step ``k``, which saw ``n`` of them.

    A float ``step`` keeps ``floor(n0 * (1 - step) ** (k + 1 - k0))`` where ``anchor`` is
    ``(n0, k0)``: the geometric schedule of Díaz-Uriarte & Alvarez de Andrés (2006) anchored at
    the ``n0`` columns of step ``k0`` (step 0 for plain RFE), which is how Alonso Liso's
    sizes come out (``floor(P * 0.8**k)``: 1080, 864, 691, 552, 442, ... of his Table 4.3.4);
    anchoring at the start rather than rounding step by step keeps the truncations from
    accumulating. An int ``step`` removes that many. At least one column goes, and never
    fewer than ``min_features`` stay.
    """
    if isinstance(step, float):
        n0, k0 = anchor
        target = math.floor(n0 * (1.0 - step) ** (k + 1 - k0))
    else:
        target = n - step
    return max(min_features, min(n - 1, target))


def block_drops(sizes: Sequence[int], step: float | int, max_total: int) -> list[int]:
    """How many columns each block of Subset-RFE removes (Pan et al. 2009).

    A block of ``s`` columns removes ``int(step * s)`` (float ``step``, Alonso Liso's rule:
    his sizes 1080, 880, 717 with 54-column blocks at ``step=0.2``) or ``min(step, s - 1)``
    (int ``step``). The first block is a full one, so when every block rounds down to zero
    it removes one column (the path must move on); when the blocks together would go below
    the floor, the last blocks give up removals until exactly ``max_total`` go.
    """
    if isinstance(step, float):
        drops = [int(step * s) for s in sizes]
    else:
        drops = [min(step, s - 1) for s in sizes]
    if sum(drops) == 0:
        drops[0] = 1
    excess = sum(drops) - max_total
    for b in reversed(range(len(drops))):
        if excess <= 0:
            break
        give = min(excess, drops[b])
        drops[b] -= give
        excess -= give
    return drops


def oob_standard_error(est: Any, y: np.ndarray) -> float:
    """Standard error of a fitted forest's default ``oob_score_`` over its out-of-bag rows.

    Accuracy: ``sqrt(a (1 - a) / n)``, the spread of the mean of ``n`` right/wrong outcomes.
    R²: ``std(e²) / (sqrt(n) var(y))``, the spread of the mean squared out-of-bag residual
    ``e`` with ``var(y)`` held fixed (the delta method on ``1 - mean(e²) / var(y)``). NaN when
    the forest exposes no out-of-bag predictions or scores with a custom function.
    """
    if callable(getattr(est, "oob_score", None)):
        return math.nan
    decision = getattr(est, "oob_decision_function_", None)
    if decision is not None and hasattr(est, "classes_"):
        decision = np.asarray(decision)
        seen = np.all(np.isfinite(decision), axis=1)
        right = est.classes_[np.argmax(decision[seen], axis=1)] == y[seen]
        return float(right.std() / math.sqrt(max(1, int(seen.sum()))))
    prediction = getattr(est, "oob_prediction_", None)
    if prediction is not None:
        prediction = np.asarray(prediction, dtype=np.float64).reshape(len(y))
        seen = np.isfinite(prediction)
        var = float(np.var(y[seen]))
        if var == 0.0:
            return math.nan
        sq = (y[seen] - prediction[seen]) ** 2
        return float(sq.std() / (math.sqrt(max(1, int(seen.sum()))) * var))
    return math.nan


def alpha_choice(
    n_features: Sequence[int],
    scores: Sequence[float],
    score_std: Sequence[float],
    alpha: float,
    alpha_std: str = "path",
) -> int:
    """Index of the step whose subset RFE selects: the fewest columns among the steps whose
    score is within ``alpha`` standard deviations of the best score (Alonso Liso 2016,
    §3.2.4.5.1, after Díaz-Uriarte & Alvarez de Andrés; scores are "greater is better").

    ``alpha_std="path"`` is the standard deviation (``ddof=0``) of the scores over the whole
    path, Alonso Liso's "Perc std" column: ``(best - score_k) / std(path) <= alpha``
    reproduces his Tables 4.3.2-4.3.5. ``"score"`` is the best step's own ``score_std`` (the
    spread over CV folds, or the out-of-bag standard error): Breiman's one-standard-error
    rule at ``alpha=1``. ``alpha=0`` keeps the best score (its smallest subset on ties).
    """
    s = np.asarray(scores, dtype=np.float64)
    sizes = np.asarray(n_features)
    best = int(np.argmax(s))
    if alpha_std == "path":
        spread = float(s.std())
    else:
        spread = float(np.asarray(score_std, dtype=np.float64)[best])
        if not np.isfinite(spread):
            if alpha != 0:
                raise InvalidParameterError(
                    "alpha_std='score' needs the standard deviation of each step's score; "
                    "this model gives none (use alpha_std='path' or cv=...)."
                )
            spread = 0.0
    within = np.flatnonzero(s >= s[best] - alpha * spread)
    return int(within[np.argmin(sizes[within])])

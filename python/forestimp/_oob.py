"""The out-of-bag score of a forest over the training rows that have an out-of-bag prediction.

A row drawn into every tree's sample has none (likely with few trees or few rows: with one
bootstrap tree about 37% of the rows have one, and on 2 rows often none). scikit-learn warns
"Some inputs do not have OOB scores" and scores such rows with a prediction of 0, a number
that means nothing; forestimp gives them NaN predictions and leaves them out of the score.
When no row has one there is nothing to score: scikit-learn still returns a number, here
``oob_score_`` is NaN with a warning that says why, rather than a metric's error on an
empty array (or a made-up value). Every estimator that sets ``oob_score_`` scores through
:func:`score`. A boosting round whose subsample drew every row has a NaN out-of-bag loss
(:func:`warn_rounds_without_rows`; scikit-learn raises a ZeroDivisionError there).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

SOME_MISSING = (
    "Some inputs do not have OOB scores. This probably means too few trees were used to "
    "compute any reliable OOB estimates; they are left out of oob_score_."
)
NONE_SEEN = (
    "No input has an OOB score: every training row was drawn into every tree's sample "
    "(too few trees or too few rows), so oob_score_ is NaN. Use more trees or more rows."
)


def score(
    metric: Callable[[Any, Any], Any],
    y_true: np.ndarray,
    y_pred: Callable[[np.ndarray], np.ndarray],
    seen: np.ndarray,
    stacklevel: int = 2,
) -> float:
    """``metric(y_true[seen], y_pred(seen))``, warning when ``seen`` misses rows; NaN,
    with a warning, when it holds none. ``y_pred`` is called only with rows to score, so
    an argmax over no row is never taken. ``stacklevel`` counts from the caller."""
    if seen.all():
        return metric(y_true, y_pred(seen))
    if not seen.any():
        warnings.warn(NONE_SEEN, UserWarning, stacklevel=stacklevel + 1)
        return math.nan
    warnings.warn(SOME_MISSING, UserWarning, stacklevel=stacklevel + 1)
    return metric(y_true[seen], y_pred(seen))


def warn_rounds_without_rows(oob_scores: np.ndarray | None, stacklevel: int = 2) -> None:
    """Warn when boosting rounds have a NaN out-of-bag loss: their subsample left no row
    out. ``stacklevel`` counts from the caller."""
    if oob_scores is None or not np.isnan(oob_scores).any():
        return
    warnings.warn(
        f"{int(np.isnan(oob_scores).sum())} of {len(oob_scores)} boosting rounds had no "
        "out-of-bag row (subsample draws them all from too few rows); their oob_scores_ "
        "are NaN.",
        UserWarning,
        stacklevel=stacklevel + 1,
    )

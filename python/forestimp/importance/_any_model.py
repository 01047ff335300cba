"""Held-out permutation importance of any fitted estimator, and the rows of ``max_samples``.

:func:`forestimp.importance.permutation` computes forestimp forests' draws in the engine
(``_permutation.py``); any other fitted estimator (a pipeline, a linear model, another
library's forest) is scored here as ``sklearn.inspection.permutation_importance`` scores
it: scikit-learn's scorer on a copy of X with one column permuted at a time. A DataFrame
stays a DataFrame and keeps each column's dtype (a categorical column is permuted as a
categorical), so a pipeline sees the columns it was fitted on.

**One permutation rule for every model.** Repeat ``r`` of feature ``m`` permutes the rows by
``permutation_indices(seed, k, m, r)``, as the engine does for forests, so a forestimp forest
gives the same numbers through the engine as wrapped in a pipeline, and any ``n_jobs``
gives the same numbers.

**max_samples** (scikit-learn's parameter): each repeat ``r`` draws its own ``k`` rows
without replacement, ``S_r`` = the first ``k`` of ``permutation_indices(seed, n, ROWS, r)``
in increasing order (``ROWS`` a key no feature uses), shared by every feature. As in
scikit-learn, the baseline is scored once on all of X: ``importances[m, r] = s(X) −
s(S_r with column m permuted within S_r)``, so ``importances_mean = baseline_score − the
mean permuted score`` holds with or without it (each repeat also carries the offset
``s(X) − s(S_r)``, the same for every feature).
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils import _safe_indexing, check_array
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _check_sample_weight

from .._core import InvalidParameterError, permutation_indices
from .._params import check_int, check_n_jobs, seed_from
from ._scoring import Scores, _call, resolve

# The stream key of the rows a repeat draws (``feature`` of ``permutation_indices``): above
# any feature index, so the rows never repeat a feature's permutation.
ROWS = 2**32 - 1

Draw = tuple[Scores, dict[str | None, np.ndarray], bool]  # (baseline, importances, multi)


def n_rows(max_samples: Any, n: int) -> int:
    """Rows per repeat for scikit-learn's ``max_samples`` (an int count, or a float fraction
    in (0, 1] floored as scikit-learn floors it) of ``n`` rows."""
    if isinstance(max_samples, bool) or not isinstance(max_samples, numbers.Real):
        raise InvalidParameterError(
            "The 'max_samples' parameter must be an int in [1, n_samples] or a float in "
            f"(0, 1], got {max_samples!r}."
        )
    if isinstance(max_samples, numbers.Integral):
        count = int(max_samples)
        if count < 1:
            raise InvalidParameterError(f"The 'max_samples' parameter must be >= 1, got {count}.")
        if count > n:
            raise InvalidParameterError(f"max_samples must be <= n_samples ({n}), got {count}.")
        return count
    if not 0.0 < float(max_samples) <= 1.0:
        raise InvalidParameterError(
            f"The 'max_samples' parameter must be a float in (0, 1], got {max_samples!r}."
        )
    k = int(float(max_samples) * n)
    if k < 1:
        raise InvalidParameterError(
            f"max_samples={max_samples!r} of {n} rows draws no row: ask for at least one."
        )
    return k


def repeat_rows(seed: int, n: int, k: int, r: int) -> np.ndarray:
    """The ``k`` rows (increasing) of repeat ``r`` out of ``n`` (module docstring)."""
    return np.sort(permutation_indices(seed, n, ROWS, r)[:k])


def stack_repeats(parts: list[Draw]) -> Draw:
    """One draw of ``n_repeats`` from one draw per repeat (each on its own rows, against
    the same baseline): the importances side by side."""
    baseline = parts[0][0]
    imp = {key: np.concatenate([i[key] for _, i, _ in parts], axis=1) for key in baseline}
    return baseline, imp, parts[0][2]


def feature_names(est: Any, X: Any, p: int) -> np.ndarray:
    """A DataFrame's columns, else ``feature_names_in_`` of ``est`` when it has ``p`` of
    them, else ``x0..x{p-1}``."""
    if hasattr(X, "columns"):
        return np.asarray([str(c) for c in X.columns], dtype=object)
    names = getattr(est, "feature_names_in_", None)
    if names is None or len(names) != p:
        names = [f"x{i}" for i in range(p)]
    return np.asarray(names, dtype=object)


class _Data:
    """``X, y, sample_weight`` of one repeat: all rows, or the repeat's ``rows``."""

    def __init__(self, X: Any, y: Any, sw: np.ndarray | None, rows: np.ndarray | None):
        if rows is None:
            self.X, self.y, self.sw = X, y, sw
        else:
            self.X = _safe_indexing(X, rows, axis=0)
            self.y = None if y is None else _safe_indexing(y, rows, axis=0)
            self.sw = None if sw is None else sw[rows]


def _permuted_group(
    est: Any,
    scorer: Callable[..., Any],
    data: list[_Data],
    baseline: Scores,
    features: list[int],
    seed: int,
) -> dict[str | None, np.ndarray]:
    """``baseline − score`` (len(features), n_repeats) with each column of ``features``
    permuted in turn, on one copy of each repeat's X (one column rewritten per draw)."""
    out = {key: np.empty((len(features), len(data))) for key in baseline}
    source: Any = None
    work: Any = None
    for r, d in enumerate(data):
        # Ours to rewrite (other workers read d.X); without max_samples every repeat reads
        # the same X, and one copy serves them all.
        if d.X is not source:
            source, work = d.X, d.X.copy()
        frame = hasattr(work, "iloc")
        k = work.shape[0]
        for i, m in enumerate(features):
            column = d.X.iloc[:, m].array if frame else d.X[:, m]
            values = column.take(permutation_indices(seed, k, m, r))
            if frame:
                work.isetitem(m, values)
            else:
                work[:, m] = values
            for name, v in _call(scorer, est, work, d.y, d.sw).items():
                out[name][i, r] = baseline[name] - v
            if frame:
                work.isetitem(m, column)
            else:
                work[:, m] = column
    return out


def any_model_scores(
    est: Any,
    X: Any,
    y: Any,
    n_repeats: int,
    scoring: Any,
    sample_weight: Any,
    seed: int,
    n_jobs: int | None,
    max_samples: Any = 1.0,
) -> tuple[Draw, np.ndarray]:
    """``((baseline, importances, multimetric), feature_names)`` of any fitted ``est`` on
    held-out ``X, y`` (module docstring): ``importances[name]`` is (p, n_repeats).

    ``scoring=None`` is the estimator's own ``score`` (scikit-learn's default). Features
    are shared out over ``n_jobs`` joblib workers (threads unless a joblib backend says
    otherwise); the numbers do not depend on it.
    """
    if X is None:
        raise InvalidParameterError("Pass X (and y, unless the scorer needs none).")
    if not hasattr(X, "iloc"):
        # As scikit-learn: any dtype (a pipeline may encode strings), NaN allowed; a
        # sparse X is refused (its columns cannot be rewritten one at a time in place).
        X = check_array(X, ensure_all_finite="allow-nan", dtype=None)
    n, p = X.shape
    sw = None if sample_weight is None else _check_sample_weight(sample_weight, X)
    scorer, _, multi = resolve(est, scoring, own_score=True)
    k = n_rows(max_samples, n)
    if k == n:
        data = [_Data(X, y, sw, None)] * n_repeats
    else:
        data = [_Data(X, y, sw, repeat_rows(seed, n, k, r)) for r in range(n_repeats)]
    baseline = _call(scorer, est, X, y, sw)
    groups = [g.tolist() for g in np.array_split(np.arange(p), _n_groups(n_jobs)) if len(g)]
    parts = Parallel(n_jobs=n_jobs, prefer="threads")(
        delayed(_permuted_group)(est, scorer, data, baseline, g, seed) for g in groups
    )
    imp = {key: np.empty((p, n_repeats)) for key in baseline}
    for g, part in zip(groups, parts, strict=True):
        for key, rows in part.items():
            imp[key][g] = rows
    return (baseline, imp, multi), feature_names(est, X, p)


def _n_groups(n_jobs: int | None) -> int:
    """How many groups of features ``n_jobs`` workers share (joblib's count of them)."""
    if n_jobs is None:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return n_jobs


def all_rows(max_samples: Any) -> bool:
    """Whether ``max_samples`` is its default, every row (a float 1.0, not the int 1)."""
    return (
        isinstance(max_samples, numbers.Real)
        and not isinstance(max_samples, numbers.Integral)
        and float(max_samples) == 1.0
    )


def any_model_draws(
    est: Any,
    X: Any,
    y: Any,
    oob: bool,
    n_repeats: Any,
    scoring: Any,
    sample_weight: Any,
    scaled: bool,
    n_jobs: Any,
    random_state: Any,
    here: bool,
    output: int | None,
    max_samples: Any,
) -> tuple[Draw, np.ndarray, int]:
    """``(draw, feature_names, seed)`` of :func:`forestimp.importance.permutation` for a
    model that is not a forestimp forest (its parameters checked first); ``here`` is
    False when :mod:`forestimp.dask` asked, which shares out forests only."""
    kind = type(est).__name__
    if oob:
        raise InvalidParameterError(
            "oob=True needs a forestimp forest or gradient-boosting model (its trees' "
            f"out-of-bag rows); {kind} is scored on held-out X, y (oob=False)."
        )
    if output is not None:
        raise InvalidParameterError(
            f"output= selects one output of a forestimp multi-output forest, not of {kind}: "
            "pass a scorer that reads the output you want."
        )
    if not here:
        raise InvalidParameterError(
            f"forestimp.dask.permutation shares out forestimp forests only, not {kind}: "
            "use forestimp.importance.permutation (n_jobs spreads it over threads)."
        )
    n_repeats = check_int("n_repeats", n_repeats, 1)
    n_jobs = check_n_jobs(n_jobs)
    if scaled and n_repeats < 2:
        raise InvalidParameterError(
            "scaled=True on held-out data needs n_repeats >= 2 (the standard error is taken "
            "over repeats)."
        )
    seed = seed_from(random_state)
    draw, names = any_model_scores(
        est, X, y, n_repeats, scoring, sample_weight, seed, n_jobs, max_samples
    )
    return draw, names, seed

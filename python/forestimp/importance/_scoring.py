"""Scoring permuted forest predictions with scikit-learn's scorers.

Held-out permutation importance scores ``p × n_repeats`` versions of X, each with one
column permuted. The engine computes their predictions without building them
(``_core.permuted_predictions``: only nodes that test the column read the permuted row), so
the scorer should see the predictions, not a permuted copy of X.

Scorers made by scikit-learn (``get_scorer`` names, ``make_scorer`` objects, and several of
them in a list or dict) reach the estimator only through its response methods
(``predict``, ``predict_proba``, ``predict_log_proba``, ``decision_function``), its
``classes_`` and its estimator type; they are handed a *stand-in* estimator whose response
methods return the precomputed arrays. forestimp forests have no ``decision_function``, so
the stand-in offers exactly the methods the forest does and every scorer picks the same
response. Any other callable ``scorer(estimator, X, y)`` may read X or the estimator in
ways we cannot foresee: it gets the real estimator and a permuted copy of X (one copy of X,
one column rewritten per draw), as in ``sklearn.inspection.permutation_importance``. Both
paths use the same permutations and give the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.sparse import issparse
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import check_scoring

from .. import _outputs
from .._core import InvalidParameterError

try:  # only to recognise scikit-learn's own scorers; without it, every scorer is exact
    from sklearn.metrics._scorer import _BaseScorer, _MultimetricScorer
except ImportError:  # pragma: no cover - depends on the scikit-learn version
    _BaseScorer = _MultimetricScorer = ()

Scores = dict[str | None, float]  # metric name (None for a single metric) -> score


class _StandIn(BaseEstimator):
    """Answers response methods with ``self.pred_`` (forest predictions, (n, width)), for
    the one X it stands for; anything else is an error rather than a silent wrong score."""

    def _for(self, X: Any) -> np.ndarray:
        if X is not self.X_:
            raise RuntimeError("the stand-in estimator was asked about another X")
        return self.pred_


class _StandInClassifier(ClassifierMixin, _StandIn):
    # Multi-output: the class counts of the outputs (predictions side by side), else None.
    widths_: list[int] | None = None

    def predict_proba(self, X: Any) -> Any:
        if self.widths_ is not None:
            return _outputs.split(self._for(X), self.widths_)
        return self._for(X)

    def predict_log_proba(self, X: Any) -> Any:
        with np.errstate(divide="ignore"):
            if self.widths_ is not None:
                return [np.log(p) for p in self.predict_proba(X)]
            return np.log(self._for(X))

    def predict(self, X: Any) -> np.ndarray:
        if self.widths_ is not None:
            return _outputs.labels_of(self.predict_proba(X), self.classes_)
        return self.classes_[np.argmax(self._for(X), axis=1)]  # first class on ties, as fit


class _StandInRegressor(RegressorMixin, _StandIn):
    widths_: list[int] | None = None

    def predict(self, X: Any) -> np.ndarray:
        return self._for(X) if self.widths_ is not None else self._for(X)[:, 0]


def resolve(
    est: Any, scoring: Any, own_score: bool = False
) -> tuple[Callable[..., Any], bool, bool]:
    """``(scorer, fast, multimetric)`` for ``scoring``. None: accuracy or R² (forestimp's
    models), or with ``own_score`` the estimator's ``score`` method (any other model, as
    scikit-learn's ``check_scoring`` defaults)."""
    if scoring is None and not own_score:
        scoring = "accuracy" if hasattr(est, "classes_") else "r2"
    multi = isinstance(scoring, list | tuple | set | dict)
    try:
        scorer = check_scoring(est, scoring=scoring)
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(
            "The 'scoring' parameter must be None, a scikit-learn scorer name, a callable "
            f"scorer(estimator, X, y), or a list/dict of those: {exc}"
        ) from exc
    if isinstance(scorer, _MultimetricScorer):
        fast = all(isinstance(s, _BaseScorer) for s in scorer._scorers.values())
    else:
        fast = isinstance(scorer, _BaseScorer)
    return scorer, fast, multi


def _call(scorer: Callable[..., Any], est: Any, X: Any, y: Any, sw: Any) -> Scores:
    # As sklearn's permutation_importance: sample_weight only when given.
    out = scorer(est, X, y) if sw is None else scorer(est, X, y, sample_weight=sw)
    if isinstance(out, dict):
        return {str(k): float(v) for k, v in out.items()}
    return {None: float(out)}


def permuted_scores(
    est: Any,
    X: Any,
    Xe: np.ndarray,
    y: np.ndarray,
    sw: np.ndarray | None,
    scoring: Any,
    permuted: Callable[[int], np.ndarray],
    permutation: Callable[[int, int], np.ndarray],
    n_repeats: int,
    n_jobs: int | None,
    features: Any,
    output: int | None = None,
    baseline: Scores | None = None,
) -> tuple[Scores, dict[str | None, np.ndarray], bool]:
    """``(baseline, importances, multimetric)``: ``importances[name]`` (p, n_repeats) is
    ``baseline − score`` with column ``m`` permuted by ``permutation(m, r)``, for the
    columns ``m`` in ``features`` (the other rows are NaN).

    ``X`` is the user's matrix, ``Xe`` the engine's view of it; ``permuted(m)`` gives the
    (n_repeats, n, width) predictions with column ``m`` permuted.

    A multi-output forest's predictions are scored on all outputs (``output=None``: what
    the scorer makes of ``(n, m)`` predictions), or on output ``output`` alone (``y`` is
    then that output's column); per-output scores need a scikit-learn scorer.

    ``baseline``, when given, replaces the score of the unpermuted predictions (rows drawn
    by ``max_samples`` are compared with the score of all rows, as scikit-learn does).
    """
    scorer, fast, multi = resolve(est, scoring)
    p = Xe.shape[1]
    m = getattr(est, "n_outputs_", 1)
    columns = slice(None)
    if output is not None and not fast:
        raise InvalidParameterError(
            "output= scores one output of a multi-output forest: it needs scikit-learn "
            "scorers (names or make_scorer), not a callable given the estimator."
        )
    if fast:
        stand_in = _StandInClassifier() if hasattr(est, "classes_") else _StandInRegressor()
        stand_in.X_ = Xe
        if hasattr(est, "classes_"):
            stand_in.classes_ = est.classes_
        if m > 1:
            widths = list(est.n_classes_) if hasattr(est, "classes_") else [1] * m
            if output is None:
                stand_in.widths_ = widths
            else:
                start = sum(widths[:output])
                columns = slice(start, start + widths[output])
                if hasattr(est, "classes_"):
                    stand_in.classes_ = est.classes_[output]

        def score_pred(pred: np.ndarray) -> Scores:
            stand_in.pred_ = pred[:, columns]
            return _call(scorer, stand_in, Xe, y, sw)

        if baseline is None:
            baseline = score_pred(est.forest_.predict(Xe, n_jobs=n_jobs))
        imp = {k: np.full((p, n_repeats), np.nan) for k in baseline}
        for m in features:
            for r, pred in enumerate(permuted(m)):
                for k, v in score_pred(pred).items():
                    imp[k][m, r] = baseline[k] - v
        return baseline, imp, multi
    if issparse(Xe):
        raise TypeError(
            "Permutation importance with a scorer that needs the estimator permutes columns "
            "of a copy of X: pass a dense X (X.toarray()) or a built-in scoring."
        )
    frame = hasattr(X, "iloc")  # keep a DataFrame a DataFrame: the estimator checks names
    base_X: Any = X if frame else Xe
    if baseline is None:
        baseline = _call(scorer, est, base_X, y, sw)
    imp = {k: np.full((p, n_repeats), np.nan) for k in baseline}
    work = base_X.copy()
    for m in features:
        column = base_X.iloc[:, m].to_numpy() if frame else Xe[:, m]
        for r in range(n_repeats):
            values = column[permutation(m, r)]
            if frame:
                work.isetitem(m, values)
            else:
                work[:, m] = values
            for k, v in _call(scorer, est, work, y, sw).items():
                imp[k][m, r] = baseline[k] - v
        if frame:
            work.isetitem(m, column)
        else:
            work[:, m] = column
    return baseline, imp, multi

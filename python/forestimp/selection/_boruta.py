"""Boruta (Kursa & Rudnicki 2010): all-relevant selection against shadow features.

Each iteration grows a forest on the features not yet rejected and on one *shadow* per
such feature (at least 5, repeating columns as R and BorutaPy do). A shadow is its column
read through its own random permutation of the rows: same distribution, no link with y.
A feature scores a *hit* when its importance beats the best shadow's (``perc=100``; BorutaPy
uses the ``perc`` percentile of the shadows). After ``n`` iterations a feature with ``h``
hits is tested against the binomial ``B(n, 1/2)`` of an irrelevant one:

* confirmed when ``P(B >= h)`` is small, rejected when ``P(B <= h)`` is small;
* ``rule="bonferroni"`` (R's Boruta): each p-value times the number of features, compared
  with ``alpha`` (strictly);
* ``rule="fdr"`` (BorutaPy's two steps): Benjamini–Hochberg at ``alpha`` over the features
  not rejected, and also ``p <= alpha / n`` (Bonferroni over the iterations).

With a forestimp forest the shadows are virtual (``Forest.fit(columns=, shadows=)``): X is
neither copied, nor stacked, nor subset; only a permutation of the rows (4 bytes a row) is
added. Other estimators (scikit-learn, LightGBM) get a real ``[X_active, shadows]`` matrix.

``n_estimators="auto"`` is BorutaPy's rule for the size of each iteration's forest
(:func:`auto_n_estimators`): as features are rejected the forests shrink with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import binom
from sklearn.base import clone
from sklearn.utils.validation import _check_sample_weight, validate_data

from .. import _frames, _sparse
from .. import _params as P
from .._core import InvalidParameterError
from .._params import check_choice, check_int, check_n_jobs, check_random_state, check_real
from ._base import BaseSelector, SelectionStep, importances_of, is_forestimp, resolve_estimator
from ._plots import boruta_boxes
from ._probes import histogram_bins, shadow_importances

RULES = ("bonferroni", "fdr")
IMPORTANCES = ("permutation", "mdi")
# R and BorutaPy grow every forest with at least this many shadows.
MIN_SHADOWS = 5
# BorutaPy's "auto" trees: how many times each column should be tried at a split, and the
# depth assumed of a tree whose max_depth is None.
AUTO_TRIES = 100
AUTO_DEPTH = 10


@dataclass(frozen=True, kw_only=True, eq=False)
class BorutaStep(SelectionStep):
    """One Boruta iteration: ``features`` were not rejected before it, ``scores`` are
    their importances, ``kept`` the features still not rejected after it.

    Attributes
    ----------
    confirmed : ndarray of int
        Features confirmed at this iteration.
    shadow_importances : ndarray of float
        The importances of this iteration's shadows.
    shadow_threshold : float
        The shadow importance a hit must beat (the max, or the ``perc`` percentile).
    n_estimators : int or None
        Trees of this iteration's forest (None: a model without ``n_estimators``).
    """

    confirmed: np.ndarray
    shadow_importances: np.ndarray
    shadow_threshold: float
    n_estimators: int | None = None


def auto_n_estimators(n_columns: int, max_depth: int | None) -> int:
    """BorutaPy's ``n_estimators="auto"``: the trees a forest on ``n_columns`` columns (the
    features not rejected and their shadows) needs for each column to be tried at about
    ``AUTO_TRIES`` = 100 splits.

    A split tries about ``sqrt(m)`` of the ``m`` columns and a root-to-leaf path of a tree
    of depth ``d`` makes ``d`` splits, so a tree tries about ``d sqrt(m)`` columns along a
    path; each column is then tried ``100`` times in ``100 m / (d sqrt(m)) = 100 sqrt(m) / d``
    trees, rounded down (at least one). ``d`` is ``max_depth``, or ``AUTO_DEPTH`` = 10 when
    the trees have no depth limit (None, or LightGBM's -1). Computed as BorutaPy's
    ``_get_tree_num`` computes it, so the counts are the same to the last tree: with 100
    features and their 100 shadows, ``int(100 sqrt(200) / 10) = 141`` trees.
    """
    depth = AUTO_DEPTH if max_depth is None or max_depth <= 0 else int(max_depth)
    return max(1, int(n_columns / (math.sqrt(n_columns) * depth) * AUTO_TRIES))


def binomial_pvalues(hits: np.ndarray, runs: int) -> tuple[np.ndarray, np.ndarray]:
    """``(P(B >= hits), P(B <= hits))`` for ``B ~ Binomial(runs, 1/2)``: the evidence for
    confirming and for rejecting a feature with ``hits`` hits in ``runs`` iterations."""
    return binom.sf(hits - 1, runs, 0.5), binom.cdf(hits, runs, 0.5)


def benjamini_hochberg(pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """Which hypotheses Benjamini–Hochberg rejects at level ``alpha``: all up to the largest
    ``k`` with ``p_(k) <= k alpha / m`` (sorted p-values)."""
    m = len(pvalues)
    if m == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(pvalues, kind="stable")
    below = pvalues[order] <= alpha * np.arange(1, m + 1) / m
    out = np.zeros(m, dtype=bool)
    if below.any():
        out[order[: np.flatnonzero(below)[-1] + 1]] = True
    return out


def decide(
    status: np.ndarray, hits: np.ndarray, runs: int, rule: str, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Features (indices) that ``rule`` confirms and rejects after ``runs`` iterations;
    ``status`` is 0 (tentative), 1 (confirmed) or -1 (rejected) per feature."""
    if rule == "bonferroni":
        # R: p.adjust over every attribute, strict comparison.
        accept_p, reject_p = binomial_pvalues(hits, runs)
        m = len(hits)
        accept = np.minimum(accept_p * m, 1.0) < alpha
        reject = np.minimum(reject_p * m, 1.0) < alpha
    else:
        # BorutaPy: over the features not rejected (confirmed ones included).
        active = np.flatnonzero(status >= 0)
        accept_p, reject_p = binomial_pvalues(hits[active], runs)
        accept = np.zeros(len(hits), dtype=bool)
        reject = np.zeros(len(hits), dtype=bool)
        accept[active] = benjamini_hochberg(accept_p, alpha) & (accept_p <= alpha / runs)
        reject[active] = benjamini_hochberg(reject_p, alpha) & (reject_p <= alpha / runs)
    tentative = status == 0
    return np.flatnonzero(tentative & accept), np.flatnonzero(tentative & reject)


class Boruta(BaseSelector):
    """All-relevant feature selection with shadow features (Boruta).

    Parameters
    ----------
    estimator : estimator or None, default=None
        None: a forestimp random forest of 100 trees (``forestimp.selection``). Any
        estimator with ``feature_importances_`` also works (``importance="mdi"``).
    importance : {"permutation", "mdi"}, default="permutation"
        ``"permutation"`` is R Boruta's measure: out-of-bag permutation importance scaled by
        its standard error over trees (a z-score), which needs a forest grown with
        bootstrap. ``"mdi"`` is BorutaPy's (``feature_importances_``).
    rule : {"bonferroni", "fdr"}, default="bonferroni"
        The decision rule (module docstring): R's Boruta or BorutaPy's two-step.
    alpha : float, default=0.01
        Level of the tests (R's ``pValue``; BorutaPy's default is 0.05).
    perc : int in [1, 100], default=100
        Percentile of the shadow importances a hit must beat (100: the max).
    max_iter : int, default=100
        Most forests grown.
    random_state : int, RandomState or None
        Seeds the forests and the shadows; the selection does not depend on ``n_jobs``.
    n_jobs : int or None
        Threads of a forestimp forest (None: 1, -1: all cores).
    callback : callable or None, default=None
        Called with each :class:`BorutaStep` as it is recorded; returning True stops the
        iterations (the undecided features stay tentative).
    n_estimators : int, "auto" or None, default=None
        Trees of each iteration's forest. None: the model's own (100 for the default one).
        ``"auto"``: BorutaPy's rule (:func:`auto_n_estimators`), ``int(100 sqrt(m) / d)``
        for the ``m`` columns of the iteration's forest (features not yet rejected and
        their shadows) and the model's ``max_depth`` ``d`` (10 when None), so the forests
        shrink as features are rejected. The counts used are in ``n_estimators_``.

    Attributes
    ----------
    support_ : ndarray of bool
        Confirmed features.
    support_weak_ : ndarray of bool
        Tentative features: undecided after ``max_iter`` iterations; with ``rule="fdr"``,
        only those whose median importance beats the median shadow threshold (BorutaPy's
        rough fix).
    ranking_ : ndarray of int
        1 confirmed, 2 tentative, then the rejected by median importance.
    hits_ : ndarray of int
        Iterations in which each feature beat the shadow threshold.
    hit_rates_ : ndarray of float
        ``hits_`` over the iterations the feature took part in.
    importance_history_ : ndarray of shape (n_iterations, n_features)
        Importances per iteration (NaN once rejected).
    history_ : list of BorutaStep
    n_iter_ : int
    n_estimators_ : ndarray of int, shape (n_iter_,)
        Trees of each iteration's forest: the ``"auto"`` counts, else the fixed one (0 for a
        model without an ``n_estimators`` parameter).
    """

    _passes_nan = False  # X is validated finite: Boruta does not pass NaN on
    _draw = staticmethod(boruta_boxes)

    def __init__(
        self,
        estimator: Any = None,
        importance: str = "permutation",
        rule: str = "bonferroni",
        alpha: float = 0.01,
        perc: int = 100,
        max_iter: int = 100,
        random_state: Any = None,
        n_jobs: int | None = None,
        callback: Any = None,
        n_estimators: int | str | None = None,
    ) -> None:
        self.estimator = estimator
        self.importance = importance
        self.rule = rule
        self.alpha = alpha
        self.perc = perc
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.callback = callback
        self.n_estimators = n_estimators

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Boruta:
        """Run Boruta on ``X, y``; returns self."""
        X, y = _sparse.checked(X), _sparse.checked(y, "y")
        _frames.check_numeric(X)  # a text or category column: DataError naming it
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], ensure_all_finite=True)
        importance = check_choice("importance", self.importance, IMPORTANCES)
        rule = check_choice("rule", self.rule, RULES)
        alpha = check_real("alpha", self.alpha, 0.0, 1.0)
        perc = check_int("perc", self.perc, 1, 100)
        max_iter = check_int("max_iter", self.max_iter, 1)
        check_n_jobs(self.n_jobs)
        model = resolve_estimator(self.estimator, y, None, self.n_jobs)
        trees_for = self._check_n_estimators(model)
        sw = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        rng = check_random_state(self.random_state)
        p = X.shape[1]
        status = np.zeros(p, dtype=np.int8)
        hits = np.zeros(p, dtype=np.intp)
        runs_in = np.zeros(p, dtype=np.intp)
        history: list[BorutaStep] = []
        rows: list[np.ndarray] = []
        # Every forest is grown on a view of X: a histogram forest reads X's codes, made once.
        bins = histogram_bins(model, X)
        for it in range(1, max_iter + 1):
            active = np.flatnonzero(status >= 0)
            sources = np.resize(active, max(len(active), MIN_SHADOWS))
            seed = int(rng.randint(np.iinfo(np.int32).max))
            n_trees = trees_for(len(active) + len(sources))
            real, shadow = self._importances(
                model, X, y, sw, active, sources, importance, seed, bins, n_trees
            )
            threshold = float(np.percentile(shadow, perc))
            hit = active[real > threshold]
            hits[hit] += 1
            runs_in[active] += 1
            confirmed, rejected = decide(status, hits, it, rule, alpha)
            status[confirmed], status[rejected] = 1, -1
            row = np.full(p, np.nan)
            row[active] = real
            rows.append(row)
            history.append(
                BorutaStep(
                    step=it - 1,
                    features=active,
                    scores=real,
                    kept=np.flatnonzero(status >= 0),
                    dropped=rejected,
                    confirmed=confirmed,
                    shadow_importances=shadow,
                    shadow_threshold=threshold,
                    n_estimators=n_trees,
                )  # fmt: skip
            )
            if self._report(history[-1]) or not (status == 0).any():
                break
        self._finish(status, hits, runs_in, np.vstack(rows), history, rule)
        return self

    def _check_n_estimators(self, model: Any) -> Callable[[int], int | None]:
        """``n_estimators`` checked against the model, as the trees of a forest on a given
        number of columns: the "auto" rule, a fixed int, or (None) the model's own count
        (None for a model without one)."""
        has_trees = "n_estimators" in model.get_params()
        value = self.n_estimators
        if value is not None and not has_trees:
            raise InvalidParameterError(
                f"n_estimators={value!r} sets the trees of each forest, but "
                f"{type(model).__name__} has no 'n_estimators' parameter; leave it None."
            )
        if value == "auto":
            depth = _depth(model)
            return lambda n_columns: auto_n_estimators(n_columns, depth)
        if value is None:
            fixed = int(model.get_params()["n_estimators"]) if has_trees else None
        elif isinstance(value, str) or not P._is_int(value) or int(value) < 1:
            raise InvalidParameterError(
                f"The 'n_estimators' parameter must be an int >= 1, 'auto' or None, got {value!r}."
            )
        else:
            fixed = int(value)
        return lambda n_columns: fixed

    def _importances(
        self, model: Any, X: np.ndarray, y: np.ndarray, sw: Any, active: np.ndarray,
        sources: np.ndarray, importance: str, seed: int, bins: Any, n_trees: Any,
    ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Importances of the ``active`` columns and of the shadows of ``sources``, from one
        forest of ``n_trees`` trees (None: the model's own) grown on both: a clone of
        ``model`` (resolved once per fit, so a default model's task is read, and warned
        about, once) with ``random_state=seed``."""
        est = clone(model)
        if n_trees is not None:
            est.set_params(n_estimators=n_trees)
        if is_forestimp(est):
            est.set_params(random_state=seed)
            return shadow_importances(
                est, X, y, sw, active, sources, importance, seed, scaled=True, bins=bins
            )
        if "random_state" in est.get_params():
            est.set_params(random_state=seed)
        shadow_rng = np.random.RandomState(seed)
        shadows = np.column_stack([X[shadow_rng.permutation(len(X)), j] for j in sources])
        stacked = np.hstack([X[:, active], shadows])
        est.fit(stacked, y) if sw is None else est.fit(stacked, y, sample_weight=sw)
        imp = importances_of(est, stacked, y, importance, random_state=seed, n_jobs=self.n_jobs)
        return imp[: len(active)], imp[len(active) :]

    def _finish(
        self, status: np.ndarray, hits: np.ndarray, runs_in: np.ndarray, imp: np.ndarray,
        history: list[BorutaStep], rule: str,
    ) -> None:  # fmt: skip
        tentative = np.flatnonzero(status == 0)
        if rule == "fdr" and len(tentative):
            thresholds = np.array([s.shadow_threshold for s in history])
            beats = np.nanmedian(imp[:, tentative], axis=0) > np.median(thresholds)
            tentative = tentative[beats]
        self.support_ = status == 1
        self.support_weak_ = np.zeros_like(self.support_)
        self.support_weak_[tentative] = True
        p = len(status)
        ranking = np.ones(p, dtype=np.intp)
        ranking[tentative] = 2
        rest = np.flatnonzero(~self.support_ & ~self.support_weak_)
        if len(rest):
            median = np.nanmedian(imp[:, rest], axis=0)
            order = np.argsort(-median, kind="stable")
            ranking[rest[order]] = np.arange(len(rest)) + (3 if len(tentative) else 2)
        self.ranking_ = ranking
        self.hits_ = hits
        self.hit_rates_ = hits / np.maximum(runs_in, 1)
        self.importance_history_ = imp
        self.history_ = list(history)
        self.n_iter_ = len(history)
        self.n_estimators_ = np.array([s.n_estimators or 0 for s in history], dtype=np.intp)


def _depth(model: Any) -> int | None:
    """The ``max_depth`` of ``model``'s trees (None: unlimited, or no such parameter)."""
    depth = model.get_params().get("max_depth")
    return None if depth is None else int(depth)

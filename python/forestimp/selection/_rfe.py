"""Recursive feature elimination, plain and by random blocks: :class:`RFE`.

The path: fit the model on the remaining columns, score it (out-of-bag or cross-validated),
drop the least important ones (importances recomputed on that fit), repeat down to
``min_features_to_select``; then keep the smallest subset whose score is within ``alpha``
standard deviations of the best (:func:`._rfe_rules.alpha_choice`). Every step is kept in
``history_``. Subset-RFE (Pan et al. 2009, as Alonso Liso 2016 used it) ranks within random
blocks instead of over all the remaining columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import check_cv, cross_val_score
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from .. import _frames, _sparse
from .._core import DataError, InvalidParameterError
from .._params import check_choice, check_cv_folds, check_int, check_n_jobs, check_real
from ._base import (
    BaseSelector,
    SelectionStep,
    check_importance,
    draw_seeds,
    importances_of,
    is_classification,
    is_forestimp,
    on_columns,
    ranking_from,
    resolve_estimator,
)
from ._plots import rfe_path
from ._rfe_rules import ALPHA_STDS, alpha_choice, block_drops, next_size, oob_standard_error


@dataclass(frozen=True, kw_only=True, eq=False)
class RFEStep(SelectionStep):
    """One step of :class:`RFE` (fields of :class:`SelectionStep`, ``scores`` being the
    importances that decided the removals: per block for a Subset-RFE step).

    Attributes
    ----------
    score : float
        Out-of-bag or mean cross-validated score of the model on ``features``.
    score_std : float
        Its spread: standard deviation over the CV folds, or the out-of-bag standard error.
    n_features : int
        ``len(features)``.
    n_blocks : int
        Blocks the columns were ranked in (1: all together, plain RFE).
    """

    score: float
    score_std: float
    n_features: int
    n_blocks: int


def oob_model(est: Any) -> Any:
    """``est`` set to compute its out-of-bag score, or a clear error when it cannot."""
    params = est.get_params(deep=False)
    name = type(est).__name__
    if "oob_score" not in params:
        raise InvalidParameterError(
            f"scoring='oob' needs a model with an out-of-bag score and {name} has none: "
            "pass cv=5 (or a CV splitter) to score each step by cross-validation."
        )
    if not params.get("bootstrap", True) and params.get("max_samples") is None:
        raise InvalidParameterError(
            f"scoring='oob' needs out-of-bag rows but this {name} has bootstrap=False: "
            "set bootstrap=True, max_samples < 1, or pass cv=5."
        )
    if not params["oob_score"]:
        est.set_params(oob_score=True)
    return est


@dataclass(kw_only=True)
class _Path:
    """One elimination path with its parameters resolved (what ``RFE.fit`` runs)."""

    base: Any  # unfitted model, cloned for every fit
    step: float | int
    min_features: int
    subset_size: int | None
    importance: str
    cv: Any  # None: out-of-bag scores
    scoring: Any
    n_jobs: int | None
    draw_seed: int  # permutation importances
    rng: np.random.RandomState  # Subset-RFE blocks
    fit_params: dict[str, Any]
    report: Callable[[RFEStep], bool]  # True: stop the path after this step

    def evaluate(
        self, X: np.ndarray, y: np.ndarray, features: np.ndarray, p: int
    ) -> tuple[Any, float, float, np.ndarray]:
        """The model fitted on ``X`` (the ``features`` of a ``p``-column X) and its
        ``(score, score_std, fold_scores)``."""
        est = on_columns(self.base, features, p)
        folds = np.empty(0)
        if self.cv is not None:
            folds = cross_val_score(
                clone(est),
                X,
                y,
                cv=self.cv,
                scoring=self.scoring,
                params=self.fit_params,
                # forestimp models use the threads themselves; others get them per fold
                n_jobs=None if is_forestimp(est) else self.n_jobs,
                error_score="raise",
            )
        est.fit(X, y, **self.fit_params)
        if self.cv is None:
            score = float(est.oob_score_)
            if np.isnan(score):  # a NaN would make the path's choice meaningless
                raise DataError(
                    f"RFE scores each step out of bag, and the out-of-bag score of the model "
                    f"on {X.shape[1]} columns is undefined (n_samples = {len(y)}: no row, or "
                    "a single one for R², was out of bag of any tree). Use more rows or "
                    "trees, or cv=5."
                )
            return est, score, oob_standard_error(est, y), folds
        return est, float(folds.mean()), float(folds.std()), folds

    def ranked(self, est: Any, X: np.ndarray, y: np.ndarray, features: np.ndarray) -> tuple:
        """Importances of ``est`` (fitted on ``X``) and ``features`` from the most to the
        least important, ties to the earlier column."""
        imp = importances_of(
            est, X, y, self.importance, random_state=self.draw_seed, n_jobs=self.n_jobs
        )
        return imp, features[np.argsort(-imp, kind="mergesort")]

    def block_step(
        self, X: np.ndarray, y: np.ndarray, current: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """One Subset-RFE step: ``(importances aligned with current, dropped, n_blocks)``."""
        c = int(self.subset_size or len(current))
        shuffled = self.rng.permutation(current)
        blocks = [shuffled[i : i + c] for i in range(0, len(shuffled), c)]
        drops = block_drops([len(b) for b in blocks], self.step, len(current) - self.min_features)
        scores = np.empty(len(current))
        dropped = []
        for block, d in zip(blocks, drops, strict=True):
            Xb = X[:, block]
            est = on_columns(self.base, block, X.shape[1]).fit(Xb, y, **self.fit_params)
            imp, order = self.ranked(est, Xb, y, block)
            scores[np.searchsorted(current, block)] = imp
            dropped.append(order[len(block) - d :])
        return scores, np.sort(np.concatenate(dropped)), len(blocks)

    def run(self, X: np.ndarray, y: np.ndarray) -> tuple[list[RFEStep], list[np.ndarray]]:
        """The whole path, from all the columns of ``X`` down to ``min_features``: its steps
        and each step's CV fold scores."""
        history: list[RFEStep] = []
        fold_scores = []
        current, anchor = np.arange(X.shape[1]), (X.shape[1], 0)
        while True:
            k, n = len(history), len(current)
            Xc = X if n == X.shape[1] else X[:, current]  # a fit needs the columns together
            est, score, score_std, folds = self.evaluate(Xc, y, current, X.shape[1])
            fold_scores.append(folds)
            n_blocks = 1
            if self.subset_size is not None and n > self.subset_size and n > self.min_features:
                imp, dropped, n_blocks = self.block_step(X, y, current)
                anchor = (n - len(dropped), k + 1)  # plain steps resume from here
            else:
                imp, order = self.ranked(est, Xc, y, current)
                n_next = n
                if n > self.min_features:
                    n_next = next_size(n, k, self.step, anchor, self.min_features)
                dropped = np.sort(order[n_next:])
            kept = np.setdiff1d(current, dropped)
            history.append(
                RFEStep(
                    step=k,
                    features=current,
                    scores=imp,
                    kept=kept,
                    dropped=dropped,
                    score=score,
                    score_std=score_std,
                    n_features=n,
                    n_blocks=n_blocks,
                )
            )
            if self.report(history[-1]) or len(dropped) == 0:
                return history, fold_scores
            current = kept


class RFE(BaseSelector):
    """Recursive feature elimination with the smallest-subset-within-``alpha``-std rule.

    Parameters
    ----------
    estimator : estimator, default=None
        Model refitted at each step, cloned. None: a forestimp random forest of 100 trees
        with ``splitter="hist"``. Any scikit-learn estimator with ``feature_importances_``
        works; one without an out-of-bag score (gradient boosting) needs ``cv``.
    step : float in (0, 1) or int >= 1, default=0.2
        A float removes that fraction per step on a geometric schedule, ``floor(P (1 -
        step)**k)`` columns at step ``k`` (Díaz-Uriarte & Alvarez de Andrés 2006; not
        scikit-learn's constant ``step * P``); an int removes that many per step.
    scoring : "oob", str or callable, default="oob"
        ``"oob"`` with ``cv=None``: the model's ``oob_score_`` (accuracy or R²), which needs
        bootstrap or subsampling. With ``cv``: ``"oob"`` means the model's own ``score``.
        Any other value is a scikit-learn scorer and cross-validates (``cv=None``: 5 folds).
    cv : int, CV splitter, iterable or None, default=None
        Cross-validation of each step's subset (``check_cv``: stratified folds for a
        classifier, unshuffled, so the splits depend on the data only).
    alpha : float >= 0, default=1.0
        Keep the fewest columns whose score is within ``alpha`` standard deviations
        (``alpha_std``) of the best score; 0 keeps the best-scoring subset.
    importance : {"mdi", "permutation", "air", "mdi_oob"}, default="mdi"
        The measure that ranks the remaining columns at each step.
    subset_size : int >= 2 or None, default=None
        Subset-RFE: at each step the remaining columns are shuffled into blocks of
        ``subset_size`` (the last one takes the remainder), a model is fitted on each block
        and each block removes ``int(step * size)`` of its least important columns (``step``
        of them for an int). Columns thus compete only within a random block, which limits
        masking among correlated columns and the memory of one fit. Once ``subset_size`` or
        fewer remain, the single block is all of them and the steps are plain RFE (its
        limit case, Alonso Liso), continuing down to ``min_features_to_select``.
    random_state : int, RandomState instance or None, default=None
        Seeds the models (when they have no ``random_state`` of their own), the blocks and
        the permutations; the same value gives the same selection for any ``n_jobs``.
    n_jobs : int or None, default=None
        Threads of forestimp models and importances; for other models, the CV folds run in
        parallel instead.
    min_features_to_select : int >= 1, default=1
        The path stops at this many columns.
    alpha_std : {"score", "path"}, default="score"
        The standard deviation ``alpha`` counts in. ``"score"``: the best step's own spread,
        the standard deviation of its CV fold scores, or the standard error of its
        out-of-bag score (``sqrt(a (1 - a) / n)`` for an accuracy ``a``; the delta method
        for R²): the rule of Díaz-Uriarte & Alvarez de Andrés's varSelRF (``c.sd``), which
        Alonso Liso describes. ``"path"``: the standard deviation of the scores over the
        whole path, the "Perc std" of Alonso Liso's tables (it reproduces his choices). It
        grows with how far the path falls at its end, so it keeps fewer columns: on the
        benchmark's 5 000 x 200 data (10 informative columns) it keeps 5 of them at
        ``alpha=1``, where ``"score"`` keeps exactly the 10.
    callback : callable or None, default=None
        Called with each :class:`RFEStep` as it is recorded; returning True ends the path
        there (the subset is then chosen among the steps run so far).

    Attributes
    ----------
    estimator_ : estimator
        The model refitted on the selected columns.
    n_features_ : int
    support_ : ndarray of bool, shape (n_features_in_,)
    ranking_ : ndarray of int, shape (n_features_in_,)
        1 for the selected columns, 2 for those removed at the step before, and so on.
    history_ : list of RFEStep
        The whole path, one entry per fitted subset, largest first.
    cv_results_ : dict of ndarrays
        ``n_features``, ``mean_test_score``, ``std_test_score`` and, with CV,
        ``split{i}_test_score``, one entry per step (scikit-learn's ``RFECV`` keys).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` has string column names.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from forestimp.selection import RFE
    >>> X, y = make_classification(1000, 20, n_informative=3, n_redundant=0,
    ...                            shuffle=False, random_state=0)
    >>> rfe = RFE(random_state=0).fit(X, y)
    >>> [int(j) for j in rfe.get_support(indices=True)]
    [0, 1, 2]
    >>> [s.n_features for s in rfe.history_]
    [20, 16, 12, 10, 8, 6, 5, 4, 3, 2, 1]
    """

    _draw = staticmethod(rfe_path)

    def __init__(
        self,
        estimator: Any = None,
        *,
        step: float | int = 0.2,
        scoring: Any = "oob",
        cv: Any = None,
        alpha: float = 1.0,
        importance: str = "mdi",
        subset_size: int | None = None,
        random_state: Any = None,
        n_jobs: int | None = None,
        min_features_to_select: int = 1,
        alpha_std: str = "score",
        callback: Any = None,
    ) -> None:
        self.estimator = estimator
        self.step = step
        self.scoring = scoring
        self.cv = cv
        self.alpha = alpha
        self.importance = importance
        self.subset_size = subset_size
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.min_features_to_select = min_features_to_select
        self.alpha_std = alpha_std
        self.callback = callback

    def _step(self) -> float | int:
        step = self.step
        if isinstance(step, (float, np.floating)) and 0.0 < float(step) < 1.0:
            return float(step)
        is_int = isinstance(step, (int, np.integer)) and not isinstance(step, (bool, np.bool_))
        if not (is_int and int(step) >= 1):
            raise InvalidParameterError(
                f"The 'step' parameter must be a float in (0, 1) (fraction removed per step) "
                f"or an int >= 1 (count removed per step), got {self.step!r}."
            )
        return check_int("step", step, 1)

    def fit(self, X: Any, y: Any, **fit_params: Any) -> RFE:
        """Run the elimination path and select a subset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            Passed to every fit of the model (e.g. ``sample_weight``).

        Returns
        -------
        self
        """
        X, y = _sparse.checked(X), _sparse.checked(y, "y")
        _frames.check_numeric(X)  # a text or category column: DataError naming it
        X, y = validate_data(
            self, X, y, dtype=[np.float64, np.float32], ensure_all_finite="allow-nan"
        )
        p = X.shape[1]
        alpha = check_real("alpha", self.alpha, 0.0, np.inf)
        alpha_std = check_choice("alpha_std", self.alpha_std, ALPHA_STDS)
        n_jobs = check_n_jobs(self.n_jobs)
        model_seed, draw_seed, block_seed = draw_seeds(self.random_state, 3)
        base = resolve_estimator(self.estimator, y, model_seed, n_jobs)
        if self.estimator is None:
            # A path is ~10 fits of the first one's cost at step=0.2: histogram splits
            # (3x faster, same selections on the data) keep 5 000 x 200 under 5 s.
            base.set_params(splitter="hist")
        cv = scoring = None
        if self.scoring == "oob" and self.cv is None:
            base = oob_model(base)
        else:
            classifier = is_classification(base, y)
            folds = 5 if self.cv is None else check_cv_folds(self.cv)
            cv = check_cv(folds, y, classifier=classifier)
            scoring = None if self.scoring == "oob" else self.scoring
        path = _Path(
            base=base,
            step=self._step(),
            min_features=min(
                p, check_int("min_features_to_select", self.min_features_to_select, 1)
            ),
            subset_size=check_int("subset_size", self.subset_size, 2, none_ok=True),
            importance=check_importance(self.importance, self.estimator),
            cv=cv,
            scoring=scoring,
            n_jobs=n_jobs,
            draw_seed=draw_seed,
            rng=check_random_state(block_seed),
            fit_params=fit_params,
            report=self._report,
        )
        history, fold_scores = path.run(X, y)
        self.history_ = list(history)

        sizes = [s.n_features for s in history]
        scores = [s.score for s in history]
        stds = [s.score_std for s in history]
        chosen = alpha_choice(sizes, scores, stds, alpha, alpha_std)
        self.support_ = np.zeros(p, dtype=bool)
        self.support_[history[chosen].features] = True
        self.n_features_ = int(self.support_.sum())
        removal = [s.dropped for s in history[:chosen]] + [history[chosen].features]
        self.ranking_ = ranking_from(removal, p)
        self.cv_results_ = {
            "n_features": np.asarray(sizes),
            "mean_test_score": np.asarray(scores),
            "std_test_score": np.asarray(stds),
        }
        for i in range(len(fold_scores[0])):
            self.cv_results_[f"split{i}_test_score"] = np.array([f[i] for f in fold_scores])
        kept = np.flatnonzero(self.support_)
        self.estimator_ = on_columns(base, kept, p).fit(X[:, self.support_], y, **fit_params)
        return self

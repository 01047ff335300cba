"""Permutation importance (mean decrease of accuracy, MDA) of fitted forestimp forests, and
held-out permutation importance of any other fitted estimator (``_any_model.py``).

Two estimators of how much the forest relies on feature ``X_m``:

* **out-of-bag** (Breiman 2001; Liaw & Wiener's ``importance()``), ``oob=True`` with the
  training ``X, y`` (checked against the fit's fingerprint): for
  each tree ``t`` with out-of-bag rows ``O_t``,
  ``VI_t(m) = err_t(X_m permuted among O_t) − err_t(O_t)``, where ``err_t`` is the tree's
  mean 0/1 loss (majority class of its leaf) or squared error on ``O_t``; the importance is
  ``(1/M) Σ_t VI_t(m)``;
* **held-out**, with ``X, y``: ``score(f, X, y) − score(f, X with column m permuted, y)``
  for any scikit-learn scorer (see ``_scoring.py`` for how the predictions reach it).

Neither copies X: the engine sends a permuted *row index* down the nodes that split on ``m``
and skips the trees that never split on it (their loss is unchanged). Permutations depend on
``(random_state, tree, feature, repeat)`` only, so results are identical for any ``n_jobs``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import _check_sample_weight, _num_samples, check_is_fitted

from .. import _outputs, _sparse
from .. import _params as P
from .._base import BaseForest
from .._boosting_base import BaseGradientBoosting
from .._core import (
    InvalidParameterError,
    local_permutation_importance,
    oob_permutation_importance,
    permutation_indices,
    permuted_predictions,
)
from .._fitted import checked_model
from ._any_model import all_rows, any_model_draws, n_rows, repeat_rows, stack_repeats
from ._boosting import _boosting_permutation
from ._permutation_core import PermutationImportance, _result, held_out_results
from ._result import LocalImportances, feature_names_of, local_result
from ._scoring import permuted_scores

__all__ = ["PermutationImportance", "local_permutation", "permutation"]


def _forest_of(est: Any) -> Any:
    check_is_fitted(est, "forest_")
    return est.forest_


def permutation(
    est: Any,
    X: Any,
    y: Any,
    *,
    oob: bool = False,
    n_repeats: int = 1,
    scoring: Any = None,
    sample_weight: Any = None,
    scaled: bool = False,
    n_jobs: int | None = None,
    random_state: Any = None,
    output: int | None = None,
    max_samples: float | int = 1.0,
) -> PermutationImportance | dict[str, PermutationImportance]:
    """Permutation importance (MDA): on held-out ``X, y``, or out-of-bag (``oob=True``).

    Held out, ``est`` may be any fitted estimator (a pipeline, a linear model, another
    library's forest): it is scored as ``sklearn.inspection.permutation_importance`` scores
    it (see ``_any_model.py``), with the permutations forestimp's own models use, and the
    result reads as scikit-learn's Bunch does (``r["importances_mean"]``, ``r.keys()``).

    **Held-out**: for every repeat ``r`` a permutation ``π`` of the rows of ``X``;
    ``importances[m, r] = s(f, X, y) − s(f, X with X[:, m] := X[π, m], y)`` for the forest
    ``f`` and the scorer ``s`` (greater is better), as
    ``sklearn.inspection.permutation_importance`` computes it, but without copying X for
    scikit-learn's scorers (the forest re-reads the permuted column only where it is tested).

    **Out-of-bag** (Breiman 2001, Liaw & Wiener's ``importance(type=1)``), ``oob=True`` with
    the *training* ``X, y``: for tree ``t`` with out-of-bag rows ``O_t`` (regenerated from
    the seed), feature ``m`` and repeat ``r``, ``VI_{r,t}(m) = err_t(X_m permuted among O_t)
    − err_t(O_t)``, with ``err_t`` the unweighted mean over ``O_t`` of the tree's 0/1 loss
    (majority class of the leaf, first on ties) or squared error. Column ``t`` of
    ``importances`` is ``VI_t = mean_r VI_{r,t}``, the importance ``(1/M) Σ_t VI_t(m)``. A
    tree that never splits on ``m`` (or has no OOB row) contributes exactly 0 and still
    counts in ``M``. Needs ``bootstrap=True`` or ``max_samples < n_samples``; ``scoring``
    and ``sample_weight`` do not apply. The estimator keeps no reference to its training
    data: ``X, y`` must be exactly those given to ``fit`` (same rows in the same order),
    which is checked against a fingerprint taken at fit (a :class:`~forestimp.exceptions.
    DataError` otherwise; see ``docs/importances.md`` for what the check detects).

    Parameters
    ----------
    est : fitted estimator
        A forestimp forest or gradient-boosting model (held out or ``oob=True``), or any
        other fitted scikit-learn-compatible estimator (held out only).
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        Held-out data, or the training data with ``oob=True``. A sparse X is read in place
        (out of bag, or held out with a built-in ``scoring``); other scorers, and other
        models than forestimp's, need a dense X (``TypeError``). A DataFrame reaches a
        foreign model as a DataFrame, each column permuted with its dtype kept.
    y : array-like of shape (n_samples,) or None
        Their targets (labels for classifiers). None only for a foreign model whose scorer
        needs no target, as scikit-learn allows.
    oob : bool, default=False
        Breiman's out-of-bag importance on the training data ``X, y``. For a
        gradient-boosting model fitted with ``subsample < 1`` (see :func:`_boosting_oob`
        and ``docs/boosting.md``): per round ``t``, the increase of the loss on the round's
        out-of-bag rows ``O_t`` when the round's trees read feature ``m`` permuted among
        them, the earlier rounds' prediction unchanged; ``sample_weight`` is then the
        fit's (the loss is weighted as ``oob_scores_``). ``InvalidParameterError`` for
        ``subsample == 1``.
    n_repeats : int, default=1
        Permutations per feature (per tree and feature for OOB).
    scoring : str, callable, list, tuple, set, dict or None, default=None
        Held-out only; anything ``sklearn.metrics.check_scoring`` accepts. None:
        ``"accuracy"`` (classifier) or ``"r2"`` (regressor) for forestimp's models, the
        estimator's own ``score`` for any other. Several metrics (list, tuple, set, dict,
        or a callable returning a dict) return a dict of results keyed by metric name.
    sample_weight : array-like of shape (n_samples,), default=None
        Held-out only: passed to the scorer.
    scaled : bool, default=False
        Report ``importances_mean = raw_importances_mean / standard_error``
        (randomForest's ``scale=TRUE``). Held-out scaling needs ``n_repeats >= 2``.
    n_jobs : int or None, default=None
        Threads (None: 1, -1: all cores); for a foreign model, joblib workers over the
        features (threads unless a joblib backend says otherwise). Results do not depend
        on it.
    random_state : int, RandomState or None, default=None
        Seeds the permutations.
    output : int or None, default=None
        Multi-output forests (a 2-D ``y``, ``docs/multi-output.md``), held out only: score
        output ``output`` alone (``y[:, output]`` against that output's predictions, with
        scikit-learn scorers), which gives the permutation importance of each output. None
        scores all outputs as the scorer does (R² averaged over outputs; accuracy needs
        binary outputs). Out-of-bag importance does not support multi-output forests yet
        (``DataError``).
    max_samples : int or float, default=1.0
        Held-out only, as scikit-learn's: rows drawn without replacement in each repeat
        (an int count in ``[1, n_samples]``, or a float fraction in (0, 1], floored).
        Each repeat ``r`` draws its own rows (``_any_model.repeat_rows``), shared by every
        feature; as in scikit-learn, the baseline is scored once on all rows, so
        ``importances[m, r] = baseline_score − s(f, rows of repeat r with column m
        permuted among them)``. ``1.0`` or ``n_samples`` uses every row, as without it.

    Returns
    -------
    PermutationImportance, or a dict of them (one per metric) for several metrics
    """
    return _permutation(
        est,
        X,
        y,
        oob,
        n_repeats,
        scoring,
        sample_weight,
        scaled,
        n_jobs,
        random_state,
        LOCAL,
        output,
        max_samples=max_samples,
    )


class Draws:
    """Where :func:`permutation` computes its draws: here, in this process.
    :mod:`forestimp.dask` shares the same work out over a cluster (trees or features per
    task), with the same numbers."""

    def oob(self, est: Any, X: Any, y: Any, n_repeats: int, seed: int, n_jobs: Any) -> tuple:
        """``(per_repeat (R, M, p), oob_error (M,))`` of the training ``X, y``."""
        Xt, yt = est._training_input(X, y, sparse=True, output=self.output)
        # One output of a multi-output forest (``output=`` of a single one is its only one).
        output = self.output if est.forest_.n_outputs > 1 else None
        per_rep, oob_error, _ = oob_permutation_importance(
            est.forest_, Xt, yt, n_repeats=n_repeats, seed=seed, n_jobs=n_jobs, output=output
        )
        return per_rep, oob_error

    def held_out(
        self,
        est: Any,
        X: Any,
        y: Any,
        n_repeats: int,
        scoring: Any,
        sw: Any,
        seed: int,
        n_jobs: Any,
    ) -> tuple:
        """``(baseline, importances, multimetric)`` of held-out ``X, y``."""
        features = range(est.forest_.n_features)
        return _held_out_scores(
            est, X, y, n_repeats, scoring, sw, seed, n_jobs, features, self.output
        )

    # The output scored alone (multi-output forests), set by ``_permutation``.
    output: int | None = None


LOCAL = Draws()


def _permutation(
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
    draws: Draws,
    output: int | None = None,
    max_samples: Any = 1.0,
) -> PermutationImportance | dict[str, PermutationImportance]:
    """:func:`permutation` with its draws computed by ``draws``."""
    X, y = _sparse.checked(X), _sparse.checked(y, "y")
    ours = hasattr(est, "forest_") or hasattr(est, "booster_")
    if not ours and isinstance(est, BaseForest | BaseGradientBoosting):
        check_is_fitted(est)  # one of ours, not fitted: the true NotFittedError
    rows = None  # rows per repeat, when fewer than all (``max_samples``)
    if oob:
        if not all_rows(max_samples):
            raise InvalidParameterError(
                "The 'max_samples' parameter applies to held-out data only: out-of-bag "
                "importance scores each tree on its own out-of-bag rows."
            )
    elif ours and X is not None and not all_rows(max_samples):
        n = _num_samples(X)
        rows = n_rows(max_samples, n)
        rows = None if rows == n else rows
    if not ours or (hasattr(est, "booster_") and rows is not None):
        # Any other model (and a booster on fewer rows): scikit-learn's way, our permutations.
        here = type(draws) is Draws
        (baseline, imp, multi), names, seed = any_model_draws(
            est,
            X,
            y,
            oob,
            n_repeats,
            scoring,
            sample_weight,
            scaled,
            n_jobs,
            random_state,
            here,
            output,
            max_samples,
        )
        return held_out_results(imp, baseline, multi, names, scaled, seed)
    if hasattr(est, "booster_"):
        return _boosting_permutation(
            est, X, y, oob, n_repeats, scoring, sample_weight, scaled, random_state, n_jobs
        )
    forest = _forest_of(est)
    if output is not None:
        if type(draws) is not Draws:
            raise InvalidParameterError("output= is computed in this process only.")
        draws = Draws()
        draws.output = P.check_int("output", output, 0, forest.n_outputs - 1)
    n_repeats = P.check_int("n_repeats", n_repeats, 1)
    n_jobs = P.check_n_jobs(n_jobs)
    seed = P.seed_from(random_state)
    names = feature_names_of(est, forest.n_features)
    if oob:
        if scoring is not None or sample_weight is not None:
            raise InvalidParameterError(
                "The 'scoring' and 'sample_weight' parameters apply to held-out data only: "
                "out-of-bag importance uses each tree's unweighted 0/1 loss (classifier) or "
                "squared error (regressor)."
            )
        per_rep, oob_error = draws.oob(est, X, y, n_repeats, seed, n_jobs)
        return _result(
            per_rep.mean(axis=0).T,
            names,
            scaled,
            method="oob",
            draws="trees",
            baseline_score=None,
            oob_error=oob_error,
            seed=seed,
        )
    if X is None or y is None:
        raise InvalidParameterError(
            "Pass both X and y: held-out data, or the training data with oob=True."
        )
    if scaled and n_repeats < 2:
        raise InvalidParameterError(
            "scaled=True on held-out data needs n_repeats >= 2 (the standard error is taken "
            "over repeats)."
        )
    if rows is None:
        baseline, imp, multi = draws.held_out(
            est, X, y, n_repeats, scoring, sample_weight, seed, n_jobs
        )
    elif type(draws) is not Draws:
        raise InvalidParameterError("max_samples < n_samples is computed in this process only.")
    else:  # in this process only, as ``output=``
        baseline, imp, multi = _held_out_scores(
            est,
            X,
            y,
            n_repeats,
            scoring,
            sample_weight,
            seed,
            n_jobs,
            range(forest.n_features),
            draws.output,
            max_samples=rows,
        )
    return held_out_results(imp, baseline, multi, names, scaled, seed)


# Tree walks (rows times trees) of one call to the engine: a fraction of a second, so that
# Ctrl-C, which Python reads between calls, stops a held-out permutation promptly even
# with hundreds of repeats of a large forest.
_WALKS_PER_CALL = 1 << 22


def _permuted_in_blocks(
    forest: Any, Xe: Any, m: int, n_repeats: int, seed: int, n_jobs: int | None, first: int = 0
) -> np.ndarray:
    """``permuted_predictions`` of the repeats ``first..first + n_repeats``, asked a few
    repeats at a time (the same values: each repeat's permutation depends on its index
    only)."""
    block = max(1, _WALKS_PER_CALL // max(1, Xe.shape[0] * forest.n_estimators))
    parts = [
        permuted_predictions(
            forest,
            Xe,
            m,
            n_repeats=min(block, n_repeats - r),
            seed=seed,
            n_jobs=n_jobs,
            first_repeat=first + r,
        )
        for r in range(0, n_repeats, block)
    ]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _held_out_scores(
    est: Any,
    X: Any,
    y: Any,
    n_repeats: int,
    scoring: Any,
    sample_weight: Any,
    seed: int,
    n_jobs: int | None,
    features: Any,
    output: int | None = None,
    max_samples: int | None = None,
) -> tuple[dict, dict[str | None, np.ndarray], bool]:
    """Held-out ``(baseline, importances, multimetric)`` of :func:`permutation`, with only
    the rows of ``features`` computed (the others NaN): any split of the features gives
    the same numbers, which is how :mod:`forestimp.dask` shares them out.

    ``max_samples`` (a row count below ``n_samples``): each repeat scores its own rows
    (``_any_model.repeat_rows``) against the baseline of all rows, as for any other
    model."""
    forest = est.forest_
    Xe = est._engine_input(X, sparse=True)
    yv = np.asarray(y)
    if getattr(est, "n_outputs_", 1) > 1:
        _outputs.check_targets(est, yv, Xe.shape[0])
        if output is not None:
            yv = yv[:, output]
    else:
        est._target_codes(yv, Xe.shape[0])  # the shape, labels and finiteness checks
    sw = None
    if sample_weight is not None:
        sw = _check_sample_weight(sample_weight, Xe, dtype=np.float64)
    n = Xe.shape[0]

    def scores(Xu: Any, Xs: Any, rows: Any, r: int, n_rep: int, feats: Any, base: Any) -> tuple:
        """Repeats ``r..r + n_rep`` of the rows ``rows`` (None: all) of ``X``, ``Xs``."""
        k = Xs.shape[0]
        return permuted_scores(
            est,
            Xu,
            Xs,
            yv if rows is None else yv[rows],
            sw if sw is None or rows is None else sw[rows],
            scoring,
            lambda m: _permuted_in_blocks(forest, Xs, m, n_rep, seed, n_jobs, r),
            lambda m, q: permutation_indices(seed, k, m, r + q),
            n_rep,
            n_jobs,
            feats,
            output,
            base,
        )

    if max_samples is None or max_samples >= n:
        return scores(X, Xe, None, 0, n_repeats, features, None)
    # Each repeat on its own rows, against the baseline of all rows (as scikit-learn).
    baseline = scores(X, Xe, None, 0, 1, (), None)[0]
    parts = []
    for r in range(n_repeats):
        rows = repeat_rows(seed, n, max_samples, r)
        Xr = _safe_indexing(X, rows, axis=0)
        Xs = est._engine_input(Xr, sparse=True)
        parts.append(scores(Xr, Xs, rows, r, 1, features, baseline))
    return stack_repeats(parts)


def local_permutation(
    est: Any,
    X: Any,
    y: Any,
    *,
    oob: bool = False,
    level: str = "tree",
    n_jobs: int | None = None,
    random_state: Any = None,
) -> LocalImportances:
    """Casewise (per-sample) permutation importance.

    ``level="tree"`` (ranger's ``local.importance``, randomForest's ``localImp``):
    ``C[i, m] = (1/|T_i|) Σ_{t ∈ T_i} [L_t(x_i with x_im permuted) − L_t(x_i)]``, with
    ``L_t`` tree ``t``'s 0/1 loss (classifier) or squared error (regressor). Out-of-bag
    (``oob=True``, ``X, y`` the training data, checked as in :func:`permutation`): ``T_i`` =
    the trees for which row ``i`` is out of bag, with the permutations of
    ``permutation(est, X, y, oob=True, random_state=random_state)`` (NaN for a row in every
    bag), so ``Σ_i |T_i| C[i, m] = Σ_t |O_t| per_tree[t, m]``. Held-out: ``T_i`` = all trees
    and one permutation ``π_m`` of the rows of ``X`` per feature, those of
    ``permutation(est, X, y, n_repeats=1, random_state=random_state)``; then
    ``mean_i C[i, m] = (1/M) Σ_t [err_t(X^{π_m}) − err_t(X)]``.

    ``level="forest"`` (held-out only) uses the forest's prediction instead of each tree's:
    ``C[i, m] = L(f(x_i^{π_m})) − L(f(x_i))`` with 0/1 loss of the predicted class or
    squared error; then ``mean_i C[i, m]`` is exactly the held-out importance
    ``permutation(est, X, y, scoring=s, n_repeats=1, random_state=...)`` with
    ``s = "accuracy"`` (classifier) or ``"neg_mean_squared_error"`` (regressor).

    Parameters
    ----------
    est : fitted forestimp estimator
    X, y : held-out data, or the training data with ``oob=True``
    oob : bool, default=False
    level : {"tree", "forest"}, default="tree"
    n_jobs : int or None, default=None
    random_state : int, RandomState or None, default=None

    Returns
    -------
    LocalImportances
        ``values`` = ``C`` (n_samples, n_features); ``importances_mean`` its mean over the
        rows without NaN.
    """
    X, y = _sparse.checked(X), _sparse.checked(y, "y")
    forest = checked_model(est, "local_permutation").forest_
    n_jobs = P.check_n_jobs(n_jobs)
    seed = P.seed_from(random_state)
    level = P.check_choice("level", level, ("tree", "forest"))
    names = feature_names_of(est, forest.n_features)
    if oob:
        if level != "tree":
            raise InvalidParameterError("level='forest' needs held-out X and y (oob=False).")
        Xt, yt = est._training_input(X, y)
        C = local_permutation_importance(forest, Xt, yt, oob=True, seed=seed, n_jobs=n_jobs)
        return local_result(C, "local_permutation", names)
    if X is None or y is None:
        raise InvalidParameterError(
            "Pass both X and y: held-out data, or the training data with oob=True."
        )
    Xe = est._engine_input(X)
    yc = est._target_codes(y, Xe.shape[0])
    if level == "tree":
        C = local_permutation_importance(forest, Xe, yc, oob=False, seed=seed, n_jobs=n_jobs)
        return local_result(C, "local_permutation", names)
    clf = hasattr(est, "classes_")

    def loss(pred: np.ndarray) -> np.ndarray:
        if clf:
            return (np.argmax(pred, axis=1) != yc).astype(np.float64)
        return (yc - pred[:, 0]) ** 2

    base = loss(forest.predict(Xe, n_jobs=n_jobs))
    C = np.empty(Xe.shape)
    for m in range(Xe.shape[1]):
        pred = permuted_predictions(forest, Xe, m, n_repeats=1, seed=seed, n_jobs=n_jobs)[0]
        C[:, m] = loss(pred) - base
    return local_result(C, "local_permutation_forest", names)

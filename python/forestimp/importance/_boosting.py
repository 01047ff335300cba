"""Permutation importances of gradient-boosting models (:mod:`forestimp.boosting`), for
:func:`forestimp.importance.permutation`: held out (the scorer on a permuted copy of X) and
out of bag on each round's unused rows (``subsample < 1``, computed by the engine,
``src/importance/boosted_oob.rs``)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .. import _params as P
from .._core import (
    DataError,
    InvalidParameterError,
    booster_oob_permutation_importance,
    permutation_indices,
)
from .._outputs import label_codes
from ._permutation_core import PermutationImportance, _result, held_out_results
from ._result import feature_names_of
from ._scoring import _call, resolve


def _boosting_permutation(
    est: Any,
    X: Any,
    y: Any,
    oob: bool,
    n_repeats: Any,
    scoring: Any,
    sample_weight: Any,
    scaled: bool,
    random_state: Any,
    n_jobs: Any = None,
) -> PermutationImportance | dict[str, PermutationImportance]:
    """Held-out permutation importance of a gradient-boosting model: the scorer on a copy
    of X with one column permuted at a time (``sklearn.inspection.permutation_importance``),
    with the permutations of the forests' held-out measure (``permutation_indices``)."""
    check_is_fitted(est, "booster_")
    if oob:
        return _boosting_oob(
            est, X, y, n_repeats, scoring, sample_weight, scaled, random_state, n_jobs
        )
    if X is None or y is None:
        raise InvalidParameterError("Pass both X and y (held-out data).")
    n_repeats = P.check_int("n_repeats", n_repeats, 1)
    P.check_n_jobs(n_jobs)  # the scorer runs in this thread; checked as everywhere
    if scaled and n_repeats < 2:
        raise InvalidParameterError("scaled=True needs n_repeats >= 2.")
    seed = P.seed_from(random_state)
    Xe = np.array(est._engine_input(X), order="F")  # one copy, one column rewritten per draw
    yv = np.asarray(y)
    if hasattr(est, "classes_") and yv.ndim == 1 and label_codes(est.classes_, yv)[1].any():
        # As the forests' measures: a label the model never saw (or text among numbers,
        # which the scorer would meet with a TypeError) is a wrong y.
        raise DataError("y holds labels the model was not fitted on.")
    sw = None if sample_weight is None else _check_sample_weight(sample_weight, Xe)
    scorer, _, multi = resolve(est, scoring)
    n, p = Xe.shape
    with warnings.catch_warnings():
        # X's names were checked against feature_names_in_ above; the scorer then sees
        # the engine's array, which scikit-learn would flag on every call.
        warnings.filterwarnings("ignore", "X does not have valid feature names", UserWarning)
        baseline = _call(scorer, est, Xe, yv, sw)
        imp = {k: np.zeros((p, n_repeats)) for k in baseline}
        for m in range(p):
            column = Xe[:, m].copy()
            for r in range(n_repeats):
                Xe[:, m] = column[permutation_indices(seed, n, m, r)]
                for k, v in _call(scorer, est, Xe, yv, sw).items():
                    imp[k][m, r] = baseline[k] - v
            Xe[:, m] = column
    names = feature_names_of(est, p)
    return held_out_results(imp, baseline, multi, names, scaled, seed)


def _boosting_oob(
    est: Any,
    X: Any,
    y: Any,
    n_repeats: Any,
    scoring: Any,
    sample_weight: Any,
    scaled: bool,
    random_state: Any,
    n_jobs: Any,
) -> PermutationImportance:
    """Out-of-bag permutation importance of a gradient-boosting model (``subsample < 1``).

    Round ``t`` of the fit drew its in-bag rows; its out-of-bag rows ``O_t`` are
    regenerated from the seed. With ``F_{t-1}`` the raw prediction before the round (the
    initial model included), ``ν`` the learning rate and ``v_t`` the round's trees::

        L_t      = L(y_O, F_{t-1}(X_O) + ν v_t(X_O))              (= oob_scores_[t])
        VI_t(m)  = L(y_O, F_{t-1}(X_O) + ν v_t(X_O, column m permuted among O_t)) − L_t

    ``L`` is the loss ``oob_scores_`` reports (``sample_weight``-weighted mean over ``O_t``,
    scikit-learn's factor of 2 for the squared error and binomial deviance). Only the
    round's own trees, which never saw ``O_t``, read the permuted column: ``VI_t(m)`` is the
    part of the round's out-of-bag improvement that needs ``X_m``, and is exactly 0 when the
    round does not split on ``m``. Column ``t`` of ``importances`` is ``VI_t`` averaged over
    the repeats; ``importances_mean`` is the mean over the rounds (``n_estimators_ *
    importances_mean`` is the loss of total out-of-bag improvement). ``oob_error`` holds
    ``L_t``. The permutations are the forests' OOB permutations of ``(random_state, t, m,
    repeat)``, and the numbers are the same for any ``n_jobs``.

    ``X, y`` (and ``sample_weight``) must be the training data: each ``L_t`` is checked
    against ``oob_scores_`` (``DataError`` otherwise). Models fitted with early stopping
    (their rounds read a split of ``X``) and ``subsample == 1`` are refused
    (``InvalidParameterError``).
    """
    if est.subsample >= 1.0:
        raise InvalidParameterError(
            "Out-of-bag permutation importance needs subsample < 1: every round of this "
            "gradient-boosting model read every row. Pass held-out X, y (oob=False)."
        )
    if est.n_iter_no_change is not None:
        raise InvalidParameterError(
            "Out-of-bag permutation importance is not available for a model fitted with "
            "early stopping (n_iter_no_change): its rounds read a random split of X."
        )
    if scoring is not None:
        raise InvalidParameterError(
            "The 'scoring' parameter applies to held-out data only: out-of-bag importance "
            "uses the model's loss."
        )
    if X is None or y is None:
        raise InvalidParameterError("Pass both X and y (the training data) with oob=True.")
    n_repeats = P.check_int("n_repeats", n_repeats, 1)
    seed = P.seed_from(random_state)
    Xe = est._engine_input(X)
    yv = np.asarray(y)
    if yv.ndim != 1 or yv.shape[0] != Xe.shape[0]:
        raise DataError(f"y must have one value per row of X ({Xe.shape[0]}), got {yv.shape}.")
    if hasattr(est, "classes_"):
        codes, unknown = label_codes(est.classes_, yv)
        if unknown.any():
            raise DataError("y holds labels the model was not fitted on.")
        yt = codes.astype(np.float64)
    else:
        yt = np.ascontiguousarray(yv, dtype=np.float64)
    sw = None
    if sample_weight is not None:
        sw = _check_sample_weight(sample_weight, Xe, dtype=np.float64)
    offset = None
    if est._init_estimator():
        offset = np.ascontiguousarray(est._init_raw(Xe), dtype=np.float64).ravel()
    per_rep, oob_loss, _ = booster_oob_permutation_importance(
        est.booster_,
        Xe,
        yt,
        sw,
        offset,
        n_repeats=n_repeats,
        seed=seed,
        n_jobs=P.check_n_jobs(n_jobs),
    )
    return _result(
        per_rep.mean(axis=0).T,
        feature_names_of(est, Xe.shape[1]),
        scaled,
        method="oob",
        draws="rounds",
        baseline_score=None,
        oob_error=oob_loss,
        seed=seed,
    )

"""Context-dependent variable importances (Sutera, PhD thesis, ch. 6).

One forest, grown on the inputs V without the context variable ``X_c``, is re-read with the
samples split by context value. At every node ``t`` splitting on ``X_m`` the information of the
split on all samples of ``t``, ``I(Y; X_m | t)``, is compared with the same quantity on the
samples of ``t`` that have ``X_c = x_c``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import _check_sample_weight

from .. import _params as P
from .. import _sparse
from .._core import DataError, InvalidParameterError, context_importances
from .._fitted import checked_model
from ._result import Importances, feature_names_of


@dataclass(frozen=True, kw_only=True, eq=False)
class ContextImportances(Importances):
    """Scores of :func:`context`; ``(p, K)`` arrays are indexed (feature, context value).

    An :class:`Importances` whose ``importances_mean`` is the context-free importance and
    whose ``importances`` is None (the engine sums trees directly: no per-tree draws, so
    ``importances_std`` and ``standard_error`` are NaN), with the context scores added.

    Attributes
    ----------
    importances_mean : ndarray of shape (p,)
        ``Imp(X_m) = (1/N_T) Σ_T Σ_{t: v(t)=m} p(t) I(Y; X_m | t)`` on the given samples (the
        forest's raw MDI when they are its training set and ``bootstrap=False``).
    absolute : ndarray of shape (p, K)
        ``Imp^|(X_m | x_c) = (1/N_T) Σ_T Σ_{t: v(t)=m} p(t) |I(Y;X_m|t) − I(Y;X_m|t,x_c)|``
        (Eq. 6.10). Zero for every ``x_c`` iff ``X_m`` is context-independent (Thm 6.2).
    signed : ndarray of shape (p, K)
        ``Imp^Δ(X_m | x_c)``: the same without the absolute value (Eq. 6.12); negative when
        the context adds information about ``Y`` (complementary), positive when it removes
        some (redundant).
    global_signed : ndarray of shape (p,)
        ``Imp^Δ(X_m | X_c) = (1/N_T) Σ_T Σ_t p(t) (I(Y;X_m|t) − Σ_{x_c} P(x_c|t) I(Y;X_m|t,x_c))``.
    pvalues_absolute, pvalues_signed : ndarray of shape (p, K) or None
        Permutation p-values ``(1 + #{k: s_k ≥ s}) / (1 + n_permutations)`` of ``Imp^|`` and
        of ``|Imp^Δ|`` (two-sided); None when ``n_permutations=0``.
    labels : ndarray of shape (p, K), dtype object
        ``"independent"``, ``"complementary"``, ``"redundant"``, ``"irrelevant"`` (redundant
        and carrying no information in ``x_c``) or ``"uncharacterised"`` (Thm 6.3).
    context_values : ndarray of shape (K,)
        The context labels, sorted (column ``k`` of the arrays is ``context_values[k]``).
    per_context : ndarray of shape (K, p) or None
        Naive ``Imp(X_m | X_c = x_c)``: raw MDI of a clone of the estimator refitted on the
        rows of each context (``naive=True``).
    null_absolute, null_signed : ndarray of shape (n_permutations, p, K)
        ``Imp^|`` and ``Imp^Δ`` under each permutation of the context.
    """

    absolute: np.ndarray
    signed: np.ndarray
    global_signed: np.ndarray
    pvalues_absolute: np.ndarray | None
    pvalues_signed: np.ndarray | None
    labels: np.ndarray
    context_values: np.ndarray
    per_context: np.ndarray | None = None
    null_absolute: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0)), repr=False)
    null_signed: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0)), repr=False)


def context(
    est: Any,
    X: Any,
    y: Any,
    context: Any = None,
    *,
    empty: str = "zero",
    n_permutations: int = 0,
    alpha: float = 0.05,
    rtol: float = 0.05,
    naive: bool = False,
    random_state: Any = None,
    n_jobs: int | None = None,
    sample_weight: Any = None,
) -> ContextImportances:
    """Context-dependent importances of a fitted forest (Sutera, PhD ch. 6).

    With ``I(·|t)`` the impurity decrease of the split of node ``t`` measured on the samples
    of ``t`` (in bits for ``criterion="entropy"``; Gini decrease, or variance decrease
    ``Var(Y|t) − Σ_children w_child/w_t Var(Y|child)`` for regression, Eq. 6.13) and
    ``I(·|t, x_c)`` the same on the samples of ``t`` with context ``x_c``::

        Imp^|(X_m | x_c) = (1/N_T) Σ_T Σ_{t: v(t)=m} p(t) |I(Y;X_m|t) − I(Y;X_m|t,x_c)|
        Imp^Δ(X_m | x_c) = (1/N_T) Σ_T Σ_{t: v(t)=m} p(t) (I(Y;X_m|t) − I(Y;X_m|t,x_c))

    The theory holds for totally randomized trees (``TotallyRandomizedTreesClassifier``)
    grown on all samples (``bootstrap=False``) without the context among the inputs. A split
    on a non-binary feature is binary here, so ``I(Y; X_m | t)`` is the information of the
    split, not of the whole variable. ``p(t)`` is the weight of the given samples reaching
    ``t`` over their total weight; with bootstrap trees that is not the weight the tree was
    grown on, and ``importances`` then differs from the forest's MDI.

    Parameters
    ----------
    est : fitted forestimp estimator
    X : array-like of shape (n_samples, n_features)
        Samples to route: the training data for the thesis' scores (the estimator keeps no
        reference to it), or any other sample of the same population.
    y : array-like of shape (n_samples,), default=None
        Their outputs (class labels of ``est.classes_``, or real values).
    context : array-like of shape (n_samples,)
        Context value of every sample (any sortable labels, at most 256 distinct).
    empty : {"zero", "skip"}, default="zero"
        When node ``t`` holds no sample of ``x_c``: ``"zero"`` sets ``I(·|t, x_c) = 0`` (the
        node adds ``p(t) I(Y;X_m|t)`` to both scores; this reproduces Sutera's Table 6.3),
        ``"skip"`` leaves the node out of the scores of ``x_c``.
    n_permutations : int, default=0
        Random permutations of the context labels for the p-values (the thesis uses 1000).
    alpha : float, default=0.05
        Significance level of ``pvalues_absolute`` for the labels.
    rtol : float, default=0.05
        Relative tolerance of the equalities of Thm 6.3: ``|Imp^Δ| ≈ Imp^|`` when
        ``Imp^| − |Imp^Δ| ≤ rtol·Imp^|`` and ``Imp^| ≈ Imp`` when ``|Imp^| − Imp| ≤ rtol·Imp``.
    naive : bool, default=False
        Also refit a clone of ``est`` on each context's rows (``per_context``).
    random_state : int, RandomState or None
        Seed of the permutations (permutation ``k`` depends only on the seed and ``k``).
    n_jobs : int or None
        Threads (-1: all cores; None: the estimator's ``n_jobs``); results do not depend
        on it. Permutations run in parallel, each summing the trees in tree order.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples in ``p(t)`` and in every impurity (pass the fit's weights
        for ``importances`` to equal the MDI).

    Returns
    -------
    ContextImportances

    Notes
    -----
    Labels (Thm 6.3): a feature is ``"independent"`` in ``x_c`` when ``pvalues_absolute >
    alpha`` (without permutations: when ``Imp^|`` is 0 up to rounding, which is only
    meaningful on exhaustive data). Otherwise it is ``"complementary"`` if ``|Imp^Δ| ≈ Imp^|``
    and ``Imp^Δ < 0``, ``"redundant"`` if ``Imp^Δ > 0`` (``"irrelevant"`` if moreover
    ``Imp^| ≈ Imp``), else ``"uncharacterised"``.

    P-values: the forest does not see the context, so permuting the context labels (Sutera's
    §30.4 recipe) leaves the trees unchanged; only the per-node context statistics are
    recomputed. ``pvalues_absolute = (1 + #{k: Imp^|_k ≥ Imp^|}) / (1 + n_permutations)``;
    ``pvalues_signed`` compares ``|Imp^Δ_k|`` with ``|Imp^Δ|`` (two-sided). A tie within a
    relative 1e-9 counts. The cost is about ``(1 + n_permutations)`` passes of
    ``O(n_nodes × K × n_classes)`` per tree.
    """
    X, y = _sparse.checked(X), _sparse.checked(y, "y")
    context = _sparse.checked(context, "context")
    est = checked_model(est, "context")
    if context is None:
        raise InvalidParameterError("context is required: one context value per sample")
    X, y_engine, y_labels = _data(est, X, y)
    n = X.shape[0]
    c = np.asarray(context)
    if c.ndim != 1 or c.shape[0] != n:
        raise DataError(f"context must have shape ({n},), got {c.shape}")
    values, codes = np.unique(c, return_inverse=True)
    empty = P.check_choice("empty", empty, ("zero", "skip"))
    n_perm = P.check_int("n_permutations", n_permutations, 0)
    alpha = P.check_real("alpha", alpha, 0.0, 1.0)
    rtol = P.check_real("rtol", rtol, 0.0, 1.0)
    sw = None
    if sample_weight is not None:
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if getattr(est, "bootstrap", False) or getattr(est, "max_samples", None) is not None:
        warnings.warn(
            "the trees were grown on resampled rows: context scores weigh nodes by the given "
            "samples, not by each tree's sample (use bootstrap=False as in Sutera, ch. 6)",
            UserWarning,
            stacklevel=2,
        )
    # Keys present for every call; the None values are the p-values without permutations.
    out: dict[str, Any] = context_importances(
        est.forest_,
        X,
        y_engine,
        np.ascontiguousarray(codes, dtype=np.int64),
        len(values),
        sw,
        empty=empty,
        n_permutations=n_perm,
        random_state=P.seed_from(random_state),
        n_jobs=P.check_n_jobs(n_jobs if n_jobs is not None else getattr(est, "n_jobs", None)),
    )
    per_context = None
    if naive:
        per_context = _naive(est, X, y_labels, codes, len(values), sw)
    return ContextImportances(
        importances_mean=out["importances"],
        importances=None,
        method="context",
        feature_names=feature_names_of(est, X.shape[1]),
        absolute=out["absolute"],
        signed=out["signed"],
        global_signed=out["global_signed"],
        pvalues_absolute=out["pvalues_absolute"],
        pvalues_signed=out["pvalues_signed"],
        labels=_labels(out, alpha, rtol),
        context_values=values,
        per_context=per_context,
        null_absolute=out["null_absolute"],
        null_signed=out["null_signed"],
    )


def _data(est: Any, X: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X for the engine, y for the engine, y as labels for refitting)``."""
    if X is None or y is None:
        raise InvalidParameterError("Pass the samples to route and their outputs: X and y.")
    X = est._engine_input(X)
    y = np.asarray(y)
    return X, est._target_codes(y, X.shape[0]), y


def _naive(
    est: Any, X: np.ndarray, y: np.ndarray, codes: np.ndarray, k: int, sw: np.ndarray | None
) -> np.ndarray:
    """Raw MDI of ``clone(est)`` refitted on each context's rows, shape (K, p)."""
    out = np.zeros((k, X.shape[1]))
    for j in range(k):
        rows = codes == j
        w = None if sw is None else sw[rows]
        out[j] = clone(est).fit(X[rows], y[rows], sample_weight=w).mdi_importances_
    return out


def _labels(out: dict[str, Any], alpha: float, rtol: float) -> np.ndarray:
    """Thm 6.3 labels of every (feature, context value); see :func:`context`."""
    absolute, signed = out["absolute"], out["signed"]
    imp = out["importances"][:, None]
    pvalues = out["pvalues_absolute"]
    if pvalues is None:
        scale = max(float(np.max(out["importances"], initial=0.0)), np.finfo(float).tiny)
        dependent = absolute > 1e-10 * scale
    else:
        dependent = pvalues <= alpha
    equal = absolute - np.abs(signed) <= rtol * absolute
    irrelevant = np.abs(absolute - imp) <= rtol * imp
    labels = np.full(absolute.shape, "uncharacterised", dtype=object)
    labels[dependent & equal & (signed > 0)] = "redundant"
    labels[dependent & equal & (signed > 0) & irrelevant] = "irrelevant"
    labels[dependent & equal & (signed < 0)] = "complementary"
    labels[~dependent] = "independent"
    return labels

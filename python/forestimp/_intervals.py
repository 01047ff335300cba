"""Prediction intervals and standard errors of the forest regressors (issue #53).

Everything here is read from what a fitted forest already holds: the trees' own predictions
(``_core.tree_predictions``), the training targets and out-of-bag mean predictions of the
leaf values (``store_leaf_values=True``), and the trees' draws of the training rows,
regenerated from their seeds (``_core.in_bag_counts``). Nothing is refitted.

* ``predict_interval(method="jackknife+")``: the jackknife+-after-bootstrap (Kim, Xu &
  Barber 2020); ``"conformal"``: the mean prediction plus or minus a quantile of the
  out-of-bag residuals; ``"quantile"``: the quantile regression forest's central interval.
* ``predict_se``: the bias-corrected infinitesimal jackknife (Wager, Hastie & Efron 2014),
  computed as ranger's ``predict(type = "se", se.method = "infjack")`` and forestci's
  ``random_forest_error`` compute it without their empirical-Bayes calibration.

Work over rows is done a block at a time, with matrix products over the trees, and each
block's float64 scratch kept under ``BUDGET`` bytes; no Python loop runs over rows. The
guarantee each method has is in ``docs/intervals.md``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import sparse

from . import _core, _quantiles, _sparse
from . import _params as P
from ._core import InvalidParameterError

METHODS = ("jackknife+", "conformal", "quantile")
# Bytes of float64 scratch one block of rows may take (per-tree predictions, the block's
# leave-one-out predictions, the columns of the draw counts as floats).
BUDGET = 1 << 26


# ------------------------------------------------------------------ checks and ranks
def checked_alpha(alpha: Any) -> float:
    """``alpha`` as a float in (0, 1): the share of new observations an interval may miss."""
    good = isinstance(alpha, numbers.Real) and not isinstance(alpha, bool)
    if not good or not 0.0 < float(alpha) < 1.0:
        raise InvalidParameterError(f"alpha must be a number in (0, 1), got {alpha!r}.")
    return float(alpha)


def checked_method(method: Any) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidParameterError(
            f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}."
        )
    return method


def decimal(alpha: float) -> Fraction:
    """``alpha`` as the decimal it was written as (the shortest that reads back as the same
    float), exactly. Float arithmetic moves ranks: ``(1 − 0.45) · 100`` is
    ``55.00000000000001``, whose ceiling is 56; the float's own binary value is no better
    (``0.3`` is just below 3/10, so ``⌊0.3 · 10⌋`` would be 2)."""
    return Fraction(repr(float(alpha)))


def lower_rank(alpha: float, n: int) -> int:
    """``⌊α(n + 1)⌋``, exactly (:func:`decimal`)."""
    return math.floor(decimal(alpha) * (n + 1))


def upper_rank(alpha: float, n: int) -> int:
    """``⌈(1 − α)(n + 1)⌉``, exactly (:func:`decimal`)."""
    return math.ceil((1 - decimal(alpha)) * (n + 1))


def kth_smallest(values: np.ndarray, k: int, overwrite: bool = False) -> np.ndarray:
    """The ``k``-th smallest (from 1) of each row of ``values`` (2-D), or of a 1-D
    ``values``: ``-inf`` for ``k < 1``, ``+inf`` for ``k`` above the row's length (a rank
    out of range puts no bound on that side). ``overwrite``: ``values`` may be reordered."""
    n = values.shape[-1]
    if k < 1 or k > n:
        return np.full(values.shape[:-1], -np.inf if k < 1 else np.inf)
    work = values if overwrite else values.copy()
    work.partition(k - 1, axis=-1)
    return work[..., k - 1].copy()


# ------------------------------------------------------------------------- draws
def in_bag(forest: Any) -> np.ndarray:
    """``(n_trees, n_train)``: how many times each tree drew each training row (0: out of
    bag), in uint8 unless a count needs more (only ``max_samples`` far above the number of
    rows draws a row 256 times)."""
    first = _core.in_bag_counts(forest, 0)
    counts = np.empty((forest.n_estimators, len(first)), dtype=np.uint8)
    for t in range(forest.n_estimators):
        drawn = first if t == 0 else _core.in_bag_counts(forest, t)
        if drawn.max(initial=0) > np.iinfo(counts.dtype).max:
            counts = counts.astype(np.uint32)
        counts[t] = drawn
    return counts


def no_oob_rows(what: str) -> InvalidParameterError:
    return InvalidParameterError(
        f"{what} needs out-of-bag rows, and every tree of this forest was grown on every "
        "training row: fit with bootstrap=True (or max_samples below the number of rows)."
    )


def sampled_rows(est: Any, what: str) -> np.ndarray:
    """The draw counts of ``est``'s trees (:func:`in_bag`), checked to leave rows out of
    bag (a typed error saying why otherwise)."""
    if est.forest_.assembled:
        raise InvalidParameterError(
            f"{what} needs the trees' draws of one training set, and this forest was "
            "assembled from trees grown apart (Random Patches grown apart, or a warm start "
            "on other data): it has no out-of-bag rows."
        )
    counts = in_bag(est.forest_)
    if not (counts == 0).any():
        raise no_oob_rows(what)
    return counts


def column_parts(
    counts: np.ndarray, make: Callable[[np.ndarray], np.ndarray]
) -> Callable[[], Iterator[tuple[slice, np.ndarray]]]:
    """A function giving ``(columns, make(counts[:, columns]))`` over the training rows,
    each part at most ``BUDGET`` bytes of float64. When one part holds them all it is made
    once and given again; otherwise each part is made again for each block of test rows,
    which costs ``1 / block`` of the block's matrix product."""
    n_trees, n = counts.shape
    step = max(1, BUDGET // (8 * n_trees))
    spans = [slice(a, min(n, a + step)) for a in range(0, n, step)]
    if len(spans) == 1:
        whole = [(spans[0], make(counts))]
        return lambda: iter(whole)
    return lambda: ((s, make(counts[:, s])) for s in spans)


def tree_prediction_blocks(est: Any, X: Any, rows: int) -> Iterator[tuple[slice, np.ndarray]]:
    """``(rows of X, their per-tree predictions (rows, n_trees, n_outputs))``, ``rows`` at a
    time; ``X`` as ``_engine_input`` gives it (dense, or the engine's CSC)."""
    n_jobs = P.check_n_jobs(est.n_jobs)
    n = X.shape[0]
    if sparse.issparse(X):
        X = X.tocsr()  # rows are cut from CSR in O(their entries)
    for a in range(0, n, rows):
        block = X[a : a + rows]
        block = _sparse.engine_csc(block) if sparse.issparse(block) else np.ascontiguousarray(block)
        span = slice(a, min(n, a + rows))
        yield span, _core.tree_predictions(est.forest_, block, n_jobs=n_jobs)


def block_rows(per_row_floats: int) -> int:
    """Rows of a block whose rows each take ``per_row_floats`` float64 of scratch."""
    return max(1, BUDGET // (8 * max(1, per_row_floats)))


# ------------------------------------------------------------------------- intervals
def oob_residuals(values: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """``(rows with an out-of-bag prediction, |y_i − ŷ_oob(X_i)| of those rows, one column
    an output)``, warning when rows have none: they are left out of every interval."""
    oob = values.oob_prediction()
    seen = ~np.isnan(oob).any(axis=1)
    if not seen.any():
        raise no_oob_rows(what)
    if not seen.all():
        warnings.warn(
            f"{int((~seen).sum())} of {len(seen)} training rows were drawn into every tree "
            "and have no out-of-bag prediction: the intervals leave them out (use more trees).",
            UserWarning,
            stacklevel=4,
        )
    return seen, np.abs(values.y()[seen] - oob[seen])


def leave_one_out_weights(counts: np.ndarray) -> np.ndarray:
    """``(n_trees, n)`` float64: ``1 / |{b : N_bi = 0}|`` where tree ``b`` left training
    row ``i`` out, 0 elsewhere, so that ``preds @ weights`` is ``μ_{−i}``, the mean of the
    trees without row ``i``. Every column must have a tree without its row."""
    out = (counts == 0).astype(np.float64)
    out /= out.sum(axis=0)
    return out


def jackknife_plus_block(
    preds: np.ndarray, parts: Any, residuals: np.ndarray, alpha: float
) -> np.ndarray:
    """``(rows, 2)`` bounds of the jackknife+-after-bootstrap for one output.

    ``preds``: ``(rows, n_trees)`` per-tree predictions of the test rows; ``parts()``:
    the :func:`leave_one_out_weights` of the ``n`` training rows used, by columns
    (:func:`column_parts`); ``residuals``: their ``R_i``. The bounds are the
    ``⌊α(n+1)⌋``-th smallest of ``μ_{−i}(x) − R_i`` and the ``⌈(1−α)(n+1)⌉``-th smallest of
    ``μ_{−i}(x) + R_i``.
    """
    n = len(residuals)
    loo = np.empty((preds.shape[0], n))
    for columns, weights in parts():
        loo[:, columns] = preds @ weights
    lower = kth_smallest(loo - residuals, lower_rank(alpha, n), overwrite=True)
    loo += residuals
    upper = kth_smallest(loo, upper_rank(alpha, n), overwrite=True)
    return np.stack([lower, upper], axis=1)


def jackknife_plus(est: Any, X: Any, values: Any, alpha: float) -> np.ndarray:
    """``(n, n_outputs, 2)`` jackknife+-after-bootstrap bounds of every row of ``X``."""
    what = "predict_interval(method='jackknife+')"
    counts = sampled_rows(est, what)
    seen, residuals = oob_residuals(values, what)
    counts = counts[:, seen]
    parts = column_parts(counts, leave_one_out_weights)
    n_trees, n = counts.shape
    n_outputs = residuals.shape[1]
    out = np.empty((X.shape[0], n_outputs, 2))
    for span, preds in tree_prediction_blocks(est, X, block_rows(n_trees * n_outputs + 2 * n)):
        for j in range(n_outputs):
            out[span, j] = jackknife_plus_block(preds[:, :, j], parts, residuals[:, j], alpha)
    return out


def conformal(est: Any, X: Any, values: Any, alpha: float) -> np.ndarray:
    """``(n, n_outputs, 2)``: the mean prediction ± the ``⌈(1−α)(n+1)⌉``-th smallest
    out-of-bag residual of each output."""
    _, residuals = oob_residuals(values, "predict_interval(method='conformal')")
    half = kth_smallest(residuals.T, upper_rank(alpha, residuals.shape[0]))
    mean = est.forest_.predict(X, n_jobs=P.check_n_jobs(est.n_jobs))
    return np.stack([mean - half, mean + half], axis=2)


# ------------------------------------------------------------- infinitesimal jackknife
def centred(counts: np.ndarray) -> np.ndarray:
    """``Ñ_bi = N_bi − N̄_i`` as float64 (``N̄_i`` the mean over trees of row ``i``'s draws)."""
    as_float = counts.astype(np.float64)
    return as_float - as_float.mean(axis=0)


class InfinitesimalJackknife:
    """``V̂_IJ-U`` from the draw counts ``N`` ``(B, n)`` of the ``B`` trees, for
    ``n_test`` rows to come (which decides the way it is computed).

    ``V̂_IJ-U(x) = Σ_i Cov_b(N_bi, t_b(x))² − (Σ_i Var_b(N_bi)) Σ_b (t_b(x) − t̄(x))² / B²``,
    covariances over the trees with divisor ``B``: ranger's ``rInfJack(calibrate =
    FALSE)`` (``n · N.var`` is ``Σ_i Var_b(N_bi)``), forestci's ``random_forest_error(
    calibrate=False)``. With the centred counts ``Ñ``, the first term is
    ``‖C Ñ‖²_row / B²`` for the centred predictions ``C`` (rows, B): through the trees'
    Gram matrix ``G = Ñ Ñᵀ`` as ``diag(C G Cᵀ) / B²`` (``O(B² n)`` once, ``O(B²)`` a row),
    or directly (``O(B n)`` a row) when ``B²`` is above ``n · n_test`` (ranger's rule) or
    ``G`` above ``BUDGET``. Draws without replacement (no row drawn twice, ranger's and
    forestci's test) multiply it by ``(n / (n − s))²``, ``s / n`` the mean count.
    """

    def __init__(self, counts: np.ndarray, n_test: int) -> None:
        self.n_trees, n = counts.shape
        self.parts = column_parts(counts, centred)
        self.trace = sum(float(np.einsum("bi,bi->", p, p)) for _, p in self.parts())
        self.gram: np.ndarray | None = None
        if self.n_trees**2 <= n * n_test and 8 * self.n_trees**2 <= BUDGET:
            self.gram = np.zeros((self.n_trees, self.n_trees))
            for _, p in self.parts():
                self.gram += p @ p.T
        self.inflation = 1.0 / (1.0 - counts.mean()) ** 2 if counts.max() <= 1 else 1.0
        # Float64 scratch a row takes besides its predictions.
        self.row_floats = self.n_trees if self.gram is not None else n

    def variance(self, preds: np.ndarray) -> np.ndarray:
        """``V̂_IJ-U`` of each row of ``preds`` ``(rows, B)``, the trees' predictions;
        negative where Monte Carlo noise outweighs it (few trees)."""
        b = self.n_trees
        c = preds - preds.mean(axis=1, keepdims=True)
        if self.gram is not None:
            raw = np.einsum("rb,rb->r", c @ self.gram, c)
        else:
            raw = np.zeros(c.shape[0])
            for _, part in self.parts():
                cov = c @ part
                raw += np.einsum("ri,ri->r", cov, cov)
        bias = self.trace * np.einsum("rb,rb->r", c, c) / b
        return self.inflation * (raw - bias) / b**2


def standard_errors(est: Any, X: Any) -> np.ndarray:
    """``(n, n_outputs)`` infinitesimal-jackknife standard errors of the mean prediction."""
    ij = InfinitesimalJackknife(sampled_rows(est, "predict_se"), X.shape[0])
    n_outputs = est.forest_.n_outputs
    rows = block_rows(ij.n_trees * n_outputs + ij.row_floats)
    out = np.empty((X.shape[0], n_outputs))
    for span, preds in tree_prediction_blocks(est, X, rows):
        for j in range(n_outputs):
            out[span, j] = ij.variance(preds[:, :, j])
    # Monte Carlo noise makes some estimates negative with few trees; ranger's calibration
    # and its jackknife keep them at 0 or above too.
    return np.sqrt(np.maximum(out, 0.0))


class IntervalsMixin:
    """``predict_interval`` and ``predict_se`` of the forest regressors."""

    def predict_interval(
        self, X: Any, alpha: float = 0.1, method: str = "jackknife+"
    ) -> np.ndarray:
        """Prediction intervals for new observations at the rows of ``X``, meant to hold
        the target with probability ``1 − alpha``; shape ``(n_samples, 2)`` of
        ``[lower, upper]``, or ``(n_samples, n_outputs, 2)`` with several outputs.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        alpha : float in (0, 1), default 0.1
            The share of new observations the interval may miss.
        method : {"jackknife+", "conformal", "quantile"}, default "jackknife+"
            ``"jackknife+"``: the jackknife+-after-bootstrap (Kim, Xu & Barber 2020). With
            ``R_i = |y_i − μ_{−i}(X_i)|``, ``μ_{−i}`` the mean of the trees whose sample
            left training row ``i`` out, the bounds are the ``⌊α(n+1)⌋``-th smallest of
            ``μ_{−i}(x) − R_i`` and the ``⌈(1−α)(n+1)⌉``-th smallest of
            ``μ_{−i}(x) + R_i`` (``∓inf`` when the rank is out of ``1..n``). Coverage at
            least ``1 − 2α`` in finite samples. Costs ``O(n_test · n_train · n_trees)``.
            ``"conformal"``: the mean prediction ± the ``⌈(1−α)(n+1)⌉``-th smallest
            out-of-bag residual ``|y_i − ŷ_oob(X_i)|``; ``O(n_test · n_trees)``.
            ``"quantile"``: ``[q_{α/2}(x), q_{1−α/2}(x)]`` of :meth:`predict_quantiles`.

        Every method needs ``store_leaf_values=True`` at fit; ``"jackknife+"`` and
        ``"conformal"`` need out-of-bag rows too (``bootstrap=True``, or ``max_samples``
        below the number of rows). Training rows drawn into every tree have no
        out-of-bag prediction and are left out (``n`` counts the others), with a warning.
        The guarantee of each method: ``docs/intervals.md``.
        """
        a = checked_alpha(alpha)
        how = checked_method(method)
        values = _quantiles.stored(self)
        if how == "quantile":
            return self.predict_quantiles(X, [a / 2, 1 - a / 2])  # type: ignore[attr-defined]
        X = self._engine_input(X, sparse=True)  # type: ignore[attr-defined]
        bounds = (jackknife_plus if how == "jackknife+" else conformal)(self, X, values, a)
        return bounds if getattr(self, "_multi_output", False) else bounds[:, 0]

    def predict_se(self, X: Any) -> np.ndarray:
        """Standard errors of the mean prediction at the rows of ``X`` by the bias-corrected
        infinitesimal jackknife (Wager, Hastie & Efron 2014, ``V̂_IJ-U``); shape
        ``(n_samples,)``, or ``(n_samples, n_outputs)``.

        ``V̂_IJ-U(x) = Σ_i Cov_b(N_bi, t_b(x))² − (Σ_i Var_b(N_bi)) Σ_b (t_b(x) − t̄(x))² / B²``
        over the ``B`` trees (``N_bi`` the times tree ``b`` drew training row ``i``,
        ``t_b(x)`` its prediction, covariances and variances over the trees with divisor
        ``B``), ranger's ``predict(type = "se", se.method = "infjack")`` without its
        empirical-Bayes calibration (ranger and forestci skip that for 20 rows or
        fewer). With a bootstrap ``Var_b(N_bi) ≈ 1`` and the correction is the paper's
        ``(n / B²) Σ_b (t_b(x) − t̄(x))²``. Trees grown on subsamples (no row drawn twice)
        have the estimate multiplied by ``(n / (n − s))²`` (``s`` rows a tree), as
        ranger and forestci do. A negative estimate (Monte Carlo noise, few trees) is
        clipped to 0. It is the sampling error of the forest's mean, for the mean
        prediction, not for a new observation: see :meth:`predict_interval` for that.

        Needs trees grown on random rows (``bootstrap=True`` or ``max_samples`` below
        the number of rows), not leaf values. Costs ``O(B² (n_train + n_test))``, or
        ``O(n_test · n_train · B)`` when ``B²`` exceeds ``n_train · n_test``.
        """
        X = self._engine_input(X, sparse=True)  # type: ignore[attr-defined]
        se = standard_errors(self, X)
        return se if getattr(self, "_multi_output", False) else se[:, 0]

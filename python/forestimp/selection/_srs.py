"""Sequential Random Subspace (Sutera et al. 2018; Sutera, PhD thesis, ch. 7, Algorithm 1):
feature selection when only ``q`` of the ``p`` columns fit in memory.

Each iteration fits a model on a subspace ``Q = R ∪ C`` of q columns and adds to the found set
``F`` every column of Q whose importance is significantly above zero:

* ``R``: ``min(⌊alpha q⌋, |F|)`` columns drawn from F without replacement (accumulation);
* ``C``: the other ``q - |R|`` columns drawn uniformly from ``V \\ R`` (exploration);
* "significantly": above the random-probe threshold (``_probes.py``), as in the thesis.

``alpha = 0`` is plain Random Subspace; ``q = p`` an ordinary forest with probes.

Only the q columns of each subspace are read, from a :class:`~._columns.ColumnSource` (an
array, a DataFrame, a ``.npy`` or a Parquet file); the next subspace is read while the current
model fits, with draws that do not depend on timing (``_subspaces.py``), so the same seed gives
the same result whatever the input and ``n_jobs``.

``batch_size=B`` runs rounds of B subspaces drawn from the F of the round's start
(``_srs_rounds.py``), fitted by an executor (in this process, or on a Dask cluster by
``forestimp.dask.srs``) and merged in their order; B = 1 is Algorithm 1 again. Both paths
update F through ``_record``, the one home of step (c).
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.validation import check_array

from .. import _params as P
from .._core import DataError, InvalidParameterError
from ._base import BaseSelector, SelectionStep, check_importance, is_classification, on_columns
from ._columns import ColumnSource, open_source
from ._plots import srs_trace
from ._probes import ProbeImportances, probe_importances
from ._srs_rounds import Executor, FitSpec, LocalExecutor, draw_round
from ._srs_rounds import with_seed as _with_seed
from ._subspaces import Subspaces, draw_streams


@dataclass(frozen=True, kw_only=True, eq=False)
class SRSStep(SelectionStep):
    """One iteration of :class:`SequentialRandomSubspace`.

    ``features`` is the subspace Q (sorted), ``scores`` its importances, ``kept`` the found
    set F after the iteration, ``dropped`` the columns of Q left out of F.

    Attributes
    ----------
    reused : ndarray of int
        R, the columns of Q drawn from F.
    new : ndarray of int
        Columns added to F at this iteration.
    threshold : float
        The importance a column had to exceed.
    n_found : int
        ``|F|`` after the iteration.
    f1 : float
        F1-score of F against ``true_support`` (NaN when none was given).
    bytes_read : int
        Bytes read from the source for iterations 0..step (prefetching included).
    round : int
        The round of the iteration: ``step // batch_size`` (``step`` without batches).
    """

    reused: np.ndarray
    new: np.ndarray
    threshold: float
    n_found: int
    f1: float
    bytes_read: int
    round: int

    @property
    def subspace(self) -> np.ndarray:
        """Q, the columns the model of this iteration saw."""
        return self.features

    @property
    def found(self) -> np.ndarray:
        """F after this iteration."""
        return self.kept


def default_estimator(classification: bool, n_columns: int, n_jobs: int | None) -> Any:
    """The model of ``estimator=None`` for ``n_columns`` (q + probes): 50 Extra-Trees,
    K = max(sqrt, 10 %) of the columns per node, leaves of at least 0.2 % of the samples.

    Randomized trees as in the thesis (parameter K = ``max_features``), an ensemble rather
    than a single tree per iteration because a significance test needs stable importances.
    K and the leaf size follow the thesis's advice for finite samples (ch. 5: K > 1 keeps
    irrelevant columns away from the top splits, and a leaf size avoids the inflated impurity
    decreases of tiny nodes). On the planted pairs of ``benches/bench_srs.py`` (10 000 rows,
    500 columns), a column relevant only next to its partner scores 2 to 3 times the probe
    threshold this way, and 0.7 to 0.9 times with K = sqrt(columns) and full-depth trees.
    """
    from ..ensemble import ExtraTreesClassifier, ExtraTreesRegressor

    cls = ExtraTreesClassifier if classification else ExtraTreesRegressor
    k = max(math.isqrt(n_columns), n_columns // 10)
    return cls(n_estimators=50, max_features=k, min_samples_leaf=0.002, n_jobs=n_jobs)


@dataclass
class _Run:
    """The state of one run: F (mask), summed importances, and the threshold's inputs."""

    found: np.ndarray
    total: np.ndarray
    truth: np.ndarray | None
    risk: float | None
    n_iterations: int


def in_memory(X: Any) -> Any:
    """``X`` checked as scikit-learn checks an array: numbers held as objects (an
    object-dtype array, a list) become float64, and complex, text or empty data is refused
    in scikit-learn's words. A float, integer or bool array is passed on as it is, without
    a copy; a path, a DataFrame and a sparse matrix are :func:`open_source`'s to check."""
    if isinstance(X, (str, os.PathLike)) or hasattr(X, "columns") or hasattr(X, "todense"):
        return X
    return check_array(
        X, dtype="numeric", ensure_all_finite=False, ensure_min_samples=1,
        ensure_min_features=1, estimator="SequentialRandomSubspace",
    )  # fmt: skip


def check_not_empty(source: ColumnSource) -> None:
    """Refuse a source without rows or columns (a DataFrame, or a Parquet file whose only
    column is the target), in the words of scikit-learn's ``check_array``."""
    shape = (source.n_rows, source.n_columns)
    for count, what in ((source.n_rows, "sample(s)"), (source.n_columns, "feature(s)")):
        if count == 0:
            raise DataError(
                f"Found array with 0 {what} (shape={shape}) while a minimum of 1 is required "
                "by SequentialRandomSubspace: there is nothing to select from."
            )


def _f1(found: np.ndarray, truth: np.ndarray | None) -> float:
    if truth is None:
        return math.nan
    hits = int(np.count_nonzero(found & truth))
    n_found, n_true = int(found.sum()), int(truth.sum())
    return 2.0 * hits / (n_found + n_true) if n_found + n_true else 1.0


class SequentialRandomSubspace(BaseSelector):
    """Memory-constrained feature selection by Sequential Random Subspace (SRS).

    Sutera, Châtel, Louppe, Wehenkel & Geurts (2018); Sutera, PhD thesis, ch. 7, Algorithm 1
    (module docstring). Only q columns (plus ``n_probes`` probes) are in memory at a time;
    ``fit`` takes an array, a DataFrame, or a path to a ``.npy`` (either memory order) or
    Parquet file, of which it reads only the columns each iteration needs.

    Parameters
    ----------
    estimator : estimator, default=None
        Unfitted model refitted at every iteration on the q columns and the probes. None: 50
        forestimp Extra-Trees (classifier or regressor, from ``y``) with K = max(sqrt, 10 %)
        of the columns and ``min_samples_leaf=0.002`` (:func:`default_estimator`). With
        ``TotallyRandomizedTreesClassifier`` (K = 1) and ``r <= q`` relevant features, F
        converges to exactly the relevant ones (thesis, Prop. 7.1).
    q : int, float or "auto", default="auto"
        Columns in memory per iteration; a float in (0, 1] is a fraction of the columns;
        "auto" is ``min(100, p)`` (the memory of the thesis's Table 3.1).
    alpha : float in [0, 1], default=0.5
        Share of the q columns reserved for already found features; ``1 - alpha`` of memory
        always explores (Prop. 7.3). 0 is plain Random Subspace.
    n_iterations : int or "auto", default="auto"
        Models fitted. "auto": ``ceil(5 p / q)``, so that each column is drawn at least once
        with probability about ``1 - e^-5`` (99.3 %).
    random_state : int, RandomState or None, default=None
        Same seed, same selection, for any ``n_jobs`` and any kind of input.
    n_jobs : int or None, default=None
        Threads of each fit (forestimp models) and of the importances.
    n_probes : int, default=100
        Random probes (permuted columns) fitted with each subspace. 0: a column is found when
        its importance is above 0, the asymptotic rule of Algorithm 1.
    probe_risk : float in (0, 1) or None, default=0.05
        Probability, under the tail law fitted to the probes, that any irrelevant column
        enters F in the whole run (shared among its iterations and, in each, the columns of Q
        not yet found: Bonferroni); see
        ``ProbeImportances.threshold_at``. The law is fitted to few values, so the actual
        risk can be larger: with 40 probes on a 400-row regression, 21% of runs admitted an
        irrelevant column at 0.05 (``test_regression_target_and_pipeline``). None: beat the
        best probe only (each irrelevant column then passes with probability about
        ``1 / (n_probes + 1)``).
    importance : {"mdi", "permutation", "air", "mdi_oob"}, default="mdi"
        The measure of each iteration (``_base.importances_of``).
    prefetch : bool, default=True
        Read the next columns while the current model fits. The result does not depend on it.
        Not used with ``batch_size``.
    batch_size : int or None, default=None
        B, subspaces per round. None: Algorithm 1, one subspace after the other, each seeing
        the F left by the previous one. An int: batched rounds (``_srs_rounds.py``); the B
        subspaces of a round are all drawn from the F of the round's start, fitted (in this
        process, or in parallel by :func:`forestimp.dask.srs`) and merged in their order.
        B = 1 gives the same selection as None. The result depends on B, never on where the
        fits ran. Larger B finds features in fewer rounds but more fits (``docs/dask.md``).
        Every fit reads its q columns, found ones included (``bytes_read`` counts them).
    callback : callable or None, default=None
        Called with each :class:`SRSStep`; returning True stops the iterations.
    verbose : int, default=0
        Print one line per iteration to stderr when > 0.

    Attributes
    ----------
    support_ : ndarray of bool, shape (p,)
        The found set F.
    importances_ : ndarray of shape (p,)
        Ensemble importance (thesis Eq. 4.2 over all iterations): the sum of each column's
        importances over the iterations it was drawn in, divided by ``n_iterations_``.
    n_draws_ : ndarray of int, shape (p,)
        Iterations each column was drawn in.
    ranking_ : ndarray of int, shape (p,)
        1 = best: found columns by decreasing importance, then the others.
    history_ : list of SRSStep
    trace_ : pandas DataFrame
        ``history_`` one row per iteration (found, new, f1, bytes_read, ...).
    n_iterations_ : int
    bytes_read_ : int
        Bytes read from the source, prefetching included.
    """

    _draw = staticmethod(srs_trace)

    def __init__(self, estimator=None, *, q="auto", alpha=0.5, n_iterations="auto",
                 random_state=None, n_jobs=None, n_probes=100, probe_risk=0.05,
                 importance="mdi", prefetch=True, batch_size=None, callback=None,
                 verbose=0):  # fmt: skip
        self.estimator = estimator
        self.q = q
        self.alpha = alpha
        self.n_iterations = n_iterations
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.n_probes = n_probes
        self.probe_risk = probe_risk
        self.importance = importance
        self.prefetch = prefetch
        self.batch_size = batch_size
        self.callback = callback
        self.verbose = verbose

    @property
    def trace_(self) -> Any:
        """``history_`` as a pandas DataFrame, one row per iteration."""
        return self.history_frame()

    def _check_params(self, p: int) -> tuple[int, float, int, float | None]:
        q = min(100, p) if self.q == "auto" else self.q
        if P._is_real(q) and not P._is_int(q) and 0.0 < float(q) <= 1.0:
            q = max(1, int(float(q) * p))
        if not (P._is_int(q) and 1 <= int(q) <= p):
            raise InvalidParameterError(
                f"The 'q' parameter must be an int in [1, {p}] (the number of columns), a "
                f"float in (0, 1] or 'auto', got {self.q!r}."
            )
        alpha = P.check_real("alpha", self.alpha, 0.0, 1.0)
        if self.n_iterations == "auto":
            n_iterations = math.ceil(5 * p / int(q))
        else:
            n_iterations = P.check_int("n_iterations", self.n_iterations, 1)
        risk = self.probe_risk
        if risk is not None:
            risk = P.check_real("probe_risk", risk, 0.0, 1.0)
            if not 0.0 < risk < 1.0:
                raise InvalidParameterError(
                    f"The 'probe_risk' parameter must be in (0, 1) or None, got {risk!r}."
                )
        return int(q), alpha, n_iterations, risk

    def fit(self, X: Any, y: Any, *, true_support: Any = None) -> SequentialRandomSubspace:
        """Run the iterations and set ``support_`` (F), ``importances_`` and the trace.

        Parameters
        ----------
        X : array-like, DataFrame, or path to a ``.npy`` or ``.parquet`` file
            Shape (n_samples, p). Files are never loaded whole.
        y : array-like of shape (n_samples,), or str
            The target, or the name of its column in a DataFrame or Parquet ``X`` (that
            column is then not a feature).
        true_support : array-like of int, bool or str, default=None
            The truly relevant columns (indices, a mask, or names), for F1 in the trace.
        """
        return self._fit_input(X, y, true_support, None)

    def _fit_input(self, X: Any, y: Any, true_support: Any, executor: Any) -> Any:
        """``fit`` with the rounds' fits run by ``executor(source, y, spec)`` (an
        :class:`~._srs_rounds.Executor`; None: in this process)."""
        if y is None:  # scikit-learn's words, which its contract checks look for
            raise DataError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        source, y_col = open_source(in_memory(X), target=y if isinstance(y, str) else None)
        with source:
            check_not_empty(source)
            y = np.asarray(y_col if y_col is not None else y)
            if y.ndim != 1 or len(y) != source.n_rows:
                raise DataError(f"y must have shape ({source.n_rows},), got {y.shape}.")
            self._fit(source, y, true_support, executor)
        return self

    def _truth(self, source: ColumnSource, true_support: Any) -> np.ndarray | None:
        if true_support is None:
            return None
        p = source.n_columns
        values = np.asarray(true_support)
        if values.dtype == bool and values.shape == (p,):
            return values
        if values.dtype.kind in "UO" and source.names is not None:
            index = {name: j for j, name in enumerate(source.names)}
            unknown = [v for v in values if v not in index]
            if unknown:
                raise DataError(f"true_support names unknown columns: {unknown[:5]}.")
            values = np.array([index[v] for v in values], dtype=np.intp)
        if values.dtype.kind not in "iu" or (
            len(values) and not 0 <= values.min() <= values.max() < p
        ):
            raise InvalidParameterError(
                f"true_support must be column indices in [0, {p}), a mask of length {p}, or "
                "column names."
            )
        mask = np.zeros(p, dtype=bool)
        mask[values] = True
        return mask

    def _check_batch_size(self) -> int | None:
        if self.batch_size is None:
            return None
        return P.check_int("batch_size", self.batch_size, 1)

    def _fit(self, source: ColumnSource, y: np.ndarray, true_support: Any, executor: Any) -> None:
        p = source.n_columns
        q, alpha, n_iterations, risk = self._check_params(p)
        n_probes = P.check_int("n_probes", self.n_probes, 0)
        n_jobs = P.check_n_jobs(self.n_jobs)
        P.check_verbose(self.verbose)
        batch_size = self._check_batch_size()
        importance = check_importance(self.importance, self.estimator)
        truth = self._truth(source, true_support)
        base = self.estimator
        if base is None:
            base = default_estimator(is_classification(None, y), q + n_probes, n_jobs)
        run = _Run(np.zeros(p, dtype=bool), np.zeros(p), truth, risk, n_iterations)
        self.n_draws_ = np.zeros(p, dtype=np.intp)
        self.history_ = []
        n_reuse = int(math.floor(alpha * q))
        if batch_size is None:
            if executor is not None:
                raise InvalidParameterError(
                    "Fits spread over workers need batched rounds: set 'batch_size' (B "
                    "subspaces per round; the result depends on B, not on the workers)."
                )
            self._sequential(source, y, run, q, n_reuse, base, n_probes, importance, n_jobs)
            bytes_read = source.bytes_read
        else:
            spec = FitSpec(base=base, n_probes=n_probes, importance=importance, n_jobs=n_jobs)
            runner = (executor or LocalExecutor)(source, y, spec)
            bytes_read = self._rounds(runner, run, q, n_reuse, batch_size)
        self._finish(source, run.found, run.total, len(self.history_), bytes_read)

    def _sequential(
        self, source: ColumnSource, y: np.ndarray, run: _Run, q: int, n_reuse: int, base: Any,
        n_probes: int, importance: str, n_jobs: int | None,
    ) -> None:  # fmt: skip
        """Algorithm 1: each subspace drawn from the F the previous fit left."""
        prefetch = bool(self.prefetch)
        with Subspaces(source, q, n_reuse, self.random_state, prefetch) as subspaces:
            for t in range(run.n_iterations):
                Q, R, block, bytes_read = subspaces.next(run.found, last=t + 1 == run.n_iterations)
                est = _with_seed(
                    on_columns(base, Q, source.n_columns), subspaces.fit_seed(), n_jobs
                )
                res = probe_importances(
                    est, block, y, n_probes=n_probes, importance=importance,
                    random_state=subspaces.fit_seed(), n_jobs=n_jobs,
                )  # fmt: skip
                step = self._record(run, t, t, Q, R, res, bytes_read)
                hit = np.isin(Q, step.new)
                subspaces.keep(Q[hit], block[:, hit])
                del block
                if self._report(step):
                    break

    def _rounds(self, runner: Executor, run: _Run, q: int, n_reuse: int, B: int) -> int:
        """Batched rounds: B subspaces from the round's F, merged in their order. Returns
        the bytes the fits read."""
        streams = draw_streams(self.random_state)
        bytes_read = 0
        for first in range(0, run.n_iterations, B):
            n_fits = min(B, run.n_iterations - first)
            tasks = draw_round(streams, run.found, first, n_fits, q, n_reuse)
            for task, fit in zip(tasks, runner.run(tasks), strict=True):
                bytes_read += fit.bytes_read
                res = ProbeImportances(
                    importances=fit.scores, probes=fit.probes, sources=fit.sources, estimator=None
                )
                step = self._record(run, task.step, first // B, task.Q, task.R, res, bytes_read)
                if self._report(step):
                    return bytes_read
        return bytes_read

    def _record(
        self, run: _Run, t: int, k: int, Q: np.ndarray, R: np.ndarray, res: ProbeImportances,
        bytes_read: int,
    ) -> SRSStep:  # fmt: skip
        """Step (c) of Algorithm 1 for fit ``t`` (round ``k``): F gains the columns of Q
        above the probe threshold. Batched rounds call it in the order of their fits, so
        the risk is shared among the columns not yet found by the fits merged before."""
        found = run.found
        scores = res.importances
        if run.risk is None:
            threshold = max(0.0, res.threshold)
        else:  # the run's risk shared among its iterations and their untested columns
            n_tests = int(np.count_nonzero(~found[Q]))
            threshold = max(0.0, res.threshold_at(run.risk / run.n_iterations, n_tests))
        hit = (scores > threshold) & ~found[Q]
        found[Q[hit]] = True
        run.total[Q] += scores
        self.n_draws_[Q] += 1
        step = SRSStep(
            step=t, features=Q, scores=scores, kept=np.flatnonzero(found),
            dropped=Q[~found[Q]], reused=R, new=Q[hit], threshold=float(threshold),
            n_found=int(found.sum()), f1=_f1(found, run.truth), bytes_read=bytes_read, round=k,
        )  # fmt: skip
        self.history_.append(step)
        if self.verbose:
            print(
                f"SRS {t + 1}/{run.n_iterations}: |F| = {step.n_found} (+{len(step.new)}), "
                f"F1 = {step.f1:.3f}, read {bytes_read / 1e6:.1f} MB",
                file=sys.stderr,
            )
        return step

    def _finish(
        self, source: ColumnSource, found: np.ndarray, total: np.ndarray, T: int, bytes_read: int
    ) -> None:
        self.n_iterations_ = T
        self.support_ = found
        self.importances_ = total / max(1, T)
        # Found columns first, then by decreasing importance, ties by index.
        order = np.lexsort((np.arange(len(found)), -self.importances_, ~found))
        self.ranking_ = np.empty(len(found), dtype=np.intp)
        self.ranking_[order] = np.arange(1, len(found) + 1)
        self.bytes_read_ = bytes_read
        self.n_features_in_ = source.n_columns
        if source.names is not None:
            self.feature_names_in_ = np.asarray(source.names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

"""The subspaces of Sequential Random Subspace (Algorithm 1, step (a)) and the reading of their
columns, the next one ahead of time, in a fixed order of random draws.

``Q = R ∪ C``: R is ``min(⌊alpha q⌋, |F|)`` columns drawn from the found set F without
replacement, C the other ``q - |R|`` columns drawn uniformly from ``V \\ R``.

**Reading ahead.** The next subspace's columns are read in one background thread while the
current model fits (the engine releases the GIL). R depends on F, known only after that fit,
but C need not: C is the first ``q - |R|`` columns *not in R* of an ordered sample ``S`` of q
distinct columns, and removing R from a uniformly random ordering of V leaves a uniformly
random ordering of ``V \\ R``, so this C is exactly the uniform draw of Algorithm 1. S is drawn
before the fit, from its own random stream, and its first ``q - min(⌊alpha q⌋, |F|)`` columns
not in memory are read ahead (|F| only grows, so C needs no more, except in the rare case where
a column found by the running fit is both in S and drawn into R). Found columns are kept in
memory (at most q of them, so memory stays O(n q)), so R costs no read when ``alpha > 0``.
After the fit, R is drawn from its own stream and whatever is still missing is read.

**Determinism.** The draws use three streams seeded from ``random_state`` (S, R, and the
seeds of each fit) and never depend on timing: reading ahead or not, any ``n_jobs``, and an
array or a file holding the same numbers give the same subspaces.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from .._params import check_random_state
from ._columns import ColumnSource

_SEED_MAX = np.iinfo(np.int32).max


def draw_streams(random_state: Any) -> tuple[np.random.RandomState, ...]:
    """The run's three streams, seeded from ``random_state``: the ordered samples S (C is
    read from them), the draws of R from F, and the seeds of the fits (two per fit: the
    model's, then the probes')."""
    master = check_random_state(random_state)
    return tuple(np.random.RandomState(master.randint(_SEED_MAX)) for _ in range(3))


def draw_reuse(rng: np.random.RandomState, found: np.ndarray, n_reuse: int) -> np.ndarray:
    """R (sorted): ``min(n_reuse, |F|)`` columns of the found mask, without replacement
    (no draw at all when that is 0, so the stream is not advanced)."""
    F = np.flatnonzero(found)
    n_r = min(n_reuse, len(F))
    return np.sort(rng.choice(F, n_r, replace=False)) if n_r else F[:0]


def subspace_of(S: np.ndarray, R: np.ndarray, q: int) -> np.ndarray:
    """Q = R ∪ C (sorted), C the first ``q - |R|`` columns of S not in R."""
    return np.union1d(R, S[~np.isin(S, R)][: q - len(R)])


class Subspace(NamedTuple):
    """One iteration's subspace: Q (sorted), R (sorted), the ``(n, q)`` Fortran block of the
    columns Q, and the bytes read from the source up to it (all reads for iterations <= t)."""

    Q: np.ndarray
    R: np.ndarray
    block: np.ndarray
    bytes_read: int


class Subspaces:
    """Draws the subspaces of one run and reads their columns from ``source``.

    Parameters
    ----------
    source : ColumnSource
    q : int
        Columns per subspace.
    n_reuse : int
        ``⌊alpha q⌋``, the most columns R takes from F.
    random_state : int, RandomState or None
    prefetch : bool
        Read S's columns in a background thread (else at once, with the same draws).
    """

    def __init__(
        self, source: ColumnSource, q: int, n_reuse: int, random_state: Any, prefetch: bool
    ) -> None:
        self._explore, self._reuse, self._fits = draw_streams(random_state)
        self.source, self.q, self.n_reuse = source, q, n_reuse
        self._cache: dict[int, np.ndarray] = {}
        self._executor = ThreadPoolExecutor(1) if prefetch else None
        self._S: np.ndarray | None = None
        self._pending: tuple[np.ndarray, Future[np.ndarray] | np.ndarray] | None = None

    def __enter__(self) -> Subspaces:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:  # a read in flight finishes: bytes_read stays exact
            self._executor.shutdown(wait=True)

    def fit_seed(self) -> int:
        """A seed for the model or the probes of the current iteration."""
        return int(self._fits.randint(_SEED_MAX))

    def _ahead(self, found: np.ndarray) -> None:
        """Draw the next S and start reading the columns its C may need."""
        self._S = S = self._explore.choice(self.source.n_columns, self.q, replace=False)
        n_r = min(self.n_reuse, int(found.sum()))
        cols = np.sort([j for j in S.tolist() if j not in self._cache][: self.q - n_r])
        cols = cols.astype(np.intp)
        read = self.source.read
        self._pending = (
            cols,
            read(cols) if self._executor is None else self._executor.submit(read, cols),
        )

    def next(self, found: np.ndarray, *, last: bool) -> Subspace:
        """The subspace of this iteration given the found mask; unless ``last``, the reading
        of the next one starts before this returns."""
        if self._pending is None:
            self._ahead(found)
        assert self._pending is not None and self._S is not None
        got_cols, pending = self._pending
        got = pending.result() if isinstance(pending, Future) else pending
        R = draw_reuse(self._reuse, found, self.n_reuse)
        Q = subspace_of(self._S, R, self.q)
        block = self._assemble(Q, got_cols, got)
        del got, pending
        self._pending = None
        bytes_read = self.source.bytes_read
        if not last:
            self._ahead(found)
        return Subspace(Q, R, block, bytes_read)

    def keep(self, columns: np.ndarray, block: np.ndarray) -> None:
        """Keep newly found columns (``block[:, k]`` is column ``columns[k]``) in memory,
        while fewer than q are kept and R may use them."""
        if self.n_reuse == 0:
            return
        for k, j in enumerate(columns.tolist()):
            if len(self._cache) < self.q:
                self._cache[j] = np.array(block[:, k])

    def _assemble(self, Q: np.ndarray, got_cols: np.ndarray, got: np.ndarray) -> np.ndarray:
        """The ``(n, q)`` Fortran block of Q from what was read ahead, the kept columns, and a
        read of whatever is still missing."""
        if np.array_equal(got_cols, Q):
            return got  # e.g. plain Random Subspace: what was read is the subspace, in order
        position = {j: k for k, j in enumerate(got_cols.tolist())}
        missing = np.array(
            [j for j in Q.tolist() if j not in position and j not in self._cache], dtype=np.intp
        )
        late = self.source.read(missing)
        position_late = {j: k for k, j in enumerate(missing.tolist())}
        block = np.empty((self.source.n_rows, len(Q)), dtype=self.source.dtype, order="F")
        for k, j in enumerate(Q.tolist()):
            if j in position:
                block[:, k] = got[:, position[j]]
            elif j in self._cache:
                block[:, k] = self._cache[j]
            else:
                block[:, k] = late[:, position_late[j]]
        return block

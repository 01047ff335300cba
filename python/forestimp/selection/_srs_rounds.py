"""Batched rounds of Sequential Random Subspace: the B fits of a round, drawn from the found
set F of the round's start, and the executors that run them.

A round draws B subspaces in a fixed order (subspace b of round k is fit ``t = k B + b``),
each from the same three streams as Algorithm 1 (``_subspaces.draw_streams``): S from the
exploration stream, R from the reuse stream given the round's F, then two fit seeds. With
B = 1 every stream is consumed exactly as :class:`~._subspaces.Subspaces` consumes it, so
the subspaces, seeds and results are those of Algorithm 1. The results are merged by the
caller in the order ``t``, whatever order the fits finished in, so the selection depends on
``random_state`` and B only, never on who ran the fits.

An executor runs a list of :class:`SubspaceTask` and returns their :class:`SubspaceFit` in
the same order. :class:`LocalExecutor` runs them one after the other in this process;
``forestimp._dask_srs`` runs them on a Dask cluster, each worker reading its q columns.
Both call :func:`fit_subspace`, so a fit gives the same numbers wherever it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from sklearn.base import clone

from ._base import is_forestimp, on_columns
from ._columns import ColumnSource
from ._probes import probe_importances
from ._subspaces import _SEED_MAX, draw_reuse, subspace_of


@dataclass(frozen=True)
class SubspaceTask:
    """One fit of a round: the subspace Q (sorted), R ⊆ Q drawn from F, and its seeds."""

    step: int
    Q: np.ndarray
    R: np.ndarray
    model_seed: int
    probe_seed: int


@dataclass(frozen=True)
class SubspaceFit:
    """What a fit sends back: the importances of Q's columns and of the probes, the probes'
    source columns (indices into Q), and the bytes its read of Q cost."""

    scores: np.ndarray
    probes: np.ndarray
    sources: np.ndarray
    bytes_read: int


@dataclass(frozen=True)
class FitSpec:
    """What every fit of a run shares: the unfitted model, the probes, the measure."""

    base: Any
    n_probes: int
    importance: str
    n_jobs: int | None


class Executor(Protocol):
    """Runs the fits of a round; returns their results in the order of ``tasks``."""

    def run(self, tasks: list[SubspaceTask]) -> list[SubspaceFit]: ...


def with_seed(base: Any, seed: int, n_jobs: int | None) -> Any:
    """An unfitted clone of ``base`` seeded for one iteration (unless the user fixed it)."""
    est = clone(base)
    params = est.get_params(deep=False)
    update: dict[str, Any] = {}
    if "random_state" in params and params["random_state"] is None:
        update["random_state"] = seed
    if is_forestimp(est) and params.get("n_jobs") is None and n_jobs is not None:
        update["n_jobs"] = n_jobs
    return est.set_params(**update)


def draw_round(
    streams: tuple[np.random.RandomState, ...],
    found: np.ndarray,
    first: int,
    n_fits: int,
    q: int,
    n_reuse: int,
) -> list[SubspaceTask]:
    """The ``n_fits`` subspaces of the round whose first fit is ``first``, all given the
    found mask of the round's start."""
    explore, reuse, fits = streams
    tasks = []
    for t in range(first, first + n_fits):
        S = explore.choice(len(found), q, replace=False)
        R = draw_reuse(reuse, found, n_reuse)
        model_seed = int(fits.randint(_SEED_MAX))
        probe_seed = int(fits.randint(_SEED_MAX))
        tasks.append(SubspaceTask(t, subspace_of(S, R, q), R, model_seed, probe_seed))
    return tasks


def fit_subspace(
    source: ColumnSource, y: np.ndarray, spec: FitSpec, task: SubspaceTask
) -> SubspaceFit:
    """Read Q's columns from ``source``, fit the model with the probes, return the scores.

    Only the ``(n, q)`` block of Q is in memory (forestimp models read their probes as
    permuted rows of it; other models get ``n_probes`` more columns)."""
    before = source.bytes_read
    block = source.read(task.Q)
    cost = source.bytes_read - before
    base = on_columns(spec.base, task.Q, source.n_columns)
    est = with_seed(base, task.model_seed, spec.n_jobs)
    res = probe_importances(
        est, block, y, n_probes=spec.n_probes, importance=spec.importance,
        random_state=task.probe_seed, n_jobs=spec.n_jobs,
    )  # fmt: skip
    return SubspaceFit(
        scores=np.asarray(res.importances),
        probes=np.asarray(res.probes),
        sources=np.asarray(res.sources),
        bytes_read=int(cost),
    )


class LocalExecutor:
    """The fits of a round one after the other, in this process, from ``source``."""

    def __init__(self, source: ColumnSource, y: np.ndarray, spec: FitSpec) -> None:
        self.source, self.y, self.spec = source, y, spec

    def run(self, tasks: list[SubspaceTask]) -> list[SubspaceFit]:
        return [fit_subspace(self.source, self.y, self.spec, task) for task in tasks]

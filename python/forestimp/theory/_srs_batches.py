"""Convergence of batched Sequential Random Subspace, by simulation of the simplified tree.

Batched SRS (``SequentialRandomSubspace(batch_size=B)``, ``forestimp.dask.srs``) draws the B
subspaces of a round from the found set F of the round's start, and F gains the union of what
they reveal. Algorithm 1 is B = 1. Within a round, a variable found by one subspace is not
yet in F for the others, so it cannot be reused by them: the chain of ``_srs.py`` loses its
sequential accumulation inside a round. Rounds fall (up to B fits run at once) while fits rise.

:func:`simulate_srs` plays the model of ``_srs.py`` (Sutera PhD, App. 7.B.1: K = 1, an
idealised tree that reveals exactly the relevant variables its subspace allows; irrelevant
ones are never found) round by round. Only the membership of the r relevant variables in a
subspace matters: R is drawn from F, and each relevant variable outside R is in C with the
hypergeometric law of a uniform (q − |R|)-subset of the p − |R| others, drawn one variable
after the other. A run costs O(r) per fit whatever p is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from ..exceptions import InvalidParameterError
from ._srs import _check_args, _check_count, expected_srs_iterations

# Simulated fits (subspaces drawn) beyond which simulate_srs refuses: each costs O(r)
# Python steps, so 10**9 fits already take hours.
MAX_SIMULATED_FITS = 10**9


@dataclass(frozen=True)
class SRSSimulation:
    """Monte-Carlo estimate of what batched SRS needs to find all r relevant variables.

    Attributes
    ----------
    fits : float
        Mean number of fits (``rounds * batch_size``: a round's fits all run).
    rounds : float
        Mean number of rounds.
    fits_sem, rounds_sem : float
        Their standard errors over the runs.
    batch_size : int
    n_runs : int
    """

    fits: float
    rounds: float
    fits_sem: float
    rounds_sem: float
    batch_size: int
    n_runs: int


def _reveal(
    scenario: str, found: list[bool], p: int, q: int, slots: int, rng: np.random.RandomState
) -> list[int]:
    """The relevant variables one subspace drawn given ``found`` reveals."""
    r = len(found)
    F = [v for v in range(r) if found[v]]
    n_r = min(slots, len(F))
    in_q = [False] * r
    if n_r:
        for v in rng.choice(F, n_r, replace=False):
            in_q[int(v)] = True
    population, room = p - n_r, q - n_r
    for v in range(r):  # a uniform room-subset of the population, one member at a time
        if in_q[v]:
            continue
        if rng.random_sample() * population < room:
            in_q[v] = True
            room -= 1
        population -= 1
    if scenario == "marginal":
        return [v for v in range(r) if in_q[v]]
    if scenario == "chaining":
        m = in_q.index(False) if False in in_q else r
        return list(range(m))
    return [int(rng.randint(r))] if all(in_q) else []  # clique: one of the r, uniformly


def simulate_srs(
    scenario: str,
    p: int,
    q: int,
    r: int,
    alpha: float,
    *,
    batch_size: int = 1,
    n_runs: int = 1000,
    random_state: Any = None,
) -> SRSSimulation:
    """Simulate batched SRS (K = 1, simplified tree) until all r relevant variables are found.

    Parameters
    ----------
    scenario : {"chaining", "clique", "marginal"}
        Structure of the relevant variables (:func:`expected_srs_iterations`).
    p, q, r : int
        Variables, subspace size, relevant variables.
    alpha : float in [0, 1]
        Share of the subspace reserved for found variables (⌊αq⌋ slots).
    batch_size : int, default=1
        B, subspaces per round, all drawn from the F of the round's start. 1 is Algorithm 1,
        whose expectation :func:`expected_srs_iterations` gives exactly.
    n_runs : int, default=1000
    random_state : int, RandomState or None

    Returns
    -------
    SRSSimulation
        Means and standard errors of fits and rounds; ``math.inf`` (and NaN errors) when
        some variable can never be found (``expected_srs_iterations`` is infinite).
    """
    scenario, p, q, r, slots = _check_args(scenario, p, q, r, alpha)
    B, n_runs = _check_count(batch_size, "batch_size"), _check_count(n_runs, "n_runs")
    if B < 1 or n_runs < 2:
        raise InvalidParameterError(
            f"batch_size must be >= 1 and n_runs >= 2, got {batch_size!r} and {n_runs!r}"
        )
    sequential = expected_srs_iterations(scenario, p, q, r, alpha, method="markov_chain")
    if math.isinf(sequential):
        # A state no single fit can leave is left by no round either (a round's fits are
        # single fits from the same state).
        return SRSSimulation(math.inf, math.inf, math.nan, math.nan, B, n_runs)
    # A run plays at least one round of B fits, and at least the fits Algorithm 1 needs on
    # average (a round's fits cannot use each other's finds): past the budget the loop
    # below would run for days (p = 10**18 asks for ~10**17 fits a run).
    fits = n_runs * max(B, sequential)
    if fits > MAX_SIMULATED_FITS:
        raise InvalidParameterError(
            f"simulating {n_runs} runs needs at least {fits:.3g} fits (batch_size={B}, "
            f"{sequential:.3g} expected fits a run), more than {MAX_SIMULATED_FITS:.0e}: "
            "lower n_runs, or use expected_srs_iterations for batch_size=1."
        )
    rng = check_random_state(random_state)
    rounds = np.empty(n_runs)
    for run in range(n_runs):
        found = [False] * r
        n_found = k = 0
        while n_found < r:
            new = set()
            for _ in range(B):
                new.update(_reveal(scenario, found, p, q, slots, rng))
            for v in new:
                found[v] = True
            n_found = sum(found)
            k += 1
        rounds[run] = k
    sem = float(rounds.std(ddof=1) / math.sqrt(n_runs))
    mean = float(rounds.mean())
    return SRSSimulation(mean * B, mean, sem * B, sem, B, n_runs)

"""The simulation of batched SRS (theory/_srs_batches.py) against the exact chains: Algorithm 1
(B = 1) against ``expected_srs_iterations``, and batched chaining against its exact round chain
(a round reveals the longest prefix any of its B subspaces holds: the max of B draws)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from forestimp.exceptions import InvalidParameterError
from forestimp.theory import expected_srs_iterations, simulate_srs, srs_transition_matrix


@pytest.mark.parametrize(
    "scenario, p, q, r, alpha",
    [
        ("chaining", 50, 10, 3, 1.0),  # 14.44 (Thm 7.8)
        ("chaining", 30, 8, 3, 0.2),  # 22.08: one slot for three found (Markov chain only)
        ("clique", 30, 10, 3, 1.0),  # 61.25 (Thm 7.10)
        ("marginal", 50, 10, 4, 0.5),  # 12.11
        ("marginal", 30, 8, 4, 0.0),  # 7.29 (random subspace)
    ],
)
def test_batch_of_one_matches_expected_srs_iterations(scenario, p, q, r, alpha):
    exact = expected_srs_iterations(scenario, p, q, r, alpha)
    sim = simulate_srs(scenario, p, q, r, alpha, n_runs=1500, random_state=0)
    assert sim.fits == sim.rounds
    # 4 standard errors: a false alarm about once in 16 000 (the seed is fixed anyway).
    assert abs(sim.fits - exact) < 4 * sim.fits_sem, (sim, exact)
    assert sim.fits_sem < 0.05 * exact  # the check has teeth: errors of a few percent


def exact_batched_chaining_rounds(p: int, q: int, r: int, alpha: float, B: int) -> float:
    """Expected rounds of batched chaining: from i found, a round reaches the largest prefix
    of its B independent subspaces, so P(reach <= j) = P1(reach <= j)^B."""
    P = srs_transition_matrix("chaining", p, q, r, alpha)
    cdf = np.cumsum(P, axis=1) ** B
    PB = np.diff(np.hstack([np.zeros((r + 1, 1)), cdf]), axis=1)
    times = np.zeros(r + 1)
    for i in range(r - 1, -1, -1):
        times[i] = (1 + PB[i, i + 1 :] @ times[i + 1 :]) / (1 - PB[i, i])
    return float(times[0])


@pytest.mark.parametrize("B", [2, 4, 8])
def test_batched_chaining_matches_its_exact_round_chain(B):
    exact = exact_batched_chaining_rounds(50, 10, 3, 1.0, B)
    assert exact_batched_chaining_rounds(50, 10, 3, 1.0, 1) == pytest.approx(14.4444444, 1e-6)
    sim = simulate_srs("chaining", 50, 10, 3, 1.0, batch_size=B, n_runs=1500, random_state=1)
    assert abs(sim.rounds - exact) < 4 * sim.rounds_sem, (sim, exact)
    assert sim.fits == B * sim.rounds
    # Fewer rounds, more fits than Algorithm 1's 14.44 (a round's subspaces cannot reuse
    # what the others of the round find), so a speed-up below B: 14.44 / 7.86 = 1.84 at
    # B = 2, 3.13 at 4, 4.75 at 8.
    assert 14.45 / B < exact < 14.44 < B * exact


def test_impossible_and_bad_arguments():
    # X_2 needs the whole chain in memory at once: never found with q = 2.
    assert math.isinf(simulate_srs("chaining", 20, 2, 3, 1.0, batch_size=4).fits)
    for kwargs in ({"batch_size": 0}, {"batch_size": 2.5}, {"n_runs": 1}):
        with pytest.raises(InvalidParameterError):
            simulate_srs("marginal", 20, 5, 2, 0.5, **kwargs)
    with pytest.raises(InvalidParameterError):
        simulate_srs("chain", 20, 5, 2, 0.5)

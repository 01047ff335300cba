"""Convergence of RS and SRS (Sutera PhD ch. 7 §3.2, App. 7.B): ``expected_srs_iterations``.

The oracle is checked three ways: against every number printed in the thesis's Table 3.1
(which truncates to integers), closed forms (Thms 7.7–7.10) against the absorbing Markov
chain, and both against a Monte-Carlo run of Algorithm 1 step (a) with the simplified trees
of App. 7.B.1.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from forestimp.exceptions import InvalidParameterError
from forestimp.theory import expected_srs_iterations, srs_transition_matrix

# Table 3.1: (scenario, (p, q, r), printed RS (alpha = 0), printed SRS (alpha = 1)); None
# where the thesis's entry is stripped. Configurations recovered in the Sutera digest §5.4.
TABLE_3_1 = [
    ("chaining", (10_000, 100, 1), 100, 100),
    ("chaining", (10_000, 100, 2), 10_100, 200),
    ("chaining", (10_000, 100, 3), None, 301),
    ("chaining", (10_000, 100, 5), None, 506),
    ("chaining", (100_000, 100, 3), None, 3_028),
    ("clique", (10_000, 100, 1), 100, 100),
    ("clique", (10_000, 100, 2), 30_300, 10_302),
    ("marginal", (10_000, 100, 10), 291, 312),
    ("marginal", (10_000, 100, 50), 448, 757),
    ("marginal", (10_000, 100, 90), 506, 2_797),
]
TABLE_CASES = [
    (scenario, cfg, alpha, printed)
    for scenario, cfg, rs, srs in TABLE_3_1
    for alpha, printed in ((0.0, rs), (1.0, srs))
    if printed is not None
]


@pytest.mark.parametrize(("scenario", "cfg", "alpha", "printed"), TABLE_CASES)
def test_table_3_1(scenario, cfg, alpha, printed):
    # The thesis truncates: the marginal (10 000, 100, 90) SRS value is 2797.97.
    assert math.floor(expected_srs_iterations(scenario, *cfg, alpha)) == printed


def test_unprinted_entries_of_the_digest():
    # Values the digest computed for stripped cells, to its 3 significant digits.
    assert expected_srs_iterations("chaining", 10_000, 100, 3, 0) == pytest.approx(1.03e6, 5e-3)
    assert expected_srs_iterations("chaining", 10_000, 100, 5, 0) == pytest.approx(1.11e10, 5e-3)
    assert expected_srs_iterations("clique", 10_000, 100, 3, 0) == pytest.approx(5.67e6, 5e-3)
    assert expected_srs_iterations("clique", 10_000, 100, 3, 1) == pytest.approx(1.05e6, 5e-3)
    assert expected_srs_iterations("marginal", 10_000, 100, 100, 1) == pytest.approx(16187.7, 1e-5)


CLOSED_CASES = [
    ("chaining", cfg, alpha)
    for cfg in [(10_000, 100, 5), (100_000, 100, 4), (100_000, 50_000, 40), (30, 6, 6), (7, 7, 3)]
    for alpha in (0.0, 1.0)
] + [
    ("clique", cfg, alpha)
    for cfg in [(10_000, 100, 4), (100_000, 1_000, 6), (30, 6, 5), (12, 12, 12)]
    for alpha in (0.0, 0.01, 0.5, 1.0)
]


@pytest.mark.parametrize(("scenario", "cfg", "alpha"), CLOSED_CASES)
def test_closed_forms_match_markov_chain(scenario, cfg, alpha):
    closed = expected_srs_iterations(scenario, *cfg, alpha, method="closed_form")
    chain = expected_srs_iterations(scenario, *cfg, alpha, method="markov_chain")
    assert closed == pytest.approx(chain, rel=1e-12)
    assert expected_srs_iterations(scenario, *cfg, alpha) == closed


def test_chaining_closed_forms_by_hand():
    p, q = 10_000, 100
    # Eq. 7.2: prod (p-i)/(q-i); Eq. 7.4: sum (p-i)/(q-i) - (r - 1) (the sum runs to k = r-1).
    rs = math.prod(Fraction(p - i, q - i) for i in range(4))
    srs = sum(Fraction(p - i, q - i) for i in range(4)) - 3
    assert expected_srs_iterations("chaining", p, q, 4, 0) == pytest.approx(float(rs), rel=1e-14)
    assert expected_srs_iterations("chaining", p, q, 4, 1) == pytest.approx(float(srs), rel=1e-14)
    # Only floor(alpha q) matters: slots >= r - 1 is SRS, slots = 0 is RS.
    assert expected_srs_iterations("chaining", p, q, 4, 0.03) == pytest.approx(float(srs), 1e-14)
    assert expected_srs_iterations("chaining", p, q, 4, 0.009) == pytest.approx(float(rs), 1e-14)


def test_marginal_rs_inclusion_exclusion():
    # Independent exact value: E[T] = sum_s (-1)^(s+1) C(r,s) / (1 - C(p-s,q)/C(p,q)).
    p, q, r = 40, 7, 6
    exact = sum(
        (-1) ** (s + 1) * math.comb(r, s) / (1 - Fraction(math.comb(p - s, q), math.comb(p, q)))
        for s in range(1, r + 1)
    )
    assert expected_srs_iterations("marginal", p, q, r, 0) == pytest.approx(float(exact), 1e-13)


@pytest.mark.parametrize("scenario", ["chaining", "clique", "marginal"])
@pytest.mark.parametrize("alpha", [0.0, 0.4, 1.0])
def test_transition_matrix_fundamental_solve(scenario, alpha):
    p, q, r = 25, 8, 5
    P = srs_transition_matrix(scenario, p, q, r, alpha)
    assert P.shape == (r + 1, r + 1)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    assert (P >= 0).all() and np.allclose(np.tril(P, -1), 0.0)
    transient = np.eye(r) - P[:r, :r]
    times = np.linalg.solve(transient, np.ones(r))
    got = expected_srs_iterations(scenario, p, q, r, alpha, method="markov_chain")
    assert got == pytest.approx(times[0], rel=1e-10)


def _simulate(scenario, p, q, r, alpha, n_runs, rng):
    """Iterations until all r relevant variables (columns 0..r-1) are found, per run."""
    slots = math.floor(alpha * q + 1e-9)
    found = np.zeros((n_runs, r), dtype=bool)
    times = np.zeros(n_runs)
    active = np.arange(n_runs)
    t = 0
    while active.size:
        t += 1
        f = found[active]
        m = active.size
        # Step (a): the R found variables with the smallest random keys are forced in, and
        # the q - R smallest keys among the rest give a uniform draw from V \ R.
        rank = np.where(f, rng.random((m, r)), np.inf).argsort(axis=1).argsort(axis=1)
        forced = f & (rank < np.minimum(slots, f.sum(axis=1))[:, None])
        keys = rng.random((m, p))
        keys[:, :r][forced] = -1.0
        in_q = np.zeros((m, p), dtype=bool)
        np.put_along_axis(in_q, np.argpartition(keys, q - 1, axis=1)[:, :q], True, axis=1)
        rel = in_q[:, :r]
        if scenario == "marginal":
            new = rel
        elif scenario == "chaining":
            new = np.logical_and.accumulate(rel, axis=1)
        else:
            # The tree reveals the last clique variable it tests: uniform among the r.
            new = np.zeros_like(rel)
            full = np.flatnonzero(rel.all(axis=1))
            new[full, rng.integers(r, size=full.size)] = True
        found[active] |= new
        done = found[active].all(axis=1)
        times[active[done]] = t
        active = active[~done]
    return times


MC_CASES = [
    ("chaining", (30, 6, 3), 0.0),
    ("chaining", (30, 6, 3), 1.0),
    ("chaining", (24, 6, 4), 0.34),
    ("clique", (20, 6, 3), 0.0),
    ("clique", (20, 6, 3), 1.0),
    ("clique", (20, 6, 3), 0.2),
    ("marginal", (30, 6, 5), 0.0),
    ("marginal", (30, 6, 5), 0.34),
    ("marginal", (30, 6, 5), 1.0),
]


@pytest.mark.parametrize(("scenario", "cfg", "alpha"), MC_CASES)
def test_monte_carlo_agrees(scenario, cfg, alpha):
    rng = np.random.default_rng(20240607)
    times = _simulate(scenario, *cfg, alpha, 3000, rng)
    expected = expected_srs_iterations(scenario, *cfg, alpha)
    se = times.std(ddof=1) / math.sqrt(times.size)
    assert abs(times.mean() - expected) < 4 * se


def test_infinite_and_overflow():
    assert expected_srs_iterations("chaining", 100, 5, 6, 1) == math.inf
    assert expected_srs_iterations("chaining", 100, 5, 6, 0.5, method="markov_chain") == math.inf
    assert expected_srs_iterations("clique", 100, 5, 6, 0) == math.inf
    assert expected_srs_iterations("marginal", 100, 5, 6, 1) == math.inf
    # With alpha < 1 some memory always explores, so the marginal scenario converges.
    assert math.isfinite(expected_srs_iterations("marginal", 100, 5, 6, 0.8))
    for method in ("closed_form", "markov_chain"):
        with pytest.raises(OverflowError, match="float range"):
            expected_srs_iterations("chaining", 100_000, 100, 100, 0, method=method)


def test_alpha_slots_use_the_decimal_value():
    # 0.29 * 100 is 28.999... in binary; the thesis's floor(alpha q) is 29.
    a = expected_srs_iterations("marginal", 1_000, 100, 40, 0.29)
    assert a == expected_srs_iterations("marginal", 1_000, 100, 40, 0.295)
    assert a != expected_srs_iterations("marginal", 1_000, 100, 40, 0.285)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (("tree", 10, 5, 2, 0), {}, "scenario"),
        (("clique", 10, 11, 2, 0), {}, "q must"),
        (("clique", 10, 0, 2, 0), {}, "q must"),
        (("clique", 10, 5, 11, 0), {}, "r must"),
        (("clique", 10, 5, 0, 0), {}, "r must"),
        (("clique", 0, 1, 1, 0), {}, "p must"),
        (("clique", 10.0, 5, 2, 0), {}, "p must be an integer"),
        (("clique", 10, True, 2, 0), {}, "q must be an integer"),
        (("clique", 10, 5, 2, 1.5), {}, "alpha"),
        (("clique", 10, 5, 2, -0.1), {}, "alpha"),
        (("clique", 10, 5, 2, float("nan")), {}, "alpha"),
        (("clique", 10, 5, 2, "1"), {}, "alpha"),
        (("clique", 10, 5, 2, 0), {"method": "exact"}, "method"),
        (("marginal", 10, 5, 2, 0), {"method": "closed_form"}, "no closed form"),
        (("chaining", 100, 10, 5, 0.2), {"method": "closed_form"}, "floor"),
    ],
)
def test_invalid_inputs(args, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        expected_srs_iterations(*args, **kwargs)
    assert issubclass(InvalidParameterError, ValueError)

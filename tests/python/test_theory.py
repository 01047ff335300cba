"""Exact oracles of ``forestimp.theory`` against the seeds' tables and closed forms.

LED Table 1 and the per-degree column sums are in test_led.py; here: the rest of Sutera's
Table 5.1, depth limits, irrelevant/redundant variables, XOR, SYM, Gini/variance, the exact
expected MDI for K > 1 and binary splits (Louppe 2014 Table 6.2, Example 5.2, masking), and
the context scores of Sutera's ch. 6 (Tables 6.2 and 6.3).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from forestimp import ExtraTreesClassifier, TotallyRandomizedTreesClassifier
from forestimp.datasets import make_context_problem, make_led, make_sym, make_xor
from forestimp.theory import (
    asymptotic_importances,
    context_importances,
    expected_importances,
)

from conftest import SKIP_6_3, TABLE_6_3

LOG2_10 = math.log2(10)
# Sutera PhD Table 5.1 (= Louppe 2014 Fig. 6.3 data): degree-k terms, 3 decimals.
LED_BY_DEGREE = np.array(
    [
        [0.103, 0.085, 0.068, 0.053, 0.042, 0.033, 0.029],
        [0.139, 0.126, 0.105, 0.082, 0.060, 0.042, 0.029],
        [0.103, 0.091, 0.081, 0.073, 0.066, 0.061, 0.057],
        [0.126, 0.114, 0.097, 0.077, 0.058, 0.042, 0.029],
        [0.139, 0.123, 0.106, 0.090, 0.076, 0.065, 0.057],
        [0.067, 0.056, 0.043, 0.031, 0.020, 0.010, 0.000],
        [0.126, 0.098, 0.070, 0.045, 0.025, 0.010, 0.000],
    ]
)
# Depth-limited totally randomized trees (Prop. 5.13), Sutera digest §7.2.
LED_DEPTH = {
    1: [0.1031, 0.1387, 0.1031, 0.1259, 0.1387, 0.0670, 0.1259],
    2: [0.1881, 0.2643, 0.1939, 0.2400, 0.2618, 0.1229, 0.2236],
    3: [0.2559, 0.3692, 0.2747, 0.3366, 0.3676, 0.1658, 0.2932],
}
# Exact expected MDI, K among the unused variables (Louppe digest §4.8), rows K = 1..7.
LED_EXPECTED_UNUSED = np.array(
    [
        [0.4127, 0.5815, 0.5312, 0.5421, 0.6566, 0.2258, 0.3720],
        [0.3625, 0.6652, 0.5126, 0.5252, 0.7302, 0.1397, 0.3865],
        [0.3272, 0.7172, 0.4963, 0.4847, 0.7762, 0.1268, 0.3935],
        [0.3100, 0.7560, 0.4892, 0.4445, 0.8092, 0.1235, 0.3893],
        [0.3038, 0.7842, 0.4833, 0.4171, 0.8297, 0.1222, 0.3817],
        [0.3065, 0.7981, 0.4753, 0.4096, 0.8355, 0.1219, 0.3752],
        [0.3065, 0.7981, 0.4753, 0.4096, 0.8355, 0.1219, 0.3752],
    ]
)
# Louppe 2014 Table 6.2: 10 000 randomized trees with max_features K = 1..7.
LOUPPE_TABLE_6_2 = np.array(
    [
        [0.414, 0.583, 0.532, 0.543, 0.658, 0.221, 0.368],
        [0.362, 0.663, 0.512, 0.525, 0.731, 0.140, 0.385],
        [0.327, 0.715, 0.496, 0.484, 0.778, 0.126, 0.392],
        [0.309, 0.757, 0.489, 0.445, 0.810, 0.122, 0.387],
        [0.304, 0.787, 0.483, 0.414, 0.827, 0.122, 0.382],
        [0.305, 0.801, 0.475, 0.409, 0.831, 0.121, 0.375],
        [0.306, 0.799, 0.475, 0.412, 0.835, 0.120, 0.372],
    ]
)


@pytest.fixture(scope="module")
def led():
    return make_led()


def test_led_degree_table_5_1(led):
    res = asymptotic_importances(*led)
    np.testing.assert_allclose(res.by_degree, LED_BY_DEGREE, atol=5e-4 + 1e-12)
    # Each degree-k block of a variable is at most H(Y)/p (Louppe 2014, Eq. 6.17-6.18).
    assert res.by_degree.max() <= LOG2_10 / 7
    assert res.criterion == "entropy"


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_led_depth_limited(led, depth):
    res = asymptotic_importances(*led, max_depth=depth)
    np.testing.assert_allclose(res.importances, LED_DEPTH[depth], atol=5e-5 + 1e-12)
    assert np.all(res.by_degree[:, depth:] == 0)


def test_irrelevant_bit_changes_nothing(led):
    X, y = led
    # Exhaustive LED + one uniform irrelevant bit: 20 equiprobable rows (Lemma 6.4).
    X2 = np.vstack([np.column_stack([X, np.zeros(10)]), np.column_stack([X, np.ones(10)])])
    res = asymptotic_importances(X2, np.concatenate([y, y]))
    base = asymptotic_importances(X, y).importances
    np.testing.assert_allclose(res.importances[:7], base, atol=1e-12)
    assert abs(res.importances[7]) < 1e-12


def test_redundant_copy_of_x5(led):
    X, y = led
    res = asymptotic_importances(np.column_stack([X, X[:, 4]]), y)
    expected = [0.4011, 0.5626, 0.5303, 0.5295, 0.3769, 0.1971, 0.3474, 0.3769]
    np.testing.assert_allclose(res.importances, expected, atol=5e-5 + 1e-12)
    assert res.importances.sum() == pytest.approx(LOG2_10, abs=1e-12)
    # Prop. 7.2: every degree term of X5 shrinks by (p - k)/(p + 1) with p = 7.
    full = asymptotic_importances(X, y).by_degree[4]
    shrink = (7 - np.arange(7)) / 8
    assert res.importances[4] == pytest.approx((full * shrink).sum(), abs=1e-12)


def test_xor_lives_in_degree_one():
    X, y = make_xor(n_relevant=2)
    res = asymptotic_importances(X, y)
    np.testing.assert_allclose(res.by_degree, [[0.0, 0.5], [0.0, 0.5]], atol=1e-12)
    assert res.mutual_information == pytest.approx(1.0, abs=1e-12)


def test_sym_quarter_bit_and_unnormalized_weights():
    X, y = make_sym()
    res = asymptotic_importances(X, y)
    h_quarter = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    # I(X_i; Y) = 1 - H2(1/4) = 0.1887 at k = 0, I(X_1; Y | X_2) = 0.3113 at k = 1 (weights 1/2).
    np.testing.assert_allclose(res.by_degree[:, 0], (1 - h_quarter) / 2, atol=1e-12)
    np.testing.assert_allclose(res.by_degree[:, 1], (0.5 - (1 - h_quarter)) / 2, atol=1e-12)
    np.testing.assert_allclose(res.importances, [0.25, 0.25], atol=1e-12)
    assert res.mutual_information == pytest.approx(0.5, abs=1e-12)
    # The same distribution as distinct rows with multiplicities.
    Xd = [[0, 0], [1, 1], [0, 1], [0, 1], [1, 0], [1, 0]]
    yd = [0, 1, 0, 1, 0, 1]
    res_w = asymptotic_importances(Xd, yd, weights=[2, 2, 1, 1, 1, 1])
    np.testing.assert_allclose(res_w.by_degree, res.by_degree, atol=1e-12)


def test_gini_and_variance_sum_to_total_decrease(led):
    X, y = led
    gini = asymptotic_importances(X, y, criterion="gini")
    # Fully developed: Σ Imp = i(Y) - i(Y|X) = 1 - 10 * 0.1^2 = 0.9 (Thm 6.2, any impurity).
    assert gini.mutual_information == pytest.approx(0.9, abs=1e-12)
    assert gini.importances.sum() == pytest.approx(0.9, abs=1e-12)
    assert gini.criterion == "gini"
    # The node-by-node enumeration of the same trees agrees (independent computation).
    np.testing.assert_allclose(
        expected_importances(X, y, criterion="gini"), gini.importances, atol=1e-12
    )
    # XOR under Gini: 0.5 total, shared equally, all at degree 1.
    Xx, yx = make_xor(n_relevant=2, n_features=3)
    gx = asymptotic_importances(Xx, yx, criterion="gini")
    np.testing.assert_allclose(gx.importances, [0.25, 0.25, 0.0], atol=1e-12)


def test_variance_additive_model_closed_form():
    # Y = 3 X1 + X2 (+ a pure-noise-free irrelevant X3), independent uniform bits:
    # G(Y; X_j | B) = Var(a_j X_j) = a_j^2 / 4 for every B, so Imp(X_j) = a_j^2 / 4.
    X, _ = make_xor(n_relevant=1, n_features=3)
    y = 3.0 * X[:, 0] + X[:, 1]
    res = asymptotic_importances(X, y, criterion="variance")
    np.testing.assert_allclose(res.importances, [2.25, 0.25, 0.0], atol=1e-12)
    assert res.mutual_information == pytest.approx(np.var(y), abs=1e-12)
    # An interaction: Y = X1 * X2 has Var 3/16, shared equally by symmetry.
    res = asymptotic_importances(X, X[:, 0] * X[:, 1] * 1.0, criterion="variance")
    np.testing.assert_allclose(res.importances, [3 / 32, 3 / 32, 0.0], atol=1e-12)
    np.testing.assert_allclose(
        expected_importances(X, X[:, 0] * X[:, 1] * 1.0, criterion="variance"),
        res.importances,
        atol=1e-12,
    )


# --- exact expected MDI ------------------------------------------------------------------


@pytest.mark.parametrize("k", range(1, 8))
def test_expected_led_unused_reproduces_table_6_2(led, k):
    got = expected_importances(*led, max_features=k, candidates="unused")
    np.testing.assert_allclose(got, LED_EXPECTED_UNUSED[k - 1], atol=1e-4)
    assert np.abs(got - LOUPPE_TABLE_6_2[k - 1]).max() < 0.006
    assert got.sum() == pytest.approx(LOG2_10, abs=1e-9)


def test_expected_k1_is_thm_1(led):
    exact = asymptotic_importances(*led).importances
    for candidates in ("unused", "non_constant"):
        got = expected_importances(*led, max_features=1, candidates=candidates)
        np.testing.assert_allclose(got, exact, atol=1e-12)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_expected_non_constant_is_what_extra_trees_estimate(led, k):
    # forestimp's Extra-Trees draw K among the features non-constant in the node: their MDI
    # converges to the "non_constant" oracle, and measurably not to the "unused" one.
    X, y = led
    est = ExtraTreesClassifier(
        n_estimators=20_000, max_features=k, criterion="entropy", random_state=0
    ).fit(np.asarray(X, dtype=float), y)
    se = est.tree_importances().std(axis=0) / np.sqrt(20_000)
    mine = expected_importances(X, y, max_features=k, candidates="non_constant")
    other = expected_importances(X, y, max_features=k, candidates="unused")
    z = np.abs(est.mdi_importances_ - mine) / se
    assert z.max() < 4.5, z
    assert (np.abs(est.mdi_importances_ - other) / se).max() > 4.5


def test_example_5_2_binary_vs_multiway():
    # X1 in {0, 1, 2} uniform, Y = 1[X1 >= 1], X2 = Y (Louppe 2014 Table 7.2).
    X = np.array([[0, 0], [1, 1], [2, 1]])
    y = np.array([0, 1, 1])
    h = -(1 / 3 * math.log2(1 / 3) + 2 / 3 * math.log2(2 / 3))
    multi = expected_importances(X, y, splits="multiway")
    np.testing.assert_allclose(multi, [h / 2, h / 2], atol=1e-12)
    assert multi[0] == pytest.approx(0.459, abs=5e-4)
    binary = expected_importances(X, y, splits="random_binary", candidates="non_constant")
    # Cut {0}|{1,2} or {0,1}|{2} with probability 1/2 each; the impure child {0,1} is split
    # again on X1 or X2: Imp(X1) = H/2 - 1/12.
    np.testing.assert_allclose(binary, [h / 2 - 1 / 12, h / 2 + 1 / 12], atol=1e-12)
    np.testing.assert_allclose(binary, [0.375, 0.541], atol=2e-3)
    # Extra-Trees with K = 1 estimate the same values.
    est = ExtraTreesClassifier(n_estimators=20_000, max_features=1, criterion="entropy")
    est.set_params(random_state=0).fit(X.astype(float), y)
    se = est.tree_importances().std(axis=0) / np.sqrt(20_000)
    assert np.all(np.abs(est.mdi_importances_ - binary) < 4.5 * se), (est.mdi_importances_, se)


def _noisy_copy(eps=0.1, n_irrelevant=0):
    """X1 = Y (uniform bit), X2 = Y flipped with probability eps, as weighted rows."""
    rows, y, w = [], [], []
    for yy in (0, 1):
        for flip, pr in ((0, 1 - eps), (1, eps)):
            rows.append([yy, yy ^ flip])
            y.append(yy)
            w.append(pr / 2)
    X, y, w = np.array(rows), np.array(y), np.array(w)
    for _ in range(n_irrelevant):
        X = np.vstack(
            [np.column_stack([X, np.zeros(len(X))]), np.column_stack([X, np.ones(len(X))])]
        )
        y, w = np.concatenate([y, y]), np.concatenate([w, w]) / 2
    return X.astype(int), y, w


def test_masking_noisy_copy():
    X, y, w = _noisy_copy()
    i1 = 1.0
    h_eps = -(0.1 * math.log2(0.1) + 0.9 * math.log2(0.9))
    i2 = 1 - h_eps  # I(X2; Y)
    # K = 1 (Eq. 6.40): Imp(X1) = I(X1;Y)/2 + I(X1;Y|X2)/2, Imp(X2) = I(X2;Y)/2.
    np.testing.assert_allclose(
        expected_importances(X, y, w, max_features=1), [i1 / 2 + (i1 - i2) / 2, i2 / 2], atol=1e-12
    )
    # K = 2 (Eq. 6.41): X1 always wins at the root, X2 is masked.
    np.testing.assert_allclose(
        expected_importances(X, y, w, max_features=2), [1.0, 0.0], atol=1e-12
    )
    # One irrelevant variable lets X2 reach the root when {X2, X3} is drawn (1/3).
    X3, y3, w3 = _noisy_copy(n_irrelevant=1)
    got = expected_importances(X3, y3, w3, max_features=2)
    assert got[1] > 0.05
    assert got[1] == pytest.approx(i2 / 3, abs=1e-12)
    assert got.sum() == pytest.approx(1.0, abs=1e-12)


# --- context-dependent importances ------------------------------------------------------


def test_context_problem_1_table_6_2():
    res = context_importances(*make_context_problem(1))
    np.testing.assert_array_equal(res.contexts, [0, 1])
    np.testing.assert_allclose(res.importances, [1.0, 0.125, 0.125], atol=1e-9)
    np.testing.assert_allclose(res.per_context.T, [[1.0, 0.5, 0.0], [1.0, 0.0, 0.5]], atol=1e-9)
    np.testing.assert_allclose(res.absolute.T, [[0, 0.375, 0.125], [0, 0.125, 0.375]], atol=1e-9)
    np.testing.assert_allclose(res.signed.T, [[0, -0.375, 0.125], [0, 0.125, -0.375]], atol=1e-9)
    np.testing.assert_allclose(res.global_signed, [0.0, -0.125, -0.125], atol=1e-9)
    assert res.labels.tolist() == [
        ["independent", "independent"],
        ["complementary", "irrelevant"],
        ["irrelevant", "complementary"],
    ]
    # The context is independent of the inputs: the global score is the P(x_c) mix.
    np.testing.assert_allclose(res.global_signed, res.signed.mean(axis=1), atol=1e-12)


@pytest.fixture(scope="module")
def problem_2():
    return make_context_problem(2)


def test_context_problem_2_table_6_3(problem_2):
    X, y, context, w = problem_2
    assert X.shape == (320, 8) and (context == 0).sum() == 160
    res = context_importances(X, y, context, w)
    np.testing.assert_allclose(res.importances, TABLE_6_3["importances"], atol=1e-4)
    for name in ("per_context", "absolute", "signed"):
        np.testing.assert_allclose(getattr(res, name).T, TABLE_6_3[name], atol=1e-4, err_msg=name)
    # X5-X7 are irrelevant in context 1 (Thm 6.3); X8 is context-independent.
    assert res.labels[4:7, 1].tolist() == ["irrelevant"] * 3
    assert res.labels[7].tolist() == ["independent"] * 2


def test_context_problem_2_skip_convention(problem_2):
    res = context_importances(*problem_2, empty="skip")
    np.testing.assert_allclose(res.absolute[:4, 0], SKIP_6_3["absolute"], atol=1e-4)
    np.testing.assert_allclose(res.signed[:4, 0], SKIP_6_3["signed"], atol=1e-4)
    # Context 1 has rows in every node of the first four variables' trees: unchanged.
    np.testing.assert_allclose(res.absolute[:, 1], TABLE_6_3["absolute"][1], atol=1e-4)


@pytest.mark.parametrize("criterion", ["entropy", "gini", "variance"])
def test_context_independent_of_everything_scores_zero(criterion):
    # A context bit independent of (X, Y): every node has the same conditional distribution
    # in each context, so Imp^| = 0 and every input is "independent" (Thm 6.1-6.2).
    X, y = make_xor(n_relevant=2, n_features=3)
    Xc = np.vstack([X, X])
    context = np.repeat([0, 1], len(X))
    res = context_importances(Xc, np.concatenate([y, y]) * 1.0, context, criterion=criterion)
    np.testing.assert_allclose(res.absolute, 0.0, atol=1e-12)
    np.testing.assert_allclose(res.global_signed, 0.0, atol=1e-12)
    assert set(res.labels.ravel()) == {"independent"}
    np.testing.assert_allclose(res.per_context.T, [res.importances] * 2, atol=1e-12)


def test_context_gini_is_not_entropy():
    # Problem 1 under Gini: |Imp^Δ| <= Imp^| always, and X1, context-independent in the
    # entropy sense, is not under Gini: given X2 = 0 the Gini decrease of X1 is 0.40625 on
    # all rows but 0.5 in context 0 (Gini decreases do not average like mutual information).
    X, y, context, w = make_context_problem(1)
    res = context_importances(X, y, context, w, criterion="gini")
    assert res.criterion == "gini"
    assert np.all(res.absolute >= np.abs(res.signed) - 1e-12)
    assert res.absolute[0].min() > 0.01
    assert res.importances.sum() == pytest.approx(
        asymptotic_importances(X, y, w, criterion="gini").mutual_information, abs=1e-12
    )


@pytest.mark.parametrize("m", [2, 3, 4])
def test_m_xor_gives_one_over_m_all_at_degree_m_minus_1(m):
    """Y = X_1 xor ... xor X_m: each variable carries 1/m bit, and only once the m - 1 others
    are known (Sutera MSc, §3.2.1); totally randomized trees converge to it."""
    X, y = make_xor(n_relevant=m)
    oracle = asymptotic_importances(X, y)
    np.testing.assert_allclose(oracle.importances, 1.0 / m, atol=1e-12)
    np.testing.assert_allclose(oracle.by_degree[:, m - 1], 1.0 / m, atol=1e-12)
    est = TotallyRandomizedTreesClassifier(
        n_estimators=3000, criterion="entropy", random_state=0
    ).fit(np.tile(X, (4, 1)), np.tile(y, 4))
    np.testing.assert_allclose(est.mdi_importances_, 1.0 / m, atol=0.03)

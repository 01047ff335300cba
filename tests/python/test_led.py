"""The seeds' own numbers: totally randomized trees on LED and XOR against the exact theory
of Louppe et al. (2013), Thm 1 (importances) and Thm 2 (irrelevant variables get 0)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from forestimp import ExtraTreesClassifier, TotallyRandomizedTreesClassifier
from forestimp.datasets import make_led, make_xor
from forestimp.theory import asymptotic_importances

# Louppe et al. (2013), Table 1, totally randomized trees (K = 1), in bits.
LED_EXACT = np.array([0.4127, 0.5815, 0.5312, 0.5421, 0.6566, 0.2258, 0.3720])
# Sum over the seven variables of the degree-k terms, k = 0..6 (ibid., Fig. 2 data).
LED_BY_DEGREE = np.array([0.802, 0.692, 0.568, 0.450, 0.347, 0.262, 0.200])
LOG2_10 = math.log2(10)


def _conditional_entropy(X, y, cols):
    """H(Y | X_cols) in bits for the empirical (uniform over rows) distribution."""
    groups: dict[tuple, list] = {}
    for row, label in zip(X[:, list(cols)].tolist(), y.tolist(), strict=True):
        groups.setdefault(tuple(row), []).append(label)
    h = 0.0
    for labels in groups.values():
        _, counts = np.unique(labels, return_counts=True)
        q = counts / counts.sum()
        h -= len(labels) / len(y) * float(np.sum(q * np.log2(q)))
    return h


def _brute_force_thm1(X, y):
    """Independent oracle for Thm 1: importance of every variable split by degree k."""
    p = X.shape[1]
    by_degree = np.zeros((p, p))
    for m in range(p):
        others = [j for j in range(p) if j != m]
        for k in range(p):
            w = 1.0 / (math.comb(p, k) * (p - k))
            for b in itertools.combinations(others, k):
                mi = _conditional_entropy(X, y, b) - _conditional_entropy(X, y, (*b, m))
                by_degree[m, k] += w * mi
    return by_degree


@pytest.fixture(scope="module")
def led():
    X, y = make_led()
    return np.asarray(X, dtype=float), np.asarray(y)


def test_make_led_is_the_exhaustive_support(led):
    X, y = led
    assert X.shape == (10, 7)
    assert sorted(y.tolist()) == list(range(10))
    assert len({tuple(r) for r in X.tolist()}) == 10
    assert set(np.unique(X)) <= {0.0, 1.0}
    # Digit 8 lights every segment, digit 1 exactly two.
    assert X[list(y).index(8)].sum() == 7
    assert X[list(y).index(1)].sum() == 2


def test_theory_reproduces_table_1(led):
    X, y = led
    res = asymptotic_importances(X, y, criterion="entropy")
    np.testing.assert_allclose(res.importances, LED_EXACT, atol=1e-4)
    by_degree = np.asarray(res.by_degree)
    assert by_degree.shape == (7, 7)
    np.testing.assert_allclose(by_degree.sum(axis=0), LED_BY_DEGREE, atol=1e-3)
    np.testing.assert_allclose(by_degree.sum(axis=1), res.importances, atol=1e-12)
    # Thm 1: the importances add up to I(X; Y) = H(Y) = log2(10) for distinct rows.
    assert res.mutual_information == pytest.approx(LOG2_10, abs=1e-12)
    assert np.sum(res.importances) == pytest.approx(LOG2_10, abs=1e-12)
    # An independent brute-force evaluation of the same formula.
    np.testing.assert_allclose(by_degree, _brute_force_thm1(X, y), atol=1e-12)


def test_totally_randomized_trees_converge_to_table_1(led):
    X, y = led
    n_trees = 10_000
    est = TotallyRandomizedTreesClassifier(
        n_estimators=n_trees, criterion="entropy", random_state=0
    )
    est.fit(X, y)
    raw = est.mdi_importances_
    assert np.abs(raw - LED_EXACT).max() < 0.01, np.round(raw, 4)
    # And within 4 Monte-Carlo standard errors of the exact value, variable by variable.
    se = est.tree_importances().std(axis=0) / np.sqrt(n_trees)
    assert np.all(np.abs(raw - LED_EXACT) < 4 * se + 1e-4), (np.round(raw - LED_EXACT, 4), se)
    # Every fully grown tree separates the 10 distinct digits: its importances sum to
    # H(Y) - 0 = log2(10) bits (Louppe et al. 2013, Eq. 8 with pure leaves).
    per_tree = est.tree_importances()
    assert per_tree.shape == (n_trees, 7)
    np.testing.assert_allclose(per_tree.sum(axis=1), LOG2_10, rtol=0, atol=1e-9)
    np.testing.assert_allclose(per_tree.mean(axis=0), raw, rtol=0, atol=1e-12)
    # Normalized importances are Table 1 divided by log2(10), up to Monte-Carlo error.
    np.testing.assert_allclose(est.feature_importances_, LED_EXACT / LOG2_10, atol=0.004)


@pytest.mark.parametrize("max_features", [1, 3, 7])
def test_sum_rule_holds_for_any_k(led, max_features):
    X, y = led
    est = ExtraTreesClassifier(
        n_estimators=100, criterion="entropy", max_features=max_features, random_state=1
    ).fit(X, y)
    np.testing.assert_allclose(est.tree_importances().sum(axis=1), LOG2_10, rtol=0, atol=1e-9)


def test_gini_is_not_in_bits(led):
    # With Gini the per-tree sum is the Gini impurity of 10 equiprobable classes, 0.9.
    X, y = led
    est = TotallyRandomizedTreesClassifier(n_estimators=50, criterion="gini", random_state=0)
    est.fit(X, y)
    np.testing.assert_allclose(est.tree_importances().sum(axis=1), 0.9, rtol=0, atol=1e-9)


@pytest.mark.parametrize("n_features", [3, 5])
def test_xor_relevant_get_theory_irrelevant_get_exactly_zero(n_features):
    X, y = make_xor(n_relevant=2, n_features=n_features, random_state=0)
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    # Exhaustive: every binary row once, y = x0 XOR x1.
    assert X.shape == (2**n_features, n_features)
    assert len({tuple(r) for r in X.tolist()}) == 2**n_features
    np.testing.assert_array_equal(y.astype(int), (X[:, 0] != X[:, 1]).astype(int))

    theory = asymptotic_importances(X, y, criterion="entropy").importances
    # By symmetry the one bit of I(X; Y) is shared equally by the two relevant variables,
    # and Thm 2 gives 0 to the others.
    np.testing.assert_allclose(theory, [0.5, 0.5] + [0.0] * (n_features - 2), atol=1e-12)

    est = TotallyRandomizedTreesClassifier(n_estimators=2000, criterion="entropy", random_state=0)
    raw = est.fit(X, y).mdi_importances_
    np.testing.assert_allclose(raw[:2], theory[:2], atol=0.04)
    # Irrelevant variables: exactly zero, not merely small (every split on them leaves the
    # class proportions unchanged on exhaustive data).
    assert np.all(raw[2:] == 0.0), raw
    np.testing.assert_allclose(est.tree_importances().sum(axis=1), 1.0, rtol=0, atol=1e-9)


def test_max_depth_truncates_theory_and_trees(led):
    # With depth-limited trees only the degrees k < max_depth contribute (Louppe 2014, §6.3).
    X, y = led
    full = asymptotic_importances(X, y, criterion="entropy")
    by_degree = np.asarray(full.by_degree)
    for depth in (1, 2, 4):
        shallow = asymptotic_importances(X, y, criterion="entropy", max_depth=depth)
        np.testing.assert_allclose(
            shallow.importances, by_degree[:, :depth].sum(axis=1), atol=1e-12
        )
    # Stumps: each tree splits the root on one of the 7 variables, uniformly, so the
    # forest estimates I(X_m; Y) / 7 (no variable is constant on the full LED support).
    est = TotallyRandomizedTreesClassifier(
        n_estimators=50_000, criterion="entropy", max_depth=1, random_state=0
    ).fit(X, y)
    stumps = asymptotic_importances(X, y, criterion="entropy", max_depth=1).importances
    se = est.tree_importances().std(axis=0) / np.sqrt(50_000)
    assert np.all(np.abs(est.mdi_importances_ - stumps) < 4 * se), (est.mdi_importances_, se)
    assert np.all(est.forest_.depths() == 1)

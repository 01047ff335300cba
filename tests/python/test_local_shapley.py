"""Local MDI of totally randomized trees as Shapley values (Sutera et al., NeurIPS 2021).

On the exhaustive LED problem (the 10 digits, uniform): the exact oracle
``local_asymptotic_importances`` against the Shapley value written by its definition (every
order of the 7 variables, an independent conditional-impurity count); every single totally
randomized multiway tree gives the marginal contributions of one order; a forest converges to
the oracle within its exact Monte Carlo error; and TreeSHAP, on the same forest, values a
different game.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from forestimp import TotallyRandomizedTreesClassifier
from forestimp.datasets import make_led
from forestimp.importance import local_mdi, shap_values
from forestimp.theory import asymptotic_importances, local_asymptotic_importances


@pytest.fixture(scope="module")
def led():
    X, y = make_led()
    return X.astype(float), np.asarray(y)


def _impurity(y: np.ndarray, criterion: str) -> float:
    q = np.bincount(y) / len(y)
    q = q[q > 0]
    return float(-(q * np.log2(q)).sum()) if criterion == "entropy" else float(1 - (q * q).sum())


def _conditional(X, y, criterion) -> dict[tuple[int, ...], np.ndarray]:
    """i(Y | X_S = x_S) of every row, for every subset S (uniform rows), counted directly."""
    n, p = X.shape
    table = {}
    for k in range(p + 1):
        for cols in itertools.combinations(range(p), k):
            idx = list(cols)
            table[cols] = np.array(
                [_impurity(y[(X[:, idx] == X[r, idx]).all(axis=1)], criterion) for r in range(n)]
            )
    return table


def _order_contributions(X, y, criterion="entropy") -> np.ndarray:
    """Marginal contributions of v_x(S) = i(Y) − i(Y | x_S), shape (p!, n, p): one per order."""
    p = X.shape[1]
    cond = _conditional(X, y, criterion)
    out = []
    for order in itertools.permutations(range(p)):
        contrib = np.zeros((X.shape[0], p))
        for pos, m in enumerate(order):
            before = tuple(sorted(order[:pos]))
            contrib[:, m] = cond[before] - cond[tuple(sorted(order[: pos + 1]))]
        out.append(contrib)
    return np.array(out)


@pytest.fixture(scope="module")
def led_orders(led):
    return _order_contributions(*led)


def test_oracle_is_the_shapley_value_by_its_definition(led, led_orders):
    exact = local_asymptotic_importances(*led)
    np.testing.assert_allclose(exact.values, led_orders.mean(axis=0), rtol=0, atol=1e-12)
    gini = local_asymptotic_importances(*led, criterion="gini")
    np.testing.assert_allclose(
        gini.values, _order_contributions(*led, "gini").mean(axis=0), rtol=0, atol=1e-12
    )


def test_efficiency_and_the_global_formula(led):
    X, y = led
    exact = local_asymptotic_importances(X, y)
    # Every digit is identified by its 7 segments: the whole of H(Y) = log2(10) bits.
    np.testing.assert_allclose(exact.total_decrease, math.log2(10), rtol=0, atol=1e-12)
    np.testing.assert_allclose(exact.values.sum(axis=1), exact.total_decrease, atol=1e-12)
    # Averaged over the rows, Thm 1 of Louppe et al. (2013), also degree by degree.
    for depth in (None, 1, 3):
        glob = asymptotic_importances(X, y, max_depth=depth).importances
        local = local_asymptotic_importances(X, y, max_depth=depth)
        np.testing.assert_allclose(local.probability @ local.values, glob, rtol=0, atol=1e-12)


def test_weights_are_multiplicities(led):
    X, y = led
    w = np.arange(1.0, 11.0)
    exact = local_asymptotic_importances(X, y, w)
    glob = asymptotic_importances(X, y, w).importances
    np.testing.assert_allclose(exact.probability @ exact.values, glob, rtol=0, atol=1e-12)
    repeated = np.repeat(np.arange(10), w.astype(int))
    copies = local_asymptotic_importances(X[repeated], y[repeated])
    np.testing.assert_allclose(copies.values[np.searchsorted(repeated, np.arange(10))],
                               exact.values, rtol=0, atol=1e-12)  # fmt: skip
    w[0] = 0.0  # digit 0 leaves the support
    dropped = local_asymptotic_importances(X, y, w)
    assert dropped.rows.tolist() == list(range(1, 10))
    assert dropped.values.shape == (9, 7)
    np.testing.assert_allclose(dropped.values.sum(axis=1), dropped.total_decrease, atol=1e-12)
    q = w[1:] / w[1:].sum()  # the digits left are still identified: all of H(Y)
    np.testing.assert_allclose(dropped.total_decrease, -(q * np.log2(q)).sum(), atol=1e-12)


def test_each_tree_is_the_contribution_of_one_order(led, led_orders):
    X, y = led
    flat = led_orders.transpose(1, 0, 2)  # (n, p!, p)
    for seed in range(12):
        tree = TotallyRandomizedTreesClassifier(n_estimators=1, multiway=True, random_state=seed)
        values = local_mdi(tree.fit(X, y), X).values
        for r in range(len(X)):
            gap = np.abs(flat[r] - values[r]).max(axis=1).min()
            assert gap < 1e-9, (seed, r, gap)


def test_forest_converges_within_its_monte_carlo_error(led, led_orders):
    X, y = led
    n_trees = 4000
    forest = TotallyRandomizedTreesClassifier(n_estimators=n_trees, multiway=True, random_state=0)
    values = local_mdi(forest.fit(X, y), X).values
    exact = local_asymptotic_importances(X, y).values
    # Each tree draws a uniform order along x's path: the exact per-tree spread of the
    # contributions bounds the forest's error (5 standard errors).
    se = led_orders.std(axis=0) / math.sqrt(n_trees)
    assert (np.abs(values - exact) <= 5 * se + 1e-12).all()
    assert np.abs(values - exact).max() > 0  # a finite forest is not the limit


def _observational_shapley(X, y) -> np.ndarray:
    """Shapley values of u_c(S) = P(Y = c | X_S = x_S), shape (n, p, n_classes)."""
    n, p = X.shape
    n_classes = int(y.max()) + 1
    u = {}
    for k in range(p + 1):
        for cols in itertools.combinations(range(p), k):
            idx = list(cols)
            match = [(X[:, idx] == X[r, idx]).all(axis=1) for r in range(n)]
            u[cols] = np.array([np.bincount(y[m], minlength=n_classes) / m.sum() for m in match])
    phi = np.zeros((n, p, n_classes))
    for cols, value in u.items():
        for m in range(p):
            if m not in cols:
                weight = math.factorial(len(cols)) * math.factorial(p - len(cols) - 1)
                grown = tuple(sorted((*cols, m)))
                phi[:, m] += weight / math.factorial(p) * (u[grown] - value)
    return phi


def test_treeshap_values_another_game(led):
    X, y = led
    forest = TotallyRandomizedTreesClassifier(n_estimators=10_000, multiway=True, random_state=0)
    forest.fit(X, y)
    sv = shap_values(forest, X).values  # (n, p, n_classes)
    # TreeSHAP shares out f(x) − E[f]: 1 − 1/10 of probability on each digit's own class,
    # signed values summing to zero over the classes; local MDI shares out the log2(10)
    # bits that x's segments tell about Y, one vector for all classes.
    np.testing.assert_allclose(sv[np.arange(10), :, y].sum(axis=1), 0.9, atol=1e-9)
    np.testing.assert_allclose(sv.sum(axis=2), 0.0, atol=1e-9)
    np.testing.assert_allclose(local_mdi(forest, X).values.sum(axis=1), math.log2(10), atol=1e-9)
    # Path-dependent TreeSHAP is not the Shapley value of the conditional game
    # P(Y = c | x_S) either (the cover of the tree's own path replaces the conditioning),
    # while local MDI is that of the impurity game within the forest's error.
    gap = np.abs(sv - _observational_shapley(X, y)).max()
    local_gap = np.abs(local_mdi(forest, X).values - local_asymptotic_importances(X, y).values)
    assert gap > 0.1 and local_gap.max() < 0.03

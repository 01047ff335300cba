"""Multiway totally randomized trees and MDI by depth against the exact theory: Thm 1 of
Louppe et al. (2013) degree by degree, the K-columns of Louppe (2014) Table 6.2 (re-derived
exactly, research digest seed004 §4.8) and Example 5.2 of the thesis."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from forestimp import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    TotallyRandomizedTreesClassifier,
    TotallyRandomizedTreesRegressor,
)
from forestimp.datasets import make_led
from forestimp.exceptions import DataError, InvalidParameterError
from forestimp.importance import mdi
from forestimp.theory import asymptotic_importances

# Sum over the seven segments of the degree-k terms, k = 0..6 (Louppe et al. 2013, Fig. 2).
LED_BY_DEGREE_SUMS = np.array([0.802, 0.692, 0.568, 0.450, 0.347, 0.262, 0.200])
# Exact expected MDI for K = 2..7 with K drawn among the variables not yet used (seed004 §4.8).
LED_K_TABLE = {
    2: [0.3625, 0.6652, 0.5126, 0.5252, 0.7302, 0.1397, 0.3865],
    3: [0.3272, 0.7172, 0.4963, 0.4847, 0.7762, 0.1268, 0.3935],
    4: [0.3100, 0.7560, 0.4892, 0.4445, 0.8092, 0.1235, 0.3893],
    5: [0.3038, 0.7842, 0.4833, 0.4171, 0.8297, 0.1222, 0.3817],
    6: [0.3065, 0.7981, 0.4753, 0.4096, 0.8355, 0.1219, 0.3752],
    7: [0.3065, 0.7981, 0.4753, 0.4096, 0.8355, 0.1219, 0.3752],
}


@pytest.fixture(scope="module")
def led():
    X, y = make_led()
    return np.asarray(X, dtype=float), np.asarray(y)


@pytest.fixture(scope="module")
def led_forest(led):
    X, y = led
    return TotallyRandomizedTreesClassifier(n_estimators=10_000, multiway=True, random_state=0).fit(
        X, y
    )


def _pad(a: np.ndarray, width: int) -> np.ndarray:
    return np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])])


def test_led_converges_to_thm1_degree_by_degree(led, led_forest):
    X, y = led
    exact = asymptotic_importances(X, y)
    np.testing.assert_allclose(exact.by_degree.sum(axis=0), LED_BY_DEGREE_SUMS, atol=1e-3)
    imp = mdi(led_forest).importances_mean
    by_depth = mdi(led_forest, by_depth=True).by_depth
    assert by_depth.shape[0] == 7 and by_depth.shape[1] <= 7
    by_depth = _pad(by_depth, 7)
    np.testing.assert_allclose(imp, exact.importances, atol=0.01)
    np.testing.assert_allclose(by_depth, exact.by_degree, atol=0.01)
    np.testing.assert_allclose(by_depth.sum(axis=0), LED_BY_DEGREE_SUMS, atol=0.01)
    np.testing.assert_allclose(by_depth.sum(axis=1), imp, rtol=0, atol=1e-12)


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_max_depth_keeps_the_low_degrees(led, depth):
    # Louppe (2014), Prop. 6.6: trees of depth q keep the terms k < q of Thm 1.
    X, y = led
    est = TotallyRandomizedTreesClassifier(
        n_estimators=10_000, multiway=True, max_depth=depth, random_state=depth
    ).fit(X, y)
    exact = asymptotic_importances(X, y, max_depth=depth)
    assert mdi(est, by_depth=True).by_depth.shape == (7, depth)
    np.testing.assert_allclose(mdi(est).importances_mean, exact.importances, atol=0.01)


@pytest.mark.parametrize("k", sorted(LED_K_TABLE))
def test_led_k_columns_of_table_6_2(led, k):
    X, y = led
    est = ExtraTreesClassifier(
        n_estimators=10_000, criterion="entropy", max_features=k, multiway=True, random_state=k
    ).fit(X, y)
    np.testing.assert_allclose(mdi(est).importances_mean, LED_K_TABLE[k], atol=0.01)


@pytest.mark.parametrize("k", [1, 3, 7])
def test_every_fully_grown_tree_sums_to_the_mutual_information(led, k):
    X, y = led
    est = ExtraTreesClassifier(
        n_estimators=30, criterion="entropy", max_features=k, multiway=True, random_state=1
    ).fit(X, y)
    np.testing.assert_allclose(mdi(est).per_tree.sum(axis=1), math.log2(10), atol=1e-12)
    both = mdi(est, by_depth=True).by_depth_per_tree
    np.testing.assert_allclose(both.sum(axis=2), mdi(est).per_tree, atol=1e-12)


def test_example_5_2_multiway_against_binary_splits():
    # X1 uniform on {0, 1, 2}, Y = 1[X1 >= 1], X2 = Y: three equally likely rows.
    X = np.array([[0, 0], [1, 1], [2, 1]] * 2, dtype=float)
    y = X[:, 1].astype(int)
    h = -(1 / 3) * math.log2(1 / 3) - (2 / 3) * math.log2(2 / 3)
    mw = TotallyRandomizedTreesClassifier(n_estimators=20_000, multiway=True, random_state=0)
    np.testing.assert_allclose(
        mdi(mw.fit(X, y)).importances_mean, [h / 2, h / 2], atol=0.01
    )  # 0.459 each
    binary = TotallyRandomizedTreesClassifier(n_estimators=20_000, random_state=0).fit(X, y)
    x1 = 0.5 * (0.5 * h + 0.5 * (h - 2 / 3 + 0.5 * 2 / 3))  # 0.376, X2 gets 0.542
    np.testing.assert_allclose(mdi(binary).importances_mean, [x1, h - x1], atol=0.01)


def test_one_child_per_observed_value():
    # A ternary and a quaternary variable; Y identifies the pair, so trees grow fully.
    X = np.array([[a, b] for a in (0, 1, 5) for b in (2, 3, 4, 9)], dtype=float)
    y = np.arange(12)
    est = TotallyRandomizedTreesClassifier(n_estimators=20, multiway=True, random_state=0)
    est.fit(X, y)
    leaves = est.apply(X)
    for t in range(20):
        assert len(set(leaves[:, t])) == 12  # one leaf per (value, value) pair
        arrays = est.forest_.tree_arrays(t)
        is_leaf = arrays["children_left"] < 0
        # 1 multiway split at the root + its 3 or 4 children: 2 + 3 (or 3 + 4) chain nodes.
        assert (~is_leaf).sum() == 11 and is_leaf.sum() == 12
    by_depth = mdi(est, by_depth=True).by_depth
    assert by_depth.shape == (2, 2)
    # Root on X1: I(X1; Y) = log2 3, then X2 given X1: 2 bits; or the other way round.
    np.testing.assert_allclose(by_depth.sum(), math.log2(12), atol=1e-12)
    # Unseen values go to the nearest observed value.
    near = est.predict(np.array([[2.9, 5.0], [3.1, 20.0], [-3.0, 2.6]]))
    np.testing.assert_array_equal(near, [6, 11, 1])


def test_normalizations_and_shapes(led, led_forest):
    est = led_forest
    p, m = 7, est.n_estimators
    d = mdi(est, by_depth=True).by_depth.shape[1]
    np.testing.assert_array_equal(mdi(est).importances_mean, est.mdi_importances_)
    np.testing.assert_array_equal(
        mdi(est, normalize=True).importances_mean, est.feature_importances_
    )
    np.testing.assert_array_equal(mdi(est).per_tree, est.tree_importances())
    np.testing.assert_allclose(mdi(est, normalize=True).per_tree.sum(axis=1), 1.0)
    both = mdi(est, by_depth=True).by_depth_per_tree
    assert both.shape == (m, p, d)
    np.testing.assert_allclose(both.mean(axis=0), mdi(est, by_depth=True).by_depth, atol=1e-12)
    np.testing.assert_allclose(mdi(est, by_depth=True, normalize=True).by_depth.sum(), 1.0)
    normalized = mdi(est, by_depth=True, normalize=True).by_depth_per_tree
    np.testing.assert_allclose(normalized.sum(axis=(1, 2)), 1.0)
    assert mdi(est.forest_, by_depth=True).by_depth.shape == (p, d)


def test_binary_forests_have_plain_depths(led):
    X, y = led
    est = ExtraTreesClassifier(n_estimators=50, random_state=0).fit(X, y)
    by_depth = mdi(est, by_depth=True).by_depth
    assert by_depth.shape == (7, int(est.forest_.depths().max()))
    np.testing.assert_allclose(by_depth.sum(axis=1), mdi(est).importances_mean, atol=1e-12)


def test_regression_and_determinism(led):
    X, y = led
    yr = y.astype(float) ** 2
    for cls in (TotallyRandomizedTreesRegressor, ExtraTreesRegressor):
        a = cls(n_estimators=40, multiway=True, random_state=3, n_jobs=1).fit(X, yr)
        b = cls(n_estimators=40, multiway=True, random_state=3, n_jobs=2).fit(X, yr)
        assert a.forest_.to_bytes() == b.forest_.to_bytes()
        np.testing.assert_allclose(mdi(a).importances_mean.sum(), yr.var(), rtol=1e-12)
        np.testing.assert_allclose(a.predict(X), yr, rtol=1e-12)


def test_pickle_round_trip(led, led_forest):
    X, _ = led
    twin = pickle.loads(pickle.dumps(led_forest))
    assert twin.multiway is True
    assert twin.forest_.to_bytes() == led_forest.forest_.to_bytes()
    np.testing.assert_array_equal(
        mdi(twin, by_depth=True).by_depth_per_tree, mdi(led_forest, by_depth=True).by_depth_per_tree
    )
    np.testing.assert_array_equal(twin.predict_proba(X), led_forest.predict_proba(X))


def test_bad_inputs(led):
    X, y = led
    with pytest.raises(DataError, match="not an integer"):
        TotallyRandomizedTreesClassifier(multiway=True).fit(X + 0.5, y)
    with pytest.raises(InvalidParameterError, match="multiway"):
        TotallyRandomizedTreesClassifier(multiway="yes").fit(X, y)
    with pytest.raises(InvalidParameterError, match="max_leaf_nodes"):
        ExtraTreesClassifier(multiway=True, max_leaf_nodes=4).fit(X, y)
    est = ExtraTreesClassifier(multiway=True)
    assert est.get_params()["multiway"] is True
    with pytest.raises(ValueError):
        mdi(ExtraTreesClassifier())

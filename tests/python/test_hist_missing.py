"""Missing values with ``splitter="hist"``: NaN has its own bin, and each split scores the
exact splitter's NaN candidates in its order, so with one bin per distinct value (at most
255 non-missing values per column) and exact sums the trees are the exact splitter's
(``docs/missing-values.md``). Thresholds are the whole column's mid-points, the exact
splitter's the node's, so rows with values absent from a node may be routed otherwise: the
parity is checked on the training rows, and on new rows with one feature (whose nodes hold
consecutive values)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.tree import DecisionTreeRegressor

import forestimp as fi
from forestimp.importance import permutation


def _integer_data(n=3000, p=6, levels=30, seed=0):
    """Integer values with 20 % NaN, column 2 all NaN where column 0 < 8 (so in whole
    subtrees), and a noisy class of columns 0 and 1."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(np.float64)
    y = ((X[:, 0] + X[:, 1] > levels) ^ (rng.random(n) < 0.1)).astype(np.int64)
    X[:, 2][X[:, 0] < 8] = np.nan
    X[rng.random((n, p)) < 0.2] = np.nan
    return X, y


FOREST_PARAMS = [
    # K < p/2: every node's candidates are gathered and binned.
    dict(max_features=0.3),
    # K = p: nodes above 1024 rows keep and subtract bins, smaller ones read code lists.
    dict(max_features=1.0, min_samples_leaf=3),
    dict(max_features=1.0, max_depth=7),
    # Best-first growth.
    dict(max_features=1.0, max_leaf_nodes=50),
]


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.RandomForestRegressor])
@pytest.mark.parametrize("params", FOREST_PARAMS)
@pytest.mark.parametrize("weighted", [False, True])
def test_forests_grow_the_exact_trees_with_nan(cls, params, weighted):
    X, y = _integer_data()
    # Integer weights: every sum is exact in any order.
    sw = np.arange(len(y)) % 3 + 1.0 if weighted else None
    kw = dict(n_estimators=6, random_state=3, bootstrap=False, **params)
    exact = cls(**kw).fit(X, y, sample_weight=sw)
    hist = cls(**kw, splitter="hist").fit(X, y, sample_weight=sw)
    np.testing.assert_array_equal(hist.apply(X), exact.apply(X))
    np.testing.assert_array_equal(hist.predict(X), exact.predict(X))
    np.testing.assert_array_equal(hist.forest_.node_counts(), exact.forest_.node_counts())
    for i in range(6):
        a, b = exact.forest_.tree_arrays(i), hist.forest_.tree_arrays(i)
        np.testing.assert_array_equal(a["feature"], b["feature"])
        np.testing.assert_array_equal(a["impurity"], b["impurity"])
        np.testing.assert_array_equal(a["missing_go_to_left"], b["missing_go_to_left"])
        # "Non-missing left, missing right" has threshold +inf in both.
        np.testing.assert_array_equal(np.isinf(a["threshold"]), np.isinf(b["threshold"]))
    # MDI credits the same splits, those that route NaN included.
    np.testing.assert_array_equal(hist.feature_importances_, exact.feature_importances_)
    assert any(
        np.isinf(hist.forest_.tree_arrays(i)["threshold"]).any()
        or hist.forest_.tree_arrays(i)["missing_go_to_left"].any()
        for i in range(6)
    )


@pytest.mark.parametrize("cls", [fi.GradientBoostingClassifier, fi.GradientBoostingRegressor])
@pytest.mark.parametrize("params", [dict(), dict(max_leaf_nodes=15, max_depth=None)])
def test_boosters_grow_the_exact_trees_with_nan(cls, params):
    # Gradients are not whole: sums round otherwise in bins than sorted, which moves no
    # cut here (no near-tie), so the trees, and the predictions to rounding, agree.
    X, y = _integer_data(n=4000)
    target = y if cls is fi.GradientBoostingClassifier else 3.0 * y - 1.0
    kw = dict(n_estimators=20, random_state=0, **params)
    exact = cls(**kw).fit(X, target)
    hist = cls(**kw, splitter="hist").fit(X, target)
    np.testing.assert_array_equal(hist.apply(X), exact.apply(X))
    ours, theirs = (
        (m.decision_function(X) if hasattr(m, "decision_function") else m.predict(X))
        for m in (hist, exact)
    )
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def _one_feature(seed):
    """One feature of about 100 levels (quarters, exact in float32, as scikit-learn fits)
    with 25 % NaN and a target that depends on missingness."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(600, 1)) * 16) / 4
    yr = np.sin(3 * X[:, 0]) + 0.3 * rng.normal(size=600)
    X[rng.random(600) < 0.25] = np.nan
    yr[np.isnan(X[:, 0])] += 1.0
    return X, yr


@pytest.mark.parametrize("seed", [0, 1])
def test_one_feature_hist_tree_is_the_exact_one_on_new_rows(seed):
    # One feature: a node's values are consecutive values of the column, so the bins'
    # edges are the node's mid-points, and new rows (NaN or not) are routed alike too.
    X, yr = _one_feature(seed)
    yc = (yr > 0).astype(int) + (yr > 0.8)
    new = np.round(np.random.default_rng(9).normal(size=(500, 1)) * 32) / 8
    new[np.random.default_rng(8).random(500) < 0.25] = np.nan
    kw = dict(n_estimators=1, bootstrap=False, max_features=None, max_depth=6, random_state=0)
    for cls, y, method in [
        (fi.RandomForestRegressor, yr, "predict"),
        (fi.RandomForestClassifier, yc, "predict_proba"),
    ]:
        hist = cls(splitter="hist", **kw).fit(X, y)
        exact = cls(**kw).fit(X, y)
        np.testing.assert_array_equal(getattr(hist, method)(new), getattr(exact, method)(new))
        np.testing.assert_array_equal(hist.apply(new), exact.apply(new))
        assert np.isnan(X).any() and hist.forest_.tree_arrays(0)["missing_go_to_left"].any()


def test_nan_unseen_in_training_goes_to_the_child_with_more_samples():
    X, yr = _one_feature(2)
    complete = np.nan_to_num(X, nan=0.05)
    est = fi.RandomForestRegressor(
        n_estimators=1, bootstrap=False, max_features=None, max_depth=3, splitter="hist"
    ).fit(complete, yr)
    sk = DecisionTreeRegressor(max_depth=3).fit(complete, yr)
    probe = np.array([[np.nan], [0.0], [1.0]])
    np.testing.assert_allclose(est.predict(probe), sk.predict(probe), atol=1e-12)


def test_permutation_permutes_the_nan_pattern_of_hist_models():
    # One feature, no bootstrap: the exact and hist models route every permuted row (a
    # training value, or NaN) alike.
    X, yr = _one_feature(3)
    kw = dict(n_estimators=5, random_state=0, max_features=None, bootstrap=False)
    exact = fi.RandomForestRegressor(**kw).fit(X, yr)
    hist = fi.RandomForestRegressor(**kw, splitter="hist").fit(X, yr)
    a = permutation(exact, X, yr, n_repeats=4, random_state=0)
    b = permutation(hist, X, yr, n_repeats=4, random_state=0)
    np.testing.assert_allclose(b.importances, a.importances, rtol=0, atol=1e-12)
    assert a.importances_mean[0] > 0.1


def test_nan_bin_beside_256_value_bins_and_continuous_columns():
    # More distinct values than bins: NaN keeps its own bin (the others share 255), and the
    # forest does about as well as scikit-learn's HistGradientBoosting on the same task.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 5))
    X[rng.random(X.shape) < 0.2] = np.nan
    y = X[:, 0].copy()
    y[np.isnan(y)] = 3.0
    y += 0.1 * rng.normal(size=4000)
    tr, te = slice(0, 3000), slice(3000, None)
    ours = fi.RandomForestRegressor(n_estimators=40, random_state=0, splitter="hist", max_bins=256)
    r2 = ours.fit(X[tr], y[tr]).score(X[te], y[te])
    theirs = HistGradientBoostingRegressor(random_state=0).fit(X[tr], y[tr]).score(X[te], y[te])
    assert r2 > 0.95 and r2 > theirs - 0.02, (r2, theirs)


def test_to_sklearn_predicts_like_the_hist_forest_on_nan():
    # scikit-learn's own predict on the converted trees reads the stored NaN sides and the
    # +inf of "non-missing | missing" (float32 inputs: thresholds are cut to float32).
    X, y = _integer_data(n=1500)
    est = fi.RandomForestClassifier(n_estimators=10, random_state=0, splitter="hist").fit(X, y)
    Xt = X.astype(np.float32)
    np.testing.assert_allclose(
        est.to_sklearn().predict_proba(Xt), est.predict_proba(Xt), atol=1e-12
    )

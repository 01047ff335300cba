"""The histogram splitter (``splitter="hist"``): same trees as exact CART when every feature has
at most ``max_bins`` distinct values, real thresholds in the model, no copy of X, validation."""

import pickle
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split

import forestimp as fi
from forestimp.exceptions import InvalidParameterError


def _integer_data(n=3000, p=8, levels=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(np.float64)
    y = ((X[:, 0] + X[:, 1] > levels) ^ (rng.random(n) < 0.1)).astype(np.int64)
    return X, y


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.RandomForestRegressor])
@pytest.mark.parametrize(
    "params",
    [
        dict(max_features=0.5),
        # K = p, the nodes below 1024 rows grown from code-ordered lists.
        dict(max_features=1.0, min_samples_leaf=3),
        dict(max_features=1.0, max_depth=7),
        dict(max_features=1.0, max_bins=256, min_samples_split=9),
    ],
)
def test_few_distinct_values_grow_the_exact_trees(cls, params):
    # One bin per distinct value: every cut CART scores is a bin boundary, so the trees
    # partition the rows they grew on identically. (Thresholds may differ between two
    # values absent from a node, so out-of-bag rows may not: no bootstrap here.)
    X, y = _integer_data()
    kw = dict(n_estimators=8, random_state=3, bootstrap=False)
    exact = cls(**kw, **{k: v for k, v in params.items() if k != "max_bins"}).fit(X, y)
    hist = cls(**kw, **params, splitter="hist").fit(X, y)
    np.testing.assert_array_equal(hist.apply(X), exact.apply(X))
    np.testing.assert_array_equal(hist.forest_.node_counts(), exact.forest_.node_counts())
    for i in range(8):
        a, b = exact.forest_.tree_arrays(i), hist.forest_.tree_arrays(i)
        np.testing.assert_array_equal(a["feature"], b["feature"])
        np.testing.assert_array_equal(a["impurity"], b["impurity"])
    np.testing.assert_array_equal(hist.feature_importances_, exact.feature_importances_)


def test_thresholds_are_real_values_between_observed_values():
    X, y = _integer_data(levels=5)
    est = fi.RandomForestClassifier(n_estimators=4, random_state=0, splitter="hist").fit(X, y)
    for i in range(4):
        t = est.forest_.tree_arrays(i)
        inner = t["children_left"] >= 0
        # Values are 0..4: every cut is a mid-point k + 0.5.
        assert set(np.unique(t["threshold"][inner])) == {0.5, 1.5, 2.5, 3.5}


def test_accuracy_matches_exact_on_continuous_data():
    X, y = make_classification(6000, 20, n_informative=8, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    kw = dict(n_estimators=60, random_state=0, n_jobs=2)
    exact = fi.RandomForestClassifier(**kw).fit(Xtr, ytr).score(Xte, yte)
    hist = fi.RandomForestClassifier(splitter="hist", **kw).fit(Xtr, ytr).score(Xte, yte)
    coarse = fi.RandomForestClassifier(splitter="hist", max_bins=4, **kw).fit(Xtr, ytr)
    assert abs(hist - exact) < 0.015, (hist, exact)
    # Four bins lose information: coarse trees are worse but still learn.
    assert 0.7 < coarse.score(Xte, yte) < hist


def test_regression_r2_matches_exact():
    X, y = make_regression(4000, 10, n_informative=5, noise=5.0, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
    kw = dict(n_estimators=40, random_state=0, max_features=0.5)
    exact = fi.RandomForestRegressor(**kw).fit(Xtr, ytr).score(Xte, yte)
    hist = fi.RandomForestRegressor(splitter="hist", **kw).fit(Xtr, ytr).score(Xte, yte)
    assert abs(hist - exact) < 0.01, (hist, exact)


def test_random_patches_accept_hist():
    X, y = make_classification(2000, 12, random_state=1)
    est = fi.RandomPatchesClassifier(n_estimators=20, splitter="hist", random_state=0)
    assert est.fit(X, y).score(X, y) > 0.9


def test_c_ordered_input_is_read_in_place_and_not_kept():
    # Binning reads X once in any order, in place; the fitted estimator keeps no reference
    # to the caller's array (out-of-bag measures take it again, checked by fingerprint).
    X, y = _integer_data()
    X = np.ascontiguousarray(X, dtype=np.float32)
    before = sys.getrefcount(X)
    est = fi.RandomForestClassifier(n_estimators=2, splitter="hist", random_state=0).fit(X, y)
    assert sys.getrefcount(X) == before
    assert not any(v is X for v in vars(est).values())


def test_same_bytes_for_any_n_jobs_and_after_pickling():
    X, y = make_classification(3000, 15, random_state=2)
    models = [
        fi.RandomForestClassifier(n_estimators=12, splitter="hist", random_state=5, n_jobs=j)
        .fit(X, y)
        .forest_.to_bytes()
        for j in (1, 2)
    ]
    assert models[0] == models[1]
    est = fi.RandomForestClassifier(n_estimators=5, splitter="hist", random_state=5).fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    assert back.forest_.to_bytes() == est.forest_.to_bytes()


@pytest.mark.parametrize("max_bins", [1, 257, 2.5, "255"])
def test_bad_max_bins(max_bins):
    X, y = _integer_data(n=50)
    est = fi.RandomForestClassifier(n_estimators=2, splitter="hist", max_bins=max_bins)
    with pytest.raises(InvalidParameterError, match="max_bins"):
        est.fit(X, y)


def test_unknown_splitter():
    X, y = _integer_data(n=50)
    with pytest.raises(InvalidParameterError, match="splitter"):
        fi.RandomForestClassifier(n_estimators=2, splitter="fast").fit(X, y)

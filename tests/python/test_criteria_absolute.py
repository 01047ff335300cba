"""``criterion="absolute_error"`` (issue #22, item 6): scikit-learn 1.9's weighted median,
mean absolute deviation and MDI, tree for tree; the random splitter's nodes against a NumPy
reference; what it refuses; its model bytes. Its monotonic constraints and several outputs
are in ``test_criteria_absolute_more.py``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor as SkForest
from sklearn.tree import DecisionTreeRegressor

import forestimp as fi
from forestimp._core import InvalidParameterError


def _data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Continuous float32 X (scikit-learn splits float32 values) and a heavy-tailed y
    without ties, where medians and means part ways."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 5)).astype(np.float32)
    y = 3 * X[:, 0] - 2 * (X[:, 1] > 0.5) + X[:, 2] * X[:, 3] + rng.standard_t(2, n)
    return X, y


def _weighted_median(y: np.ndarray, w: np.ndarray) -> float:
    """scikit-learn's rule: the first target whose cumulative weight exceeds half the
    total, or the mid-point of the two around it when a cumulative weight equals it."""
    order = np.argsort(y, kind="stable")
    ys, cum = y[order], np.cumsum(w[order])
    half = 0.5 * cum[-1]
    k = int(np.argmax(cum > half))
    return float((ys[k - 1] + ys[k]) / 2 if k > 0 and cum[k - 1] == half else ys[k])


# Settings without ties between candidate splits, which scikit-learn breaks by its own
# feature permutation. Small nodes tie: in a node of 2k rows and leaves of k, two features
# that order the rows alike give the same k | k partition (seen with min_samples_leaf=5
# alone, or 3 and max_depth=6; the trees then differ only in which feature names it).
SETTINGS = [
    dict(min_samples_leaf=5, min_samples_split=14),
    dict(max_leaf_nodes=15, min_samples_leaf=3),
    dict(max_depth=4, min_impurity_decrease=0.01, min_samples_leaf=2),
    dict(max_depth=5, min_samples_leaf=2),
    dict(min_samples_leaf=4, min_samples_split=12, ccp_alpha=0.01),
]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s))
def test_single_tree_is_scikit_learns(settings, weighted):
    X, y = _data()
    sw = np.random.default_rng(2).uniform(0.2, 3.0, len(y)) if weighted else None
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    ours = fi.RandomForestRegressor(
        1,
        criterion="absolute_error",
        bootstrap=False,
        max_features=None,
        random_state=0,
        **settings,
    ).fit(X, y, sample_weight=sw)
    theirs = DecisionTreeRegressor(criterion="absolute_error", random_state=0, **settings)
    theirs.fit(X, y, sample_weight=sw)
    a, b = ours.estimators_[0].tree_, theirs.tree_
    assert a.node_count == b.node_count > 5
    # Every node's weighted median and mean absolute deviation, internal ones included.
    # scikit-learn numbers best-first nodes by creation, forestimp in pre-order.
    if "max_leaf_nodes" not in settings:
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.children_left, b.children_left)
        va, vb, ia, ib = a.value.ravel(), b.value.ravel(), a.impurity, b.impurity
    else:
        ka = np.lexsort((a.impurity, a.value.ravel()))
        kb = np.lexsort((b.impurity, b.value.ravel()))
        va, vb, ia, ib = a.value.ravel()[ka], b.value.ravel()[kb], a.impurity[ka], b.impurity[kb]
    np.testing.assert_allclose(va, vb, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ia, ib, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("settings", SETTINGS[:1] + SETTINGS[2:4], ids=lambda s: ",".join(s))
def test_single_tree_with_missing_values_is_scikit_learns(settings):
    """NaN in X: scikit-learn's three scans (NaN right, NaN left, "missing or not").
    Weighted: with unit weights, cuts of one feature tie often (the error is piecewise
    linear in the rows moved), and which of two cuts equal to 1e-15 scikit-learn keeps
    depends on its rounding."""
    X, y = _data()
    rng = np.random.default_rng(7)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = y + 2 * np.isnan(X[:, 0])
    sw = np.random.default_rng(2).uniform(0.2, 3.0, len(y))
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    Xt[np.random.default_rng(3).random(Xt.shape) < 0.1] = np.nan
    kw = dict(criterion="absolute_error", random_state=0, **settings)
    ours = fi.RandomForestRegressor(1, bootstrap=False, max_features=None, **kw)
    ours.fit(X, y, sample_weight=sw)
    theirs = DecisionTreeRegressor(**kw).fit(X, y, sample_weight=sw)
    a, b = ours.estimators_[0].tree_, theirs.tree_
    assert a.node_count == b.node_count > 5
    np.testing.assert_array_equal(a.feature, b.feature)
    np.testing.assert_array_equal(a.missing_go_to_left, b.missing_go_to_left)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.impurity, b.impurity, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=1e-12, atol=1e-12)


def test_forest_predictions_are_scikit_learns():
    # The data of the single-tree test, tie-free under these settings: every tree of both
    # forests is the same tree whatever the feature order.
    X, y = _data()
    Xt = np.random.default_rng(4).random((300, 5)).astype(np.float32)
    kw = dict(
        criterion="absolute_error",
        bootstrap=False,
        max_features=None,
        min_samples_leaf=5,
        min_samples_split=14,
    )
    ours = fi.RandomForestRegressor(4, random_state=0, **kw).fit(X, y)
    theirs = SkForest(4, random_state=0, **kw).fit(X, y)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: fi.ExtraTreesRegressor(5, criterion="absolute_error", random_state=0),
        lambda: fi.TotallyRandomizedTreesRegressor(5, criterion="absolute_error", random_state=0),
        lambda: fi.RandomPatchesRegressor(5, criterion="absolute_error", random_state=0),
        lambda: fi.RandomForestRegressor(5, criterion="absolute_error", random_state=0),
    ],
)
@pytest.mark.parametrize("nan", [False, True], ids=["complete", "nan"])
def test_every_node_holds_the_median_and_deviation_of_its_rows(make, nan):
    """Random thresholds (and bootstrap weights) have no scikit-learn twin: each node's
    value and impurity are checked against its training rows and weights instead (with
    NaN in X, the rows the learned sides send there)."""
    X, y = _data(150, seed=5)
    if nan:
        X[np.random.default_rng(9).random(X.shape) < 0.15] = np.nan
    sw = np.random.default_rng(6).integers(1, 4, len(y)).astype(float)
    est = make().fit(X, y, sample_weight=sw)
    for k, tree in enumerate(est.estimators_):
        counts = fi._core.in_bag_counts(est.forest_, k)
        w = sw * counts
        path = tree.decision_path(X).toarray().astype(bool)
        t = tree.tree_
        for node in range(t.node_count):
            rows = path[:, node] & (w > 0)
            m = _weighted_median(y[rows], w[rows])
            dev = np.sum(w[rows] * np.abs(y[rows] - m)) / np.sum(w[rows])
            assert t.value[node, 0, 0] == pytest.approx(m, rel=1e-12, abs=1e-12)
            assert t.impurity[node] == pytest.approx(dev, rel=1e-9, abs=1e-12)
    # The forest predicts the mean of its trees' leaf medians.
    want = np.mean([tree.predict(X) for tree in est.estimators_], axis=0)
    np.testing.assert_allclose(est.predict(X), want, rtol=1e-12)


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (
            lambda: fi.RandomForestRegressor(2, criterion="absolute_error", splitter="hist"),
            InvalidParameterError,
            "hist",
        ),
        (
            lambda: fi.ExtraTreesRegressor(2, criterion="absolute_error", multiway=True),
            InvalidParameterError,
            "multiway",
        ),
    ],
)
def test_splitters_without_an_order_statistic_search_are_refused(make, error, match):
    X, y = _data(50)
    Xc = np.floor(X * 4)
    with pytest.raises(error, match=match):
        make().fit(Xc, y)


def test_context_scores_are_refused():
    from forestimp.importance import context

    X, y = _data(60)
    # Context scores recompute node impurities as variances.
    est = fi.RandomForestRegressor(2, criterion="absolute_error", random_state=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="absolute_error"):
        context(est, X, y, context=(X[:, 4] > 0.5).astype(int))


def test_model_bytes_round_trip_and_do_not_depend_on_threads():
    X, y = _data(200)
    kw = dict(criterion="absolute_error", random_state=0, max_features=2, ccp_alpha=0.001)
    one = fi.RandomForestRegressor(8, n_jobs=1, **kw).fit(X, y)
    two = fi.RandomForestRegressor(8, n_jobs=2, **kw).fit(X, y)
    data = one.forest_.to_bytes()
    assert data == two.forest_.to_bytes()
    assert data[4] == 5 < fi._core.FORMAT_VERSION
    back = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(back.predict(X), one.predict(X))
    np.testing.assert_array_equal(back.feature_importances_, one.feature_importances_)
    a, b = back.estimators_[3].tree_, one.estimators_[3].tree_
    np.testing.assert_array_equal(a.impurity, b.impurity)
    np.testing.assert_array_equal(a.value, b.value)


def test_shap_values_add_up_to_the_prediction():
    """A root holds a median, not the mean of its leaves: TreeSHAP's base value is the
    cover-weighted mean of the leaves, so that the values add up to the prediction."""
    from forestimp.importance import shap_values

    X, y = _data(200)
    est = fi.RandomForestRegressor(5, criterion="absolute_error", random_state=0).fit(X, y)
    r = shap_values(est, X[:30])
    total = np.asarray(r.values).sum(axis=1) + float(np.asarray(r.expected_value))
    np.testing.assert_allclose(total, est.predict(X[:30]), rtol=1e-9, atol=1e-9)

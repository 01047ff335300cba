"""scikit-learn 1.9's remaining criteria and parameters (issue #22, item 6): ``max_samples``
and ``bootstrap`` as its forests check them, ``friedman_mse``, ``poisson``, ``ccp_alpha``;
parity with scikit-learn's trees on deterministic single-tree forests."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn import ensemble as sk_ensemble

import forestimp as fi
from forestimp._core import DataError, InvalidParameterError, in_bag_counts


def _drawn(est: object, tree: int = 0) -> int:
    return int(in_bag_counts(est.forest_, tree).sum())  # type: ignore[attr-defined]


# --------------------------------------------------------------------- max_samples, bootstrap
def test_max_samples_counts_rows_as_scikit_learn():
    rng = np.random.default_rng(0)
    X, y = rng.random((101, 3)), rng.random(101)
    # A float is a fraction of n rounded down, above 1 too (with replacement).
    for frac, want in [(0.35, 35), (0.999, 100), (1.5, 151)]:
        est = fi.RandomForestRegressor(3, max_samples=frac, random_state=0).fit(X, y)
        assert _drawn(est) == want
    # With weights it is a fraction of their sum (scikit-learn 1.9).
    sw = np.full(101, 2.0)
    est = fi.RandomForestRegressor(3, max_samples=0.5, random_state=0).fit(X, y, sw)
    assert _drawn(est) == 101
    # An int is the count itself, above n too.
    est = fi.ExtraTreesRegressor(3, bootstrap=True, max_samples=150, random_state=0).fit(X, y)
    assert _drawn(est) == 150
    # Random Patches keeps Bagging's rule: a rounded fraction of n, without replacement.
    est = fi.RandomPatchesRegressor(3, max_samples=0.355, random_state=0).fit(X, y)
    assert _drawn(est) == 36


def test_max_samples_warns_as_scikit_learn_when_few_rows():
    X, y = np.random.default_rng(0).random((50, 2)), np.arange(50.0)
    with pytest.warns(UserWarning, match="low number"):
        fi.RandomForestRegressor(2, max_samples=0.1, random_state=0).fit(X, y)


@pytest.mark.parametrize(
    ("cls", "params"),
    [
        (fi.RandomForestClassifier, dict(bootstrap=False, max_samples=5)),
        (fi.ExtraTreesClassifier, dict(max_samples=0.5)),
        (fi.TotallyRandomizedTreesRegressor, dict(max_samples=3)),
        (fi.RandomForestRegressor, dict(bootstrap=np.int64(1))),
        (fi.RandomForestRegressor, dict(max_samples=-1)),
    ],
)
def test_bootstrap_and_max_samples_errors_are_scikit_learns(cls, params):
    X, y = np.random.default_rng(0).random((20, 2)), np.arange(20) % 2
    with pytest.raises(InvalidParameterError) as ours:
        cls(2, **params).fit(X, y)
    sk_cls = getattr(sk_ensemble, cls.__name__.replace("TotallyRandomizedTrees", "ExtraTrees"))
    with pytest.raises(ValueError) as theirs:
        sk_cls(2, **params).fit(X, y)
    # The same message, scikit-learn's `max_sample` typo aside.
    want = (
        str(theirs.value)
        .replace("`max_sample`", "`max_samples`")
        .replace("max_sample=", "max_samples=")
    )
    assert str(ours.value).replace(cls.__name__, sk_cls.__name__) == want


# ------------------------------------------------------------------------ regression criteria
def _counts_data(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Continuous float32 X (scikit-learn's trees split float32 values, so thresholds
    agree), y >= 0 with a fifth of exact zeros."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 5)).astype(np.float32)
    lam = np.exp(1 + 2 * X[:, 0] - X[:, 1] + 0.5 * X[:, 3])
    y = rng.gamma(2.0, lam / 2)
    y[rng.random(n) < 0.2] = 0.0
    return X, y


# Settings without ties between candidate splits (which scikit-learn breaks by its own
# feature permutation): leaves of several rows, or few levels.
TREE_SETTINGS = [
    dict(min_samples_leaf=5),
    dict(max_leaf_nodes=20, min_samples_leaf=3),
    dict(max_depth=4, min_impurity_decrease=0.01, min_samples_leaf=2),
]


@pytest.mark.parametrize("criterion", ["poisson", "squared_error", "friedman_mse"])
@pytest.mark.parametrize("settings", TREE_SETTINGS, ids=lambda s: ",".join(s))
def test_single_tree_matches_scikit_learn(criterion, settings):
    from sklearn.tree import DecisionTreeRegressor

    X, y = _counts_data()
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    ours = fi.RandomForestRegressor(
        1, criterion=criterion, bootstrap=False, max_features=None, random_state=0, **settings
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours.fit(X, y)
        theirs = DecisionTreeRegressor(criterion=criterion, random_state=0, **settings)
        theirs.fit(X, y)
    # friedman_mse is deprecated to squared_error by both, with a FutureWarning each.
    n_future = sum(issubclass(w.category, FutureWarning) for w in caught)
    assert n_future == (2 if criterion == "friedman_mse" else 0)
    assert ours.estimators_[0].tree_.node_count == theirs.tree_.node_count
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=1e-12, atol=1e-12)
    # MDI from the criterion's impurity (the Poisson deviance, derived from the leaves).
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )


def test_friedman_mse_is_squared_error_as_in_scikit_learn_1_9():
    X, y = _counts_data(200)
    a = fi.RandomForestRegressor(5, criterion="squared_error", random_state=0).fit(X, y)
    with pytest.warns(FutureWarning, match="friedman_mse"):
        b = fi.RandomForestRegressor(5, criterion="friedman_mse", random_state=0).fit(X, y)
    assert a.forest_.to_bytes() == b.forest_.to_bytes()


@pytest.mark.parametrize(
    "make",
    [
        lambda: fi.RandomForestRegressor(20, criterion="poisson", random_state=0),
        lambda: fi.RandomForestRegressor(20, criterion="poisson", splitter="hist", random_state=0),
        lambda: fi.ExtraTreesRegressor(20, criterion="poisson", random_state=0),
        lambda: fi.TotallyRandomizedTreesRegressor(20, criterion="poisson", random_state=0),
        lambda: fi.RandomPatchesRegressor(20, criterion="poisson", random_state=0),
        lambda: fi.RandomPatchesRegressor(
            20, criterion="poisson", splitter="best", bootstrap=True, random_state=0
        ),
    ],
)
def test_poisson_never_splits_off_a_child_predicting_zero(make):
    X, y = _counts_data(300)
    y[X[:, 2] < 0.5] = 0.0  # whole regions of zeros, which a split could isolate
    est = make().fit(X, y)
    n_zero_leaves = 0
    for tree in est.estimators_:
        t = tree.tree_
        internal = t.children_left >= 0
        # Every child of a split has a positive mean; only a root may predict 0.
        children = np.concatenate([t.children_left[internal], t.children_right[internal]])
        assert np.all(t.value[children, 0, 0] > 0)
        n_zero_leaves += int(np.sum(t.value[:, 0, 0] == 0))
    assert n_zero_leaves == 0
    pred = est.predict(X)
    assert np.all(pred > 0) and np.isfinite(est.feature_importances_).all()
    assert est.forest_.criterion == "poisson"
    # The model loads back identical (the criterion has its own code in the bytes).
    assert type(est.forest_).from_bytes(est.forest_.to_bytes()).to_bytes() == (
        est.forest_.to_bytes()
    )


@pytest.mark.parametrize(
    ("y", "match"),
    [
        (np.array([1.0, -1.0] * 10), "negative"),
        (np.zeros(20), "Sum of y is not strictly positive"),
    ],
)
def test_poisson_targets_are_checked_as_scikit_learn(y, match):
    X = np.random.default_rng(0).random((20, 2))
    with pytest.raises(DataError, match=match):
        fi.RandomForestRegressor(3, criterion="poisson").fit(X, y)
    with pytest.raises(ValueError, match=match):
        sk_ensemble.RandomForestRegressor(3, criterion="poisson").fit(X, y)


# ------------------------------------------------------------------------------ ccp_alpha
def _smooth_data(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 5)).astype(np.float32)
    y = np.sin(6 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(n)
    yc = (X[:, 0] + X[:, 1] + 0.3 * rng.standard_normal(n) > 1).astype(int) + (X[:, 2] > 0.7)
    return X, y, yc


@pytest.mark.parametrize("alpha", [0.0, 0.001, 0.003, 0.01, 0.05])
def test_pruned_trees_match_scikit_learn(alpha):
    from sklearn.tree import DecisionTreeRegressor

    X, y, yc = _smooth_data()
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    settings = dict(max_leaf_nodes=40, min_samples_leaf=2, random_state=0)
    single = dict(n_estimators=1, bootstrap=False, max_features=None, ccp_alpha=alpha)
    ours = fi.RandomForestRegressor(**single, **settings).fit(X, y)
    theirs = DecisionTreeRegressor(ccp_alpha=alpha, **settings).fit(X, y)
    assert ours.estimators_[0].tree_.node_count == theirs.tree_.node_count
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )
    # Classes: scikit-learn breaks ties between equally good splits otherwise, so its own
    # pruning code is run on our unpruned tree (entropy in bits in both).
    for criterion in ["gini", "entropy"]:
        settings = dict(criterion=criterion, min_samples_leaf=3, random_state=0)
        grown = fi.RandomForestClassifier(**{**single, "ccp_alpha": 0.0}, **settings).fit(X, yc)
        ours = fi.RandomForestClassifier(**single, **settings).fit(X, yc)
        want = _sklearn_pruned(grown.estimators_[0].tree_, alpha, n_classes=3)
        got = ours.estimators_[0].tree_
        assert got.node_count == want.node_count
        np.testing.assert_array_equal(got.feature, want.feature)
        np.testing.assert_array_equal(got.threshold, want.threshold)
        np.testing.assert_allclose(got.value, want.value, rtol=0, atol=1e-12)


def _sklearn_pruned(tree: object, alpha: float, n_classes: int) -> object:
    """scikit-learn's own minimal cost-complexity pruning of a fitted ``sklearn`` tree."""
    from sklearn.tree._tree import Tree, _build_pruned_tree_ccp

    pruned = Tree(tree.n_features, np.array([n_classes], dtype=np.intp), 1)  # type: ignore[attr-defined]
    _build_pruned_tree_ccp(pruned, tree, alpha)
    return pruned


@pytest.mark.parametrize(
    "cls",
    [
        fi.RandomForestRegressor,
        fi.ExtraTreesClassifier,
        fi.RandomPatchesRegressor,
        fi.TotallyRandomizedTreesClassifier,
    ],
)
def test_ccp_alpha_prunes_every_estimator(cls):
    X, y, yc = _smooth_data(300)
    target = y if cls._is_classifier is False else yc
    full = cls(10, random_state=0).fit(X, target)
    pruned = cls(10, random_state=0, ccp_alpha=0.005).fit(X, target)
    zero = cls(10, random_state=0, ccp_alpha=0.0).fit(X, target)
    assert zero.forest_.to_bytes() == full.forest_.to_bytes()
    n_full = sum(t.tree_.node_count for t in full.estimators_)
    n_pruned = sum(t.tree_.node_count for t in pruned.estimators_)
    assert n_pruned < n_full / 2
    # Pruning collapses subtrees only, so no tree gets deeper.
    for a, b in zip(full.estimators_, pruned.estimators_, strict=True):
        assert b.tree_.max_depth <= a.tree_.max_depth
    # Deterministic for any n_jobs.
    again = cls(10, random_state=0, ccp_alpha=0.005, n_jobs=2).fit(X, target)
    assert again.forest_.to_bytes() == pruned.forest_.to_bytes()


def test_ccp_alpha_is_checked():
    X, y, _ = _smooth_data(50)
    for bad in [-0.1, "a", float("nan")]:
        with pytest.raises(InvalidParameterError, match="ccp_alpha"):
            fi.RandomForestRegressor(2, ccp_alpha=bad).fit(X, y)
    with pytest.raises(InvalidParameterError, match="multiway"):
        fi.ExtraTreesRegressor(2, multiway=True, ccp_alpha=0.1).fit(np.round(X * 3), y)


def test_ccp_alpha_with_warm_start_and_pickle():
    import pickle

    X, y, _ = _smooth_data(200)
    params = dict(ccp_alpha=0.002, random_state=0)
    at_once = fi.RandomForestRegressor(12, **params).fit(X, y)
    grown = fi.RandomForestRegressor(5, warm_start=True, **params).fit(X, y)
    grown.set_params(n_estimators=12).fit(X, y)
    assert grown.forest_.to_bytes() == at_once.forest_.to_bytes()
    # The bytes hold the pruned trees, not ccp_alpha: a loaded model predicts the same but
    # cannot grow more pruned trees.
    loaded = pickle.loads(pickle.dumps(at_once))
    np.testing.assert_array_equal(loaded.predict(X), at_once.predict(X))
    loaded.set_params(warm_start=True, n_estimators=15)
    with pytest.raises(InvalidParameterError, match="warm_start"):
        loaded.fit(X, y)

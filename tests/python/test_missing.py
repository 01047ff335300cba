"""Missing values (NaN) in X: scikit-learn 1.9's routing, every estimator and splitter, the
model format, importances and the refusals (``docs/missing-values.md``)."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import forestimp as fi
from forestimp import _core
from forestimp.exceptions import DataError
from forestimp.importance import mdi, permutation, shap_values

from conftest import ALL_ESTIMATORS

MODELS = Path(__file__).parent / "models"


def _blank(X, rate, seed):
    """``X`` with a fraction ``rate`` of its values replaced by NaN (MCAR, seeded)."""
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


def _data(n=300, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    yr = 2 * X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    return _blank(X, 0.2, seed + 1), y, yr


def _one_feature(seed):
    """One float32 feature with 25 % NaN and a target that depends on missingness: a tree
    on one feature has no tie between features, so its splits are determined."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(400, 1)).astype(np.float32)
    yr = np.sin(3 * X[:, 0]) + 0.3 * rng.normal(size=400)
    X = _blank(X, 0.25, seed + 1)
    yr[np.isnan(X[:, 0])] += 1.0
    return X, yr


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_tree_and_predictions_as_scikit_learn(seed):
    X, yr = _one_feature(seed)
    yc = (yr > 0).astype(int) + (yr > 0.8)
    Xt = _blank(np.random.default_rng(9).normal(size=(500, 1)).astype(np.float32), 0.25, 3)
    cases = [
        (fi.RandomForestRegressor, DecisionTreeRegressor, yr, "predict"),
        (fi.RandomForestClassifier, DecisionTreeClassifier, yc, "predict_proba"),
    ]
    for ours_cls, sk_cls, y, method in cases:
        kw = dict(max_depth=5, random_state=0)
        ours = ours_cls(n_estimators=1, bootstrap=False, max_features=None, **kw).fit(X, y)
        sk = sk_cls(**kw).fit(X, y)
        a, b = ours.estimators_[0].tree_, sk.tree_
        assert a.node_count == b.node_count
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.n_node_samples, b.n_node_samples)
        np.testing.assert_array_equal(a.missing_go_to_left, b.missing_go_to_left)
        assert a.missing_go_to_left.any() and not a.missing_go_to_left[a.feature >= 0].all()
        np.testing.assert_allclose(getattr(ours, method)(Xt), getattr(sk, method)(Xt), atol=1e-12)


def test_nan_seen_only_at_predict_goes_to_the_child_with_more_samples():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 1)).astype(np.float32)
    y = np.sin(3 * X[:, 0]) + 0.3 * rng.normal(size=300)
    kw = dict(max_depth=4, random_state=0)
    ours = fi.RandomForestRegressor(n_estimators=1, bootstrap=False, max_features=None, **kw)
    ours.fit(X, y)
    sk = DecisionTreeRegressor(**kw).fit(X, y)
    t = ours.estimators_[0].tree_
    split = t.feature >= 0
    more_left = t.n_node_samples[t.children_left] > t.n_node_samples[t.children_right]
    np.testing.assert_array_equal(t.missing_go_to_left[split], more_left[split])
    Xt = np.array([[np.nan], [0.5]], dtype=np.float32)
    np.testing.assert_allclose(ours.predict(Xt), sk.predict(Xt), atol=1e-12)


ESTIMATORS_WITH_NAN = [cls(n_estimators=8, random_state=0) for cls in ALL_ESTIMATORS] + [
    fi.RandomPatchesClassifier(n_estimators=8, splitter="best", random_state=0),
    fi.RandomPatchesRegressor(n_estimators=8, splitter="random", random_state=0),
    fi.RandomForestClassifier(n_estimators=8, max_leaf_nodes=10, random_state=0),
    fi.ExtraTreesRegressor(n_estimators=8, bootstrap=True, min_samples_leaf=3, random_state=0),
]


@pytest.mark.parametrize("est", ESTIMATORS_WITH_NAN, ids=lambda e: type(e).__name__)
def test_every_estimator_fits_and_predicts_with_nan(est):
    X, y, yr = _data()
    target = y if est._is_classifier else yr
    est.fit(X, target)
    Xt = _blank(np.random.default_rng(7).normal(size=(200, 4)), 0.3, 8)
    pred = est.predict_proba(Xt) if est._is_classifier else est.predict(Xt)
    assert np.isfinite(pred).all()
    # The per-tree scikit-learn estimators route NaN as the forest does.
    trees = est.estimators_
    method = "predict_proba" if est._is_classifier else "predict"
    mean = np.mean([getattr(t, method)(Xt.astype(np.float32)) for t in trees], axis=0)
    ours = pred if est._is_classifier else pred
    np.testing.assert_allclose(mean, ours, atol=1e-9)
    # Learned sides: NaN is sent both ways somewhere in the forest.
    sides = np.concatenate([t.tree_.missing_go_to_left[t.tree_.feature >= 0] for t in trees])
    assert sides.any() and not sides.all()
    # Better than chance on held-out data with NaN.
    yt = (Xt[:, 0] + Xt[:, 1] > 0).astype(int)
    if est._is_classifier:
        assert (
            est.score(Xt[~np.isnan(Xt[:, :2]).any(axis=1)], yt[~np.isnan(Xt[:, :2]).any(axis=1)])
            > 0.7
        )


def test_to_sklearn_predicts_like_the_forest_on_nan():
    X, y, _ = _data(seed=3)
    est = fi.ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X, y)
    sk = est.to_sklearn()
    Xt = _blank(np.random.default_rng(1).normal(size=(300, 4)), 0.3, 2).astype(np.float32)
    np.testing.assert_allclose(sk.predict_proba(Xt), est.predict_proba(Xt), atol=1e-12)


def _categories_with_nan(seed=0):
    """One categorical feature: 40 rows of 0, 30 of 1, 20 of 2 and 25 NaN, the class its
    category (NaN: class 3)."""
    x = np.repeat([0.0, 1.0, 2.0, np.nan], [40, 30, 20, 25])
    x[-10:] = np.copysign(np.nan, -1.0)  # NaN of either sign: one category
    y = np.repeat([0, 1, 2, 3], [40, 30, 20, 25])
    order = np.random.default_rng(seed).permutation(len(x))
    return x[order, None], y[order]


@pytest.mark.parametrize("cls", [fi.ExtraTreesClassifier, fi.TotallyRandomizedTreesClassifier])
def test_multiway_nan_is_a_category_with_its_own_child(cls):
    X, y = _categories_with_nan()
    kw = dict(n_estimators=3, multiway=True, bootstrap=False, criterion="gini", random_state=0)
    est = cls(**kw).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), y)
    np.testing.assert_array_equal(est.predict([[np.nan], [2.0]]), [3, 2])
    for i in range(3):
        t = est.forest_.tree_arrays(i)
        inner = t["children_left"] >= 0
        # One chain of three links: 0 | 1 | 2 | NaN, NaN sent right at every link.
        np.testing.assert_array_equal(t["threshold"][inner], [0.5, 1.5, np.inf])
        assert not t["missing_go_to_left"][inner].any()
    # The chain's decreases telescope to the multiway decrease, here the whole Gini
    # impurity (pure children), all of it at depth 0 (one logical split).
    p = np.array([40, 30, 20, 25]) / 115
    imp = mdi(est, by_depth=True)
    np.testing.assert_allclose(imp.importances_mean, [1 - (p**2).sum()], rtol=1e-12)
    np.testing.assert_allclose(imp.by_depth[0, 0], 1 - (p**2).sum(), rtol=1e-12)


def test_multiway_nan_is_the_forest_of_nan_coded_as_a_largest_category():
    # NaN is the last group of every split, as a code above every value would be: the same
    # draws, groups and decreases, so the same MDI by depth (the theorem's terms) and
    # the same leaves for the training rows (no bootstrap: every row is in every tree).
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(300, 4)).astype(float)
    y = (X[:, 0] + X[:, 1] > 2).astype(int) ^ (rng.random(300) < 0.1)
    X[rng.random(X.shape) < 0.2] = np.nan
    coded = np.where(np.isnan(X), 3.0, X)
    kw = dict(n_estimators=20, multiway=True, criterion="entropy", bootstrap=False, random_state=0)
    a = fi.TotallyRandomizedTreesClassifier(**kw).fit(X, y)
    b = fi.TotallyRandomizedTreesClassifier(**kw).fit(coded, y)
    np.testing.assert_array_equal(mdi(a, by_depth=True).by_depth, mdi(b, by_depth=True).by_depth)
    np.testing.assert_array_equal(a.apply(X), b.apply(coded))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(coded))


def test_multiway_nan_unseen_in_training_goes_to_the_largest_child():
    # Categories 0, 1, 2 hold 30, 10, 25 rows: NaN goes to 0, the largest child (a binary
    # chain's larger sides would send it to 2: 35 > 30, then 25 > 10); on a tie, to the
    # last of the largest. Models fitted without NaN derive every side, store none, and so
    # keep their bytes.
    for counts, want in [([30, 10, 25], 0), ([20, 30, 30], 2), ([40, 40, 5], 1)]:
        x = np.repeat([0.0, 1.0, 2.0], counts)[:, None]
        y = np.repeat([0, 1, 2], counts)
        est = fi.ExtraTreesClassifier(n_estimators=2, multiway=True, bootstrap=False).fit(x, y)
        np.testing.assert_array_equal(est.predict([[np.nan]]), [want])
        again = _core.Forest.from_bytes(est.forest_.to_bytes())
        assert again.to_bytes() == est.forest_.to_bytes()
        nan = np.array([[np.nan]])
        np.testing.assert_array_equal(again.apply(nan), est.forest_.apply(nan))


def test_multiway_nan_in_non_integer_check():
    # NaN is not a fractional code; 0.5 still is.
    X = np.array([[0.0], [np.nan], [1.0], [0.5]])
    with pytest.raises(DataError, match="integer"):
        fi.ExtraTreesClassifier(n_estimators=2, multiway=True).fit(X, [0, 1, 0, 1])
    fi.ExtraTreesClassifier(n_estimators=2, multiway=True).fit(X[:3], [0, 1, 0])


def test_allow_nan_tag():
    assert fi.RandomForestClassifier().__sklearn_tags__().input_tags.allow_nan
    assert fi.ExtraTreesRegressor().__sklearn_tags__().input_tags.allow_nan
    assert fi.RandomForestClassifier(splitter="hist").__sklearn_tags__().input_tags.allow_nan
    assert fi.RandomPatchesRegressor(splitter="hist").__sklearn_tags__().input_tags.allow_nan
    assert fi.ExtraTreesClassifier(multiway=True).__sklearn_tags__().input_tags.allow_nan
    # The histogram codes are dense per column: a sparse X is still refused.
    assert not fi.RandomForestClassifier(splitter="hist").__sklearn_tags__().input_tags.sparse


@pytest.mark.parametrize("sign", [1, -1])
def test_infinity_is_still_refused(sign):
    X, y, _ = _data(n=50)
    X[5, 2] = sign * np.inf
    with pytest.raises(ValueError, match="infinity"):
        fi.RandomForestClassifier(n_estimators=2).fit(X, y)
    core = np.ascontiguousarray(X)
    est = fi.RandomForestClassifier(n_estimators=2, random_state=0).fit(_data(n=50)[0], y)
    with pytest.raises(DataError, match="non-finite value in X at row 5, column 2"):
        est.forest_.predict(core)


def test_nan_in_y_is_refused():
    X, _, yr = _data(n=50)
    yr[4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fi.RandomForestRegressor(n_estimators=2).fit(X, yr)


def test_persistence_round_trip_with_nan(tmp_path):
    X, y, yr = _data(seed=5)
    for est in (
        fi.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y),
        fi.ExtraTreesRegressor(n_estimators=5, random_state=0).fit(X, yr),
        fi.RandomForestRegressor(n_estimators=5, random_state=0, splitter="hist").fit(X, yr),
        fi.ExtraTreesClassifier(n_estimators=5, multiway=True).fit(np.round(X), y),
    ):
        data = est.forest_.to_bytes()
        assert data[4:6] == (3).to_bytes(2, "little")
        again = _core.Forest.from_bytes(data)
        assert again.to_bytes() == data
        Xt = _blank(np.random.default_rng(0).normal(size=(100, 4)), 0.3, 1)
        loaded = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(loaded.predict(Xt), est.predict(Xt))
        est.save(tmp_path / "m.fimp")
        np.testing.assert_array_equal(fi.load(tmp_path / "m.fimp").predict(Xt), est.predict(Xt))


@pytest.mark.parametrize(
    ("name", "cls", "task"),
    [
        ("rf_classifier", fi.RandomForestClassifier, "classification"),
        ("et_regressor", fi.ExtraTreesRegressor, "regression"),
    ],
)
def test_version_2_models_load_and_data_without_nan_keeps_its_model(name, cls, task):
    """Bytes written before missing values (format 2) still load, and a fit on data without
    NaN grows the same model: its bytes are format 2's but for the version and three bytes
    (the empty list of missing-value exceptions, first tree 0, not assembled)."""
    from sklearn.datasets import make_classification, make_regression

    old = (MODELS / f"{name}_v2.bin").read_bytes()
    if task == "classification":
        X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    else:
        X, y = make_regression(n_samples=120, n_features=5, random_state=0)
    est = cls(n_estimators=3, random_state=0).fit(X, y)
    new = est.forest_.to_bytes()
    loaded = _core.Forest.from_bytes(old)
    assert loaded.to_bytes() == new
    assert new[20:-3] == old[20:] and new[-3:] == b"\x00\x00\x00"
    assert new[:4] == old[:4] and new[4:6] == b"\x03\x00" and old[4:6] == b"\x02\x00"
    Xt = _blank(X, 0.3, 0)
    np.testing.assert_array_equal(loaded.predict(np.ascontiguousarray(Xt)), est.forest_.predict(Xt))


@pytest.mark.parametrize(
    ("cls", "kw"),
    [
        (fi.RandomForestRegressor, {}),
        (fi.ExtraTreesClassifier, {}),
        (fi.RandomForestClassifier, {"splitter": "hist", "max_features": 1.0}),
        (fi.GradientBoostingRegressor, {"splitter": "hist", "max_leaf_nodes": 8}),
    ],
)
def test_same_bytes_for_any_n_jobs(cls, kw):
    # 3 000 rows x 12 features: the hist booster's root fills its bins on several threads.
    X, y, yr = _data(n=3000, p=12, seed=6) if "splitter" in kw else _data(n=400, seed=6)
    target = yr if cls in (fi.RandomForestRegressor, fi.GradientBoostingRegressor) else y
    fits = [cls(n_estimators=8, random_state=1, n_jobs=j, **kw).fit(X, target) for j in (1, 2)]
    one, two = ((f.booster_ if hasattr(f, "booster_") else f.forest_).to_bytes() for f in fits)
    assert one == two


def _missingness_problem(n=600, seed=0):
    """y is whether feature 0 is missing; feature 1 is noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    miss = rng.random(n) < 0.5
    X[miss, 0] = np.nan
    return X, miss.astype(int)


def test_importances_credit_the_missingness_pattern():
    X, y = _missingness_problem()
    est = fi.RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    imp = mdi(est).importances_mean
    assert imp[0] > 0.9 * imp.sum()
    Xt, yt = _missingness_problem(seed=1)
    # Permuting column 0 moves its NaN with its values, which destroys the signal.
    perm = permutation(est, Xt, yt, n_repeats=3, random_state=0)
    assert perm.importances_mean[0] > 0.3
    assert abs(perm.importances_mean[1]) < 0.05


@pytest.mark.parametrize("cls", [fi.RandomForestRegressor, fi.ExtraTreesClassifier])
def test_shap_additivity_with_nan_rows(cls):
    X, y, yr = _data(n=200, seed=8)
    target = y if cls is fi.ExtraTreesClassifier else yr
    est = cls(n_estimators=5, random_state=0).fit(X, target)
    Xt = _blank(np.random.default_rng(2).normal(size=(50, 4)), 0.3, 3)
    sv = shap_values(est, Xt)
    values = np.asarray(sv.values)
    expected = np.asarray(sv.expected_value)
    pred = est.predict_proba(Xt) if cls is fi.ExtraTreesClassifier else est.predict(Xt)
    total = values.sum(axis=1) + expected
    np.testing.assert_allclose(total.reshape(pred.shape), pred, atol=1e-10)


def test_every_importance_and_proximity_runs_on_nan():
    from forestimp.importance import local_mdi, local_permutation, unbiased
    from forestimp.proximity import proximity

    X, y, _ = _data(n=150, seed=9)
    est = fi.RandomForestClassifier(n_estimators=30, random_state=0).fit(X, y)
    results = [
        permutation(est, X, y, oob=True, random_state=0).importances_mean,
        np.asarray(local_mdi(est, X).values),
        np.asarray(local_permutation(est, X, y).values),
        unbiased(est, X, y).importances_mean,
    ]
    for r in results:
        assert np.isfinite(r).all()
    prox = proximity(est, X)
    dense = prox.toarray() if hasattr(prox, "toarray") else np.asarray(prox)
    np.testing.assert_allclose(np.diag(dense), 1.0)

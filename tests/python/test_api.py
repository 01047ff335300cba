"""The scikit-learn facing API: pandas, labels, weights, dtypes, apply/decision_path, OOB,
pipelines, Random Patches feature subsets and per-tree importances."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

import forestimp as fi
from forestimp.importance import mdi

from conftest import CLASSIFIERS, REGRESSORS


# ---------------------------------------------------------------------------- pandas
def test_dataframe_keeps_feature_names_and_warns_like_sklearn(clf_data):
    X, y = clf_data
    names = [f"gene_{i}" for i in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    est = fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(df, pd.Series(y))
    assert list(est.feature_names_in_) == names
    assert est.n_features_in_ == X.shape[1]
    # Same values, with or without names: same model.
    plain = fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert plain.forest_.to_bytes() == est.forest_.to_bytes()
    assert not hasattr(plain, "feature_names_in_")
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        est.predict(X)
    with pytest.warns(UserWarning, match="fitted without feature names"):
        plain.predict(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(est.predict(df), plain.predict(X))
    # Reordered columns are refused, as in scikit-learn.
    with pytest.raises(ValueError, match="feature names"):
        est.predict(df[names[::-1]])


def test_dataframe_with_mixed_numeric_dtypes(clf_data):
    X, y = clf_data
    df = pd.DataFrame(X[:, :3], columns=["a", "b", "c"])
    df["a"] = (df["a"] * 100).round().astype("int64")
    df["b"] = df["b"].astype("float32")
    est = fi.ExtraTreesClassifier(n_estimators=10, random_state=0).fit(df, y)
    assert est.predict_proba(df).shape == (len(df), 3)


# ---------------------------------------------------------------------------- labels
def test_string_labels_give_the_same_model_as_codes(clf_data):
    X, y = clf_data
    names = np.array(["cat", "dog", "emu"])
    a = fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, names[y])
    b = fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.classes_, names)
    np.testing.assert_array_equal(b.classes_, [0, 1, 2])
    assert a.forest_.to_bytes() == b.forest_.to_bytes()
    np.testing.assert_array_equal(a.predict(X), names[b.predict(X)])
    assert a.score(X, names[y]) == b.score(X, y) > 0.95


def test_unsorted_and_sparse_labels():
    X, y = make_classification(n_samples=200, n_features=5, n_classes=2, random_state=0)
    labels = np.where(y == 1, 7, -3)
    est = fi.ExtraTreesClassifier(n_estimators=10, random_state=0).fit(X, labels)
    np.testing.assert_array_equal(est.classes_, [-3, 7])
    assert set(np.unique(est.predict(X))) <= {-3, 7}


def test_predict_log_proba(clf_data):
    X, y = clf_data
    est = fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    proba = est.predict_proba(X)
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(est.predict_log_proba(X), np.log(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), est.classes_[proba.argmax(axis=1)])


# ------------------------------------------------------------------ weights & classes
@pytest.fixture(scope="module")
def imbalanced():
    X, y = make_classification(
        n_samples=1200,
        n_features=8,
        n_informative=3,
        weights=[0.9, 0.1],
        flip_y=0.05,
        random_state=0,
    )
    return X, y


@pytest.mark.parametrize("class_weight", [None, "balanced", "balanced_subsample", {0: 1.0, 1: 4.0}])
def test_class_weight_variants_run(imbalanced, class_weight):
    X, y = imbalanced
    est = fi.RandomForestClassifier(n_estimators=20, class_weight=class_weight, random_state=0).fit(
        X, y
    )
    assert est.predict_proba(X).shape == (len(y), 2)


def test_balanced_class_weight_favours_the_minority(imbalanced):
    X, y = imbalanced
    params = dict(n_estimators=50, min_samples_leaf=10, random_state=0)
    plain = fi.RandomForestClassifier(**params).fit(X, y)
    balanced = fi.RandomForestClassifier(class_weight="balanced", **params).fit(X, y)
    assert plain.forest_.to_bytes() != balanced.forest_.to_bytes()
    p0 = plain.predict_proba(X)[:, 1].mean()
    p1 = balanced.predict_proba(X)[:, 1].mean()
    # The minority is 10% of rows; weighting it 9x pulls its mean probability well up.
    assert p1 > p0 + 0.1, (p0, p1)
    recall0 = (plain.predict(X)[y == 1] == 1).mean()
    recall1 = (balanced.predict(X)[y == 1] == 1).mean()
    assert recall1 > recall0


@pytest.mark.parametrize("bootstrap", [False, True])
def test_class_weight_dict_is_a_sample_weight(imbalanced, bootstrap):
    # scikit-learn's definition: class weights multiply the sample weights.
    X, y = imbalanced
    params = dict(n_estimators=10, bootstrap=bootstrap, random_state=0)
    a = fi.RandomForestClassifier(class_weight={0: 1.0, 1: 3.0}, **params).fit(X, y)
    b = fi.RandomForestClassifier(**params).fit(X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    assert a.forest_.to_bytes() == b.forest_.to_bytes()


def test_zero_weight_on_a_class_removes_it_from_every_leaf(clf_data):
    X, y = clf_data
    sw = np.where(y == 2, 0.0, 1.0)
    for cls in (fi.RandomForestClassifier, fi.ExtraTreesClassifier):
        est = cls(n_estimators=20, random_state=0).fit(X, y, sample_weight=sw)
        proba = est.predict_proba(X)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.all(proba[:, 2] == 0.0), cls.__name__
        assert not np.any(est.predict(X) == 2)


@pytest.mark.parametrize("scale", [2.0, 0.25])
def test_constant_sample_weight_changes_nothing(reg_data, clf_data, scale):
    # A power-of-two scale is exact in floating point, so every impurity improvement scales
    # exactly and every comparison (ties included) is unchanged: same trees, same outputs.
    # (With 3.0, rounding can flip exact ties between candidate splits, as in scikit-learn.)
    rng = np.random.default_rng(1)
    for cls, (X, y) in [
        (fi.ExtraTreesRegressor, reg_data),
        (fi.RandomForestRegressor, reg_data),
        (fi.RandomForestClassifier, clf_data),
    ]:
        X_new = rng.normal(size=(200, X.shape[1]))
        a = cls(n_estimators=10, random_state=0).fit(X, y)
        b = cls(n_estimators=10, random_state=0).fit(X, y, sample_weight=np.full(len(y), scale))
        assert np.array_equal(a.apply(X_new), b.apply(X_new)), cls.__name__
        assert np.array_equal(a.predict(X_new), b.predict(X_new)), cls.__name__
        np.testing.assert_allclose(a.mdi_importances_, b.mdi_importances_, rtol=1e-12)
        w = b.forest_.tree_arrays(0)["weighted_n_node_samples"]
        np.testing.assert_allclose(w, scale * a.forest_.tree_arrays(0)["weighted_n_node_samples"])


def test_sample_weight_shifts_predictions_towards_heavy_rows():
    # One feature, two noisy groups; weighting the high-y rows pulls the leaves up.
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 1))
    y = rng.normal(size=400)
    sw = np.where(y > 0, 10.0, 1.0)
    params = dict(n_estimators=30, min_samples_leaf=40, random_state=0)
    plain = fi.ExtraTreesRegressor(**params).fit(X, y)
    heavy = fi.ExtraTreesRegressor(**params).fit(X, y, sample_weight=sw)
    assert heavy.predict(X).mean() > plain.predict(X).mean() + 0.5


# ---------------------------------------------------------------- dtypes and layout
@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesClassifier])
def test_float32_and_fortran_order_give_the_same_model(clf_data, cls):
    # Values on a grid of quarters are exact in float32, so every threshold is the same;
    # the engine reads float32 in place (no conversion) and either memory order.
    X, y = clf_data
    X = np.round(X * 4) / 4
    ref = cls(n_estimators=10, random_state=0).fit(X, y)
    ref_bytes = ref.forest_.to_bytes()
    variants = {
        "F64-F": np.asfortranarray(X),
        "F32-C": X.astype(np.float32),
        "F32-F": np.asfortranarray(X.astype(np.float32)),
        "int64": (X * 4).astype(np.int64) / 4,  # converted once to float64
    }
    for name, Xv in variants.items():
        est = cls(n_estimators=10, random_state=0).fit(Xv, y)
        assert est.forest_.to_bytes() == ref_bytes, name
        np.testing.assert_array_equal(est.predict_proba(Xv), ref.predict_proba(X))
    # Non-contiguous views are copied once and still agree.
    wide = np.repeat(X, 2, axis=1)[:, ::2]
    assert not wide.flags.c_contiguous and not wide.flags.f_contiguous
    est = cls(n_estimators=10, random_state=0).fit(wide, y)
    assert est.forest_.to_bytes() == ref_bytes
    np.testing.assert_array_equal(ref.predict_proba(wide), ref.predict_proba(X))


# ----------------------------------------------------------- apply and decision_path
@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_apply_and_decision_path(clf_data, cls):
    X, y = clf_data
    X = X[:50]
    y = y[:50]
    est = cls(n_estimators=7, random_state=0).fit(X, y)
    leaves = est.apply(X)
    assert leaves.shape == (50, 7)
    assert np.issubdtype(leaves.dtype, np.integer)
    indicator, ptr = est.decision_path(X)
    counts = est.forest_.node_counts()
    assert indicator.shape == (50, counts.sum())
    np.testing.assert_array_equal(ptr, np.r_[0, np.cumsum(counts)])
    dense = indicator.toarray()
    for t in range(7):
        arrays = est.forest_.tree_arrays(t)
        left, right = arrays["children_left"], arrays["children_right"]
        assert len(left) == counts[t]
        # apply() lands on leaves, and on the last node of each decision path.
        assert np.all(left[leaves[:, t]] == -1)
        block = dense[:, ptr[t] : ptr[t + 1]]
        assert np.all(block[:, 0] == 1)  # every path starts at the root
        assert np.all(block[np.arange(50), leaves[:, t]] == 1)
        # A path holds one node per level: depth of the leaf + 1 nodes, all linked.
        for i in range(0, 50, 7):
            nodes = np.flatnonzero(block[i])
            for parent, child in zip(nodes[:-1], nodes[1:], strict=True):
                assert child in (left[parent], right[parent])
            assert nodes[-1] == leaves[i, t]
    # Tree predictions are the leaf values averaged over trees.
    if cls is fi.ExtraTreesRegressor:
        values = np.column_stack(
            [est.forest_.tree_arrays(t)["value"][leaves[:, t], 0] for t in range(7)]
        )
        np.testing.assert_allclose(values.mean(axis=1), est.predict(X), rtol=1e-12)


def test_tree_arrays_follow_sklearn_conventions(clf_data):
    X, y = clf_data
    est = fi.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    a = est.forest_.tree_arrays(0)
    leaf = a["children_left"] == -1
    np.testing.assert_array_equal(leaf, a["children_right"] == -1)
    assert np.all(a["feature"][leaf] == -2)
    assert np.all((a["feature"][~leaf] >= 0) & (a["feature"][~leaf] < X.shape[1]))
    n = a["weighted_n_node_samples"]
    internal = np.flatnonzero(~leaf)
    np.testing.assert_allclose(
        n[internal], n[a["children_left"][internal]] + n[a["children_right"][internal]]
    )
    assert a["value"].shape == (len(leaf), 3)
    assert a["n_node_samples"][0] <= len(y)
    assert est.forest_.depths()[0] >= 1


# -------------------------------------------------------------------------------- OOB
def test_oob_classification_matches_cross_validation():
    X, y = load_breast_cancer(return_X_y=True)
    est = fi.RandomForestClassifier(n_estimators=200, oob_score=True, n_jobs=2, random_state=0)
    est.fit(X, y)
    dec = est.oob_decision_function_
    assert dec.shape == (len(y), 2)
    np.testing.assert_allclose(dec.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert est.oob_score_ == accuracy_score(y, est.classes_[dec.argmax(axis=1)])
    cv = cross_val_score(
        fi.RandomForestClassifier(n_estimators=200, n_jobs=2, random_state=0),
        X,
        y,
        cv=StratifiedKFold(5, shuffle=True, random_state=0),
    ).mean()
    assert abs(est.oob_score_ - cv) < 0.025, (est.oob_score_, cv)
    # OOB is an honest estimate: below the (near perfect) training accuracy.
    assert est.oob_score_ < est.score(X, y)


def test_oob_regression(reg_data):
    X, y = reg_data
    est = fi.RandomForestRegressor(n_estimators=100, oob_score=True, random_state=0).fit(X, y)
    assert est.oob_prediction_.shape == (len(y),)
    assert est.oob_score_ == pytest.approx(r2_score(y, est.oob_prediction_), abs=1e-12)
    assert 0.5 < est.oob_score_ < est.score(X, y)


def test_oob_with_subsampling_without_bootstrap(clf_data):
    X, y = clf_data
    est = fi.RandomPatchesClassifier(
        n_estimators=50, max_samples=0.5, oob_score=True, random_state=0
    ).fit(X, y)
    dec = est.oob_decision_function_
    np.testing.assert_allclose(dec.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert 0.6 < est.oob_score_ < 1.0


def test_oob_with_too_few_trees_warns(clf_data):
    X, y = clf_data
    with pytest.warns(UserWarning, match="OOB"):
        est = fi.RandomForestClassifier(n_estimators=2, oob_score=True, random_state=0).fit(X, y)
    never = np.isnan(est.oob_decision_function_).any(axis=1)
    assert never.any()


# ---------------------------------------------------------------- pipelines and search
def test_pipeline_and_grid_search(clf_data):
    X, y = clf_data
    pipe = Pipeline(
        [("scale", StandardScaler()), ("rf", fi.RandomForestClassifier(n_estimators=20))]
    )
    search = GridSearchCV(
        pipe, {"rf__max_features": [1, "sqrt", None], "rf__random_state": [0]}, cv=3
    )
    search.fit(X, y)
    assert search.best_params_["rf__max_features"] in (1, "sqrt", None)
    assert len(search.cv_results_["mean_test_score"]) == 3
    assert search.best_score_ > 0.7
    assert search.score(X, y) > 0.9


# ------------------------------------------------------- Random Patches and importances
def test_random_patches_trees_see_a_feature_subset(clf_data):
    X, y = clf_data
    p = X.shape[1]
    est = fi.RandomPatchesClassifier(
        n_estimators=40, max_samples=0.5, max_features=0.5, random_state=0
    ).fit(X, y)
    per_tree = est.tree_importances()
    assert per_tree.shape == (40, p)
    nonzero = (per_tree > 0).sum(axis=1)
    assert nonzero.max() <= math.ceil(0.5 * p)
    assert nonzero.min() >= 1
    # Different trees see different subsets, and every feature is seen by some tree.
    supports = {tuple(np.flatnonzero(row)) for row in per_tree}
    assert len(supports) > 5
    assert np.all(per_tree.sum(axis=0) > 0)
    # Each tree is grown on half the rows, without replacement.
    assert np.all(
        [est.forest_.tree_arrays(t)["n_node_samples"][0] == len(y) // 2 for t in range(40)]
    )


def test_totally_randomized_trees_are_extra_trees_with_k_one(clf_data):
    X, y = clf_data
    trt = fi.TotallyRandomizedTreesClassifier(n_estimators=20, random_state=0).fit(X, y)
    et = fi.ExtraTreesClassifier(
        n_estimators=20, max_features=1, criterion="entropy", random_state=0
    ).fit(X, y)
    assert "max_features" not in trt.get_params()
    assert trt.forest_.to_bytes() == et.forest_.to_bytes()
    # K = 1 ignores the labels when choosing split variables: every feature gets used,
    # including the pure-noise ones, and the trees are deeper than Extra-Trees with K=sqrt(p).
    used = (trt.tree_importances() > 0).mean(axis=0)
    assert used.min() > 0.5
    et_sqrt = fi.ExtraTreesClassifier(n_estimators=20, random_state=0).fit(X, y)
    assert trt.forest_.node_counts().mean() > et_sqrt.forest_.node_counts().mean()


@pytest.mark.parametrize("cls", CLASSIFIERS + REGRESSORS, ids=lambda c: c.__name__)
def test_tree_importances_and_their_spread(cls, clf_data):
    X, y = clf_data
    est = cls(n_estimators=30, random_state=0).fit(X, y)
    raw = est.tree_importances()
    assert raw.shape == (30, X.shape[1])
    assert np.all(raw >= 0)
    np.testing.assert_allclose(raw.mean(axis=0), est.mdi_importances_, rtol=1e-12, atol=1e-15)
    norm = est.tree_importances(normalize=True)
    split = raw.sum(axis=1) > 0
    np.testing.assert_allclose(norm[split].sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # feature_importances_ is scikit-learn's: per-tree normalized, averaged, renormalized.
    mean = norm.mean(axis=0)
    np.testing.assert_allclose(est.feature_importances_, mean / mean.sum(), rtol=1e-12)
    std = raw.std(axis=0)
    assert np.all(std[est.mdi_importances_ > 0] > 0)
    # importances_std_ is in the units of feature_importances_: the spread of the normalized
    # per-tree MDI (ddof 0), the same as mdi(normalize=True).importances_std.
    np.testing.assert_allclose(est.importances_std_, norm.std(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(est.importances_std_, mdi(est, normalize=True).importances_std)
    assert not np.allclose(est.importances_std_, std)

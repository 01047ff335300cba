"""warm_start with scikit-learn's rules (``forestimp._warm_start``), and
``class_weight="balanced_subsample"`` with a 2-D y (``forestimp._class_weight``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import sklearn.ensemble as sk
from sklearn.datasets import make_classification, make_regression
from sklearn.utils.class_weight import compute_sample_weight

import forestimp as fi
from forestimp._sklearn_trees import in_bag_rows
from forestimp.exceptions import DataError, InvalidParameterError
from forestimp.importance import permutation

pytestmark = pytest.mark.filterwarnings(
    "ignore:class_weight presets", "ignore:Some inputs do not have OOB scores"
)


def data(cls, n=300, seed=0):
    if cls._is_classifier:
        return make_classification(n, 6, n_informative=3, n_classes=3, random_state=seed)
    return make_regression(n, 6, noise=1.0, random_state=seed)


def trees(est, index):
    return est.forest_.tree_arrays(index)


def same_tree(a, b):
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


# ------------------------------------------------------------------ same n_estimators
@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_same_n_estimators_warns_and_fits_nothing_whatever_the_data(cls):
    X, y = data(cls)
    est = cls(10, warm_start=True, random_state=0).fit(X, y)
    before = est.forest_.to_bytes()
    fitted = {k: v for k, v in vars(est).items() if k.endswith("_") and k != "forest_"}
    # Other rows, another number of them, another number of features: scikit-learn fits
    # nothing and looks at none of it.
    X2, y2 = X[:100, :4] * 3.0, y[::-1][:100]
    with pytest.warns(UserWarning, match="does not fit new trees"):
        est.fit(X2, y2)
    assert est.forest_.to_bytes() == before
    assert est.n_features_in_ == 6
    for name, value in fitted.items():
        np.testing.assert_array_equal(getattr(est, name), value)
    np.testing.assert_array_equal(est.predict(X), cls(10, random_state=0).fit(X, y).predict(X))


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.RandomForestRegressor])
def test_oob_score_switched_on_without_new_trees_is_computed(cls):
    X, y = data(cls)
    est = cls(15, warm_start=True, random_state=0).fit(X, y)
    assert not hasattr(est, "oob_score_")
    before = est.forest_.to_bytes()
    with pytest.warns(UserWarning, match="does not fit new trees"):
        est.set_params(oob_score=True).fit(X, y)
    at_once = cls(15, oob_score=True, random_state=0).fit(X, y)
    assert est.forest_.to_bytes() == before
    assert est.oob_score_ == at_once.oob_score_
    # As scikit-learn's forest does.
    sk_est = getattr(sk, cls.__name__)(15, warm_start=True, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        sk_est.set_params(oob_score=True).fit(X, y)
    assert hasattr(sk_est, "oob_score_")


def test_oob_score_without_new_trees_needs_the_training_data():
    X, y = data(fi.RandomForestClassifier)
    est = fi.RandomForestClassifier(10, warm_start=True, random_state=0).fit(X, y)
    est.set_params(oob_score=True)
    with pytest.warns(UserWarning), pytest.raises(DataError, match="training data"):
        est.fit(X + 1.0, y)
    assert not hasattr(est, "oob_score_")
    assert est.n_features_in_ == 6


def test_oob_attributes_of_an_earlier_fit_do_not_outlive_new_trees():
    X, y = data(fi.RandomForestRegressor)
    est = fi.RandomForestRegressor(10, oob_score=True, warm_start=True, random_state=0)
    est.fit(X, y)
    assert hasattr(est, "oob_prediction_")
    est.set_params(n_estimators=20, oob_score=False).fit(X, y)
    assert not hasattr(est, "oob_score_") and not hasattr(est, "oob_prediction_")
    with pytest.warns(UserWarning, match="does not fit new trees"):
        est.set_params(oob_score=True).fit(X, y)
    assert (
        est.oob_score_
        == fi.RandomForestRegressor(20, oob_score=True, random_state=0).fit(X, y).oob_score_
    )


# -------------------------------------------------------------- same data, other data
@pytest.mark.parametrize(
    "cls",
    [
        fi.RandomForestClassifier,
        fi.ExtraTreesRegressor,
        fi.RandomPatchesClassifier,
        fi.TotallyRandomizedTreesRegressor,
    ],
    ids=lambda c: c.__name__,
)
def test_same_data_gives_the_forest_at_once_and_other_data_grows_the_new_trees_there(cls):
    X, y = data(cls)
    B, yb = data(cls, n=220, seed=1)  # other rows, and another number of them
    at_once = cls(25, random_state=0, n_jobs=2).fit(X, y)

    # The same data: 10 then 25 trees are the 25 grown at once, bit for bit.
    same = cls(10, warm_start=True, random_state=0).fit(X, y)
    same.set_params(n_estimators=25).fit(X, y)
    assert same.forest_.to_bytes() == at_once.forest_.to_bytes()

    # Other data: the 10 trees of the first fit, then trees 10..25 of the forest the same
    # seed grows on the new data (scikit-learn grows its new trees on the data given).
    first = cls(10, random_state=0).fit(X, y)
    on_b = cls(25, random_state=0).fit(B, yb)
    other = cls(10, warm_start=True, random_state=0).fit(X, y)
    other.set_params(n_estimators=25).fit(B, yb)
    assert len(other) == 25 and other.forest_.assembled
    for i in range(25):
        assert same_tree(trees(other, i), trees(first if i < 10 else on_b, i)), i
    # A forest is the mean of its trees, so its prediction is 10/25 of the first
    # forest's and 15/25 of the new trees'.
    new = fi.ensemble.__dict__[cls.__name__](25, random_state=0).fit(B, yb)
    new.forest_ = on_b.forest_.part(10, 25)
    if cls._is_classifier:
        expected = (10 * first.predict_proba(B) + 15 * new.predict_proba(B)) / 25
        np.testing.assert_allclose(other.predict_proba(B), expected, rtol=1e-12)
    else:
        expected = (10 * first.predict(B) + 15 * new.predict(B)) / 25
        np.testing.assert_allclose(other.predict(B), expected, rtol=1e-12)
    # It keeps growing on the data it is given, and survives a pickle.
    again = pickle.loads(pickle.dumps(other)).set_params(n_estimators=30).fit(B, yb)
    assert same_tree(trees(again, 27), trees(cls(30, random_state=0).fit(B, yb), 27))


def test_other_data_keeps_the_first_fits_classes_features_and_criterion():
    X, y = data(fi.RandomForestClassifier)
    est = fi.RandomForestClassifier(10, warm_start=True, random_state=0).fit(X, y)
    before = est.forest_.to_bytes()
    est.set_params(n_estimators=20)
    for X2, y2, error in [
        (X[:, :5], y, DataError),  # another number of features
        (X, np.where(y == 2, 1, y), DataError),  # classes {0, 1}
        (X, np.stack([y, y], axis=1), DataError),  # two outputs
    ]:
        with pytest.raises(error):
            est.fit(X2, y2)
        assert est.forest_.to_bytes() == before
        np.testing.assert_array_equal(est.classes_, [0, 1, 2])
        assert est.n_features_in_ == 6 and est.n_outputs_ == 1
    with pytest.raises(InvalidParameterError):
        est.set_params(criterion="entropy").fit(X + 1.0, y)
    assert est.forest_.to_bytes() == before


def test_other_data_grows_the_new_trees_with_the_parameters_as_they_are():
    X, y = data(fi.ExtraTreesRegressor)
    B, yb = data(fi.ExtraTreesRegressor, n=200, seed=2)
    est = fi.ExtraTreesRegressor(5, warm_start=True, random_state=0).fit(X, y)
    est.set_params(n_estimators=9, max_depth=2).fit(B, yb)
    assert list(est.forest_.depths()[5:]) == [2, 2, 2, 2]
    shallow = fi.ExtraTreesRegressor(9, max_depth=2, random_state=0).fit(B, yb)
    assert same_tree(trees(est, 7), trees(shallow, 7))


def test_other_data_has_no_out_of_bag_rows():
    X, y = data(fi.RandomForestRegressor)
    est = fi.RandomForestRegressor(10, warm_start=True, random_state=0).fit(X, y)
    before = est.forest_.to_bytes()
    with pytest.raises(InvalidParameterError, match="out-of-bag"):
        est.set_params(n_estimators=20, oob_score=True).fit(X[:200], y[:200])
    assert est.forest_.to_bytes() == before and not hasattr(est, "oob_score_")
    est.set_params(oob_score=False).fit(X[:200], y[:200])
    with pytest.raises(InvalidParameterError, match="out-of-bag"):
        permutation(est, X[:200], y[:200], oob=True)


# ------------------------------------------------- balanced_subsample with a 2-D y
X2, y2 = make_classification(
    300, 6, n_informative=3, n_classes=3, weights=[0.6, 0.3, 0.1], random_state=0
)
Y2 = np.stack([y2, (X2[:, 0] > 0.5).astype(int)], axis=1)


@pytest.mark.parametrize(
    "cls, params",
    [
        (fi.RandomForestClassifier, {}),
        (fi.RandomForestClassifier, {"max_samples": 0.5}),
        (fi.RandomPatchesClassifier, {}),  # rows drawn without replacement
    ],
)
def test_balanced_subsample_with_a_2d_y_weighs_each_tree_as_scikit_learn(cls, params):
    est = cls(6, class_weight="balanced_subsample", random_state=0, **params).fit(X2, Y2)
    for t in range(6):
        drawn = in_bag_rows(est, t)  # scikit-learn's estimators_samples_[t]
        counts = np.bincount(drawn, minlength=len(Y2))
        # scikit-learn's _parallel_build_trees: counts × compute_sample_weight(indices=).
        weights = counts * compute_sample_weight("balanced", Y2, indices=drawn)
        root = est.forest_.tree_arrays(t)["weighted_n_node_samples"][0]
        np.testing.assert_allclose(root, weights.sum(), rtol=1e-12)


def test_balanced_subsample_without_drawn_rows_is_balanced_as_in_scikit_learn():
    a = fi.ExtraTreesClassifier(5, class_weight="balanced_subsample", random_state=0)
    b = fi.ExtraTreesClassifier(5, class_weight="balanced", random_state=0)
    assert a.fit(X2, Y2).forest_.to_bytes() == b.fit(X2, Y2).forest_.to_bytes()


def test_balanced_subsample_with_a_2d_y_is_the_engines_rule_and_deterministic():
    params = dict(class_weight="balanced_subsample", random_state=0)
    # A second output with one class weighs nothing: output 0 is the 1-D forest's.
    one = fi.RandomForestClassifier(12, **params).fit(X2, y2)
    two = fi.RandomForestClassifier(12, **params).fit(X2, np.stack([y2, 0 * y2], axis=1))
    np.testing.assert_array_equal(two.predict_proba(X2)[0], one.predict_proba(X2))
    # Same bytes for any n_jobs, and 5 then 12 trees are the 12 at once.
    whole = fi.RandomForestClassifier(12, n_jobs=1, **params).fit(X2, Y2).forest_.to_bytes()
    assert fi.RandomForestClassifier(12, n_jobs=3, **params).fit(X2, Y2).forest_.to_bytes() == whole
    warm = fi.RandomForestClassifier(5, warm_start=True, **params).fit(X2, Y2)
    assert warm.set_params(n_estimators=12).fit(X2, Y2).forest_.to_bytes() == whole


def test_balanced_subsample_warns_with_warm_start_as_scikit_learn():
    with pytest.warns(UserWarning, match="not recommended for warm_start"):
        fi.RandomForestClassifier(3, class_weight="balanced", warm_start=True).fit(X2, y2)


# ----------------------------------------------------------------------- boosting
@pytest.mark.parametrize("change", [{"max_depth": 4}, {"max_leaf_nodes": 3, "max_depth": None}])
def test_booster_warm_start_grows_new_stages_with_new_tree_parameters(change):
    X, y = data(fi.RandomForestRegressor)
    est = fi.GradientBoostingRegressor(n_estimators=5, max_depth=2, warm_start=True, random_state=0)
    est.fit(X, y)
    est.set_params(n_estimators=8, **change).fit(X, y)
    assert est.n_estimators_ == 8
    depths = [tree.get_depth() for tree in est.estimators_[:, 0]]
    leaves = [tree.get_n_leaves() for tree in est.estimators_[:, 0]]
    assert max(depths[:5]) <= 2
    if "max_leaf_nodes" in change:
        assert max(leaves[5:]) <= 3
    else:
        assert max(depths[5:]) > 2
    # scikit-learn grows the same kind of stages: deeper ones after the change.
    theirs = sk.GradientBoostingRegressor(n_estimators=5, max_depth=2, warm_start=True)
    theirs.fit(X, y).set_params(n_estimators=8, **change).fit(X, y)
    assert max(t.get_depth() for t in theirs.estimators_[5:, 0]) == max(depths[5:])
    # The kept rounds are those of the first fit's parameters.
    kept = fi.GradientBoostingRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(list(est.staged_predict(X))[4], kept.predict(X))


def test_booster_warm_start_changes_a_subsample_below_one(tmp_path):
    X, y = data(fi.RandomForestRegressor)
    est = fi.GradientBoostingRegressor(n_estimators=4, subsample=0.8, warm_start=True)
    est.set_params(random_state=0).fit(X, y)
    est.set_params(n_estimators=7, subsample=0.5).fit(X, y)
    assert est.n_estimators_ == 7 and len(est.oob_improvement_) == 7
    # Each round keeps its own fraction: the out-of-bag importance draws the same rows.
    imp = permutation(est, X, y, oob=True, random_state=0)
    assert np.all(np.isfinite(imp.importances_mean))
    path = tmp_path / "booster.fi"
    est.save(path)
    back = fi.load(path)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_array_equal(back.oob_scores_, est.oob_scores_)


@pytest.mark.parametrize(
    "first, change",
    [(1.0, {"subsample": 0.5}), (0.5, {"subsample": 1.0}), (1.0, {"learning_rate": 0.5})],
)
def test_booster_warm_start_refuses_what_its_kept_rounds_depend_on(first, change):
    # Crossing subsample=1 would leave rounds without out-of-bag rows (scikit-learn fails
    # there too); a changed learning rate would rescale the kept rounds.
    X, y = data(fi.RandomForestRegressor)
    est = fi.GradientBoostingRegressor(n_estimators=5, subsample=first, warm_start=True)
    est.fit(X, y)
    with pytest.raises(InvalidParameterError, match="subsample on the same side of 1"):
        est.set_params(n_estimators=8, **change).fit(X, y)
    assert est.n_estimators_ == 5

"""Importances of multi-output forests: MDI split by output, permutation importance (held
out and out of bag) per output, MDI-oob per output, TreeSHAP and local MDI of every output,
and the typed refusals of the measures that read one target column."""

from __future__ import annotations

import numpy as np
import pytest
from test_multi_output import X_TEST, Y_CLS, Y_REG, Y_TEXT, X

import forestimp as fi
from forestimp.exceptions import DataError, InvalidParameterError

from conftest import CLASSIFIERS


def test_mdi_by_output_sums_to_mdi():
    from forestimp.importance import mdi

    for est in (
        fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, Y_CLS),
        fi.ExtraTreesRegressor(n_estimators=10, random_state=0).fit(X, Y_REG),
    ):
        r = mdi(est, by_output=True)
        assert r.by_output.shape == (3, 5)
        np.testing.assert_allclose(r.by_output.sum(axis=0), r.importances_mean, atol=1e-12)
        per_tree = r.by_output_per_tree.sum(axis=1)
        np.testing.assert_allclose(per_tree, r.importances.T, atol=1e-12)
        # Output k's share lies on the features output k depends on.
        assert np.argmax(r.by_output[0]) == 0
    # A single-output forest: one row, the MDI itself.
    single = fi.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, Y_REG[:, 0])
    r = mdi(single, by_output=True)
    np.testing.assert_allclose(r.by_output[0], r.importances_mean, atol=1e-15)


def test_mdi_by_output_of_one_output_is_the_single_output_forest():
    """The share of an output, times m, is the MDI measured by that output's impurity on the
    same trees: with every output equal to one column, it is that column's forest's MDI."""
    from forestimp.importance import mdi

    y = np.c_[Y_REG[:, 0], Y_REG[:, 0]]
    two = fi.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
    one = fi.RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y[:, 0])
    r2, r1 = mdi(two, by_output=True), mdi(one)
    np.testing.assert_allclose(2 * r2.by_output[0], r1.importances_mean, rtol=1e-9)
    np.testing.assert_allclose(r2.importances_mean, r1.importances_mean, rtol=1e-9)


def test_permutation_per_output():
    from forestimp.importance import permutation

    est = fi.RandomForestRegressor(n_estimators=20, random_state=0).fit(X, Y_REG)
    Y_TEST = np.c_[
        X_TEST[:, 0] + 0.3 * X_TEST[:, 1] ** 2,
        np.sin(2 * X_TEST[:, 2]) - X_TEST[:, 3],
        5.0 * X_TEST[:, 4],
    ]
    per = [
        permutation(est, X_TEST, Y_TEST, output=k, n_repeats=3, random_state=0) for k in range(3)
    ]
    assert np.argmax(per[0].importances_mean) == 0
    assert np.argmax(per[2].importances_mean) == 4
    # R² is averaged over outputs, so the importance on all outputs is the mean.
    both = permutation(est, X_TEST, Y_TEST, n_repeats=3, random_state=0)
    mean = np.mean([p.importances_mean for p in per], axis=0)
    np.testing.assert_allclose(both.importances_mean, mean, atol=1e-12)
    # The exact reference: sklearn's scorer on a permuted copy of X, output 2.
    from sklearn.metrics import r2_score

    base = r2_score(Y_TEST[:, 2], est.predict(X_TEST)[:, 2])
    idx = fi._core.permutation_indices(per[2].seed, len(X_TEST), 4, 0)
    Xp = X_TEST.copy()
    Xp[:, 4] = X_TEST[idx, 4]
    want = base - r2_score(Y_TEST[:, 2], est.predict(Xp)[:, 2])
    assert per[2].importances[4, 0] == pytest.approx(want, abs=1e-12)
    clf = fi.RandomForestClassifier(n_estimators=10, random_state=0).fit(X, Y_CLS)
    r = permutation(clf, X, Y_CLS, output=1, random_state=0)
    assert set(np.argsort(r.importances_mean)[-2:]) == {1, 2}
    with pytest.raises(InvalidParameterError, match="output"):
        permutation(clf, X, Y_CLS, output=3)


def test_measures_without_multi_output_support_refuse():
    from forestimp import importance as imp

    reg = fi.RandomForestRegressor(n_estimators=5, random_state=0, bootstrap=True).fit(X, Y_REG)
    with pytest.raises(DataError, match="multi-output"):
        imp.permutation(reg, X, Y_REG, oob=True)  # needs output=k
    with pytest.raises(DataError, match="multi-output"):
        imp.unbiased(reg, X, Y_REG, method="mdi_oob")  # needs output=k
    with pytest.raises(DataError, match="multi-output"):
        imp.unbiased(reg, X, Y_REG)  # AIR
    with pytest.raises(DataError, match="multi-output"):
        imp.context(reg, X, Y_REG, context=np.zeros(len(X), dtype=int))
    with pytest.raises(DataError, match="multi-output"):
        imp.local_permutation(reg, X, Y_REG)


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_oob_permutation_per_output(cls):
    """Breiman's out-of-bag importance of output k: each tree's 0/1 loss (or squared error)
    on output k alone, computed here by hand from the trees' OOB rows for one tree."""
    from forestimp.importance import permutation

    classifier = cls in CLASSIFIERS
    y = Y_CLS if classifier else Y_REG
    est = cls(n_estimators=6, bootstrap=True, random_state=0).fit(X, y)
    for k in range(3):
        r = permutation(est, X, y, oob=True, output=k, random_state=1)
        # Tree 0's out-of-bag error on output k, by hand.
        tree = est.estimators_[0]
        oob = np.setdiff1d(np.arange(len(X)), est.estimators_samples_[0])
        if classifier:
            pred = tree.predict(X[oob])[:, k]
            err = np.mean(pred != y[oob, k])
        else:
            err = np.mean((tree.predict(X[oob])[:, k] - y[oob, k]) ** 2)
        assert r.oob_error[0] == pytest.approx(err, abs=1e-12)
    # The output it depends on leads, and the other outputs' data are checked too.
    r0 = permutation(est, X, y, oob=True, output=0, random_state=1)
    assert np.argmax(r0.importances_mean) == 0
    bad = y.copy()
    bad[0, 2] = bad[1, 2]  # another y: the fingerprint of all columns refuses it
    if not np.array_equal(bad, y):
        with pytest.raises(DataError, match="training data"):
            permutation(est, X, bad, oob=True, output=0)
    with pytest.raises(InvalidParameterError, match="output"):
        permutation(est, X, y, oob=True, output=3)


def test_tree_shap_of_several_outputs():
    """TreeSHAP is linear in the leaf values: one set of values per output (per class of
    each output), equal to shap.TreeExplainer's on the scikit-learn forest of the same trees,
    adding up to the predictions."""
    shap = pytest.importorskip("shap")
    from forestimp.importance import shap_values

    reg = fi.RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0).fit(X, Y_REG)
    r = shap_values(reg, X_TEST)
    assert r.values.shape == (len(X_TEST), 5, 3) and r.expected_value.shape == (3,)
    theirs = shap.TreeExplainer(reg.to_sklearn()).shap_values(X_TEST, check_additivity=False)
    np.testing.assert_allclose(r.values, np.asarray(theirs), atol=1e-6)
    np.testing.assert_allclose(
        r.values.sum(axis=1) + r.expected_value, reg.predict(X_TEST), atol=1e-10
    )
    clf = fi.RandomForestClassifier(n_estimators=8, max_depth=6, random_state=0).fit(X, Y_TEXT)
    r = shap_values(clf, X_TEST, interactions=True)
    proba = np.concatenate(clf.predict_proba(X_TEST), axis=1)
    np.testing.assert_allclose(r.values.sum(axis=1) + r.expected_value, proba, atol=1e-10)
    np.testing.assert_allclose(r.interaction_values.sum(axis=2), r.values, atol=1e-10)
    assert list(r.output_names) == ["0:no", "0:yes", "1:a", "1:b", "1:c", "1:d"]
    assert r.to_explanation().values.shape == r.values.shape


def test_local_mdi_averages_to_mdi():
    """Local MDI reads the node impurities (the mean over outputs): over the training rows of
    a forest grown without row sampling, its mean is the MDI."""
    from forestimp.importance import local_mdi, mdi

    est = fi.ExtraTreesClassifier(n_estimators=6, random_state=0).fit(X, Y_CLS)
    local = local_mdi(est, X)
    assert local.values.shape == X.shape
    np.testing.assert_allclose(local.importances_mean, mdi(est).importances_mean, atol=1e-12)


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.RandomForestRegressor])
def test_mdi_oob_per_output(cls):
    """Two equal outputs grow the trees of their single output (the mean impurity of equal
    columns is the column's): the MDI-oob of either output is the single-output forest's."""
    from forestimp.importance import unbiased

    column = Y_CLS[:, 1] if cls in CLASSIFIERS else Y_REG[:, 1]
    two = cls(n_estimators=6, random_state=0).fit(X, np.c_[column, column])
    one = cls(n_estimators=6, random_state=0).fit(X, column)
    want = unbiased(one, X, column, method="mdi_oob")
    for k in range(2):
        got = unbiased(two, X, np.c_[column, column], method="mdi_oob", output=k)
        np.testing.assert_allclose(got.importances, want.importances, rtol=1e-9, atol=1e-12)
    with pytest.raises(InvalidParameterError, match="mdi_oob"):
        unbiased(two, X, np.c_[column, column], output=0)

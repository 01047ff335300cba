"""Local MDI, shadow-corrected (AIR) and out-of-bag (MDI-oob) importances, p-values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_regression

from forestimp import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from forestimp.exceptions import DataError, InvalidParameterError
from forestimp.importance import janitza_pvalues, local_mdi, significance, unbiased


def cardinality_trap(n=400, p_noise=10, agree=0.6, seed=0):
    """One binary feature that agrees with y 60% of the time, then noise features with 100
    distinct values each (Strobl et al. 2007's setting)."""
    rng = np.random.default_rng(seed)
    x0 = rng.integers(0, 2, n)
    y = np.where(rng.random(n) < agree, x0, 1 - x0)
    X = np.column_stack([x0, rng.integers(0, 100, (n, p_noise))]).astype(float)
    return X, y


@pytest.fixture(scope="module")
def trapped():
    X, y = cardinality_trap()
    est = RandomForestClassifier(n_estimators=300, random_state=0, n_jobs=2).fit(X, y)
    return est, X, y


def test_raw_mdi_falls_in_the_cardinality_trap_and_corrections_do_not(trapped):
    est, X, y = trapped
    raw = est.mdi_importances_
    assert (raw[1:] > raw[0]).all(), "every noise feature outranks the informative one"
    for method in ("air", "mdi_oob"):
        r = unbiased(est, X, y, method=method)
        assert r.ranking_[0] == 0, (method, r.importances_mean)
        # Noise falls to a fraction of the signal (raw MDI: several times the signal).
        assert np.abs(r.importances_mean[1:]).mean() < 0.4 * r.importances_mean[0]


def test_air_is_deterministic_and_per_tree_consistent(trapped):
    est, X, y = trapped
    a = unbiased(est, X, y, method="air", n_jobs=1)
    b = unbiased(est, X, y, method="air", n_jobs=2)
    np.testing.assert_array_equal(a.importances, b.importances)
    np.testing.assert_allclose(a.per_tree.mean(axis=0), a.importances_mean, rtol=0, atol=1e-15)
    c = unbiased(est, X, y, method="air", random_state=5)
    assert not np.array_equal(a.importances, c.importances)
    # The package's one spread rule: ddof 0 over the trees, SE = std / sqrt(n_trees).
    np.testing.assert_allclose(a.importances_std, a.per_tree.std(axis=0), rtol=1e-12)
    se = a.standard_error
    np.testing.assert_allclose(se, a.per_tree.std(axis=0) / np.sqrt(300), rtol=1e-12)
    assert se.shape == (X.shape[1],) and (se > 0).all()


def test_mdi_oob_needs_out_of_bag_rows():
    X, y = cardinality_trap(n=100)
    est = ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="out-of-bag"):
        unbiased(est, X, y, method="mdi_oob")
    rf = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.raises(DataError, match="50 rows given, 100 at fit"):
        unbiased(rf, X[:50], y[:50], method="mdi_oob")


def test_mdi_oob_regression_and_unknown_labels():
    X, y = make_regression(300, 6, n_informative=2, shuffle=False, random_state=0)
    est = RandomForestRegressor(n_estimators=50, random_state=0).fit(X, y)
    r = unbiased(est, X, y, method="mdi_oob")
    assert set(r.ranking_[:2]) == {0, 1}
    assert r.per_tree.shape == (50, 6)
    Xc, yc = cardinality_trap(n=100)
    clf = RandomForestClassifier(n_estimators=5, random_state=0).fit(Xc, yc)
    with pytest.raises(DataError, match="not fitted on"):
        unbiased(clf, Xc, yc + 5, method="mdi_oob")
    with pytest.raises(InvalidParameterError, match="method"):
        unbiased(clf, Xc, yc, method="gain")
    with pytest.raises(InvalidParameterError, match="X and y"):
        unbiased(clf, Xc, None)


@pytest.mark.parametrize("weighted", [False, True])
def test_mean_local_mdi_is_global_mdi(weighted):
    """Identity of Sutera et al. (2021): the (weighted) mean of local MDI over the training
    samples of a forest grown without row sampling is its raw MDI."""
    X, y = make_regression(200, 5, n_informative=3, random_state=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 200) if weighted else None
    est = ExtraTreesRegressor(n_estimators=30, random_state=0).fit(X, y, sample_weight=w)
    local = local_mdi(est, X)
    assert local.values.shape == (200, 5) and local.draws == "samples"
    mean = np.average(local.values, axis=0, weights=w)
    np.testing.assert_allclose(mean, est.mdi_importances_, rtol=1e-10, atol=1e-12)
    if w is None:  # the global summary of the result is that mean
        np.testing.assert_allclose(local.importances_mean, est.mdi_importances_, rtol=1e-10)
        np.testing.assert_allclose(local.standard_error, local.values.std(axis=0) / np.sqrt(200))


def test_local_mdi_on_new_samples_and_dataframes():
    X, y = cardinality_trap(n=200, p_noise=3)
    df = pd.DataFrame(X, columns=["signal", "a", "b", "c"])
    est = ExtraTreesClassifier(n_estimators=20, random_state=0).fit(df, y)
    local = local_mdi(est, df.iloc[:7])
    assert local.values.shape == (7, 4)
    assert local.to_frame(per_sample=True).columns.tolist() == ["signal", "a", "b", "c"]
    with pytest.warns(UserWarning, match="feature names"):
        np.testing.assert_array_equal(local.values, local_mdi(est, X[:7], n_jobs=2).values)
    with pytest.raises(ValueError):
        local_mdi(est, df.iloc[:, :3])


@pytest.mark.filterwarnings("ignore:only .* negative importances")
def test_janitza_pvalues_separate_signal_from_many_noise_features():
    X, y = cardinality_trap(n=300, p_noise=150, agree=0.8, seed=1)
    est = ExtraTreesClassifier(n_estimators=300, max_features=0.3, random_state=0, n_jobs=2).fit(
        X, y
    )
    s = significance(est, X, y, method="janitza", importance="air")
    assert s.pvalues[0] < 0.01
    assert (s.pvalues[1:] < 0.05).mean() < 0.15
    assert list(s.selected(0.01)[:1]) == [0]


def test_janitza_null_from_mirrored_negatives():
    imp = np.array([-0.2, -0.1, 0.0, 0.05, 0.3])
    with pytest.warns(UserWarning, match="coarse"):
        p, null = janitza_pvalues(imp)
    np.testing.assert_allclose(null, [-0.2, -0.1, 0.0, 0.1, 0.2])
    np.testing.assert_allclose(p, [1.0, 0.8, 0.6, 0.4, 0.0])
    with pytest.raises(DataError, match="no negative"):
        janitza_pvalues(np.array([0.1, 0.2]))


def test_altmann_pvalues_with_raw_mdi():
    """Altmann's permutation of y corrects raw MDI's bias: the trapped signal is significant,
    the noise is not, although raw MDI ranks all noise above the signal."""
    X, y = cardinality_trap(n=300, p_noise=5, agree=0.7)
    est = RandomForestClassifier(n_estimators=50, random_state=0, n_jobs=2).fit(X, y)
    s = significance(est, X, y, importance="mdi", n_permutations=30, random_state=0)
    assert s.null.shape == (30, 6)
    np.testing.assert_array_equal(s.importances_mean, est.mdi_importances_)
    assert s.method == "altmann" and s.measure == "mdi" and s.per_tree.shape == (50, 6)
    assert s.pvalues[0] == pytest.approx(1 / 31)
    assert np.median(s.pvalues[1:]) > 0.2
    with pytest.raises(InvalidParameterError, match="n_permutations"):
        significance(est, X, y, n_permutations=0)
    with pytest.raises(InvalidParameterError, match="centred"):
        significance(est, X, y, method="janitza", importance="mdi")
    with pytest.raises(DataError, match="training data"):
        significance(est, X[::-1], y[::-1])

"""Categorical features in the histogram splitter and the gradient boosters (issue #52):
split by sets of category bins, matched by category at predict, the same model for any
``n_jobs``, and kept by safe model files and warm starts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forestimp as fi
from forestimp import persistence


def table(n: int = 1500, levels: int = 40, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Two category columns (one with missing values) and a number; y from the categories."""
    rng = np.random.default_rng(seed)
    names = np.array([f"k{j:03d}" for j in range(levels)])
    effect = rng.standard_normal(levels)
    k = rng.integers(0, levels, n)
    b = rng.integers(0, 4, n)
    cat = pd.Categorical(names[k], categories=names)
    cat[rng.random(n) < 0.05] = np.nan
    X = pd.DataFrame(
        {
            "cat": cat,
            "small": pd.Categorical(np.array(list("abcd"))[b]),
            "x": rng.random(n),
        }
    )
    y = 2 * effect[k] + np.array([0.0, 1.0, -1.0, 0.5])[b] + 0.2 * rng.standard_normal(n)
    return X, y


def reordered(X: pd.DataFrame) -> pd.DataFrame:
    """The same rows with every category column's categories declared in reverse order."""
    out = X.copy()
    for c in ("cat", "small"):
        out[c] = out[c].cat.reorder_categories(list(X[c].cat.categories)[::-1])
    return out


def test_histogram_forests_equal_exact_ones_with_a_bin_per_category():
    X, y = table()
    Xc = X[["cat", "small"]]
    kw = dict(n_estimators=5, bootstrap=False, max_features=1.0, random_state=0)
    exact = fi.RandomForestRegressor(**kw).fit(Xc, y)
    hist = fi.RandomForestRegressor(**kw, splitter="hist").fit(Xc, y)
    np.testing.assert_array_equal(hist.apply(Xc), exact.apply(Xc))
    probe = pd.DataFrame(
        {
            "cat": pd.Categorical(["k001", "zzz", None, "k039"]),
            "small": pd.Categorical(["a", "d", "q", None]),
        }
    )
    np.testing.assert_array_equal(hist.predict(probe), exact.predict(probe))


def test_histogram_forests_bin_rare_categories_with_their_neighbours():
    # 600 levels, 32 bins: rare categories share bins with their neighbours in category
    # order, so the categories seen reach at most 32 runs of equal leaves per tree.
    rng = np.random.default_rng(4)
    n, levels = 6000, 600
    k = np.where(rng.random(n) < 0.8, rng.integers(0, 10, n), rng.integers(0, levels, n))
    X = pd.DataFrame({"cat": pd.Categorical(k, categories=range(levels))})
    y = (k % 3 == 0) * 2.0 + 0.1 * rng.standard_normal(n)
    est = fi.RandomForestRegressor(n_estimators=4, splitter="hist", max_bins=32, random_state=0)
    est.fit(X, y)
    seen = np.flatnonzero(np.bincount(k, minlength=levels))
    leaves = est.apply(pd.DataFrame({"cat": pd.Categorical(seen, categories=range(levels))}))
    runs = 1 + int(np.any(leaves[1:] != leaves[:-1], axis=1).sum())
    assert 10 <= runs <= 32, runs
    assert est.score(X, y) > 0.5


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_boosters_split_categories_and_match_them_by_value(splitter):
    X, y = table()
    kw = dict(n_estimators=30, max_depth=3, random_state=0, splitter=splitter)
    native = fi.GradientBoostingRegressor(**kw).fit(X, y)
    assert list(native.is_categorical_) == [True, True, False]
    assert list(native.categories_[1]) == list("abcd")
    pred = native.predict(X)
    np.testing.assert_array_equal(native.predict(reordered(X)), pred)
    codes = X.assign(cat=X["cat"].cat.codes.astype(float), small=X["small"].cat.codes)
    ordinal = fi.GradientBoostingRegressor(**kw, categorical_features=None).fit(codes, y)
    assert native.score(X, y) > ordinal.score(codes, y) + 0.05
    labels = (y > 0).astype(int)
    clf = fi.GradientBoostingClassifier(**kw).fit(X, labels)
    np.testing.assert_array_equal(clf.predict_proba(reordered(X)), clf.predict_proba(X))
    assert clf.score(X, labels) > 0.85


@pytest.mark.parametrize(
    "make",
    [
        lambda j: fi.GradientBoostingRegressor(
            n_estimators=10, splitter="hist", subsample=0.7, random_state=1, n_jobs=j
        ),
        lambda j: fi.RandomForestRegressor(
            n_estimators=6, splitter="hist", random_state=1, n_jobs=j
        ),
        lambda j: fi.ExtraTreesRegressor(n_estimators=6, random_state=1, n_jobs=j),
    ],
)
def test_the_same_model_for_any_n_jobs_and_after_a_model_file(make):
    X, y = table(seed=2)
    one, two = make(1).fit(X, y), make(2).fit(X, y)
    engine = (lambda e: e.booster_) if hasattr(one, "booster_") else (lambda e: e.forest_)
    assert engine(one).to_bytes() == engine(two).to_bytes()
    back = persistence.loads(persistence.dumps(one))
    np.testing.assert_array_equal(back.predict(reordered(X)), one.predict(X))
    assert [list(c) if c is not None else None for c in back.categories_] == [
        list(c) if c is not None else None for c in one.categories_
    ]


def test_a_warm_start_keeps_the_first_fits_categories():
    X, y = table(seed=3)
    est = fi.GradientBoostingRegressor(n_estimators=10, warm_start=True, random_state=0)
    est.fit(X, y)
    est.set_params(n_estimators=20)
    est.fit(reordered(X), y)
    cold = fi.GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.predict(X), cold.predict(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_multi_output_forests_split_categories(splitter):
    # Two outputs, each a function of the 40-level category: one split per output's
    # grouping is out of reach of thresholds on the codes, not of category sets.
    X, y = table(n=2000, seed=5)
    k = X["cat"].cat.codes.to_numpy()
    Y = np.column_stack([(k % 2 == 0) & (k >= 0), (k % 3 == 0) & (k >= 0)]).astype(int)
    kw = dict(n_estimators=10, max_depth=4, random_state=0, splitter=splitter)
    native = fi.RandomForestClassifier(**kw).fit(X, Y)
    codes = X.assign(cat=k.astype(float), small=X["small"].cat.codes)
    ordinal = fi.RandomForestClassifier(**kw, categorical_features=None).fit(codes, Y)
    assert native.score(X, Y) > ordinal.score(codes, Y) + 0.1
    np.testing.assert_array_equal(native.predict(reordered(X)), native.predict(X))
    reg = fi.ExtraTreesRegressor(n_estimators=10, random_state=0).fit(X, np.column_stack([y, -y]))
    assert reg.predict(X).shape == (len(X), 2) and reg.score(X, np.column_stack([y, -y])) > 0.9
    back = persistence.loads(persistence.dumps(native))
    np.testing.assert_array_equal(back.predict_proba(X)[1], native.predict_proba(X)[1])


@pytest.mark.parametrize("model", ["forest", "booster", "hist booster"])
def test_a_categorical_stump_is_scikit_learns_histgradientboosting_stump(model):
    # scikit-learn's categorical split orders the categories by gradient sum over hessian
    # sum plus 10 (MIN_CAT_SUPPORT): with equal counts, the order of the means, whose best
    # cut is ours. One round of learning rate 1 predicts the two sides' means.
    from sklearn.ensemble import HistGradientBoostingRegressor

    rng = np.random.default_rng(0)
    levels, per = 24, 30
    k = rng.permutation(np.repeat(np.arange(levels), per))
    y = rng.normal(size=levels)[k] + 0.5 * rng.normal(size=k.size)
    X = pd.DataFrame({"c": pd.Categorical(k, categories=range(levels))})
    stump = dict(max_leaf_nodes=2, min_samples_leaf=1)
    theirs = HistGradientBoostingRegressor(
        max_iter=1, learning_rate=1.0, l2_regularization=0.0, early_stopping=False, **stump
    ).fit(X, y)
    if model == "forest":
        ours = fi.RandomForestRegressor(n_estimators=1, bootstrap=False, max_depth=1)
    else:
        splitter = "hist" if model == "hist booster" else "best"
        ours = fi.GradientBoostingRegressor(
            n_estimators=1, learning_rate=1.0, max_depth=None, splitter=splitter, **stump
        )
    ours.fit(X, y)
    probe = pd.DataFrame({"c": pd.Categorical(range(levels), categories=range(levels))})
    np.testing.assert_allclose(ours.predict(probe), theirs.predict(probe), atol=1e-6)
    assert len(np.unique(np.round(ours.predict(probe), 6))) == 2

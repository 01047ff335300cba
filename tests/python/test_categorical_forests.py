"""Forests with native categorical features (issue #52): declared from pandas dtypes or by
``categorical_features``, split by sets of categories, matched by category at predict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forestimp as fi
from forestimp.exceptions import DataError, InvalidParameterError


def table(n: int = 600, levels: int = 30, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    names = np.array([f"c{k:02d}" for k in range(levels)])
    effect = rng.random(levels)
    k = rng.integers(0, levels, n)
    x = rng.random(n)
    X = pd.DataFrame({"cat": pd.Categorical(names[k], categories=names), "x": x})
    y = (effect[k] + 0.3 * x + 0.1 * rng.standard_normal(n) > 0.6).astype(int)
    return X, y


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesClassifier])
def test_category_columns_are_split_by_category(cls):
    X, y = table()
    est = cls(n_estimators=20, random_state=0).fit(X, y)
    assert list(est.is_categorical_) == [True, False]
    assert list(est.categories_[0]) == list(X["cat"].cat.categories)
    assert est.categories_[1] is None
    proba = est.predict_proba(X)
    # The same rows with the categories declared in reverse order: the same predictions.
    other = X.copy()
    other["cat"] = other["cat"].cat.reorder_categories(list(X["cat"].cat.categories)[::-1])
    np.testing.assert_array_equal(est.predict_proba(other), proba)
    # A category never seen at fit, and missing values: predicted, no error.
    new = X.head(3).copy()
    new["cat"] = pd.Categorical(["zz", None, "c01"])
    assert est.predict_proba(new).shape == (3, 2)


def test_a_stump_on_categories_beats_one_on_their_codes():
    # One split of 30 categories with random effects: the best subset (ordering theorem)
    # separates them better than any threshold on arbitrary codes.
    X, y = table(n=3000, levels=30, seed=1)
    Xc = X[["cat"]]
    kw = dict(n_estimators=1, max_depth=1, bootstrap=False, max_features=1.0, random_state=0)
    native = fi.RandomForestClassifier(**kw).fit(Xc, y)
    codes = Xc.assign(cat=Xc["cat"].cat.codes.astype(float))
    ordinal = fi.RandomForestClassifier(**kw, categorical_features=None).fit(codes, y)
    assert native.score(Xc, y) > ordinal.score(codes, y) + 0.02


def test_arrays_declare_categorical_columns_by_index():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.choice([10.0, 20.0, 35.0, 40.0], 400), rng.random(400)])
    y = np.where(np.isin(X[:, 0], [10.0, 35.0]), 3.0, -1.0) + X[:, 1]
    est = fi.ExtraTreesRegressor(n_estimators=10, random_state=0, categorical_features=[0])
    est.fit(X, y)
    np.testing.assert_array_equal(est.categories_[0], [10.0, 20.0, 35.0, 40.0])
    assert est.score(X, y) > 0.95
    # Refit, same model bytes.
    again = fi.ExtraTreesRegressor(n_estimators=10, random_state=0, categorical_features=[0])
    assert again.fit(X, y).forest_.to_bytes() == est.forest_.to_bytes()


def test_multiway_trees_refuse_declared_categories():
    X, y = table(n=100)
    with pytest.raises(InvalidParameterError, match="categorical"):
        fi.ExtraTreesClassifier(n_estimators=2, multiway=True).fit(X, y)
    # Without the declaration, text categories are refused by name, as before.
    with pytest.raises(DataError, match="cat"):
        fi.RandomForestClassifier(n_estimators=2, splitter="hist", categorical_features=None).fit(
            X, y
        )


def test_scikit_learn_trees_cannot_hold_category_sets():
    X, y = table(n=200)
    est = fi.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="splits on categories"):
        est.estimators_  # noqa: B018


def test_object_arrays_of_text_categories_fit_and_predict():
    rng = np.random.default_rng(7)
    words = np.array(["oak", "elm", "ash", "fir", "yew"], dtype=object)
    k = rng.integers(0, 5, 300)
    X = np.column_stack([words[k], rng.random(300)]).astype(object)
    y = np.isin(k, [1, 3]).astype(int)
    est = fi.RandomForestClassifier(n_estimators=10, random_state=0, categorical_features=[0])
    est.fit(X, y)
    assert list(est.categories_[0]) == sorted(words)
    assert est.score(X, y) == 1.0
    probe = np.array([["elm", 0.5], ["pine", 0.5], [None, 0.5]], dtype=object)
    assert est.predict_proba(probe).shape == (3, 2)


def test_more_levels_than_the_format_holds_is_a_typed_error(monkeypatch):
    from forestimp import _categorical

    X, y = table(n=200, levels=30)
    monkeypatch.setattr(_categorical, "MAX_CATEGORIES", 20)
    with pytest.raises(DataError, match="30 categories; at most 20"):
        fi.RandomForestClassifier(n_estimators=2).fit(X, y)


def test_a_sparse_x_with_declared_categories_is_refused():
    from scipy import sparse

    X = sparse.csr_matrix(np.eye(6))
    with pytest.raises(InvalidParameterError, match="dense X only"):
        fi.RandomForestClassifier(categorical_features=[0]).fit(X, [0, 1] * 3)


@pytest.mark.parametrize(
    "param, value",
    [
        ("category_smoothing", -1.0),
        ("min_category_samples", 0),
        ("min_category_share", 1.0),
        ("max_category_side", 0),
        ("category_penalty", -0.5),
        ("category_penalty", float("nan")),
    ],
)
def test_bad_category_guards_are_refused_by_name(param, value):
    X, y = table(n=100)
    with pytest.raises(InvalidParameterError, match=param):
        fi.RandomForestClassifier(n_estimators=2, **{param: value}).fit(X, y)


def test_the_share_guard_pools_rare_categories_and_no_guard_searches_exactly():
    # 400 levels of ~5 rows each: with a 1 % share every level of the root is rare, so the
    # root's categorical split can only separate the rare group from NaN or none.
    rng = np.random.default_rng(2)
    n, levels = 2000, 400
    k = rng.integers(0, levels, n)
    X = pd.DataFrame({"id": pd.Categorical(k, categories=range(levels)), "x": rng.random(n)})
    y = (rng.random(n) < 0.5).astype(int)  # noise: the id is all the trees could fit
    kw = dict(n_estimators=1, max_depth=1, bootstrap=False, max_features=1.0, random_state=0)
    exact = fi.RandomForestClassifier(**kw, category_penalty=0).fit(X, y)
    guarded = fi.RandomForestClassifier(**kw, min_category_share=0.01, category_penalty=0)
    guarded.fit(X, y)
    # The exact search fits the noise with a set of ids; the guarded one cannot.
    assert exact.forest_.importances(False)[0] > 0
    assert guarded.forest_.importances(False)[0] == 0


def shops(seed: int, n: int, levels: int = 300) -> tuple[pd.DataFrame, np.ndarray]:
    """``shop`` (``levels`` levels) decides ``y`` with ``x``; ``brand`` (as many levels) and
    ``noise`` are noise."""
    rng = np.random.default_rng(seed)
    effect = rng.normal(size=levels)
    shop = rng.integers(0, levels, n)
    X = pd.DataFrame({
        "noise": rng.normal(size=n),
        "shop": pd.Categorical(shop, categories=range(levels)),
        "brand": pd.Categorical(rng.integers(0, levels, n), categories=range(levels)),
        "x": rng.normal(size=n),
    })  # fmt: skip
    y = (effect[shop] + 0.5 * X["x"] + 0.3 * rng.normal(size=n) > 0).astype(int).to_numpy()
    return X, y


def test_the_penalty_keeps_many_noisy_levels_from_winning_nodes_and_predicts_better():
    # Without the penalty the 300 noisy brands (~7 rows a level) win deep nodes, where any
    # set of few-row levels separates the classes; net of their chance gain they seldom do.
    X, y = shops(0, 4000)
    kw = dict(n_estimators=60, random_state=0, n_jobs=2)
    est = {p: fi.RandomForestClassifier(**kw, category_penalty=p) for p in (0, 1)}
    fits = {p: e.fit(X[:2000], y[:2000]) for p, e in est.items()}
    brand = {p: f.feature_importances_[2] for p, f in fits.items()}
    score = {p: f.score(X[2000:], y[2000:]) for p, f in fits.items()}
    assert brand[1] < 0.6 * brand[0], brand
    assert score[1] > score[0] + 0.01, score
    # The informative shop keeps its rank: first.
    assert np.argmax(fits[1].feature_importances_) == 1


def test_the_penalty_leaves_two_level_columns_and_the_random_rule_alone():
    # Two levels: one cut, as a binary column's; the Extra-Trees rule draws a random set.
    # (The model bytes differ by the penalty they record; the trees are the same.)
    def same_trees(on, off, X):
        np.testing.assert_array_equal(on.apply(X), off.apply(X))
        np.testing.assert_array_equal(on.predict_proba(X), off.predict_proba(X))
        np.testing.assert_array_equal(on.feature_importances_, off.feature_importances_)

    X, y = table(n=400, levels=2)
    for cls in (fi.RandomForestClassifier, fi.ExtraTreesClassifier):
        kw = dict(n_estimators=5, random_state=0)
        same_trees(cls(**kw).fit(X, y), cls(**kw, category_penalty=0).fit(X, y), X)
    X, y = table(n=400, levels=30)
    kw = dict(n_estimators=5, random_state=0)
    on = fi.ExtraTreesClassifier(**kw).fit(X, y)
    same_trees(on, fi.ExtraTreesClassifier(**kw, category_penalty=0).fit(X, y), X)


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.GradientBoostingClassifier])
def test_a_saved_or_pickled_model_grows_more_trees_as_one_fit(cls, tmp_path):
    # The model bytes keep the fit's categorical flags and guards (format version 8), so a
    # warm start from a file or a pickle grows the trees of one fit.
    import pickle

    from forestimp.persistence import load, save

    X, y = table(n=400)
    kw = dict(random_state=0, warm_start=True, min_category_samples=2, category_penalty=0.5)
    whole = cls(n_estimators=8, **kw).fit(X, y)
    first = cls(n_estimators=4, **kw).fit(X, y)
    save(first, tmp_path / "m.fimp")
    for again in (load(tmp_path / "m.fimp"), pickle.loads(pickle.dumps(first))):
        again.set_params(n_estimators=8)
        again.fit(X, y)
        np.testing.assert_array_equal(again.predict_proba(X), whole.predict_proba(X))

"""``forestimp.importance.permutation`` on any fitted estimator, read as scikit-learn's
``permutation_importance`` result (issue #50, item 4).

Modelled on what scikit-learn's ``sklearn/inspection/tests/test_permutation_importance.py``
checks (pipelines with an imputer, a DataFrame with a categorical column through a
ColumnTransformer, the closed form of a linear model, ``max_samples``, ``sample_weight``,
several scorers, ``n_jobs``, ``random_state``, the result's keys), plus exact oracles: the
documented permutation rule rebuilt by hand, and the engine's numbers for a forestimp
forest equal to the same forest scored as a foreign model (in a pipeline).

Where the API differs from scikit-learn's by design:

* ``n_repeats`` defaults to 1 (scikit-learn: 5); the tests pass it.
* Permutations come from forestimp's engine (``permutation_indices(seed, n, m, r)``, the
  same for every model and any ``n_jobs``), not numpy's ``shuffle``: the same
  ``random_state`` gives other numbers than scikit-learn's, reproducibly.
* ``max_samples`` draws new rows in each repeat, shared by all features (scikit-learn's
  documented intent; its code reseeds per column and so reuses one subset). The baseline
  is scored on all rows, as scikit-learn does.
* The result is a frozen dataclass that reads like a Bunch (``r["importances"]``,
  ``r.keys()``, ``dict(r)``), not a ``dict`` subclass; errors are
  ``InvalidParameterError``, a ``ValueError``.
* For forestimp's own models ``scoring=None`` is accuracy / R² (their ``score``); for any
  other model it is the model's ``score``, as scikit-learn.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_backend
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestRegressor as SkForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import get_scorer, mean_squared_error, r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler, scale

import forestimp
from forestimp._core import permutation_indices
from forestimp.exceptions import InvalidParameterError
from forestimp.importance import PermutationImportance, local_mdi, permutation

ROWS_KEY = 2**32 - 1  # the stream key of the rows a repeat draws (``_any_model.ROWS``)
BUNCH_KEYS = {"importances_mean", "importances_std", "importances"}


@pytest.fixture(scope="module")
def linear():
    X, y = make_regression(n_samples=300, n_features=6, n_informative=4, random_state=0)
    return LinearRegression().fit(X, y), X, y


@pytest.fixture(scope="module")
def forest():
    X, y = make_regression(n_samples=240, n_features=5, n_informative=3, noise=5.0, random_state=1)
    pipe = make_pipeline(
        FunctionTransformer(), forestimp.RandomForestRegressor(n_estimators=8, random_state=0)
    ).fit(X, y)
    return pipe, X, y


def _by_hand(est, X, y, seed, n_repeats, scorer, k=None):
    """The documented rule: ``s(X) − s(rows S_r of X with column m permuted by
    permutation_indices(seed, k, m, r))``, ``S_r`` the sorted first k of the ROWS stream."""
    n, p = X.shape
    base = scorer(est, X, y)
    out = np.empty((p, n_repeats))
    for r in range(n_repeats):
        rows = np.arange(n) if k is None else np.sort(permutation_indices(seed, n, ROWS_KEY, r)[:k])
        for m in range(p):
            Xp = X[rows].copy()
            Xp[:, m] = Xp[permutation_indices(seed, len(rows), m, r), m]
            out[m, r] = base - scorer(est, Xp, y[rows])
    return out


# ------------------------------------------------------------------- any fitted model
def test_linear_model_is_accepted_and_matches_its_closed_form():
    # scikit-learn's closed form: with standardised X and y, E[importance] = 2 coef² for
    # the mean squared error.
    X, y = make_regression(n_samples=500, n_features=6, random_state=0)
    X, y = scale(X), scale(y)
    lr = LinearRegression().fit(X, y)
    r = permutation(lr, X, y, n_repeats=40, scoring="neg_mean_squared_error", random_state=0)
    assert isinstance(r, PermutationImportance) and r.method == "held_out"
    assert r.importances.shape == (6, 40)
    np.testing.assert_allclose(r.importances_mean, 2 * lr.coef_**2, rtol=0.1, atol=1e-6)


@pytest.mark.parametrize("max_samples", [1.0, 0.6, 100])
def test_foreign_model_follows_the_documented_permutations(linear, max_samples):
    lr, X, y = linear
    r = permutation(lr, X, y, n_repeats=3, random_state=7, max_samples=max_samples)
    k = None if max_samples == 1.0 else (180 if max_samples == 0.6 else 100)
    expected = _by_hand(lr, X, y, r.seed, 3, get_scorer("r2"), k)
    np.testing.assert_array_equal(r.importances, expected)
    assert r.baseline_score == r2_score(y, lr.predict(X))
    np.testing.assert_array_equal(r.importances_std, expected.std(axis=1))


def test_pipeline_with_an_imputer_reads_nan():
    X = np.array([[1.0, 2.0, 3.0, np.nan, 2.0, 1.0], [2, 1, 2, 1, 2, 1]]).T
    y = np.array([0, 1, 0, 1, 0, 1])
    clf = make_pipeline(SimpleImputer(), LogisticRegression()).fit(X, y)
    a = permutation(clf, X, y, n_repeats=4, random_state=42)
    b = permutation(clf, X, y, n_repeats=4, random_state=0)
    assert a.importances.shape == (2, 4)
    assert a.importances_mean[1] > a.importances_mean[0]
    assert not np.allclose(a.importances, b.importances)  # another random_state, other draws


def test_dataframe_with_a_categorical_column_reaches_the_pipeline_as_it_is():
    rng = np.random.RandomState(0)
    n = 120
    X = pd.DataFrame(
        {
            "num": rng.normal(size=n),
            "cat": pd.Categorical(rng.choice(["a", "b", "c"], size=n)),
        },
        index=[f"r{i}" for i in range(n)],
    )
    y = (X["cat"] == "a").to_numpy().astype(int)
    pre = ColumnTransformer([("num", StandardScaler(), ["num"]), ("cat", OneHotEncoder(), ["cat"])])
    clf = make_pipeline(pre, LogisticRegression()).fit(X, y)
    seen = []

    def scorer(est, Xs, ys):
        seen.append((Xs["cat"].dtype, list(Xs.index), Xs.shape))
        return float(np.mean(est.predict(Xs) == ys))

    for max_samples in (1.0, 0.5):
        seen.clear()
        r = permutation(
            clf, X, y, n_repeats=3, scoring=scorer, random_state=0, max_samples=max_samples
        )
        assert r.importances.shape == (2, 3)
        assert r.feature_names.tolist() == ["num", "cat"]
        assert r.importances_mean[1] > 0.2 > abs(r.importances_mean[0])
        assert all(isinstance(d, pd.CategoricalDtype) for d, _, _ in seen)
        k = 120 if max_samples == 1.0 else 60
        assert {s for _, _, s in seen[1:]} == {(k, 2)}  # seen[0]: the baseline, all rows
        assert all(set(ix) <= set(X.index) for _, ix, _ in seen)
    assert X["cat"].dtype == "category" and list(X.index)[:2] == ["r0", "r1"]  # untouched


def test_dataframe_and_array_give_the_same_numbers():
    X, y = make_regression(n_samples=100, n_features=4, random_state=0)
    rf = SkForestRegressor(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    df = pd.DataFrame(X, index=np.arange(100).astype(str))
    for max_samples in (1.0, 0.5):
        a = permutation(rf, X, y, n_repeats=3, random_state=0, max_samples=max_samples)
        b = permutation(rf, df, y, n_repeats=3, random_state=0, max_samples=max_samples)
        np.testing.assert_array_equal(a["importances"], b["importances"])
        assert a.importances.max() - a.importances.min() > 0.3


def test_unsupervised_model_with_its_own_score_and_no_y():
    X, _ = make_classification(
        n_samples=150, n_features=3, n_informative=2, n_redundant=0, random_state=0
    )
    km = KMeans(n_clusters=3, n_init=2, random_state=0).fit(X)
    r = permutation(km, X, None, n_repeats=2, random_state=0)
    assert r.importances.shape == (3, 2)
    assert r.baseline_score == km.score(X)
    assert np.all(r.importances_mean > 0)  # permuting a column scatters the points


# ------------------------------------------------------------- the engine, unchanged
@pytest.mark.parametrize("max_samples", [1.0, 0.5, 77])
@pytest.mark.parametrize(
    "kind, scoring",
    [("reg", None), ("reg", "neg_mean_absolute_error"), ("clf", None), ("clf", "neg_log_loss")],
)
def test_engine_path_equals_the_forest_scored_as_a_foreign_model(
    forest, kind, scoring, max_samples
):
    pipe, X, y = forest
    if kind == "clf":
        y = (y > np.median(y)).astype(int)
        rf = forestimp.RandomForestClassifier(n_estimators=8, random_state=0)
        pipe = make_pipeline(FunctionTransformer(), rf).fit(X, y)
    kw = dict(n_repeats=3, scoring=scoring, random_state=3, max_samples=max_samples)
    fast = permutation(pipe[-1], X, y, **kw)  # our forest: the engine's permuted predictions
    slow = permutation(pipe, X, y, **kw)  # a pipeline: the scorer on permuted copies of X
    # permuted_predictions is bit-identical to predict on a permuted copy.
    np.testing.assert_array_equal(fast.importances, slow.importances)
    assert fast.baseline_score == slow.baseline_score
    assert np.ptp(fast.importances) > 0.05


def test_booster_with_max_samples_is_scored_as_any_model(forest):
    _, X, y = forest
    gb = forestimp.GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    pipe = make_pipeline(FunctionTransformer(), gb).fit(X, y)
    a = permutation(pipe[-1], X, y, n_repeats=2, random_state=0, max_samples=0.5)
    b = permutation(pipe, X, y, n_repeats=2, random_state=0, max_samples=0.5)
    np.testing.assert_allclose(a.importances, b.importances, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------- max_samples
def test_max_samples_equal_to_n_is_all_rows(linear):
    lr, X, y = linear
    a = permutation(lr, X, y, n_repeats=2, random_state=0, max_samples=300)
    b = permutation(lr, X, y, n_repeats=2, random_state=0)
    np.testing.assert_array_equal(a.importances, b.importances)
    c = permutation(lr, X, y, n_repeats=2, random_state=0, max_samples=0.5)
    assert not np.allclose(c.importances, b.importances)


@pytest.mark.parametrize(
    "value, match",
    [
        (301, "max_samples must be <= n_samples"),
        (0, "must be >= 1"),
        (0.0, r"float in \(0, 1\]"),
        (1.5, r"float in \(0, 1\]"),
        (True, "max_samples"),
        ("half", "max_samples"),
        (0.001, "draws no row"),
    ],
)
def test_max_samples_is_checked(linear, forest, value, match):
    lr, X, y = linear
    with pytest.raises(ValueError, match=match):
        permutation(lr, X, y, max_samples=value)
    with pytest.raises(InvalidParameterError, match=match):
        permutation(forest[0][-1], X[:, :5], y, max_samples=value)


def test_max_samples_does_not_apply_out_of_bag(forest):
    pipe, X, y = forest
    with pytest.raises(InvalidParameterError, match="held-out data only"):
        permutation(pipe[-1], X, y, oob=True, max_samples=0.5)


# -------------------------------------------------------------------- sample_weight
def test_sample_weight_of_ones_is_no_weight_and_is_subsampled(linear):
    lr, X, y = linear
    kw = dict(n_repeats=3, random_state=1, scoring="neg_mean_absolute_error")
    for max_samples in (1.0, 0.5):
        a = permutation(lr, X, y, max_samples=max_samples, **kw)
        b = permutation(lr, X, y, max_samples=max_samples, sample_weight=np.ones(300), **kw)
        np.testing.assert_allclose(a.importances, b.importances, rtol=1e-12)
    w = np.r_[np.full(150, 5.0), np.ones(150)]
    c = permutation(lr, X, y, sample_weight=w, **kw)
    assert not np.allclose(c.importances, a.importances)


def test_scorer_without_sample_weight(linear):
    lr, X, y = linear

    def my_scorer(est, X, y):
        return 1.0

    r = permutation(lr, X, y, scoring=my_scorer, random_state=0)
    np.testing.assert_array_equal(r.importances, 0.0)
    with pytest.raises(TypeError):
        permutation(lr, X, y, scoring=my_scorer, sample_weight=np.ones(300))


# ------------------------------------------------------------------ several scorers
def _two_metrics(est, X, y):
    pred = est.predict(X)
    return {"r2": r2_score(y, pred), "neg_mean_squared_error": -mean_squared_error(y, pred)}


@pytest.mark.parametrize("which", ["linear", "forestimp"])
@pytest.mark.parametrize(
    "scoring",
    [
        ["r2", "neg_mean_squared_error"],
        {"r2": get_scorer("r2"), "neg_mean_squared_error": get_scorer("neg_mean_squared_error")},
        _two_metrics,
    ],
    ids=["list", "dict", "callable"],
)
def test_several_scorers_give_a_dict_of_the_single_results(linear, forest, which, scoring):
    est, X, y = linear if which == "linear" else (forest[0][-1], forest[1], forest[2])
    multi = permutation(est, X, y, scoring=scoring, n_repeats=2, random_state=1)
    assert isinstance(multi, dict)
    assert set(multi) == {"r2", "neg_mean_squared_error"}
    for name, result in multi.items():
        single = permutation(est, X, y, scoring=name, n_repeats=2, random_state=1)
        np.testing.assert_allclose(result.importances, single.importances, rtol=1e-12)
        assert set(result.keys()) == BUNCH_KEYS


# ------------------------------------------------------- n_jobs and random_state
def test_n_jobs_and_joblib_backends_do_not_change_the_numbers(linear):
    lr, X, y = linear
    ref = permutation(lr, X, y, n_repeats=4, random_state=0, n_jobs=1, max_samples=0.7)
    for n_jobs in (None, 2, -1):
        r = permutation(lr, X, y, n_repeats=4, random_state=0, n_jobs=n_jobs, max_samples=0.7)
        np.testing.assert_array_equal(r.importances, ref.importances)
    with parallel_backend("loky"):
        r = permutation(lr, X, y, n_repeats=4, random_state=0, n_jobs=2, max_samples=0.7)
    np.testing.assert_array_equal(r.importances, ref.importances)
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        permutation(lr, X, y, n_jobs=0)


def test_random_state_reproduces_the_permutations(linear):
    lr, X, y = linear
    a = permutation(lr, X, y, n_repeats=3, random_state=5)
    b = permutation(lr, X, y, n_repeats=3, random_state=np.random.RandomState(5))
    c = permutation(lr, X, y, n_repeats=3, random_state=6)
    np.testing.assert_array_equal(a.importances, b.importances)
    assert a.seed == b.seed != c.seed
    assert not np.allclose(a.importances, c.importances)


# ------------------------------------------------------------ a Bunch to read
@pytest.mark.parametrize("which", ["linear", "forestimp"])
def test_result_reads_as_a_bunch_and_keeps_its_attributes(linear, forest, which):
    est, X, y = linear if which == "linear" else (forest[0][-1], forest[1], forest[2])
    r = permutation(est, X, y, n_repeats=3, random_state=0, scaled=True)
    assert set(r.keys()) == BUNCH_KEYS and set(r) == BUNCH_KEYS and len(r) == 3
    assert r["importances"] is r.importances and r["importances"].shape == (X.shape[1], 3)
    np.testing.assert_array_equal(r["importances_mean"], r.importances_mean)
    np.testing.assert_array_equal(r["importances_std"], r.importances.std(axis=1))
    assert "importances_std" in r and "baseline_score" not in r
    assert (
        dict(r).keys()
        == dict.fromkeys(("importances_mean", "importances_std", "importances")).keys()
    )
    assert dict(r.items())["importances_mean"] is r.importances_mean
    assert r.get("baseline_score") is None and r.get("importances") is r.importances
    with pytest.raises(KeyError):
        r["baseline_score"]
    # The dataclass attributes stay.
    assert r.scaled and r.baseline_score is not None and r.standard_error.shape == (X.shape[1],)
    assert r.to_frame().shape == (X.shape[1], 4)


def test_every_measure_reads_as_a_bunch_and_local_values_stay_an_array(forest):
    pipe, X, _ = forest
    local = local_mdi(pipe[-1], X)
    assert isinstance(local.values, np.ndarray) and local.values.shape == X.shape
    np.testing.assert_array_equal(local["importances"], local.values.T)


# ------------------------------------------------------------------------ refusals
def test_true_errors_only(linear, forest):
    lr, X, y = linear
    with pytest.raises(InvalidParameterError, match="oob=True needs a forestimp"):
        permutation(lr, X, y, oob=True)
    with pytest.raises(InvalidParameterError, match="output="):
        permutation(lr, X, y, output=0)
    with pytest.raises(TypeError):
        permutation(lr, sparse.csr_matrix(X), y)
    with pytest.raises(NotFittedError):  # the model's own error, from its predict
        permutation(LinearRegression(), X, y)
    with pytest.raises(NotFittedError):
        permutation(forestimp.RandomForestRegressor(), X, y)
    with pytest.raises(InvalidParameterError, match="n_repeats >= 2"):
        permutation(lr, X, y, scaled=True)

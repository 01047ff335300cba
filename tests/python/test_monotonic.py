"""``monotonic_cst`` (issue #22, item 6) with scikit-learn 1.9's semantics: parity with its
trees on deterministic single-tree forests, predictions monotone along every constrained
feature for every forest and splitter, its validation and messages, and what it must not
change (unconstrained models, bytes for any n_jobs, persistence, ``to_sklearn``)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

import forestimp as fi
from forestimp._core import InvalidParameterError

CST = [1, -1, -1, 0]


def _data(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """float32 X (scikit-learn's trees split float32 values, so thresholds agree), a
    regression target non-monotone in feature 0 and a binary one."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4)).astype(np.float32)
    y = np.sin(6 * X[:, 0]) - 2 * X[:, 1] - X[:, 2] + 0.3 * rng.standard_normal(n)
    yc = (y + 0.3 * rng.standard_normal(n) > -0.9).astype(int)
    return X, y, yc


def _worst_step(predict, X: np.ndarray, cst: list[int]) -> list[float]:
    """For each constrained feature, the most negative step of ``sign · prediction`` when
    that feature alone runs over a grid beyond the data's range, from 25 rows of X."""
    grid = np.linspace(-0.1, 1.1, 49)
    worst = []
    for j, sign in enumerate(cst):
        if sign == 0:
            continue
        Z = np.repeat(X[:25], len(grid), axis=0)
        Z[:, j] = np.tile(grid, 25)
        steps = np.diff(predict(Z).reshape(25, len(grid)), axis=1) * sign
        worst.append(float(steps.min()))
    return worst


# --------------------------------------------------------------------- parity with sklearn
# Leaves of several rows: a one-row leaf can be cut off by several features alike, a tie
# that scikit-learn breaks by its own draw order.
SETTINGS = [
    dict(min_samples_leaf=5),
    dict(max_leaf_nodes=20, min_samples_leaf=3),
    dict(max_depth=6, min_samples_leaf=3),
]


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s))
@pytest.mark.parametrize("cst", [CST, [0, 1, 0, -1], [-1, 0, 0, 0]], ids=str)
def test_regression_tree_matches_scikit_learn(settings, cst):
    X, y, _ = _data()
    Xt = np.random.default_rng(1).random((1000, 4)).astype(np.float32)
    single = dict(n_estimators=1, bootstrap=False, max_features=None, random_state=0)
    ours = fi.RandomForestRegressor(**single, monotonic_cst=cst, **settings).fit(X, y)
    theirs = DecisionTreeRegressor(random_state=0, monotonic_cst=cst, **settings).fit(X, y)
    assert ours.estimators_[0].tree_.node_count == theirs.tree_.node_count
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=0, atol=1e-9)
    # Nodes keep their rows' impurities (not those of their clipped values): scikit-learn's
    # tree_.impurity (nodes numbered otherwise in best-first trees), so its MDI.
    mine, sk = np.sort(ours.estimators_[0].tree_.impurity), np.sort(theirs.tree_.impurity)
    np.testing.assert_allclose(mine, sk, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, atol=1e-9)
    # The constraint changed the tree (else this would test nothing).
    free = fi.RandomForestRegressor(**single, **settings).fit(X, y)
    assert np.abs(free.predict(Xt) - ours.predict(Xt)).max() > 1e-3


def test_regression_tree_with_missing_values_matches_scikit_learn():
    X, y, _ = _data()
    X[np.random.default_rng(2).random(X.shape) < 0.1] = np.nan
    Xt = np.random.default_rng(1).random((1000, 4)).astype(np.float32)
    Xt[::7, 0] = np.nan
    single = dict(n_estimators=1, bootstrap=False, max_features=None, random_state=0)
    ours = fi.RandomForestRegressor(**single, monotonic_cst=CST, min_samples_leaf=5).fit(X, y)
    theirs = DecisionTreeRegressor(random_state=0, monotonic_cst=CST, min_samples_leaf=5)
    theirs.fit(X, y)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=0, atol=1e-9)


@pytest.mark.parametrize("settings", SETTINGS[:2], ids=lambda s: ",".join(s))
@pytest.mark.parametrize("cst", [CST, [-1, 1, 1, 0], [1, 0, 0, 0]], ids=str)
def test_binary_classification_tree_matches_scikit_learn(settings, cst):
    # Continuous sample weights: class counts alone tie many cuts, which scikit-learn
    # breaks otherwise. The signs are on the probability of class 1.
    X, _, yc = _data()
    sw = np.random.default_rng(5).uniform(0.5, 2.0, len(yc))
    Xt = np.random.default_rng(1).random((1000, 4)).astype(np.float32)
    single = dict(n_estimators=1, bootstrap=False, max_features=None, random_state=0)
    ours = fi.RandomForestClassifier(**single, monotonic_cst=cst, **settings).fit(X, yc, sw)
    theirs = DecisionTreeClassifier(random_state=0, monotonic_cst=cst, **settings)
    theirs.fit(X, yc, sw)
    # scikit-learn may also split a pure node whose rounded impurity exceeds 2^-52 (no
    # change to predictions): the node counts can differ, the predictions cannot.
    np.testing.assert_allclose(ours.predict_proba(Xt), theirs.predict_proba(Xt), atol=1e-9)
    if ours.estimators_[0].tree_.node_count == theirs.tree_.node_count:
        np.testing.assert_allclose(
            ours.feature_importances_, theirs.feature_importances_, atol=1e-9
        )


# ------------------------------------------------------------------- monotone predictions
FORESTS = ["RandomForest", "ExtraTrees", "RandomPatches", "TotallyRandomizedTrees"]


@pytest.mark.parametrize("name", FORESTS)
@pytest.mark.parametrize("task", ["Regressor", "Classifier"])
@pytest.mark.parametrize("bootstrap", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_predictions_are_monotone_along_constrained_features(name, task, bootstrap, weighted):
    X, y, yc = _data(300)
    target = y if task == "Regressor" else yc
    sw = np.random.default_rng(3).uniform(0.2, 3.0, len(y)) if weighted else None
    cls = getattr(fi, name + task)

    def fit(cst):
        est = cls(15, bootstrap=bootstrap, random_state=0, monotonic_cst=cst)
        est.fit(X, target, sw)
        if task == "Regressor":
            return est.predict
        return lambda Z: est.predict_proba(Z)[:, 1]

    assert min(_worst_step(fit(None), X, CST)) < -1e-3  # the free forest is not monotone
    assert min(_worst_step(fit(CST), X, CST)) >= 0.0


@pytest.mark.parametrize(
    ("label", "kwargs", "make_x"),
    [
        ("hist", dict(splitter="hist", max_bins=32), lambda X: X),
        ("coded", {}, lambda X: np.round(X * 8) / 8),  # lossless codes, binned scans
        ("nan", {}, lambda X: np.where(np.random.default_rng(4).random(X.shape) < 0.1, np.nan, X)),
        ("sparse", {}, lambda X: sp.csr_matrix(np.where(X < 0.4, 0.0, X))),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
@pytest.mark.parametrize(
    "cls", [fi.RandomForestRegressor, fi.ExtraTreesClassifier], ids=lambda c: c.__name__
)
def test_every_search_keeps_the_constraint(label, kwargs, make_x, cls):
    X, y, yc = _data(300)
    if label == "hist" and cls is fi.ExtraTreesClassifier:
        cls = fi.RandomForestClassifier  # the histogram splitter is Random Forest's
    regression = cls.__name__.endswith("Regressor")
    est = cls(15, random_state=0, monotonic_cst=CST, **kwargs)
    est.fit(make_x(X.astype(np.float64)), y if regression else yc)
    predict = est.predict if regression else (lambda Z: est.predict_proba(Z)[:, 1])
    assert min(_worst_step(predict, X, CST)) >= 0.0


# -------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1, 0], "monotonic_cst has shape 2 but the input data X has 4 features."),
        ([1, 0, 2, 0], "monotonic_cst must be None or an array-like of -1, 0 or 1, but got"),
        ([0.5, 0, 0, 0], "monotonic_cst must be None or an array-like of -1, 0 or 1, but got"),
    ],
)
def test_bad_constraints_are_refused_as_scikit_learn(value, message):
    X, y, _ = _data(50)
    with pytest.raises(InvalidParameterError) as ours:
        fi.RandomForestRegressor(2, monotonic_cst=value).fit(X, y)
    with pytest.raises(ValueError) as theirs:
        DecisionTreeRegressor(monotonic_cst=value).fit(X, y)
    assert str(ours.value) == str(theirs.value)
    assert str(ours.value).startswith(message)


def test_multiclass_and_multi_output_are_refused_as_scikit_learn():
    X, y, _ = _data(60)
    three = np.arange(60) % 3
    two_outputs = np.column_stack([y, -y])
    for est, theirs, target in [
        (fi.ExtraTreesClassifier(2), DecisionTreeClassifier(), three),
        (fi.RandomForestRegressor(2), DecisionTreeRegressor(), two_outputs),
        (fi.RandomForestClassifier(2), DecisionTreeClassifier(), (two_outputs > 0).astype(int)),
    ]:
        with pytest.raises(InvalidParameterError) as ours:
            est.set_params(monotonic_cst=CST).fit(X, target)
        with pytest.raises(ValueError) as want:
            theirs.set_params(monotonic_cst=CST).fit(X, target)
        assert str(ours.value) == str(want.value)


def test_multiway_refuses_a_constraint_but_not_free_signs():
    rng = np.random.default_rng(0)
    X, y = rng.integers(0, 4, (80, 3)).astype(float), rng.random(80)
    with pytest.raises(InvalidParameterError, match="monotonic_cst.*multiway"):
        fi.ExtraTreesRegressor(2, multiway=True, monotonic_cst=[1, 0, 0]).fit(X, y)
    free = fi.ExtraTreesRegressor(2, multiway=True, monotonic_cst=[0, 0, 0], random_state=0)
    none = fi.ExtraTreesRegressor(2, multiway=True, random_state=0)
    assert free.fit(X, y).forest_.to_bytes() == none.fit(X, y).forest_.to_bytes()


# ------------------------------------------------------------- what must not change
def test_free_signs_give_the_unconstrained_model_bytes():
    X, y, yc = _data(200)
    for cls, target in [(fi.RandomForestRegressor, y), (fi.ExtraTreesClassifier, yc)]:
        a = cls(5, random_state=1, monotonic_cst=np.zeros(4, dtype=int)).fit(X, target)
        b = cls(5, random_state=1).fit(X, target)
        assert a.forest_.to_bytes() == b.forest_.to_bytes()


def test_same_bytes_for_any_n_jobs():
    X, y, yc = _data(300)
    for cls, target in [(fi.RandomForestClassifier, yc), (fi.ExtraTreesRegressor, y)]:
        ref = cls(8, random_state=3, monotonic_cst=CST, n_jobs=1).fit(X, target)
        other = cls(8, random_state=3, monotonic_cst=CST, n_jobs=2).fit(X, target)
        assert ref.forest_.to_bytes() == other.forest_.to_bytes()


def test_pickle_save_and_to_sklearn_keep_the_predictions(tmp_path):
    X, y, _ = _data(300)
    est = fi.RandomForestRegressor(6, random_state=0, monotonic_cst=CST).fit(X, y)
    want = est.predict(X)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), want)
    assert again.get_params()["monotonic_cst"] == CST
    est.save(tmp_path / "m.fi")
    loaded = fi.load(tmp_path / "m.fi")
    assert loaded.get_params()["monotonic_cst"] == CST
    np.testing.assert_array_equal(loaded.predict(X), want)
    theirs = est.to_sklearn()
    np.testing.assert_allclose(theirs.predict(X), want, rtol=0, atol=1e-12)
    assert theirs.estimators_[0].monotonic_cst == CST
    single = np.mean([t.predict(X) for t in est.estimators_], axis=0)
    np.testing.assert_allclose(single, want, rtol=0, atol=1e-12)


def test_guide_example_runs(capsys):
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "monotonic.md"
    (block,) = guide.read_text().split("```python\n")[1:]
    exec(compile(block.split("```")[0], str(guide), "exec"), {"__name__": "__main__"})
    assert "non-decreasing in x0: True" in capsys.readouterr().out


def test_warm_start_needs_the_first_fits_constraint():
    X, y, _ = _data(200)
    est = fi.RandomForestRegressor(4, warm_start=True, random_state=0, monotonic_cst=CST)
    est.fit(X, y)
    once = fi.RandomForestRegressor(7, random_state=0, monotonic_cst=CST).fit(X, y)
    assert est.set_params(n_estimators=7).fit(X, y).forest_.to_bytes() == once.forest_.to_bytes()
    with pytest.raises(InvalidParameterError, match="warm_start"):
        est.set_params(n_estimators=9, monotonic_cst=[0, 1, 0, 0]).fit(X, y)


def test_views_read_the_signs_of_their_columns():
    # Forest.fit(columns=, shadows=) grows on selected columns, then free shadows
    # (forestimp.importance.unbiased, forestimp.selection).
    from forestimp._params import monotonic_cst_of_view
    from forestimp.importance import unbiased

    assert monotonic_cst_of_view([1, -1, 0, 1], np.array([3, 1]), True) == [1, -1, 0, 0]
    assert monotonic_cst_of_view([1, -1, 0], None, np.array([0, 0, 2])) == [1, -1, 0, 0, 0, 0]
    assert monotonic_cst_of_view([1, -1, 0], None, False) == [1, -1, 0]
    assert monotonic_cst_of_view(None, np.array([0]), True) is None
    X, y, _ = _data(200)
    est = fi.RandomForestRegressor(5, random_state=0, monotonic_cst=CST).fit(X, y)
    shadowed = unbiased(est, X, y)  # grows 4 + 4 features under the view
    assert shadowed.importances_mean[1] > 0.05

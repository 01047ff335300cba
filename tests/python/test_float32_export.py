"""Exported trees route every training row as the forest does (issue #50, item 1).

scikit-learn's trees cast X to float32 before comparing; forestimp's compare float64 values.
The thresholds chosen at fit (``forestimp._float32_routing``) make the two agree on every
training value that float32 can tell from its neighbours: the mean of ``estimators_``, the
``to_sklearn()`` forest, shap's TreeExplainer on it and the ONNX export all give ``predict``
on the float64 training X, on real tables with values close to thresholds."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn import datasets

import forestimp as fi
from forestimp import persistence
from forestimp._float32_routing import corrections, float32_cut
from forestimp.exceptions import ModelFormatError


def _grid(seed: int = 0):
    """Values on a fine float64 grid that float32 rounds (its steps of 1e-6 stay a few
    float32 spacings apart), many shared between rows."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 40, size=(400, 5)) * 0.1 + 1e-6 * rng.integers(0, 4, size=(400, 5))
    y = (X[:, 0] + X[:, 1] > 4).astype(int)
    return X, y, X[:, 0] * 2 + X[:, 2]


def _moved(est):
    """The (tree, node) pairs whose exported threshold moved (none: not stored)."""
    return getattr(est, "_float32_nodes", np.empty((0, 2), dtype=np.int64))


def _table(name):
    if name == "grid":
        X, y, target = _grid()
        return X, y, target
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    return X.astype(np.float64), y, X[:, 0] * 3.0 + y


TABLES = ["diabetes", "iris", "wine", "breast_cancer", "digits", "grid"]
FAMILIES = [
    ("RandomForest", {}),
    ("RandomForest", {"splitter": "hist"}),
    ("ExtraTrees", {}),
    ("TotallyRandomizedTrees", {}),
    ("RandomPatches", {"max_features": 0.5, "max_samples": 0.7}),
]


def _fit(family, params, task, X, y):
    cls = getattr(fi, f"{family}{task}")
    return cls(n_estimators=15, random_state=0, **params).fit(X, y)


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("family, params", FAMILIES)
def test_exported_trees_predict_as_the_forest_on_training_rows(name, family, params):
    X, labels, target = _table(name)
    reg = _fit(family, params, "Regressor", X, target if name != "diabetes" else labels)
    mean = np.mean([tree.predict(X) for tree in reg.estimators_], axis=0)
    np.testing.assert_allclose(mean, reg.predict(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(reg.to_sklearn().predict(X), reg.predict(X), rtol=1e-12)
    if name == "diabetes":
        return
    clf = _fit(family, params, "Classifier", X, labels)
    proba = np.mean([tree.predict_proba(X) for tree in clf.estimators_], axis=0)
    np.testing.assert_allclose(proba, clf.predict_proba(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(clf.to_sklearn().predict(X), clf.predict(X))


def test_diabetes_was_the_failing_case_and_moves_thresholds():
    # 154 of 442 rows differed with float32_cut alone (the measurement).
    X, y = datasets.load_diabetes(return_X_y=True)
    est = fi.RandomForestRegressor(25, random_state=0).fit(X, y)
    assert len(est._float32_nodes) > 0 and est._float32_ties == 0
    naive = est.to_sklearn()
    for tree in naive.estimators_:
        tree.tree_.threshold[:] = np.where(
            tree.tree_.feature >= 0, float32_cut(tree.tree_.threshold), tree.tree_.threshold
        )
    assert np.any(naive.predict(X) != est.predict(X))  # what the moved thresholds fix


@pytest.mark.parametrize("task", ["Classifier", "Regressor"])
def test_shap_on_the_export_sums_to_predict(task):
    shap = pytest.importorskip("shap")
    X, y = datasets.load_diabetes(return_X_y=True)
    y = (y > 140).astype(int) if task == "Classifier" else y
    est = getattr(fi, f"RandomForest{task}")(10, max_depth=8, random_state=0).fit(X, y)
    explainer = shap.TreeExplainer(est.to_sklearn())
    values = explainer.shap_values(X)
    expected = est.predict_proba(X) if task == "Classifier" else est.predict(X)
    total = values.sum(axis=1) + explainer.expected_value
    np.testing.assert_allclose(total, expected, atol=1e-9)


def test_onnx_export_of_diabetes_matches_within_float32_rounding():
    pytest.importorskip("skl2onnx")
    rt = pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx

    X, y = datasets.load_diabetes(return_X_y=True)
    est = fi.RandomForestRegressor(10, random_state=0).fit(X, y)
    model = to_onnx(est.to_sklearn(), X[:1].astype(np.float32))
    session = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: X.astype(np.float32)})[0][:, 0]
    np.testing.assert_allclose(got, est.predict(X), rtol=1e-5)


def test_values_float32_cannot_tell_apart_are_counted_as_ties():
    X = np.array([[1.0], [1.0 + 1e-12], [2.0], [2.0 + 1e-12]])
    y = np.array([0.0, 1.0, 2.0, 3.0])
    est = fi.RandomForestRegressor(1, bootstrap=False, random_state=0).fit(X, y)
    assert est._float32_ties == 2  # 1 | 1+1e-12 and 2 | 2+1e-12: one float32 each
    np.testing.assert_array_equal(est.predict(X), y)


def test_float32_data_moves_nothing_and_warm_start_extends():
    X, y, _ = _grid()
    est32 = fi.ExtraTreesClassifier(8, random_state=0).fit(X.astype(np.float32), y)
    assert len(_moved(est32)) == 0 and est32._float32_ties == 0
    warm = fi.RandomForestClassifier(4, warm_start=True, random_state=0).fit(X, y)
    warm.set_params(n_estimators=10).fit(X, y)
    whole = fi.RandomForestClassifier(10, random_state=0).fit(X, y)
    assert len(_moved(whole)) > 0
    np.testing.assert_array_equal(_moved(warm), _moved(whole))
    np.testing.assert_array_equal(warm._float32_cuts, whole._float32_cuts)


def test_sparse_training_data_routes_the_same():
    from scipy.sparse import csr_matrix

    X, y, target = _grid()
    X[X < 1.0] = 0.0
    est = fi.RandomForestRegressor(10, random_state=0).fit(csr_matrix(X), target)
    mean = np.mean([tree.predict(csr_matrix(X)) for tree in est.estimators_], axis=0)
    np.testing.assert_allclose(mean, est.predict(X), rtol=1e-12)


def test_the_moved_thresholds_survive_pickles_and_files(tmp_path):
    X, y = datasets.load_diabetes(return_X_y=True)
    est = fi.RandomForestRegressor(6, random_state=0).fit(X, y)
    for back in (pickle.loads(pickle.dumps(est)), _saved(est, tmp_path)):
        np.testing.assert_array_equal(back._float32_nodes, est._float32_nodes)
        np.testing.assert_array_equal(back.to_sklearn().predict(X), est.to_sklearn().predict(X))


def _saved(est, tmp_path):
    path = tmp_path / "model.fi"
    persistence.save(est, path)
    return persistence.load(path)


def _add_node(state, tree, node):
    state["_float32_nodes"] = np.vstack([state["_float32_nodes"], [[tree, node]]])
    state["_float32_cuts"] = np.append(state["_float32_cuts"], 0.5)


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: _add_node(s, 10**6, 0),
        lambda s: _add_node(s, 0, 10**9),
        lambda s: _add_node(s, -1, 0),
        lambda s: s.update(_float32_cuts=s["_float32_cuts"] * np.inf),
        lambda s: s.pop("_float32_ties"),
    ],
)
def test_a_damaged_state_is_refused(damage):
    # Tree or node indices the model does not have, non-finite cuts, a missing count.
    from forestimp import _state

    X, y = datasets.load_diabetes(return_X_y=True)
    est = fi.RandomForestRegressor(3, random_state=0).fit(X, y)
    state = _state.fitted_state(est)
    assert len(state["_float32_nodes"])
    damage(state)
    with pytest.raises(ModelFormatError):
        _state.restore_fitted_state(fi.RandomForestRegressor(), state)


def test_corrections_are_exact_on_every_training_value():
    # The interval rule itself: float32(a) <= c < float32(b) around every moved cut.
    X, y = datasets.load_diabetes(return_X_y=True)
    est = fi.RandomForestRegressor(5, random_state=0).fit(X, y)
    nodes, cuts, ties = corrections(est.forest_, X)
    assert ties == 0 and np.all(cuts == cuts.astype(np.float32))
    for (tree, node), c in zip(nodes, cuts, strict=True):
        arrays = est.forest_.tree_arrays(int(tree))
        f, t = arrays["feature"][node], arrays["threshold"][node]
        left = X[:, f] <= t
        assert np.all(X[left, f].astype(np.float32) <= c)
        assert np.all(X[~left, f].astype(np.float32) > c)


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_the_boosters_exported_trees_predict_as_the_booster(name, splitter, tmp_path):
    X, labels, target = _table(name)
    params = dict(n_estimators=20, max_depth=4, splitter=splitter, random_state=0)
    reg = fi.GradientBoostingRegressor(**params).fit(X, target)
    np.testing.assert_allclose(reg.to_sklearn().predict(X), reg.predict(X), rtol=1e-12)
    if name == "diabetes":
        return
    clf = fi.GradientBoostingClassifier(**params).fit(X, labels)  # K trees a round
    sk = clf.to_sklearn()
    np.testing.assert_allclose(sk.predict_proba(X), clf.predict_proba(X), rtol=1e-9, atol=1e-12)
    back = _saved(clf, tmp_path)
    np.testing.assert_array_equal(_moved(back), _moved(clf))
    np.testing.assert_array_equal(back.to_sklearn().predict(X), sk.predict(X))

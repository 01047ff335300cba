"""Per-tree scikit-learn estimators (``estimators_``, ``forest[i]``, ``estimators_samples_``)
and ``to_sklearn()``, checked against forestimp's own predictions and importances and read
by the real tools: shap, ``plot_tree`` / ``export_text``, skl2onnx with onnxruntime,
treeinterpreter and dtreeviz."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor, export_text, plot_tree

import forestimp as fi
from forestimp._core import oob_indices
from forestimp._sklearn_trees import float32_cut

from conftest import ALL_ESTIMATORS, CLASSIFIERS

N_TREES = 12


def _data(cls, n=300, dtype=np.float64):
    if cls in CLASSIFIERS:
        X, y = make_classification(n, 6, n_informative=4, n_classes=3, random_state=0)
    else:
        X, y = make_regression(n, 6, n_informative=4, noise=1.0, random_state=0)
    return X.astype(dtype), y


def _forest_output(est, X):
    return est.predict_proba(X) if est._is_classifier else est.predict(X)


def _tree_output(tree, X):
    return tree.predict_proba(X) if isinstance(tree, DecisionTreeClassifier) else tree.predict(X)


def _sklearn_output(est, X):
    return est.predict_proba(X) if hasattr(est, "predict_proba") else est.predict(X)


@pytest.fixture(scope="module")
def rf():
    X, y = _data(fi.RandomForestClassifier)
    return fi.RandomForestClassifier(N_TREES, max_depth=6, random_state=0).fit(X, y), X, y


@pytest.fixture(scope="module")
def rf_reg():
    X, y = _data(fi.RandomForestRegressor)
    return fi.RandomForestRegressor(N_TREES, max_depth=6, random_state=0).fit(X, y), X, y


# ----------------------------------------------------------- the trees are the forest
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("cls", ALL_ESTIMATORS)
def test_tree_mean_is_forest_prediction(cls, dtype):
    X, y = _data(cls, dtype=dtype)
    est = cls(N_TREES, random_state=0).fit(X, y)
    tree_type = DecisionTreeClassifier if cls in CLASSIFIERS else DecisionTreeRegressor
    assert all(type(t) is tree_type for t in est.estimators_)
    mean = np.mean([_tree_output(t, X) for t in est.estimators_], axis=0)
    np.testing.assert_allclose(mean, _forest_output(est, X), rtol=1e-12, atol=1e-12)
    sk = est.to_sklearn()
    np.testing.assert_allclose(_sklearn_output(sk, X), mean, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cls", ALL_ESTIMATORS)
def test_importances_match_mdi(cls):
    """Same impurities (entropy in bits on both sides) and weights: scikit-learn's
    importances of the exported trees are forestimp's normalized MDI."""
    X, y = _data(cls)
    criterion = "entropy" if cls in CLASSIFIERS else "squared_error"
    est = cls(N_TREES, criterion=criterion, random_state=0).fit(X, y)
    per_tree = np.array([t.feature_importances_ for t in est.estimators_])
    np.testing.assert_allclose(per_tree, est.tree_importances(normalize=True), atol=1e-12)
    sk_importances = est.to_sklearn().feature_importances_
    np.testing.assert_allclose(sk_importances, est.feature_importances_, atol=1e-12)


def _thresholds_by_feature(est) -> dict[int, np.ndarray]:
    """forestimp's split thresholds of every tree, by split feature."""
    found: dict[int, list[float]] = {}
    for i in range(len(est)):
        a = est.forest_.tree_arrays(i)
        split = a["children_left"] >= 0
        for f, t in zip(a["feature"][split], a["threshold"][split], strict=True):
            found.setdefault(int(f), []).append(t)
    return {f: np.asarray(ts) for f, ts in found.items()}


def _edge_inputs(est, n_features: int) -> np.ndarray:
    """float32 rows holding, for every split, the largest float32 below its threshold and
    its two float32 neighbours; random values elsewhere."""
    X = np.random.default_rng(0).normal(size=(3000, n_features)).astype(np.float32)
    for f, ts in _thresholds_by_feature(est).items():
        c = float32_cut(ts).astype(np.float32)
        values = np.concatenate([c, np.nextafter(c, np.inf), np.nextafter(c, -np.inf)])
        X[: len(values), f] = values
    return X


def test_float32_values_at_thresholds_route_like_forestimp(rf):
    """Thresholds are float64 midpoints, mostly not float32 values. The export uses the
    largest float32 below each: float32 inputs equal to that cut or one float32 step away
    go the same way as in forestimp, in scikit-learn and in ONNX (float32 thresholds,
    ``test_onnx_export_predicts_like_forestimp``)."""
    est, X, _ = rf
    thresholds = np.concatenate(list(_thresholds_by_feature(est).values()))
    rounded = thresholds.astype(np.float32).astype(np.float64)
    # The case the cut exists for: rounding to nearest would land above the threshold.
    assert (rounded > thresholds).any() and (rounded != thresholds).mean() > 0.9
    for i in range(len(est)):
        split = est[i].tree_.children_left >= 0
        cut = est[i].tree_.threshold[split]
        assert (cut <= est.forest_.tree_arrays(i)["threshold"][split]).all()
        np.testing.assert_array_equal(cut, cut.astype(np.float32))

    X_edge = _edge_inputs(est, X.shape[1])
    mean = np.mean([t.predict_proba(X_edge) for t in est.estimators_], axis=0)
    np.testing.assert_allclose(mean, est.predict_proba(X_edge), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est[0].apply(X_edge), est.apply(X_edge)[:, 0])


@pytest.mark.parametrize("cls", [fi.ExtraTreesClassifier, fi.TotallyRandomizedTreesRegressor])
def test_multiway_trees_export_as_chains(cls):
    """A k-way split is stored as k - 1 binary nodes routed by the same rule, so multiway
    trees export exactly: predictions (unseen codes included) and importances."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 5, size=(400, 5)).astype(float)
    y = X[:, 0] + 2 * (X[:, 1] > 2) + rng.normal(scale=0.1, size=400)
    if cls in CLASSIFIERS:
        y = (y > np.median(y)).astype(int)
    est = cls(N_TREES, multiway=True, random_state=0).fit(X, y)
    X_new = rng.integers(-1, 7, size=(500, 5)).astype(float)
    mean = np.mean([_tree_output(t, X_new) for t in est.estimators_], axis=0)
    np.testing.assert_allclose(mean, _forest_output(est, X_new), rtol=1e-12, atol=1e-12)
    sk_importances = est.to_sklearn().feature_importances_
    np.testing.assert_allclose(sk_importances, est.feature_importances_, atol=1e-12)


# ------------------------------------------------------------ the ensemble interface
def test_len_indexing_iteration(rf):
    est, X, _ = rf
    assert len(est) == N_TREES == len(est.estimators_)
    assert est[-1] is est[N_TREES - 1] is est.estimators_[-1]
    assert est[np.int64(2)] is est[2]
    assert est[1:4] == est.estimators_[1:4] and len(est[::5]) == 3
    assert list(est) == est.estimators_
    with pytest.raises(IndexError):
        est[N_TREES]
    with pytest.raises(TypeError):
        est[1.0]
    np.testing.assert_array_equal(est[3].apply(X), est.apply(X)[:, 3])


def test_unfitted_forest_has_no_trees():
    est = fi.ExtraTreesRegressor()
    for access in (len, lambda e: e[0], lambda e: e.estimators_, lambda e: e.to_sklearn()):
        with pytest.raises(NotFittedError):
            access(est)
    assert not hasattr(est, "estimators_samples_")


def test_trees_cached_until_refit():
    X, y = _data(fi.ExtraTreesClassifier)
    est = fi.ExtraTreesClassifier(5, random_state=0).fit(X, y)
    first = est.estimators_
    assert all(a is b for a, b in zip(first, est.estimators_, strict=True))
    est.set_params(n_estimators=7, random_state=1).fit(X, y)
    assert len(est.estimators_) == 7 and est[0] is not first[0]
    mean = np.mean([t.predict_proba(X) for t in est], axis=0)
    np.testing.assert_allclose(mean, est.predict_proba(X), rtol=1e-12, atol=1e-12)


def test_pickle_leaves_cache_out(rf):
    est, X, _ = rf
    fresh = pickle.loads(pickle.dumps(est))
    size_before = len(pickle.dumps(fresh))
    assert len(fresh.estimators_) == N_TREES
    assert len(pickle.dumps(fresh)) == size_before
    again = pickle.loads(pickle.dumps(fresh))
    for a, b in zip(again.estimators_, est.estimators_, strict=True):
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        np.testing.assert_array_equal(a.tree_.value, b.tree_.value)
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize(
    "make",
    [
        lambda: fi.RandomForestClassifier(N_TREES, random_state=0),
        lambda: fi.RandomPatchesRegressor(N_TREES, max_samples=0.5, random_state=0),
        lambda: fi.ExtraTreesRegressor(N_TREES, bootstrap=True, max_samples=100, random_state=0),
        lambda: fi.ExtraTreesClassifier(N_TREES, random_state=0),
    ],
)
def test_estimators_samples_complement_oob(make):
    est = make()
    X, y = _data(type(est))
    est.fit(X, y)
    n = len(y)
    for i, rows in enumerate(est.estimators_samples_):
        oob = oob_indices(est.forest_, i)
        assert len(np.intersect1d(rows, oob)) == 0
        np.testing.assert_array_equal(np.union1d(rows, oob), np.arange(n))
        # The tree's root holds exactly the distinct in-bag rows; a row appears as often
        # as it was drawn (scikit-learn's estimators_samples_), so the rows are the root's
        # weight with unit sample weights.
        assert est[i].tree_.n_node_samples[0] == len(np.unique(rows))
        assert est[i].tree_.weighted_n_node_samples[0] == len(rows)
    drawn = est.get_params()["max_samples"]
    if est.bootstrap:  # every draw is listed
        expected = n if drawn is None else drawn
        assert all(len(rows) == expected for rows in est.estimators_samples_)
    elif drawn is None:
        assert all(len(rows) == n for rows in est.estimators_samples_)
    else:
        assert all(len(rows) == int(drawn * n) for rows in est.estimators_samples_)


# ------------------------------------------------------------------------ to_sklearn
@pytest.mark.parametrize(
    ("est", "sk_class", "max_features"),
    [
        (fi.RandomForestClassifier(splitter="hist"), ske.RandomForestClassifier, "sqrt"),
        (fi.RandomForestRegressor(), ske.RandomForestRegressor, 1.0),
        (fi.ExtraTreesClassifier(max_features=3), ske.ExtraTreesClassifier, 3),
        (fi.ExtraTreesRegressor(multiway=False), ske.ExtraTreesRegressor, 1.0),
        (fi.TotallyRandomizedTreesClassifier(), ske.ExtraTreesClassifier, 1),
        (fi.RandomPatchesRegressor(max_features=0.5), ske.ExtraTreesRegressor, 3),
        (fi.RandomPatchesClassifier(splitter="best"), ske.RandomForestClassifier, 3),
    ],
)
def test_to_sklearn_class_and_parameters(est, sk_class, max_features):
    X, y = _data(type(est))
    est.set_params(n_estimators=5, random_state=0).fit(X, y)
    sk = est.to_sklearn()
    assert type(sk) is sk_class
    assert sk.n_estimators == 5 and sk.max_features == max_features
    assert sk.n_features_in_ == 6 and sk.n_outputs_ == 1
    assert sk.bootstrap == est.bootstrap
    assert all(t.max_features_ == est[0].max_features_ for t in sk.estimators_)
    # The parameters are valid scikit-learn ones: a refit of the returned forest works.
    assert len(clone(sk).fit(X, y).estimators_) == 5


def test_to_sklearn_fitted_attributes():
    pd = pytest.importorskip("pandas")
    X, y = _data(fi.RandomForestClassifier)
    frame = pd.DataFrame(X, columns=[f"col{j}" for j in range(6)])
    labels = np.array(["ant", "bee", "cat"])[y]
    est = fi.RandomForestClassifier(40, oob_score=True, random_state=0).fit(frame, labels)
    sk = est.to_sklearn()
    np.testing.assert_array_equal(sk.feature_names_in_, frame.columns)
    np.testing.assert_array_equal(sk.classes_, ["ant", "bee", "cat"])
    assert sk.n_classes_ == 3 and sk.oob_score_ == est.oob_score_
    np.testing.assert_array_equal(sk.predict(frame), est.predict(frame))
    assert est[0].predict(X[:3]).dtype == labels.dtype
    assert sk.estimators_[0] is not est[0]
    # scikit-learn cannot regenerate forestimp's bootstrap draws: no wrong answer.
    with pytest.raises(AttributeError):
        _ = sk.estimators_samples_
    et = fi.ExtraTreesRegressor(3, random_state=0).fit(*_data(fi.ExtraTreesRegressor))
    for rows in et.to_sklearn().estimators_samples_:
        np.testing.assert_array_equal(rows, np.arange(300))


# ------------------------------------------------------------------------- the tools
@pytest.mark.parametrize("fixture", ["rf", "rf_reg"])
def test_shap_tree_explainer_additivity(fixture, request):
    shap = pytest.importorskip("shap")
    est, X, _ = request.getfixturevalue(fixture)
    explainer = shap.TreeExplainer(est.to_sklearn())
    X_test = X[:40]
    values = explainer.shap_values(X_test)
    total = values.sum(axis=1) + explainer.expected_value
    np.testing.assert_allclose(total, _forest_output(est, X_test), atol=1e-9)


def test_export_text_and_plot_tree(rf):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    est, _, _ = rf
    tree = est[0]
    names = [f"x{j}" for j in range(6)]
    text = export_text(tree, feature_names=names)
    root = int(tree.tree_.feature[0])
    assert text.startswith(f"|--- {names[root]} <= ") and "class: 2" in text
    assert text.count("class:") == tree.get_n_leaves()
    fig, ax = plt.subplots()
    try:
        boxes = plot_tree(tree, feature_names=names, ax=ax)
        assert sum("samples = " in box.get_text() for box in boxes) == tree.tree_.node_count
    finally:
        plt.close(fig)


@pytest.mark.parametrize("fixture", ["rf", "rf_reg"])
def test_onnx_export_predicts_like_forestimp(fixture, request):
    pytest.importorskip("skl2onnx")
    rt = pytest.importorskip("onnxruntime")
    from skl2onnx import to_onnx

    est, X, _ = request.getfixturevalue(fixture)
    X32 = np.concatenate([X.astype(np.float32), _edge_inputs(est, X.shape[1])])
    sk = est.to_sklearn()
    options = {id(sk): {"zipmap": False}} if est._is_classifier else None
    model = to_onnx(sk, X32[:1], options=options)
    session = rt.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs = session.run(None, {session.get_inputs()[0].name: X32})
    if est._is_classifier:
        labels, proba = outputs
        np.testing.assert_array_equal(labels, est.predict(X32))
        np.testing.assert_allclose(proba, est.predict_proba(X32), atol=1e-6)
    else:  # float32 sums of float32 leaf values
        np.testing.assert_allclose(outputs[0][:, 0], est.predict(X32), rtol=1e-5, atol=1e-4)


def test_treeinterpreter_decomposition(rf):
    ti = pytest.importorskip("treeinterpreter.treeinterpreter")
    est, X, _ = rf
    prediction, bias, contributions = ti.predict(est.to_sklearn(), X[:30])
    np.testing.assert_allclose(prediction, est.predict_proba(X[:30]), atol=1e-12)
    np.testing.assert_allclose(bias + contributions.sum(axis=1), prediction, atol=1e-12)


def test_dtreeviz_reads_a_tree(rf):
    dtreeviz = pytest.importorskip("dtreeviz")
    est, X, y = rf
    model = dtreeviz.model(
        est[0], X_train=X, y_train=y, feature_names=[f"x{j}" for j in range(6)],
        target_name="y", class_names=[str(c) for c in est.classes_],
    )  # fmt: skip
    path = model.explain_prediction_path(X[0])
    assert f"x{int(est[0].tree_.feature[0])}" in path

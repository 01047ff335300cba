"""Native TreeSHAP (``forestimp.importance.shap_values``) against ``shap.TreeExplainer`` on the
same trees, additivity, interaction values, dtypes, determinism and the result type."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from forestimp import (
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    TotallyRandomizedTreesClassifier,
)
from forestimp.datasets import make_led
from forestimp.importance import LocalImportances, ShapValues, shap_values

shap = pytest.importorskip("shap")


def shap_model(est):
    """The forest as shap's dictionary of trees (shap cannot read forestimp models): the
    node arrays of ``Forest.tree_arrays``, values divided by the number of trees so that
    shap's sum over trees is the forest's mean. shap refuses leaves of weight 0 (the empty
    branch of a multiway tree's no-op level, which no input reaches): they get 1e-300, which
    changes no value by more than that."""
    n_trees = est.n_estimators
    trees = []
    for i in range(n_trees):
        a = est.forest_.tree_arrays(i)
        trees.append(
            {
                "children_left": a["children_left"],
                "children_right": a["children_right"],
                "children_default": a["children_right"],  # no missing values
                "features": a["feature"],
                "thresholds": a["threshold"],
                "values": a["value"] / n_trees,
                "node_sample_weight": np.maximum(a["weighted_n_node_samples"], 1e-300),
            }
        )
    return {"trees": trees, "base_offset": 0.0}


def reference(est, X, interactions=False):
    """shap's values (and interaction values) of ``est`` on ``X``, with the last axis of
    size 1 dropped for regressors, as ``shap_values`` returns them."""
    explainer = shap.TreeExplainer(shap_model(est))
    X64 = np.asarray(X, dtype=np.float64)
    values = np.asarray(explainer.shap_values(X64))
    pairs = np.asarray(explainer.shap_interaction_values(X64)) if interactions else None
    if values.ndim == 3 and values.shape[2] == 1:
        values = values[..., 0]
        pairs = None if pairs is None else pairs[..., 0]
    return values, np.asarray(explainer.expected_value), pairs


@pytest.fixture(scope="module")
def classification():
    X, y = make_classification(400, 8, n_informative=4, n_classes=3, random_state=0)
    est = RandomForestClassifier(n_estimators=15, random_state=0).fit(X, y)
    return est, X[:60]


@pytest.fixture(scope="module")
def regression():
    X, y = make_regression(400, 7, n_informative=4, noise=1.0, random_state=0)
    est = ExtraTreesRegressor(n_estimators=15, random_state=0).fit(X, y)
    return est, X[:60]


@pytest.mark.parametrize("problem", ["classification", "regression"])
def test_values_and_interactions_equal_shap(problem, request):
    est, X = request.getfixturevalue(problem)
    ours = shap_values(est, X, interactions=True)
    values, expected, pairs = reference(est, X, interactions=True)
    assert ours.values.shape == values.shape
    np.testing.assert_allclose(ours.values, values, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.expected_value, expected, rtol=0, atol=1e-12)
    assert ours.interaction_values is not None
    assert ours.interaction_values.shape == pairs.shape
    np.testing.assert_allclose(ours.interaction_values, pairs, rtol=0, atol=1e-10)


def test_deep_trees_on_many_features_equal_shap():
    """Fully grown trees whose paths meet many features: the quadrature has many points."""
    X, y = make_regression(1500, 30, n_informative=20, noise=5.0, random_state=1)
    est = RandomForestRegressor(n_estimators=5, max_features=0.5, random_state=0).fit(X, y)
    values, _, _ = reference(est, X[:40])
    np.testing.assert_allclose(shap_values(est, X[:40]).values, values, rtol=0, atol=1e-9)


def test_multiway_trees_equal_shap():
    """Multiway trees (binary chains on one feature) need nothing special."""
    X, y = make_led(300, noise=0.1, n_irrelevant=3, random_state=0)
    est = TotallyRandomizedTreesClassifier(n_estimators=10, multiway=True, random_state=0).fit(X, y)
    ours = shap_values(est, X[:30], interactions=True)
    values, expected, pairs = reference(est, X[:30], interactions=True)
    np.testing.assert_allclose(ours.values, values, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.interaction_values, pairs, rtol=0, atol=1e-10)


@pytest.mark.parametrize("problem", ["classification", "regression"])
def test_values_add_up_to_the_prediction(problem, request):
    est, X = request.getfixturevalue(problem)
    ours = shap_values(est, X)
    prediction = est.predict_proba(X) if problem == "classification" else est.predict(X)
    np.testing.assert_allclose(
        ours.values.sum(axis=1) + ours.expected_value, prediction, rtol=0, atol=1e-10
    )


@pytest.mark.parametrize("problem", ["classification", "regression"])
def test_interaction_rows_sum_to_values_and_are_symmetric(problem, request):
    est, X = request.getfixturevalue(problem)
    ours = shap_values(est, X, interactions=True)
    pairs = ours.interaction_values
    np.testing.assert_allclose(pairs.sum(axis=2), ours.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(pairs, pairs.swapaxes(1, 2), rtol=0, atol=1e-12)


def test_float32_and_float64_rows_give_the_same_values(classification):
    est, X = classification
    X32 = X.astype(np.float32)
    a = shap_values(est, X32).values
    b = shap_values(est, X32.astype(np.float64)).values
    np.testing.assert_array_equal(a, b)
    values, _, _ = reference(est, X32)
    np.testing.assert_allclose(a, values, rtol=0, atol=1e-10)


def test_same_bits_for_any_n_jobs(classification):
    est, X = classification
    one = shap_values(est, X, interactions=True, n_jobs=1)
    two = shap_values(est, X, interactions=True, n_jobs=2)
    np.testing.assert_array_equal(one.values, two.values)
    np.testing.assert_array_equal(one.interaction_values, two.interaction_values)
    # The values do not depend on whether interactions were asked for.
    np.testing.assert_array_equal(shap_values(est, X, n_jobs=2).values, one.values)


def test_result_is_a_local_measure_with_mean_absolute_value(classification, regression):
    est, X = classification
    res = shap_values(est, X)
    assert isinstance(res, ShapValues) and isinstance(res, LocalImportances)
    assert res.method == "shap" and res.draws == "samples"
    np.testing.assert_allclose(res.importances_mean, np.abs(res.values).mean(axis=(0, 2)))
    np.testing.assert_array_equal(res.output_names, est.classes_)
    assert res.interaction_values is None
    frame = res.to_frame(per_sample=True)
    assert frame.shape == (len(X), X.shape[1] * len(est.classes_))
    np.testing.assert_array_equal(frame[est.classes_[1]].to_numpy(), res.values[:, :, 1])
    assert list(res.to_frame().index) == [f"x{i}" for i in range(X.shape[1])]
    reg, Xr = regression
    r = shap_values(reg, Xr)
    assert r.values.shape == Xr.shape and isinstance(r.expected_value, float)
    np.testing.assert_allclose(r.importances_mean, np.abs(r.values).mean(axis=0))
    assert r.to_frame(per_sample=True).shape == Xr.shape


def test_to_explanation_feeds_shap_plots(classification, regression):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    est, X = classification
    exp = shap_values(est, X).to_explanation()
    assert isinstance(exp, shap.Explanation)
    assert exp.values.shape == (len(X), X.shape[1], 3) and exp.base_values.shape == (len(X), 3)
    np.testing.assert_allclose(
        exp.values.sum(axis=1) + exp.base_values, est.predict_proba(X), atol=1e-10
    )
    shap.plots.beeswarm(exp[:, :, 1], show=False)
    plt.close("all")
    reg, Xr = regression
    exp = shap_values(reg, Xr).to_explanation()
    assert exp.base_values.shape == (len(Xr),)
    shap.plots.waterfall(exp[0], show=False)
    shap.plots.bar(exp, show=False)
    plt.close("all")


def test_bad_input_raises_typed_errors(classification):
    est, X = classification
    with pytest.raises(ValueError, match="features"):
        shap_values(est, X[:, :-1])
    bad = X.copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="NaN|infinity|finite"):
        shap_values(est, bad)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        shap_values(RandomForestClassifier(), X)
    with pytest.raises(ValueError):
        shap_values(est, X, n_jobs=0)

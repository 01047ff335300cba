"""Importances of gradient-boosting models (issue #23 item 3): TreeSHAP against
``shap.TreeExplainer`` on scikit-learn's GradientBoosting* fitted to the same trees, local
MDI against a NumPy walk of the scikit-learn trees and the boosting MDI, out-of-bag
permutation importance against a NumPy reference."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier as SkGBC
from sklearn.ensemble import GradientBoostingRegressor as SkGBR
from sklearn.linear_model import LinearRegression, LogisticRegression

import forestimp as fi
from forestimp import _core
from forestimp.exceptions import DataError, InvalidParameterError
from forestimp.importance import local_mdi, mdi, permutation, shap_values

shap = pytest.importorskip("shap")

KW = {"n_estimators": 15, "max_depth": 3, "min_samples_leaf": 5, "random_state": 0}


def _data(n=160, p=5, seed=0):
    rng = np.random.RandomState(seed)
    # float32-representable values: scikit-learn fits on float32 X, so thresholds agree.
    X = rng.normal(size=(n, p)).astype(np.float32).astype(np.float64)
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(scale=0.3, size=n)
    w = rng.uniform(0.2, 3.0, size=n)  # continuous weights: no tied splits
    return X, y, w


def _labels(X, n_classes):
    score = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2]
    return np.digitize(score, [0.0] if n_classes == 2 else [-0.6, 0.6])


# ------------------------------------------------------------------------------ TreeSHAP
@pytest.mark.parametrize("loss", ["squared_error", "huber", "log_loss"])
def test_shap_equals_shap_treeexplainer_on_sklearn_gb(loss):
    X, y, w = _data()
    if loss == "log_loss":
        y = _labels(X, 2)
        sk = SkGBC(loss=loss, **KW).fit(X, y, sample_weight=w)
        ours = fi.GradientBoostingClassifier(loss=loss, **KW).fit(X, y, sample_weight=w)
        raw = ours.decision_function(X)
        np.testing.assert_allclose(raw, sk.decision_function(X), rtol=0, atol=1e-9)
    else:
        sk = SkGBR(loss=loss, **KW).fit(X, y, sample_weight=w)
        ours = fi.GradientBoostingRegressor(loss=loss, **KW).fit(X, y, sample_weight=w)
        raw = ours.predict(X)
        np.testing.assert_allclose(raw, sk.predict(X), rtol=0, atol=1e-9)
    explainer = shap.TreeExplainer(sk)
    got = shap_values(ours, X[:50], interactions=True)
    np.testing.assert_allclose(got.values, explainer.shap_values(X[:50]), rtol=0, atol=1e-6)
    assert abs(got.expected_value - float(np.ravel(explainer.expected_value)[0])) < 1e-6
    pairs = explainer.shap_interaction_values(X[:50])
    np.testing.assert_allclose(got.interaction_values, pairs, rtol=0, atol=1e-6)
    # Additivity: the values and the base value give the raw prediction.
    total = got.values.sum(axis=1) + got.expected_value
    np.testing.assert_allclose(total, raw[:50], rtol=0, atol=1e-10)
    np.testing.assert_allclose(got.interaction_values.sum(axis=2), got.values, atol=1e-10)


def _shap_dict_model(est, k):
    """Class ``k``'s trees of a booster as shap's dictionary model: leaf values times the
    learning rate, base offset ``init[k]`` (shap cannot read multinomial GB models)."""
    b = est.booster_
    trees = []
    for t in range(k, b.n_rounds * b.trees_per_round, b.trees_per_round):
        a = b.tree_arrays(t)
        trees.append(
            {
                "children_left": a["children_left"],
                "children_right": a["children_right"],
                "children_default": a["children_right"],
                "features": a["feature"],
                "thresholds": a["threshold"],
                "values": a["value"] * est.learning_rate,
                "node_sample_weight": a["weighted_n_node_samples"],
            }
        )
    return {"trees": trees, "base_offset": float(b.init[k])}


def test_multinomial_shap_per_class_column():
    X, _, w = _data()
    y = _labels(X, 3)
    est = fi.GradientBoostingClassifier(subsample=0.8, **KW).fit(X, y, sample_weight=w)
    got = shap_values(est, X[:40], interactions=True)
    assert got.values.shape == (40, 5, 3)
    np.testing.assert_array_equal(got.output_names, est.classes_)
    for k in range(3):
        explainer = shap.TreeExplainer(_shap_dict_model(est, k))
        ref = explainer.shap_values(X[:40])
        np.testing.assert_allclose(got.values[..., k], ref, rtol=0, atol=1e-9)
        assert abs(got.expected_value[k] - explainer.expected_value) < 1e-9
        pairs = explainer.shap_interaction_values(X[:40])
        np.testing.assert_allclose(got.interaction_values[..., k], pairs, rtol=0, atol=1e-9)
    total = got.values.sum(axis=1) + got.expected_value
    np.testing.assert_allclose(total, est.decision_function(X[:40]), rtol=0, atol=1e-10)


def test_shap_of_boosters_is_the_same_for_any_n_jobs_and_refuses_init_estimators():
    X, y, _ = _data(300)
    est = fi.GradientBoostingRegressor(subsample=0.7, **KW).fit(X, y)
    one = shap_values(est, X, interactions=True, n_jobs=1)
    two = shap_values(est, X, interactions=True, n_jobs=2)
    assert one.values.tobytes() == two.values.tobytes()
    assert one.interaction_values.tobytes() == two.interaction_values.tobytes()
    init = fi.GradientBoostingRegressor(init=LinearRegression(), **KW).fit(X, y)
    with pytest.raises(InvalidParameterError, match="init estimator"):
        shap_values(init, X)


# ----------------------------------------------------------------------------- local MDI
def _local_mdi_reference(est, X):
    """Σ over the scikit-learn trees of ``i(t) − i(t_x)`` along each row's path, divided by
    the number of trees with a split."""
    out = np.zeros(X.shape)
    split = 0
    for tree in est.estimators_.ravel():
        t = tree.tree_
        split += t.node_count > 1
        path = tree.decision_path(X.astype(np.float32)).toarray().astype(bool)
        for i in range(X.shape[0]):
            nodes = np.flatnonzero(path[i])  # pre-order: parent before child
            for a, b in zip(nodes[:-1], nodes[1:], strict=True):
                out[i, t.feature[a]] += t.impurity[a] - t.impurity[b]
    return out / max(split, 1)


@pytest.mark.parametrize("n_classes", [0, 3])
def test_local_mdi_of_boosters(n_classes):
    X, y, w = _data()
    if n_classes:
        est = fi.GradientBoostingClassifier(**KW).fit(X, _labels(X, n_classes), sample_weight=w)
    else:
        est = fi.GradientBoostingRegressor(**KW).fit(X, y, sample_weight=w)
    got = local_mdi(est, X)
    np.testing.assert_allclose(got.values, _local_mdi_reference(est, X), rtol=1e-9, atol=1e-12)
    # Without subsampling the weighted mean over the training rows is the boosting MDI.
    mean = np.average(got.values, axis=0, weights=w)
    np.testing.assert_allclose(mean, mdi(est).importances_mean, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(mean / mean.sum(), est.feature_importances_, rtol=1e-9)


# ---------------------------------------------------------------- out-of-bag permutation
def _loss(est, y, raw, w):
    """The loss ``oob_scores_`` reports: weighted mean, scikit-learn's factor of 2."""
    if est.loss == "squared_error":
        per_row = (y - raw[:, 0]) ** 2
    elif raw.shape[1] == 1:  # binomial deviance, times 2
        per_row = 2 * (np.logaddexp(0, raw[:, 0]) - y * raw[:, 0])
    else:
        lse = np.logaddexp.reduce(raw, axis=1)
        per_row = lse - raw[np.arange(len(y)), y.astype(int)]
    return np.average(per_row, weights=w)


def _oob_reference(est, X, y, w, seed, n_repeats):
    """``VI[r, t, m]`` in NumPy: the round's trees (scikit-learn trees of the model) on the
    round's out-of-bag rows with column m permuted among them, earlier rounds unchanged."""
    b, trees, lr = est.booster_, est.estimators_, est.learning_rate
    n, p = X.shape
    k = b.trees_per_round
    before = np.tile(b.init, (n, 1))
    out = np.zeros((n_repeats, b.n_rounds, p))
    base = np.zeros(b.n_rounds)
    X32 = X.astype(np.float32)
    for t in range(b.n_rounds):
        oob = _core.booster_oob_indices(b, n, t)
        step = np.column_stack([lr * trees[t, j].predict(X32) for j in range(k)])
        base[t] = _loss(est, y[oob], before[oob] + step[oob], w[oob])
        for m in range(p):
            for r in range(n_repeats):
                Xp = X32[oob].copy()
                Xp[:, m] = Xp[_core.permutation_indices(seed, len(oob), m, r, t), m]
                permuted = np.column_stack([lr * trees[t, j].predict(Xp) for j in range(k)])
                out[r, t, m] = _loss(est, y[oob], before[oob] + permuted, w[oob]) - base[t]
        before = before + step
    return out, base


@pytest.mark.parametrize("n_classes", [0, 2, 3])
def test_oob_permutation_of_boosters_against_numpy(n_classes):
    X, y, w = _data(120)
    X[:, 4] = 1.0  # a constant feature: no round splits on it
    kw = dict(KW, n_estimators=8, subsample=0.6)
    if n_classes:
        y = _labels(X, n_classes)
        est = fi.GradientBoostingClassifier(**kw).fit(X, y, sample_weight=w)
    else:
        est = fi.GradientBoostingRegressor(**kw).fit(X, y, sample_weight=w)
    got = permutation(est, X, y, oob=True, n_repeats=2, sample_weight=w, random_state=3)
    ref, base = _oob_reference(est, X, y.astype(np.float64), w, got.seed, 2)
    np.testing.assert_allclose(got.oob_error, est.oob_scores_, rtol=1e-12)
    np.testing.assert_allclose(got.oob_error, base, rtol=1e-9)
    np.testing.assert_allclose(got.importances, ref.mean(axis=0).T, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.importances_mean, ref.mean(axis=(0, 1)), atol=1e-12)
    assert np.all(got.importances[4] == 0.0)
    assert got.method == "oob" and got.draws == "rounds"
    assert got.importances_mean[0] > 0  # the strongest feature matters out of bag


def test_oob_permutation_of_boosters_determinism_and_errors():
    X, y, _ = _data(200)
    est = fi.GradientBoostingRegressor(subsample=0.5, **KW).fit(X, y)
    one = permutation(est, X, y, oob=True, n_repeats=2, random_state=0, n_jobs=1)
    two = permutation(est, X, y, oob=True, n_repeats=2, random_state=0, n_jobs=2)
    assert one.importances.tobytes() == two.importances.tobytes()
    with pytest.raises(DataError, match="training data"):
        permutation(est, X, y + 1.0, oob=True)
    with pytest.raises(DataError):
        permutation(est, X[:50], y[:50], oob=True)
    full = fi.GradientBoostingRegressor(**KW).fit(X, y)
    with pytest.raises(InvalidParameterError, match="subsample < 1"):
        permutation(full, X, y, oob=True)
    stopped = fi.GradientBoostingRegressor(subsample=0.5, n_iter_no_change=3, **KW).fit(X, y)
    with pytest.raises(InvalidParameterError, match="early stopping"):
        permutation(stopped, X, y, oob=True)
    with pytest.raises(InvalidParameterError, match="scoring"):
        permutation(est, X, y, oob=True, scoring="r2")
    # An init estimator's predictions are part of the model's out-of-bag loss.
    init = fi.GradientBoostingRegressor(init=LinearRegression(), subsample=0.5, **KW)
    res = permutation(init.fit(X, y), X, y, oob=True, random_state=0)
    np.testing.assert_allclose(res.oob_error, init.oob_scores_, rtol=1e-12)


# ----------------------------------------------------------------------------- to_sklearn
@pytest.mark.parametrize(
    "loss, n_classes, init",
    [
        ("squared_error", 0, None),
        ("quantile", 0, "zero"),
        ("huber", 0, LinearRegression()),
        ("log_loss", 2, None),
        ("log_loss", 3, None),
        ("log_loss", 3, "zero"),
        ("exponential", 2, LogisticRegression()),
    ],
)
def test_to_sklearn_predicts_as_the_model(loss, n_classes, init):
    # Row and feature subsampling: trees scikit-learn could not grow itself.
    X, y, w = _data()
    kw = dict(KW, loss=loss, init=init, subsample=0.7, tree_features=0.8)
    if n_classes:
        y = _labels(X, n_classes)
        est = fi.GradientBoostingClassifier(**kw).fit(X, y, sample_weight=w)
    else:
        est = fi.GradientBoostingRegressor(**kw).fit(X, y, sample_weight=w)
    sk = est.to_sklearn()
    if n_classes:
        np.testing.assert_allclose(sk.decision_function(X), est.decision_function(X), atol=1e-12)
        np.testing.assert_allclose(sk.predict_proba(X), est.predict_proba(X), atol=1e-12)
        np.testing.assert_array_equal(sk.predict(X), est.predict(X))
    else:
        np.testing.assert_allclose(sk.predict(X), est.predict(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(sk.feature_importances_, est.feature_importances_, atol=1e-12)
    np.testing.assert_array_equal(sk.oob_scores_, est.oob_scores_)
    if init is None and n_classes <= 2:  # what shap reads: the default init_, K = 1
        explainer = shap.TreeExplainer(sk)
        got = shap_values(est, X[:40])
        np.testing.assert_allclose(got.values, explainer.shap_values(X[:40]), atol=1e-9)

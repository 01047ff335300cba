"""``criterion="absolute_error"`` with ``monotonic_cst`` and with several outputs (issue #22):
scikit-learn 1.9's trees node for node (its ``MAE.check_monotonicity`` and ``middle_value``
read the children's medians; over ``k`` outputs each output has its median and the impurity
is the mean of the outputs' deviations), monotone forests, the random splitter's nodes
against a NumPy reference, and the model bytes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.ensemble import RandomForestRegressor as SkForest
from sklearn.tree import DecisionTreeRegressor

import forestimp as fi
from forestimp._core import InvalidParameterError

SINGLE = dict(n_estimators=1, bootstrap=False, max_features=None, random_state=0)


def _data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Continuous float32 X and a heavy-tailed y, not monotone in feature 4 (a bump) and
    decreasing in feature 0, so that the constraints below bind."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 5)).astype(np.float32)
    y = (
        3 * X[:, 0]
        - 2 * (X[:, 1] > 0.5)
        + X[:, 2] * X[:, 3]
        + 2 * np.sin(7 * X[:, 4])
        + rng.standard_t(2, n)
    )
    return X, y


def _weighted_median(y: np.ndarray, w: np.ndarray) -> float:
    order = np.argsort(y, kind="stable")
    ys, cum = y[order], np.cumsum(w[order])
    half = 0.5 * cum[-1]
    k = int(np.argmax(cum > half))
    return float((ys[k - 1] + ys[k]) / 2 if k > 0 and cum[k - 1] == half else ys[k])


def _assert_same_tree(ours, theirs, Xt: np.ndarray, best_first: bool) -> None:
    """Every node's value (median, clipped) and impurity, the predictions and the MDI;
    scikit-learn numbers best-first nodes by creation, forestimp in pre-order."""
    a, b = ours.estimators_[0].tree_, theirs.tree_
    assert a.node_count == b.node_count > 5
    va, vb = a.value.reshape(a.node_count, -1), b.value.reshape(b.node_count, -1)
    ia, ib = a.impurity, b.impurity
    if best_first:
        ka = np.lexsort((ia, *va.T))
        kb = np.lexsort((ib, *vb.T))
        va, vb, ia, ib = va[ka], vb[kb], ia[ka], ib[kb]
    else:
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_array_equal(a.children_left, b.children_left)
    np.testing.assert_allclose(va, vb, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ia, ib, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )


# ---------------------------------------------------------------- monotonic constraints
SETTINGS = [
    dict(min_samples_leaf=5, min_samples_split=14),
    dict(max_leaf_nodes=15, min_samples_leaf=3),
    dict(max_depth=5, min_samples_leaf=4),
]
# Signs whose trees have no tie between cuts. With unit weights two cuts often err exactly
# alike (the error is piecewise linear in the rows moved), e.g. 10 | 45 and 12 | 43 rows
# with the same medians: forestimp keeps the first, scikit-learn the one its rounding
# favours (checked: such differences were ties to 2e-16).
CSTS = [[1, -1, 0, 1, -1], [1, 1, 0, -1, 0], [1, 0, 0, -1, -1]]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("cst", CSTS, ids=str)
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(s))
def test_monotonic_tree_is_scikit_learns(settings, cst, weighted):
    X, y = _data()
    sw = np.random.default_rng(2).uniform(0.2, 3.0, len(y)) if weighted else None
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    kw = dict(criterion="absolute_error", **settings)
    ours = fi.RandomForestRegressor(**SINGLE, monotonic_cst=cst, **kw).fit(X, y, sw)
    theirs = DecisionTreeRegressor(random_state=0, monotonic_cst=cst, **kw).fit(X, y, sw)
    _assert_same_tree(ours, theirs, Xt, "max_leaf_nodes" in settings)
    # The constraint changed the tree (else this would test nothing).
    free = fi.RandomForestRegressor(**SINGLE, **kw).fit(X, y, sw)
    assert np.abs(free.predict(Xt) - ours.predict(Xt)).max() > 1e-3


def test_monotonic_tree_with_missing_values_is_scikit_learns():
    X, y = _data()
    X[np.random.default_rng(7).random(X.shape) < 0.1] = np.nan
    sw = np.random.default_rng(2).uniform(0.2, 3.0, len(y))
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    Xt[np.random.default_rng(3).random(Xt.shape) < 0.1] = np.nan
    kw = dict(criterion="absolute_error", monotonic_cst=CSTS[0], min_samples_leaf=5)
    ours = fi.RandomForestRegressor(**SINGLE, **kw).fit(X, y, sw)
    theirs = DecisionTreeRegressor(random_state=0, **kw).fit(X, y, sw)
    np.testing.assert_array_equal(
        ours.estimators_[0].tree_.missing_go_to_left, theirs.tree_.missing_go_to_left
    )
    _assert_same_tree(ours, theirs, Xt, best_first=False)


def _worst_step(predict, X: np.ndarray, cst: list[int]) -> float:
    """The most negative step of ``sign · prediction`` when one constrained feature alone
    runs over a grid beyond the data's range, from 25 rows of X, over the features."""
    grid = np.linspace(-0.1, 1.1, 49)
    worst = np.inf
    for j, sign in enumerate(cst):
        if sign == 0:
            continue
        Z = np.repeat(X[:25], len(grid), axis=0)
        Z[:, j] = np.tile(grid, 25)
        steps = np.diff(predict(Z).reshape(25, len(grid)), axis=1) * sign
        worst = min(worst, float(steps.min()))
    return worst


@pytest.mark.parametrize(
    "name", ["RandomForest", "ExtraTrees", "RandomPatches", "TotallyRandomizedTrees"]
)
@pytest.mark.parametrize("data", ["complete", "nan", "sparse"])
def test_monotonic_forests_are_monotone(name, data):
    X, y = _data(300)
    if data == "nan":
        X = np.where(np.random.default_rng(4).random(X.shape) < 0.1, np.nan, X)
    if data == "sparse":
        X = sp.csr_matrix(np.where(X < 0.4, 0.0, X))
    sw = np.random.default_rng(3).uniform(0.2, 3.0, len(y))
    cls = getattr(fi, name + "Regressor")
    Xg = _data(300)[0]

    def fit(cst):
        est = cls(15, criterion="absolute_error", random_state=0, monotonic_cst=cst)
        return est.fit(X, y, sw)

    cst = CSTS[0]
    assert _worst_step(fit(None).predict, Xg, cst) < -1e-3  # the free forest is not monotone
    assert _worst_step(fit(cst).predict, Xg, cst) >= 0.0


def test_monotonic_model_bytes_round_trip_and_do_not_depend_on_threads():
    X, y = _data(200)
    kw = dict(criterion="absolute_error", random_state=0, monotonic_cst=CSTS[1])
    one = fi.ExtraTreesRegressor(6, n_jobs=1, **kw).fit(X, y)
    two = fi.ExtraTreesRegressor(6, n_jobs=2, **kw).fit(X, y)
    data = one.forest_.to_bytes()
    assert data == two.forest_.to_bytes()
    assert data[4] == 5
    back = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(back.predict(X), one.predict(X))


# -------------------------------------------------------------------------- several outputs
def _outputs(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """``k`` heavy-tailed outputs whose medians move with different features."""
    rng = np.random.default_rng(11)
    cols = [y, -2 * X[:, 3] + rng.standard_t(2, len(y)), X[:, 1] * 4 + rng.laplace(size=len(y))]
    return np.column_stack(cols[:k])


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(
    "settings",
    [*SETTINGS, dict(min_samples_leaf=4, min_samples_split=12, ccp_alpha=0.01)],
    ids=lambda s: ",".join(s),
)
def test_multi_output_tree_is_scikit_learns(settings, weighted, k):
    X, y = _data()
    Y = _outputs(X, y, k)
    sw = np.random.default_rng(2).uniform(0.2, 3.0, len(y)) if weighted else None
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    kw = dict(criterion="absolute_error", **settings)
    ours = fi.RandomForestRegressor(**SINGLE, **kw).fit(X, Y, sw)
    theirs = DecisionTreeRegressor(random_state=0, **kw).fit(X, Y, sw)
    assert ours.predict(Xt).shape == theirs.predict(Xt).shape == (500, k)
    _assert_same_tree(ours, theirs, Xt, "max_leaf_nodes" in settings)


def test_multi_output_tree_with_missing_values_is_scikit_learns():
    X, y = _data()
    Y = _outputs(X, y, 2)
    X[np.random.default_rng(7).random(X.shape) < 0.1] = np.nan
    Y[:, 0] += 2 * np.isnan(X[:, 0])
    sw = np.random.default_rng(2).uniform(0.2, 3.0, len(y))
    Xt = np.random.default_rng(1).random((500, 5)).astype(np.float32)
    Xt[np.random.default_rng(3).random(Xt.shape) < 0.1] = np.nan
    kw = dict(criterion="absolute_error", min_samples_leaf=5)
    ours = fi.RandomForestRegressor(**SINGLE, **kw).fit(X, Y, sw)
    theirs = DecisionTreeRegressor(random_state=0, **kw).fit(X, Y, sw)
    np.testing.assert_array_equal(
        ours.estimators_[0].tree_.missing_go_to_left, theirs.tree_.missing_go_to_left
    )
    _assert_same_tree(ours, theirs, Xt, best_first=False)


def test_multi_output_forest_is_scikit_learns():
    X, y = _data()
    Y = _outputs(X, y, 3)
    Xt = np.random.default_rng(4).random((300, 5)).astype(np.float32)
    kw = dict(criterion="absolute_error", bootstrap=False, max_features=None, min_samples_leaf=5)
    ours = fi.RandomForestRegressor(4, random_state=0, **kw).fit(X, Y)
    theirs = SkForest(4, random_state=0, **kw).fit(X, Y)
    np.testing.assert_allclose(ours.predict(Xt), theirs.predict(Xt), rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("name", ["ExtraTrees", "RandomPatches", "RandomForest"])
@pytest.mark.parametrize("nan", [False, True], ids=["complete", "nan"])
def test_every_multi_output_node_holds_its_rows_medians(name, nan):
    """Random thresholds and bootstrap weights have no scikit-learn twin: each node's
    values and impurity against its training rows (with NaN, the rows the learned sides
    send there): each output's weighted median, and the mean of their deviations."""
    X, y = _data(150, seed=5)
    Y = _outputs(X, y, 3)
    if nan:
        X[np.random.default_rng(9).random(X.shape) < 0.15] = np.nan
    sw = np.random.default_rng(6).integers(1, 4, len(y)).astype(float)
    est = getattr(fi, name + "Regressor")(4, criterion="absolute_error", random_state=0)
    est.fit(X, Y, sample_weight=sw)
    for k, tree in enumerate(est.estimators_):
        w = sw * fi._core.in_bag_counts(est.forest_, k)
        path = tree.decision_path(X).toarray().astype(bool)
        t = tree.tree_
        for node in range(t.node_count):
            rows = path[:, node] & (w > 0)
            m = [_weighted_median(Y[rows, j], w[rows]) for j in range(3)]
            dev = np.sum(w[rows, None] * np.abs(Y[rows] - m)) / (3 * np.sum(w[rows]))
            np.testing.assert_allclose(t.value[node, :, 0], m, rtol=1e-12, atol=1e-12)
            assert t.impurity[node] == pytest.approx(dev, rel=1e-9, abs=1e-12)


def test_multi_output_sparse_x_grows_the_dense_forest():
    X, y = _data(200)
    Y = _outputs(X, y, 2)
    Xd = np.where(X < 0.4, 0.0, X)
    for cls in (fi.RandomForestRegressor, fi.ExtraTreesRegressor):
        dense = cls(4, criterion="absolute_error", random_state=0).fit(Xd, Y)
        sparse = cls(4, criterion="absolute_error", random_state=0).fit(sp.csr_matrix(Xd), Y)
        assert dense.forest_.to_bytes() == sparse.forest_.to_bytes()


def test_multi_output_model_bytes_are_version_6_and_round_trip():
    X, y = _data(200)
    Y = _outputs(X, y, 2)
    kw = dict(criterion="absolute_error", random_state=0, max_features=2)
    one = fi.RandomForestRegressor(5, n_jobs=1, **kw).fit(X, Y)
    two = fi.RandomForestRegressor(5, n_jobs=2, **kw).fit(X, Y)
    data = one.forest_.to_bytes()
    assert data == two.forest_.to_bytes()
    assert data[4] == 6 < fi._core.FORMAT_VERSION
    back = pickle.loads(pickle.dumps(one))
    np.testing.assert_array_equal(back.predict(X), one.predict(X))
    np.testing.assert_array_equal(back.feature_importances_, one.feature_importances_)
    a, b = back.estimators_[2].tree_, one.estimators_[2].tree_
    np.testing.assert_array_equal(a.impurity, b.impurity)
    np.testing.assert_array_equal(a.value, b.value)


def test_mdi_by_output_is_refused():
    """The shares of the outputs need each output's impurity; the nodes keep their mean."""
    from forestimp.importance import mdi

    X, y = _data(80)
    est = fi.RandomForestRegressor(3, criterion="absolute_error", random_state=0)
    est.fit(X, _outputs(X, y, 2))
    assert mdi(est).importances_mean.shape == (5,)
    with pytest.raises(InvalidParameterError, match="by output"):
        mdi(est, by_output=True)


def test_monotonic_cst_with_several_outputs_is_refused_as_scikit_learn():
    X, y = _data(60)
    Y = _outputs(X, y, 2)
    kw = dict(criterion="absolute_error", monotonic_cst=CSTS[0])
    with pytest.raises(InvalidParameterError) as ours:
        fi.RandomForestRegressor(2, **kw).fit(X, Y)
    with pytest.raises(ValueError) as theirs:
        DecisionTreeRegressor(**kw).fit(X, Y)
    assert str(ours.value) == str(theirs.value)


def test_poisson_still_refuses_several_outputs():
    X, y = _data(60)
    with pytest.raises(InvalidParameterError, match="multi-output"):
        fi.RandomForestRegressor(2, criterion="poisson").fit(X, np.c_[np.abs(y), np.abs(y)])

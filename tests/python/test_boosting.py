"""Gradient boosting (forestimp.boosting): parity with scikit-learn's GradientBoosting*,
the losses against a NumPy reference, staged predictions, early stopping, warm start,
determinism across n_jobs and typed errors. The contract checks are in
test_boosting_contract.py."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingClassifier as SkGBC
from sklearn.ensemble import GradientBoostingRegressor as SkGBR

import forestimp as fi
from forestimp.exceptions import DataError, InvalidParameterError


def _data(n=160, p=5, seed=0):
    rng = np.random.RandomState(seed)
    # float32-representable values: scikit-learn fits on float32 X, so thresholds agree.
    X = rng.normal(size=(n, p)).astype(np.float32).astype(np.float64)
    y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(scale=0.3, size=n)
    return X, y


def _same_trees(sk_trees, booster, X):
    """Every tree splits on the same features at the same thresholds, with the same rows
    in every leaf."""
    ours = booster.apply(X)  # (n, rounds, K)
    for (r, k), tree in np.ndenumerate(sk_trees):
        t = tree.tree_
        split = t.feature >= 0
        assert booster.node_counts()[r * sk_trees.shape[1] + k] == t.node_count, (r, k)
        sk_leaf = tree.apply(X.astype(np.float32))
        # Same partition of the rows into leaves (node ids are both pre-order here).
        np.testing.assert_array_equal(ours[:, r, k], sk_leaf)
        assert split.any() or t.node_count == 1


REG_KW = {"n_estimators": 25, "max_depth": 3, "min_samples_leaf": 5, "random_state": 0}


@pytest.mark.parametrize("loss", ["squared_error", "huber"])
def test_regression_parity_with_sklearn(loss):
    X, y = _data()
    sk = SkGBR(loss=loss, **REG_KW).fit(X, y)
    ours = fi.GradientBoostingRegressor(loss=loss, **REG_KW).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.train_score_, sk.train_score_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.feature_importances_, sk.feature_importances_, atol=1e-9)
    _same_trees(sk.estimators_, ours.booster_, X)


@pytest.mark.parametrize("loss", ["absolute_error", "quantile"])
def test_regression_parity_two_valued_gradients(loss):
    # Their gradients take two values: with unit weights many splits tie (equal counts of
    # each sign), and scikit-learn splits some nodes whose gradients are all equal when
    # rounding leaves a variance above its epsilon (here they are leaves). Continuous
    # sample weights break the ties; shallow trees avoid the constant nodes.
    X, y = _data()
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=len(y))
    kw = {"n_estimators": 20, "max_depth": 2, "min_samples_leaf": 5, "random_state": 0}
    sk = SkGBR(loss=loss, alpha=0.7, **kw).fit(X, y, sample_weight=w)
    ours = fi.GradientBoostingRegressor(loss=loss, alpha=0.7, **kw).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.train_score_, sk.train_score_, rtol=1e-9)
    _same_trees(sk.estimators_, ours.booster_, X)


@pytest.mark.parametrize("loss, n_classes", [("log_loss", 2), ("log_loss", 3), ("exponential", 2)])
def test_classification_parity_with_sklearn(loss, n_classes):
    X, _ = _data()
    score = X[:, 0] + 0.7 * X[:, 1] - 0.5 * X[:, 2]
    y = np.digitize(score, [0.0] if n_classes == 2 else [-0.6, 0.6])
    # At the first round the gradients take two values, so with unit weights splits with
    # equal class counts tie (broken by scikit-learn's random feature order); continuous
    # weights break the ties.
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=len(y))
    kw = {"n_estimators": 20, "max_depth": 3, "min_samples_leaf": 5, "random_state": 0}
    sk = SkGBC(loss=loss, **kw).fit(X, y, sample_weight=w)
    ours = fi.GradientBoostingClassifier(loss=loss, **kw).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.decision_function(X), sk.decision_function(X), atol=1e-9)
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    np.testing.assert_allclose(ours.train_score_, sk.train_score_, rtol=1e-9)
    np.testing.assert_allclose(ours.feature_importances_, sk.feature_importances_, atol=1e-9)
    _same_trees(sk.estimators_, ours.booster_, X)


def test_sample_weights_parity_with_sklearn():
    X, y = _data()
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=len(y))
    for loss in ["squared_error", "huber", "absolute_error"]:
        kw = {"loss": loss, "n_estimators": 3, "max_depth": 2, "min_samples_leaf": 5}
        sk = SkGBR(random_state=0, **kw).fit(X, y, sample_weight=w)
        ours = fi.GradientBoostingRegressor(random_state=0, **kw).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(ours.predict(X), sk.predict(X), atol=1e-9, err_msg=loss)


# ------------------------------------------------------------------ NumPy reference
def _wq(values, weights, q):
    """The weighted inverted-CDF quantile (scikit-learn's _weighted_percentile)."""
    return np.quantile(values, q, method="inverted_cdf", weights=weights)


@pytest.mark.parametrize("loss", ["squared_error", "absolute_error", "huber", "quantile"])
def test_regression_leaf_values_against_numpy(loss):
    # One stump with learning_rate=1: prediction = init + the leaf's line-searched value.
    X, y = _data(n=60)
    w = np.random.RandomState(2).uniform(0.5, 2.0, size=len(y))
    alpha = 0.8
    est = fi.GradientBoostingRegressor(
        loss=loss, alpha=alpha, n_estimators=1, max_depth=1, learning_rate=1.0, random_state=0
    ).fit(X, y, sample_weight=w)
    init = {
        "squared_error": np.average(y, weights=w),
        "absolute_error": _wq(y, w, 0.5),
        "huber": _wq(y, w, 0.5),
        "quantile": _wq(y, w, alpha),
    }[loss]
    assert est.init_[0] == pytest.approx(init, abs=1e-12)
    leaves = est.apply(X)[:, 0]
    r = y - init
    delta = _wq(np.abs(r), w, alpha)
    expected = np.empty(len(y))
    for leaf in np.unique(leaves):
        s = leaves == leaf
        rs, ws = r[s], w[s]
        if loss == "squared_error":
            v = np.average(rs, weights=ws)
        elif loss == "absolute_error":
            v = _wq(rs, ws, 0.5)
        elif loss == "quantile":
            v = _wq(rs, ws, alpha)
        else:
            m = _wq(rs, ws, 0.5)
            d = rs - m
            v = m + np.average(np.sign(d) * np.minimum(delta, np.abs(d)), weights=ws)
        expected[s] = init + v
    np.testing.assert_allclose(est.predict(X), expected, atol=1e-12)


@pytest.mark.parametrize("loss, n_classes", [("log_loss", 2), ("exponential", 2), ("log_loss", 3)])
def test_classification_leaf_values_against_numpy(loss, n_classes):
    X, _ = _data(n=90)
    y = np.arange(len(X)) % n_classes
    w = np.random.RandomState(3).uniform(0.5, 2.0, size=len(y))
    est = fi.GradientBoostingClassifier(
        loss=loss, n_estimators=1, max_depth=1, learning_rate=1.0, random_state=0
    ).fit(X, y, sample_weight=w)
    prior = np.bincount(y, weights=w) / w.sum()
    K = 1 if n_classes == 2 else n_classes
    if loss == "exponential":
        init = np.array([0.5 * np.log(prior[1] / prior[0])])
    elif K == 1:
        init = np.array([np.log(prior[1] / prior[0])])
    else:
        init = np.log(prior) - np.log(prior).mean()
    np.testing.assert_allclose(est.init_, init, atol=1e-12)
    leaves = est.apply(X)[:, 0, :]
    raw = np.tile(init, (len(y), 1))
    for k in range(K):
        t = (y == (k if K > 1 else 1)).astype(float)
        if loss == "exponential":
            s = 2 * t - 1
            g = s * np.exp(-s * init[0])  # negative gradient
            h = np.exp(-s * init[0])
            num_scale = 1.0
        else:
            p = np.exp(init) / np.exp(init).sum() if K > 1 else 1 / (1 + np.exp(-init))
            g = t - p[k if K > 1 else 0]
            h = (t - g) * (1 - (t - g))
            num_scale = (K - 1) / K if K > 1 else 1.0
        for leaf in np.unique(leaves[:, k]):
            s_ = leaves[:, k] == leaf
            num = np.average(g[s_], weights=w[s_]) * num_scale
            raw[s_, k] += num / np.average(h[s_], weights=w[s_])
    got = est.decision_function(X)
    np.testing.assert_allclose(got.reshape(len(y), -1), raw, atol=1e-12)


# -------------------------------------------------------------- staged, early stop
def test_staged_predictions_are_truncated_models():
    X, y = _data()
    est = fi.GradientBoostingRegressor(n_estimators=30, subsample=0.8, random_state=3).fit(X, y)
    staged = list(est.staged_predict(X))
    assert len(staged) == 30
    for k in (1, 7, 30):
        short = fi.GradientBoostingRegressor(n_estimators=k, subsample=0.8, random_state=3)
        np.testing.assert_array_equal(staged[k - 1], short.fit(X, y).predict(X))
    yc = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    clf = fi.GradientBoostingClassifier(n_estimators=12, random_state=0).fit(X, yc)
    probas = list(clf.staged_predict_proba(X))
    np.testing.assert_array_equal(probas[-1], clf.predict_proba(X))
    np.testing.assert_array_equal(list(clf.staged_predict(X))[-1], clf.predict(X))


@pytest.mark.parametrize("classifier", [False, True])
def test_early_stopping_halts_where_sklearn_does(classifier):
    X, y = _data(n=300, seed=4)
    kw = {
        "n_estimators": 500,
        "n_iter_no_change": 4,
        "validation_fraction": 0.25,
        "tol": 1e-3,
        "learning_rate": 0.3,
        "min_samples_leaf": 5,
        "random_state": 7,
    }
    if classifier:
        y = (y > np.median(y)).astype(int)
        sk, ours = SkGBC(**kw).fit(X, y), fi.GradientBoostingClassifier(**kw).fit(X, y)
    else:
        sk, ours = SkGBR(**kw).fit(X, y), fi.GradientBoostingRegressor(**kw).fit(X, y)
    assert 1 < sk.n_estimators_ < 500
    assert ours.n_estimators_ == sk.n_estimators_
    np.testing.assert_allclose(ours.train_score_, sk.train_score_, rtol=1e-9)


def test_out_of_bag_scores():
    X, y = _data()
    est = fi.GradientBoostingRegressor(n_estimators=20, subsample=0.6, random_state=0).fit(X, y)
    assert est.oob_scores_.shape == est.oob_improvement_.shape == (20,)
    assert est.oob_score_ == est.oob_scores_[-1]
    np.testing.assert_allclose(-np.diff(est.oob_scores_), est.oob_improvement_[1:], atol=1e-12)
    assert est.oob_scores_[-1] < est.oob_scores_[0]
    full = fi.GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    assert not hasattr(full, "oob_scores_")


# --------------------------------------------------------- determinism, warm start
def _bytes(est):
    return est.booster_.to_bytes()


@pytest.mark.parametrize("max_leaf_nodes", [None, 8])
@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_same_bytes_for_any_n_jobs(splitter, max_leaf_nodes):
    X, _ = _data(n=3000)  # above the code-list size: best-first hist keeps node bins
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5])
    kw = {
        "n_estimators": 8,
        "subsample": 0.7,
        "max_features": 3,
        "tree_features": 4,
        "splitter": splitter,
        "max_leaf_nodes": max_leaf_nodes,
        "random_state": 11,
    }
    one = fi.GradientBoostingClassifier(n_jobs=1, **kw).fit(X, y)
    two = fi.GradientBoostingClassifier(n_jobs=2, **kw).fit(X, y)
    assert _bytes(one) == _bytes(two)
    again = fi.GradientBoostingClassifier(n_jobs=2, **kw).fit(X, y)
    assert _bytes(again) == _bytes(one)


@pytest.mark.parametrize("splitter", ["hist", "best"])
def test_same_bytes_for_any_n_jobs_with_nodes_filled_in_parallel(splitter):
    # 12 000 rows × 6 features: the root and the nodes above 5462 rows have more rows ×
    # features than the 32 768 from which hist fills its bins in parallel over features, so
    # n_jobs 2 and 4 sum those bins on several threads (best-first, as the booster's hist
    # trees in the benchmark).
    X, y = _data(n=12000, p=6, seed=3)
    kw = {"n_estimators": 4, "max_leaf_nodes": 31, "splitter": splitter, "random_state": 2}
    models = [fi.GradientBoostingRegressor(n_jobs=j, **kw).fit(X, y) for j in (1, 2, 4)]
    assert len({_bytes(m) for m in models}) == 1
    classes = np.digitize(y, np.quantile(y, [0.3, 0.7]))  # multinomial: 3 trees a round
    models = [fi.GradientBoostingClassifier(n_jobs=j, **kw).fit(X, classes) for j in (1, 2, 4)]
    assert len({_bytes(m) for m in models}) == 1
    assert (
        models[0].booster_.to_bytes()
        != fi.GradientBoostingClassifier(n_jobs=1, **{**kw, "random_state": 3, "subsample": 0.5})
        .fit(X, classes)
        .booster_.to_bytes()
    )


def test_warm_start_continues_exactly():
    X, y = _data()
    kw = {"subsample": 0.8, "max_features": 2, "loss": "huber", "random_state": 5}
    est = fi.GradientBoostingRegressor(n_estimators=10, warm_start=True, **kw).fit(X, y)
    est.set_params(n_estimators=25).fit(X, y)
    once = fi.GradientBoostingRegressor(n_estimators=25, **kw).fit(X, y)
    assert _bytes(est) == _bytes(once)
    np.testing.assert_array_equal(est.predict(X), once.predict(X))
    with pytest.raises(InvalidParameterError, match="larger or equal"):
        est.set_params(n_estimators=5).fit(X, y)


def test_pickle_and_damaged_bytes():
    import pickle

    from forestimp.exceptions import ModelFormatError

    X, _ = _data()
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    est = fi.GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X, y)
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    raw = bytearray(_bytes(est))
    raw[len(raw) // 2] ^= 0xFF
    with pytest.raises(ModelFormatError):
        fi._core.Booster.from_bytes(bytes(raw))
    with pytest.raises(ModelFormatError):
        fi._core.Booster.from_bytes(_bytes(est)[:-3])


def test_missing_values_as_in_the_forests():
    X, y = _data()
    X = X.copy()
    X[::7, 0] = np.nan
    est = fi.GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    assert np.isfinite(est.predict(X)).all()
    # splitter="hist": NaN has its own bin (test_hist_missing.py has the exact trees).
    hist = fi.GradientBoostingRegressor(n_estimators=10, splitter="hist", random_state=0)
    assert np.isfinite(hist.fit(X, y).predict(X)).all()
    assert hist.__sklearn_tags__().input_tags.allow_nan


@pytest.mark.parametrize(
    "params",
    [
        {"learning_rate": -0.1},
        {"n_estimators": 0},
        {"subsample": 0.0},
        {"subsample": 1.5},
        {"loss": "poisson"},
        {"loss": "huber", "alpha": 1.0},
        {"max_depth": 0},
        {"validation_fraction": 1.0},
        {"n_iter_no_change": 0},
        {"splitter": "multiway"},
        {"init": "mean"},
        {"max_features": 99},
    ],
)
def test_bad_parameters_are_typed(params):
    X, y = _data(n=40)
    with pytest.raises(InvalidParameterError):
        fi.GradientBoostingRegressor(**params).fit(X, y)


def test_bad_input_is_typed():
    X, y = _data(n=40)
    with pytest.raises(ValueError):
        fi.GradientBoostingRegressor().fit(X, np.full(len(y), np.nan))
    with pytest.raises(InvalidParameterError, match="exponential"):
        fi.GradientBoostingClassifier(loss="exponential").fit(X, np.arange(40) % 3)
    with pytest.raises(DataError, match="class"):
        fi.GradientBoostingClassifier().fit(X, np.zeros(40))
    est = fi.GradientBoostingRegressor(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError):
        est.predict(X[:, :3])


@pytest.mark.parametrize("classifier", [False, True])
def test_save_and_load_as_data(tmp_path, classifier):
    from forestimp.exceptions import ModelFormatError
    from forestimp.persistence import dumps, loads

    X, y = _data()
    if classifier:
        y = np.where(y > 0.5, "high", "low")
        est = fi.GradientBoostingClassifier(n_estimators=6, subsample=0.8, random_state=2)
    else:
        est = fi.GradientBoostingRegressor(n_estimators=6, loss="quantile", random_state=2)
    est.set_params(warm_start=True).fit(X, y)
    est.save(tmp_path / "gb.fimp")
    back = fi.load(tmp_path / "gb.fimp")
    assert type(back) is type(est)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_array_equal(back.train_score_, est.train_score_)
    assert back.booster_.to_bytes() == est.booster_.to_bytes()
    # A loaded model warm-starts exactly as the original.
    back.set_params(n_estimators=9).fit(X, y)
    est.set_params(n_estimators=9).fit(X, y)
    assert back.booster_.to_bytes() == est.booster_.to_bytes()
    data = bytearray(dumps(est))
    data[-5] ^= 0x10
    with pytest.raises(ModelFormatError):
        loads(bytes(data))


def test_boosting_guide_example_runs(capsys):
    from test_docs import run_guide

    run_guide("boosting.md", 1)
    out = capsys.readouterr().out
    assert "same predictions: True" in out and "same importances: True" in out, out


def test_estimators_are_sklearn_trees_of_the_model():
    X, _ = _data()
    y = np.digitize(X[:, 0] - X[:, 1], [-0.5, 0.5])
    est = fi.GradientBoostingClassifier(n_estimators=7, max_leaf_nodes=6, random_state=0)
    est.fit(X, y)
    trees = est.estimators_
    assert trees.shape == (7, 3)
    raw = est.init_ + est.learning_rate * np.stack(
        [sum(t.predict(X) for t in trees[:, k]) for k in range(3)], axis=1
    )
    np.testing.assert_allclose(raw, est.decision_function(X), atol=1e-12)
    # Each tree's MDI is the engine's (scikit-learn's feature_importances_ normalizes it).
    per_tree = est.tree_importances()
    for (r, k), tree in np.ndenumerate(trees):
        imp = tree.tree_.compute_feature_importances(normalize=False)
        np.testing.assert_allclose(imp, per_tree[r, k], atol=1e-12)


def test_split_importances_against_the_sklearn_trees():
    X, _ = _data()
    y = np.digitize(X[:, 0] + X[:, 3], [-0.5, 0.5])
    est = fi.GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    gain = np.zeros((3, X.shape[1]))
    count = np.zeros((3, X.shape[1]))
    cover = np.zeros((3, X.shape[1]))
    for (_, k), tree in np.ndenumerate(est.estimators_):
        t = tree.tree_
        for node in np.flatnonzero(t.feature >= 0):
            left, right, j = t.children_left[node], t.children_right[node], t.feature[node]
            w = t.weighted_n_node_samples
            gain[k, j] += (
                w[node] * t.impurity[node]
                - w[left] * t.impurity[left]
                - w[right] * t.impurity[right]
            )
            count[k, j] += 1
            cover[k, j] += w[node]
    np.testing.assert_allclose(est.split_importances("gain", per_class=True), gain, atol=1e-9)
    np.testing.assert_array_equal(est.split_importances("split"), count.sum(axis=0))
    mean_cover = np.divide(cover.sum(0), count.sum(0), out=np.zeros(5), where=count.sum(0) > 0)
    np.testing.assert_allclose(est.split_importances("cover"), mean_cover)
    with pytest.raises(InvalidParameterError):
        est.split_importances("weight")


@pytest.mark.parametrize("loss", ["absolute_error", "huber", "quantile", "squared_error"])
def test_rounds_of_zero_weight_rows_add_nothing(loss):
    # With 95 % zero weights and 5 % of the rows per round, some rounds draw only
    # zero-weight rows: their trees must add 0, not NaN (their in-bag loss, a mean over
    # zero weight, is NaN; scikit-learn raises ZeroDivisionError there).
    X, y = _data(n=200)
    w = np.zeros(len(y))
    w[::20] = 1.0
    est = fi.GradientBoostingRegressor(loss=loss, n_estimators=30, subsample=0.05, random_state=1)
    est.fit(X, y, sample_weight=w)
    assert np.isfinite(est.predict(X)).all()
    assert np.isnan(est.train_score_).any() and np.isfinite(est.train_score_).any()


def test_init_estimator_parity_with_sklearn():
    from sklearn.linear_model import LinearRegression, LogisticRegression

    X, y = _data()
    X = X.astype(np.float32)  # scikit-learn fits and applies the init model on float32 X
    w = np.random.RandomState(1).uniform(0.2, 3.0, size=len(y))
    kw = {"n_estimators": 10, "max_depth": 2, "min_samples_leaf": 5, "random_state": 0}
    sk = SkGBR(init=LinearRegression(), **kw).fit(X, y, sample_weight=w)
    ours = fi.GradientBoostingRegressor(init=LinearRegression(), **kw).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), atol=1e-9)
    staged = list(ours.staged_predict(X))
    np.testing.assert_allclose(staged[-1], ours.predict(X), atol=1e-12)
    assert isinstance(ours.init_, LinearRegression)
    for n_classes, loss in [(2, "log_loss"), (2, "exponential"), (3, "log_loss")]:
        yc = np.digitize(X[:, 0] + X[:, 1], [0.0] if n_classes == 2 else [-0.6, 0.6])
        init = LogisticRegression(C=0.5)
        sk = SkGBC(init=init, loss=loss, **kw).fit(X, yc, sample_weight=w)
        ours = fi.GradientBoostingClassifier(init=init, loss=loss, **kw)
        ours.fit(X, yc, sample_weight=w)
        np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-9)
    with pytest.raises(InvalidParameterError, match="init"):
        fi.GradientBoostingClassifier(init=LinearRegression()).fit(X, yc)


def test_early_stopping_with_init_estimator_and_warm_start_follows_sklearn():
    from sklearn.linear_model import LinearRegression

    X, y = _data(n=300, seed=4)
    X = X.astype(np.float32)
    kw = {
        "n_estimators": 500,
        "n_iter_no_change": 4,
        "validation_fraction": 0.25,
        "tol": 1e-3,
        "learning_rate": 0.3,
        "min_samples_leaf": 5,
        "random_state": 7,
        "init": LinearRegression(),
    }
    sk, ours = SkGBR(**kw).fit(X, y), fi.GradientBoostingRegressor(**kw).fit(X, y)
    assert 1 < ours.n_estimators_ == sk.n_estimators_ < 500
    for est in (sk, ours):
        est.set_params(warm_start=True, n_estimators=est.n_estimators_ + 5).fit(X, y)
    assert ours.n_estimators_ == sk.n_estimators_
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), atol=1e-9)


def test_selectors_accept_boosters():
    from sklearn.datasets import make_friedman1

    from forestimp.selection import RFE, Boruta, SelectFromImportance

    # Friedman #1: y depends on columns 0-4 only.
    X, y = make_friedman1(400, 15, random_state=0)
    gb = fi.GradientBoostingRegressor(n_estimators=30, random_state=0)
    boruta = Boruta(gb, random_state=0, max_iter=15)
    for selector in (SelectFromImportance(gb, threshold="mean"), boruta):
        np.testing.assert_array_equal(np.flatnonzero(selector.fit(X, y).get_support()), range(5))
    rfe = RFE(gb, step=0.2, scoring="r2", cv=3, random_state=0).fit(X, y)
    assert set(range(5)) <= set(np.flatnonzero(rfe.get_support()))


def test_importance_mdi_accepts_boosters():
    from forestimp.importance import mdi

    X, _ = _data()
    y = np.digitize(X[:, 0] + X[:, 2], [-0.5, 0.5])
    est = fi.GradientBoostingClassifier(n_estimators=6, random_state=0).fit(X, y)
    res = mdi(est, normalize=True)
    np.testing.assert_allclose(res.importances_mean, est.feature_importances_)
    assert res.importances.shape == (X.shape[1], 18)
    np.testing.assert_allclose(res.importances.sum(axis=0), 1.0)
    raw = mdi(est)
    np.testing.assert_allclose(raw.importances, est.booster_.tree_importances().T)
    with pytest.raises(InvalidParameterError):
        mdi(est, by_depth=True)


def test_held_out_permutation_importance_of_boosters():
    from forestimp._core import permutation_indices
    from forestimp.importance import permutation

    X, y = _data()
    est = fi.GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X[:100], y[:100])
    Xt, yt = X[100:], y[100:]
    res = permutation(est, Xt, yt, n_repeats=2, random_state=3)
    # The NumPy reference: R² drop with column m permuted by the measure's permutations.
    base = est.score(Xt, yt)
    for m in range(X.shape[1]):
        for r in range(2):
            Xp = Xt.copy()
            Xp[:, m] = Xt[permutation_indices(res.seed, len(yt), m, r), m]
            assert res.importances[m, r] == pytest.approx(base - est.score(Xp, yt), abs=1e-12)
    assert np.argmax(res.importances_mean) == 0  # y = 2 x0 + ...
    multi = permutation(est, Xt, yt, scoring=["r2", "neg_mean_squared_error"], random_state=3)
    np.testing.assert_allclose(multi["r2"].importances, res.importances[:, :1])
    with pytest.raises(InvalidParameterError, match="Out-of-bag"):
        permutation(est, X[:100], y[:100], oob=True)


def test_hist_scores_early_stopping_rows_with_nan():
    # The held-out rows are predicted like any X with NaN (they were refused before NaN
    # had a bin); the rounds stop on their loss.
    X, y = _data(n=100)
    X = X.copy()
    X[:, 1] = np.where(np.arange(100) % 50 == 7, np.nan, X[:, 1])
    est = fi.GradientBoostingRegressor(
        splitter="hist", n_iter_no_change=2, validation_fraction=0.5, random_state=0
    ).fit(X, y)
    assert est.n_estimators_ < 100
    assert np.isfinite(est.predict(X)).all()


def test_tied_columns_binned_as_scikit_learn_sorts_them():
    """Coded columns (few levels, and one of 600 levels: wide codes) are summed in bins by
    the booster instead of the sorted scan; with cuts that tie nowhere the trees are
    scikit-learn's, so the predictions agree to rounding."""
    rng = np.random.default_rng(3)
    n = 3000
    X = np.column_stack(
        [rng.integers(0, 5, n), rng.integers(0, 2, n), rng.integers(0, 600, n)]
    ).astype(np.float64)
    y = X[:, 0] * 1.3 + np.sin(X[:, 2] / 50.0) + 0.7 * X[:, 1] + rng.normal(0, 0.3, n)
    params = dict(n_estimators=30, max_depth=3, random_state=0)
    ours = fi.GradientBoostingRegressor(**params).fit(X, y)
    theirs = SkGBR(**params).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("cls", [fi.GradientBoostingRegressor, fi.GradientBoostingClassifier])
def test_criterion_is_accepted_and_ignored_as_scikit_learn_does(cls):
    """scikit-learn 1.9 accepts ``criterion`` with a FutureWarning and ignores it: a grid
    search written for it raised TypeError here."""
    rng = np.random.RandomState(0)
    X = rng.rand(80, 3)
    y = (X[:, 0] > 0.5).astype(int)
    plain = cls(n_estimators=5, random_state=0).fit(X, y)
    for criterion in ("friedman_mse", "squared_error"):
        with pytest.warns(FutureWarning, match="criterion"):
            est = cls(n_estimators=5, random_state=0, criterion=criterion).fit(X, y)
        np.testing.assert_array_equal(est.predict(X), plain.predict(X))
    with pytest.raises(InvalidParameterError, match="criterion"):
        cls(criterion="gini").fit(X, y)

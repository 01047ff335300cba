"""Gradient boosting's rounds as scikit-learn controls them: ``fit(..., monitor=)``, called
after every round with the model so far and able to end the fit, and a warm start that
continues on other rows (the kept rounds' raw predictions of the new X, then new rounds
fitted to its residuals)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor as SkGBR
from test_boosting import REG_KW, _bytes, _data, _same_trees

import forestimp as fi
from forestimp.exceptions import InvalidParameterError


@pytest.mark.parametrize("loss", ["squared_error", "huber"])
def test_warm_start_on_other_rows_follows_sklearn(loss):
    # scikit-learn's warm start on other rows: the kept rounds' raw predictions of X2, then
    # new rounds fitted to X2's residuals. With all rows and features and no ties both
    # libraries grow the same trees, so the continued models agree tree by tree.
    X1, y1 = _data(seed=0)
    X2, y2 = _data(n=200, seed=3)
    kw = {**REG_KW, "loss": loss, "n_estimators": 10, "warm_start": True}
    sk = SkGBR(**kw).fit(X1, y1)
    ours = fi.GradientBoostingRegressor(**kw).fit(X1, y1)
    sk.set_params(n_estimators=25).fit(X2, y2)
    ours.set_params(n_estimators=25).fit(X2, y2)
    assert ours.n_estimators_ == sk.n_estimators_ == 25
    for X in (X1, X2):
        np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.train_score_, sk.train_score_, rtol=1e-9, atol=1e-12)
    _same_trees(sk.estimators_, ours.booster_, X2)
    # The first 10 rounds are the first fit's, unchanged.
    first = fi.GradientBoostingRegressor(**{**kw, "warm_start": False}).fit(X1, y1)
    staged = list(ours.staged_predict(X2))
    np.testing.assert_array_equal(staged[9], first.predict(X2))


# ------------------------------------------------------------------------- monitor
def test_monitor_stops_as_sklearn():
    # monitor(i, est, locals) after round i; True keeps i + 1 rounds (n_estimators_).
    X, y = _data()
    stop_at = 6

    def monitor(i, est, frame):
        return i == stop_at

    kw = {**REG_KW, "n_estimators": 20}
    sk = SkGBR(**kw).fit(X, y, monitor=monitor)
    ours = fi.GradientBoostingRegressor(**kw).fit(X, y, monitor=monitor)
    assert ours.n_estimators_ == sk.n_estimators_ == stop_at + 1
    assert len(ours.train_score_) == len(sk.train_score_) == stop_at + 1
    np.testing.assert_allclose(ours.predict(X), sk.predict(X), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.train_score_, sk.train_score_, rtol=1e-9, atol=1e-12)
    seven = fi.GradientBoostingRegressor(**{**kw, "n_estimators": stop_at + 1}).fit(X, y)
    for a, b in zip(ours.staged_predict(X), seven.staged_predict(X), strict=True):
        np.testing.assert_array_equal(a, b)


def test_monitor_sees_the_model_so_far():
    X, y = _data()
    classes = np.digitize(y, [-1.0, 1.0])
    kw = {"n_estimators": 12, "subsample": 0.7, "max_features": 3, "random_state": 2}
    seen = []

    def monitor(i, est, frame):
        assert frame["i"] == i and frame["self"] is est and frame["X"].shape == X.shape
        seen.append((i, est.n_estimators_, len(est.train_score_), est.predict_proba(X)))
        return i == 4

    est = fi.GradientBoostingClassifier(**kw).fit(X, classes, monitor=monitor)
    n = est.n_estimators_
    assert n == 5 and [s[:3] for s in seen] == [(i, i + 1, i + 1) for i in range(n)]
    again = fi.GradientBoostingClassifier(**{**kw, "n_estimators": n}).fit(X, classes)
    np.testing.assert_array_equal(est.predict_proba(X), again.predict_proba(X))
    np.testing.assert_array_equal(est.train_score_, again.train_score_)
    np.testing.assert_array_equal(est.oob_scores_, again.oob_scores_)
    for (_, _, _, proba), staged in zip(seen, again.staged_predict_proba(X), strict=True):
        np.testing.assert_array_equal(proba, staged)


def test_monitor_errors_propagate_and_a_false_monitor_keeps_every_round():
    X, y = _data()

    def boom(i, est, frame):
        if i == 2:
            raise ValueError("monitor says no")
        return False

    with pytest.raises(ValueError, match="monitor says no"):
        fi.GradientBoostingRegressor(n_estimators=5).fit(X, y, monitor=boom)
    est = fi.GradientBoostingRegressor(n_estimators=5, random_state=0)
    plain = _bytes(fi.GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y))
    assert _bytes(est.fit(X, y, monitor=lambda i, e, f: False)) == plain
    with pytest.raises(InvalidParameterError, match="monitor"):
        est.fit(X, y, monitor=3)


# ------------------------------------------------------------ best-first hist trees
def _tied_table(seed, n=3000):
    # A continuous column, one with NaN, a 7-level integer column, a 600-level one: low
    # cardinality columns turn constant in small nodes.
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, 7))
    X[rng.random(n) < 0.1, 1] = np.nan
    X[:, 2] = np.floor(rng.random(n) * 7)
    X[:, 3] = np.floor(rng.random(n) * 600) / 10
    y = X[:, 0] * 2 + np.nan_to_num(X[:, 1], nan=1.5) + np.abs(X[:, 2] - 3) + rng.random(n)
    return X, (y > 3).astype(int) + (y > 5)


@pytest.mark.parametrize("seed", range(4))
def test_best_first_hist_trees_route_rows_as_they_were_grown(seed):
    # Best-first trees split small nodes from code lists. A column found constant in a node
    # is left out of that node's list partition, and a later node of the subtree that does
    # not draw it (max_features < p) must leave it out too: partitioning its stale list
    # once crashed the fit or mixed rows up. The training loss, summed over the rows as
    # growth left them in the leaves, must then equal the loss of the trees' own routing.
    X, y = _tied_table(seed)
    kw = {"splitter": "hist", "max_leaf_nodes": 9, "max_depth": None, "max_features": 5}
    gb = fi.GradientBoostingClassifier(n_estimators=6, random_state=seed, **kw).fit(X, y)
    proba = np.clip(gb.predict_proba(X), 1e-300, None)
    log_loss = -np.mean(np.log(proba[np.arange(len(y)), y]))
    np.testing.assert_allclose(gb.train_score_[-1], log_loss, rtol=1e-10)
    two = fi.GradientBoostingClassifier(n_estimators=6, random_state=seed, n_jobs=2, **kw)
    assert _bytes(two.fit(X, y)) == _bytes(gb)

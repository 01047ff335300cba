"""Quantile regression forests (issue #53): ``store_leaf_values`` and ``predict_quantiles``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import forestimp as fi
from forestimp.exceptions import DataError, InvalidParameterError


def data(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Heteroscedastic: the noise grows with x0."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 3))
    y = 2 * X[:, 0] + X[:, 0] * rng.normal(size=n) + 0.1 * X[:, 1]
    return X, y


def test_quantiles_are_numpys_of_the_targets_the_leaves_hold():
    # Extra-Trees without bootstrap, fully grown on distinct rows: one training row a leaf,
    # so a row's weights are whole (the trees whose leaf is that row) and its quantiles
    # are numpy's of the training targets repeated that often.
    X, y = data(120)
    est = fi.ExtraTreesRegressor(n_estimators=15, random_state=0, store_leaf_values=True)
    est.fit(X, y)
    probe = np.random.default_rng(1).random((25, 3))
    qs = [0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0]
    leaves_train, leaves_probe = est.apply(X), est.apply(probe)
    for method in ("linear", "lower", "higher", "nearest", "midpoint"):
        got = est.predict_quantiles(probe, qs, interpolation=method)
        for r in range(len(probe)):
            repeated = np.concatenate(
                [y[leaves_train[:, t] == leaves_probe[r, t]] for t in range(15)]
            )
            want = np.quantile(repeated, qs, method=method)
            np.testing.assert_allclose(got[r], want, rtol=0, atol=1e-12, err_msg=method)


def test_a_scalar_quantile_gives_one_value_a_row_and_the_median_tracks_the_mean():
    X, y = data()
    est = fi.RandomForestRegressor(n_estimators=30, random_state=0, store_leaf_values=True)
    est.fit(X, y)
    median = est.predict_quantiles(X[:50], 0.5)
    assert median.shape == (50,)
    assert np.corrcoef(median, est.predict(X[:50]))[0, 1] > 0.9
    band = est.predict_quantiles(X[:50], [0.1, 0.9])
    assert band.shape == (50, 2) and np.all(band[:, 0] <= band[:, 1])


def test_intervals_cover_held_out_rows_and_widen_with_the_noise():
    X, y = data(3000, seed=3)
    est = fi.RandomForestRegressor(
        n_estimators=100, min_samples_leaf=5, random_state=0, n_jobs=2, store_leaf_values=True
    )
    est.fit(X[:2000], y[:2000])
    band = est.predict_quantiles(X[2000:], [0.05, 0.95])
    inside = (y[2000:] >= band[:, 0]) & (y[2000:] <= band[:, 1])
    assert 0.85 <= inside.mean() <= 0.96, inside.mean()
    width = band[:, 1] - band[:, 0]
    low, high = X[2000:, 0] < 0.3, X[2000:, 0] > 0.7
    assert width[high].mean() > 2 * width[low].mean()


def test_bytes_do_not_depend_on_n_jobs_and_survive_pickles_and_files(tmp_path):
    X, y = data()
    w = np.random.default_rng(2).random(len(y)) + 0.5
    kw = dict(n_estimators=12, random_state=0, store_leaf_values=True)
    one = fi.RandomForestRegressor(**kw, n_jobs=1).fit(X, y, sample_weight=w)
    two = fi.RandomForestRegressor(**kw, n_jobs=2).fit(X, y, sample_weight=w)
    qs = [0.1, 0.5, 0.9]
    want = one.predict_quantiles(X, qs)
    assert np.array_equal(two.predict_quantiles(X, qs), want)
    again = pickle.loads(pickle.dumps(one))
    assert np.array_equal(again.predict_quantiles(X, qs), want)
    one.save(tmp_path / "q.fimp")
    loaded = fi.load(tmp_path / "q.fimp")
    assert np.array_equal(loaded.predict_quantiles(X, qs), want)


def test_bad_requests_are_typed_errors():
    X, y = data(100)
    plain = fi.RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="store_leaf_values=True"):
        plain.predict_quantiles(X, 0.5)
    est = fi.RandomForestRegressor(n_estimators=3, random_state=0, store_leaf_values=True)
    est.fit(X, y)
    for bad in (1.5, -0.1, float("nan"), [0.2, 2.0], "median", [[0.5]], []):
        with pytest.raises(InvalidParameterError, match="quantiles"):
            est.predict_quantiles(X, bad)
    with pytest.raises(InvalidParameterError, match="interpolation"):
        est.predict_quantiles(X, 0.5, interpolation="cubic")
    assert not hasattr(fi.RandomForestClassifier(), "predict_quantiles")


def test_damaged_leaf_values_in_a_pickle_are_refused():
    from forestimp import _quantiles, _state
    from forestimp.exceptions import ModelFormatError

    X, y = data(100)
    est = fi.RandomForestRegressor(n_estimators=3, random_state=0, store_leaf_values=True)
    est.fit(X, y)
    state = _state.fitted_state(est)
    assert state is not None
    for name, bad in [
        ("leaf_values[rows]", lambda a: (a + 10_000).astype(np.uint32)),
        ("leaf_values[counts]", lambda a: a.astype(np.uint64)),
        ("leaf_values[y]", lambda a: a[:-1]),
    ]:
        broken = dict(state)
        broken[name] = bad(state[name])
        with pytest.raises(ModelFormatError, match="leaf values|leaf_values"):
            _quantiles.restored(broken, est.forest_)
    del state["leaf_values[rows]"]
    with pytest.raises(ModelFormatError, match="incomplete"):
        _quantiles.restored(state, est.forest_)


def test_several_outputs_give_each_output_its_quantiles():
    # Each output's quantiles are those of its own targets under the one set of weights:
    # a second output that is the first shifted by 10 has quantiles shifted by 10.
    X, y = data(200)
    Y = np.column_stack([y, y + 10.0])
    est = fi.RandomForestRegressor(n_estimators=20, random_state=0, store_leaf_values=True)
    est.fit(X, Y)
    qs = [0.1, 0.5, 0.9]
    got = est.predict_quantiles(X[:30], qs)
    assert got.shape == (30, 2, 3)
    np.testing.assert_allclose(got[:, 1], got[:, 0] + 10.0, rtol=0, atol=1e-9)
    assert est.predict_quantiles(X[:30], 0.5).shape == (30, 2)
    one = fi.RandomForestRegressor(n_estimators=20, random_state=0, store_leaf_values=True)
    assert one.fit(X, y).predict_quantiles(X[:30], qs).shape == (30, 3)


def test_out_of_bag_quantiles_use_only_the_trees_that_left_the_row_out():
    X, y = data(600)
    kw = dict(n_estimators=40, min_samples_leaf=10, random_state=0)
    est = fi.RandomForestRegressor(**kw, store_leaf_values=True).fit(X, y)
    band = est.predict_quantiles(X, [0.05, 0.95], oob=True)
    # Out of bag, a training row is not in its own leaves: the band covers about 90 % of
    # the training targets, where the in-bag band covers more.
    inside = (y >= band[:, 0]) & (y <= band[:, 1])
    assert 0.8 <= inside.mean() <= 0.97, inside.mean()
    in_bag = est.predict_quantiles(X, [0.05, 0.95])
    assert ((y >= in_bag[:, 0]) & (y <= in_bag[:, 1])).mean() > inside.mean()
    # The leaf values keep the out-of-bag mean prediction and the targets.
    oob = est._leaf_values.oob_prediction()[:, 0]
    ref = fi.RandomForestRegressor(**kw, oob_score=True).fit(X, y)
    np.testing.assert_array_equal(oob, ref.oob_prediction_)
    np.testing.assert_array_equal(est._leaf_values.y()[:, 0], y)
    with pytest.raises(DataError, match="training X"):
        est.predict_quantiles(X[:-1], 0.5, oob=True)
    with pytest.raises(InvalidParameterError, match="oob"):
        est.predict_quantiles(X, 0.5, oob="yes")


def test_tree_predictions_average_to_the_prediction():
    from forestimp._core import tree_predictions

    X, y = data(150)
    est = fi.ExtraTreesRegressor(n_estimators=9, random_state=0).fit(X, y)
    per_tree = tree_predictions(est.forest_, X)
    assert per_tree.shape == (150, 9, 1)
    np.testing.assert_allclose(per_tree.mean(axis=1)[:, 0], est.predict(X), rtol=1e-12)

"""Quantile regression forests (issue #53): ``store_leaf_values`` and ``predict_quantiles``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import forestimp as fi
from forestimp.exceptions import InvalidParameterError


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

"""Quantile regression forests on a LocalCluster of 2 worker processes (issue #53):
``forestimp.dask.fit`` with ``store_leaf_values=True`` builds one machine's leaf values, array
for array; ``predict_quantiles``, ``predict_interval`` and ``predict_se`` over row blocks give
one machine's numbers; bad arguments are typed errors raised on the client."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forestimp as fi
from forestimp.exceptions import InvalidParameterError

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
fdask = pytest.importorskip("forestimp.dask")

QS = [0.05, 0.25, 0.5, 0.9]


@pytest.fixture(scope="module")
def client(two_workers):
    return two_workers


@pytest.fixture(scope="module")
def data():
    """Heteroscedastic: the noise grows with |X[:, 1]|, so quantiles differ by row."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = X[:, 0] + rng.normal(size=400) * (0.2 + np.abs(X[:, 1]))
    return X, y


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return fi.RandomForestRegressor(
        n_estimators=12, min_samples_leaf=3, random_state=0, store_leaf_values=True
    ).fit(X, y)


def _blocks(X):
    """Uneven row blocks with an empty one between them."""
    return da.concatenate(
        [da.from_array(X[:130], 50), da.from_array(X[:0], 1), da.from_array(X[130:], 90)]
    )


@pytest.mark.parametrize(
    "make, weighted",
    [
        (lambda: fi.RandomForestRegressor(n_estimators=20, oob_score=True, random_state=1), True),
        (
            lambda: fi.ExtraTreesRegressor(
                n_estimators=7, bootstrap=True, max_samples=0.5, random_state=2
            ),
            False,
        ),
        (lambda: fi.RandomPatchesRegressor(n_estimators=8, random_state=3), True),
    ],
)
def test_fit_builds_one_machines_leaf_values(client, data, make, weighted):
    X, y = data
    w = np.linspace(0.5, 2.0, len(y)) if weighted else None

    def new():
        return make().set_params(store_leaf_values=True)

    local = new().fit(X, y, sample_weight=w)
    spread = fdask.fit(new(), X, y, sample_weight=w, client=client, n_tasks=3)
    assert spread.forest_.to_bytes() == local.forest_.to_bytes()
    for got, want in zip(spread._leaf_values.parts(), local._leaf_values.parts(), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(spread.predict_quantiles(X, QS), local.predict_quantiles(X, QS))
    if getattr(local, "oob_score", False):
        assert spread.oob_score_ == local.oob_score_


def test_fit_from_a_dask_collection_and_without_leaf_values(client, data):
    X, y = data
    local = fi.ExtraTreesRegressor(n_estimators=6, random_state=4, store_leaf_values=True)
    local.fit(X, y)
    spread = fdask.fit(
        fi.ExtraTreesRegressor(n_estimators=6, random_state=4, store_leaf_values=True),
        da.from_array(X, chunks=(150, 5)),
        da.from_array(y, 200),
        client=client,
    )
    np.testing.assert_array_equal(spread.predict_quantiles(X, QS), local.predict_quantiles(X, QS))
    plain = fdask.fit(fi.ExtraTreesRegressor(n_estimators=6, random_state=4), X, y, client=client)
    assert plain.__dict__.get("_leaf_values") is None


def test_predict_quantiles_over_blocks_is_one_machines(client, data, fitted):
    X, _ = data
    blocks = _blocks(X)
    for interpolation in ("linear", "lower", "nearest", "midpoint"):
        want = fitted.predict_quantiles(X, QS, interpolation=interpolation)
        got = fdask.predict_quantiles(fitted, blocks, QS, interpolation=interpolation)
        assert got.shape == want.shape == (len(X), len(QS))
        np.testing.assert_array_equal(got.compute(), want)
    one = fdask.predict_quantiles(fitted, blocks, 0.7)
    assert one.shape == (len(X),)
    np.testing.assert_array_equal(one.compute(), fitted.predict_quantiles(X, 0.7))
    # A Dask DataFrame: its partitions as arrays for an estimator fitted on one.
    ddf = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    got = fdask.predict_quantiles(fitted, ddf, QS).compute()
    np.testing.assert_array_equal(got, fitted.predict_quantiles(X, QS))


def test_several_outputs(client, data):
    X, y = data
    Y = np.column_stack([y, X[:, 2] * np.abs(X[:, 3])])

    def make():
        return fi.RandomForestRegressor(n_estimators=15, random_state=7, store_leaf_values=True)

    local = make().fit(X, Y)
    spread = fdask.fit(make(), X, Y, client=client, n_tasks=2)
    for got, want in zip(spread._leaf_values.parts(), local._leaf_values.parts(), strict=True):
        np.testing.assert_array_equal(got, want)
    blocks = _blocks(X)
    got = fdask.predict_quantiles(spread, blocks, QS)
    assert got.shape == (len(X), 2, len(QS))
    np.testing.assert_array_equal(got.compute(), local.predict_quantiles(X, QS))
    one = fdask.predict_quantiles(spread, blocks, 0.3)
    assert one.shape == (len(X), 2)
    np.testing.assert_array_equal(one.compute(), local.predict_quantiles(X, 0.3))
    if hasattr(local, "predict_interval"):
        got = fdask.predict_interval(spread, blocks, method="quantile").compute()
        want = local.predict_interval(X, method="quantile")
        assert got.shape == (len(X), 2, 2)
        np.testing.assert_array_equal(got, want)


def test_predict_quantiles_over_partitions_of_a_named_frame(client, data):
    X, y = data
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(X.shape[1])])
    est = fi.RandomForestRegressor(n_estimators=6, random_state=5, store_leaf_values=True)
    est.fit(frame, y)
    ddf = dd.from_pandas(frame, npartitions=4)
    got = fdask.predict_quantiles(est, ddf, QS).compute()
    np.testing.assert_array_equal(got, est.predict_quantiles(frame, QS))


def test_intervals_and_standard_errors_over_blocks(client, data):
    X, y = data
    est = fi.RandomForestRegressor(
        n_estimators=15, min_samples_leaf=3, random_state=6, store_leaf_values=True
    ).fit(X, y)
    if not hasattr(est, "predict_interval"):
        pytest.skip("predict_interval is not there yet")
    from forestimp._intervals import METHODS

    blocks = _blocks(X)
    for method in METHODS:
        want = est.predict_interval(X, alpha=0.2, method=method)
        got = fdask.predict_interval(est, blocks, alpha=0.2, method=method)
        assert got.shape == want.shape == (len(X), 2)
        np.testing.assert_array_equal(got.compute(), want, err_msg=method)
    np.testing.assert_array_equal(
        fdask.predict_interval(est, blocks).compute(), est.predict_interval(X)
    )
    if hasattr(est, "predict_se"):
        np.testing.assert_array_equal(fdask.predict_se(est, blocks).compute(), est.predict_se(X))


def test_bad_arguments_are_typed_errors_on_the_client(client, data, fitted):
    X, y = data
    blocks = da.from_array(X, 100)
    for quantiles in (1.5, [0.1, np.nan], "median", []):
        with pytest.raises(InvalidParameterError, match="quantiles"):
            fdask.predict_quantiles(fitted, blocks, quantiles)
    with pytest.raises(InvalidParameterError, match="interpolation"):
        fdask.predict_quantiles(fitted, blocks, 0.5, interpolation="cubic")
    plain = fi.RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="store_leaf_values=True"):
        fdask.predict_quantiles(plain, blocks, 0.5)
    clf = fi.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y > 0)
    with pytest.raises(InvalidParameterError, match="predict_quantiles"):
        fdask.predict_quantiles(clf, blocks, 0.5)
    if hasattr(fitted, "predict_interval"):
        with pytest.raises(InvalidParameterError, match="alpha"):
            fdask.predict_interval(fitted, blocks, alpha=1.0)
        with pytest.raises(InvalidParameterError, match="method"):
            fdask.predict_interval(fitted, blocks, method="bootstrap")
    # Random Patches grown block by block have no draws of all the rows to keep.
    with pytest.raises(InvalidParameterError, match="store_leaf_values"):
        fdask.fit_patches(
            fi.RandomPatchesRegressor(n_estimators=4, store_leaf_values=True), X, y, client=client
        )

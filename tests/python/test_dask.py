"""forestimp.dask on a LocalCluster of 2 worker processes: the model bytes of a distributed
fit equal one machine's for every kind of input, a worker killed mid-fit changes nothing,
and prediction maps over blocks, empty ones included."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import forestimp as fi
from forestimp.exceptions import ClusterError, InvalidParameterError

from conftest import kill_a_worker_during

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
fdask = pytest.importorskip("forestimp.dask")
_dask_tasks = pytest.importorskip("forestimp._dask_tasks")


@pytest.fixture(scope="module")
def client(two_workers):
    return two_workers


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    X[:, 4] = rng.integers(0, 5, 600)
    y = (X[:, 0] + X[:, 1] * X[:, 4] > 0.5).astype(int)
    return X, y


def _bytes(est) -> bytes:
    return est.forest_.to_bytes()


def test_tree_ranges_cover_the_forest():
    assert fdask.tree_ranges(10, 3) == [(0, 3), (3, 7), (7, 10)]
    assert fdask.tree_ranges(2, 5) == [(0, 1), (1, 2)]
    assert fdask.tree_ranges(7, 1) == [(0, 7)]


@pytest.mark.parametrize(
    "make",
    [
        lambda: fi.RandomForestClassifier(n_estimators=20, oob_score=True, random_state=1),
        lambda: fi.ExtraTreesRegressor(n_estimators=7, max_features=0.5, random_state=2),
        lambda: fi.RandomPatchesClassifier(n_estimators=8, random_state=3),
    ],
)
def test_same_model_bytes_as_one_machine(client, data, make):
    X, y = data
    target = y if make()._is_classifier else X[:, 0] - X[:, 2] * y
    local = make().fit(X, target)
    for n_tasks in (None, 4):
        spread = fdask.fit(make(), X, target, client=client, n_tasks=n_tasks)
        assert _bytes(spread) == _bytes(local)
        np.testing.assert_array_equal(spread.predict(X), local.predict(X))
        if getattr(local, "oob_score", False):
            assert spread.oob_score_ == local.oob_score_
            np.testing.assert_array_equal(
                spread.oob_decision_function_, local.oob_decision_function_
            )


def test_dask_collections_and_paths(client, data, tmp_path):
    X, y = data
    local = fi.RandomForestClassifier(n_estimators=6, random_state=0).fit(X, y)

    def fitted(X_in, y_in, **kw):
        est = fi.RandomForestClassifier(n_estimators=6, random_state=0)
        return fdask.fit(est, X_in, y_in, client=client, **kw)

    assert _bytes(fitted(da.from_array(X, chunks=(150, 6)), da.from_array(y, 200))) == _bytes(local)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    assert _bytes(fitted(str(tmp_path / "X.npy"), tmp_path / "y.npy")) == _bytes(local)

    zarr = pytest.importorskip("zarr")
    zarr.save_array(str(tmp_path / "X.zarr"), X)
    assert _bytes(fitted(tmp_path / "X.zarr", y)) == _bytes(local)

    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(6)])
    named = fi.RandomForestClassifier(n_estimators=6, random_state=0).fit(frame, y)
    ddf = dd.from_pandas(frame, npartitions=3)
    from_dask = fitted(ddf, dd.from_pandas(pd.Series(y), npartitions=3))
    assert _bytes(from_dask) == _bytes(named)
    assert list(from_dask.feature_names_in_) == list(frame.columns)
    frame.assign(target=y).to_parquet(tmp_path / "train.parquet")
    from_file = fitted(str(tmp_path / "train.parquet"), "target")
    assert _bytes(from_file) == _bytes(named)
    assert list(from_file.feature_names_in_) == list(frame.columns)


def test_a_tiny_forest_and_more_workers_than_trees(client, data):
    X, y = data
    one = fdask.fit(fi.ExtraTreesClassifier(n_estimators=1, random_state=5), X[:3], y[:3])
    local = fi.ExtraTreesClassifier(n_estimators=1, random_state=5).fit(X[:3], y[:3])
    assert _bytes(one) == _bytes(local)


def test_bad_input_is_refused_on_the_client_or_worker(client, data):
    X, y = data
    with pytest.raises(InvalidParameterError):
        fdask.fit(fi.RandomForestClassifier(n_estimators=2), "data.csv", y, client=client)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        fdask.fit(fi.RandomForestClassifier(n_estimators=2), X, y[:-1], client=client)


def test_a_worker_killed_mid_fit_gives_the_same_model(client):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4000, 20))
    y = (X[:, 0] + rng.normal(size=4000) > 0).astype(int)
    make = lambda: fi.RandomForestClassifier(n_estimators=600, random_state=7)  # noqa: E731
    est, victim = kill_a_worker_during(
        client, lambda: fdask.fit(make(), X, y, client=client, n_tasks=6), "_fit_part"
    )
    assert victim not in client.scheduler_info()["workers"]
    assert _bytes(est) == _bytes(make().fit(X, y))


def test_predict_maps_over_blocks_including_empty_ones(client, data):
    X, y = data
    est = fi.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    blocks = da.concatenate(
        [da.from_array(X[:250], 100), da.from_array(X[:0], 1), da.from_array(X[250:], 200)]
    )
    np.testing.assert_array_equal(fdask.predict(est, blocks).compute(), est.predict(X))
    np.testing.assert_array_equal(fdask.predict_proba(est, blocks).compute(), est.predict_proba(X))
    reg = fi.ExtraTreesRegressor(n_estimators=4, random_state=0).fit(X, X[:, 1])
    ddf = dd.from_pandas(pd.DataFrame(X), npartitions=4)
    np.testing.assert_array_equal(fdask.predict(reg, ddf).compute(), reg.predict(X))


def test_permutation_importance_shared_out_is_one_machines(client, data):
    from forestimp.importance import permutation

    X, y = data
    est = fi.RandomForestClassifier(n_estimators=12, random_state=0).fit(X[:400], y[:400])
    oob_local = permutation(est, X[:400], y[:400], oob=True, n_repeats=2, random_state=3)
    oob_spread = fdask.permutation(
        est, X[:400], y[:400], oob=True, n_repeats=2, random_state=3, client=client, n_tasks=5
    )
    np.testing.assert_array_equal(oob_spread.importances, oob_local.importances)
    np.testing.assert_array_equal(oob_spread.oob_error, oob_local.oob_error)
    w = np.linspace(0.5, 2.0, 200)
    for scoring in (None, ["accuracy", "neg_log_loss"]):
        held_local = permutation(
            est, X[400:], y[400:], n_repeats=3, scoring=scoring, sample_weight=w, random_state=4
        )
        held_spread = fdask.permutation(
            est, da.from_array(X[400:], 50), y[400:], n_repeats=3, scoring=scoring,
            sample_weight=w, random_state=4, client=client, n_tasks=4,
        )  # fmt: skip
        if scoring is None:
            held_local, held_spread = {"": held_local}, {"": held_spread}
        for k in held_local:
            np.testing.assert_array_equal(held_spread[k].importances, held_local[k].importances)
            assert held_spread[k].baseline_score == held_local[k].baseline_score


def test_the_fitted_state_is_scattered_under_fresh_keys(client, data, monkeypatch):
    # A dict scattered as such takes its own keys ("classes_", ...): a second call re-sent
    # them while the first call's were being released, and its tasks were cancelled.
    X, y = data
    est = fi.RandomForestClassifier(n_estimators=4, random_state=0).fit(X[:300], y[:300])
    keys: list[str] = []
    scatter = client.scatter

    def spy(data, **kwargs):
        futures = scatter(data, **kwargs)
        if isinstance(futures, dict):
            keys.extend(str(f.key) for f in futures.values())
        elif isinstance(futures, list):
            keys.extend(str(f.key) for f in futures)
        else:
            keys.append(str(futures.key))
        return futures

    monkeypatch.setattr(client, "scatter", spy)
    for _ in range(2):
        fdask.permutation(est, X[300:], y[300:], n_repeats=1, random_state=0, client=client)
    assert keys and not set(keys) & {"classes_", "n_outputs_", "n_features_in_"}
    assert len(set(keys)) == len(keys)


def test_shap_values_block_by_block(client, data):
    from forestimp.importance import shap_values

    X, y = data
    est = fi.ExtraTreesClassifier(n_estimators=6, random_state=0).fit(X, y)
    blocks = da.concatenate([da.from_array(X[:100], 40), da.from_array(X[:0], 1)])
    spread = fdask.shap_values(est, blocks).compute()
    np.testing.assert_array_equal(spread, shap_values(est, X[:100]).values)
    reg = fi.RandomForestRegressor(n_estimators=4, random_state=0).fit(X, X[:, 0])
    values = fdask.shap_values(reg, da.from_array(X[:50], 20)).compute()
    np.testing.assert_array_equal(values.reshape(50, 6), shap_values(reg, X[:50]).values)


def test_patches_assemble_into_one_forest(client, data, tmp_path):
    from forestimp._core import Forest

    X, y = data
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    make = lambda: fi.ExtraTreesClassifier(  # noqa: E731
        n_estimators=40, bootstrap=True, oob_score=True, random_state=0
    )
    est = fdask.fit_patches(
        make(), str(tmp_path / "X.npy"), tmp_path / "y.npy", n_row_blocks=3, n_patches=6,
        max_features=0.5, client=client,
    )  # fmt: skip
    assert est.forest_.assembled and est.forest_.n_estimators == 40
    # The same patches from an in-memory array, a dask Array: the same model.
    same = fdask.fit_patches(
        make(), X, y, n_row_blocks=3, n_patches=6, max_features=0.5, client=client
    )
    assert _bytes(same) == _bytes(est)
    lazy = fdask.fit_patches(
        make(), da.from_array(X, 100), da.from_array(y, 100), n_row_blocks=3, n_patches=6,
        max_features=0.5, client=client,
    )  # fmt: skip
    assert _bytes(lazy) == _bytes(est)
    # MDI is additive: the tree-weighted mean of the sub-forests' MDI on their columns.
    parts = [est.forest_.part(k, k + 1) for k in range(40)]
    np.testing.assert_allclose(
        np.mean([p.importances(False) for p in parts], axis=0), est.forest_.importances(False)
    )
    # Accuracy near one machine's forest; OOB only within the patches.
    local = make().fit(X[:450], y[:450])
    half = fdask.fit_patches(make(), X[:450], y[:450], n_row_blocks=2, client=client)
    assert half.score(X[450:], y[450:]) >= local.score(X[450:], y[450:]) - 0.08
    assert 0.5 < half.oob_score_ <= 1.0
    with pytest.raises(InvalidParameterError, match="assembled"):
        fi.importance.permutation(half, X[:450], y[:450], oob=True)
    with pytest.raises(InvalidParameterError):
        Forest.assemble([est.forest_], [[0, 1]], 6)
    with pytest.raises(InvalidParameterError):
        fdask.fit_patches(make(), X, y, n_patches=100, client=client)
    with pytest.raises(InvalidParameterError):
        fdask.fit_patches(make(), X, y, max_features=0, client=client)


def test_a_fit_waits_briefly_for_a_first_worker(data, monkeypatch):
    X, y = data
    local = fi.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    monkeypatch.setattr(_dask_tasks, "WORKER_WAIT", 0.5)
    empty = distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=None)
    with empty as cluster, distributed.Client(cluster) as c:
        with pytest.raises(ClusterError, match="no workers"):
            fdask.fit(clone(local), X, y, client=c)
        # A worker that registers during the wait is used.
        monkeypatch.setattr(_dask_tasks, "WORKER_WAIT", "30s")
        threading.Timer(1.0, lambda: cluster.scale(1)).start()
        assert _bytes(fdask.fit(clone(local), X, y, client=c)) == _bytes(local)

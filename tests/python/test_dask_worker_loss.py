"""forestimp.dask when workers are lost: all of them at once, none coming back, a task that
keeps killing its workers, and files damaged on the workers' side. Every case ends with the
one-machine result or a typed error, within bounded time.

Killing every worker can leave a LocalCluster without any: a nanny whose new worker is killed
as it starts (the lost task, run again at once) may never bring it back. So each of those
tests has a cluster of its own, and the outcome of a fit whose workers are all killed is
either of the two the issue allows: the one machine's model, once the nannies restart the
workers, or a ClusterError saying they were all lost, once none came back in time."""

from __future__ import annotations

import pickle
import threading
import time

import numpy as np
import pytest

import forestimp as fi
from forestimp.exceptions import ClusterError, DataError, InvalidParameterError

from conftest import kill_a_worker_during

distributed = pytest.importorskip("distributed")
fdask = pytest.importorskip("forestimp.dask")
_dask_tasks = pytest.importorskip("forestimp._dask_tasks")


@pytest.fixture(scope="module")
def client(two_workers):
    return two_workers


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4000, 20))
    y = (X[:, 0] + rng.normal(size=4000) > 0).astype(int)
    return X, y


def _make():
    return fi.RandomForestClassifier(n_estimators=600, random_state=7)


def test_errors_pickle_as_themselves():
    # A worker's exception reaches the client pickled: its class must import by name.
    for kind in (DataError, InvalidParameterError, ClusterError):
        back = pickle.loads(pickle.dumps(kind("what happened")))
        assert type(back) is kind and str(back) == "what happened"


@pytest.fixture
def own_client(monkeypatch):
    """A cluster of 2 worker processes for one test, which may leave it without workers."""
    monkeypatch.setattr(_dask_tasks, "WORKER_WAIT", "30s")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as c:
        yield c


def _same_or_all_lost(outcome, expected):
    """The one machine's result, or the ClusterError of a cluster whose nannies did not
    bring any worker back."""
    if isinstance(outcome, ClusterError):
        assert "lost all its workers" in str(outcome), outcome
        return
    if isinstance(outcome, Exception):
        raise outcome
    expected(outcome)


def test_every_worker_killed_at_once_mid_fit(own_client, data):
    # The scattered data dies with the workers: Dask forgets it and cancels the tasks
    # ("already forgotten"); the fit sends it again to the restarted workers.
    X, y = data
    outcome, _ = kill_a_worker_during(
        own_client,
        lambda: fdask.fit(_make(), X, y, client=own_client, n_tasks=6),
        "_fit_part",
        True,
    )
    local = _make().fit(X, y).forest_.to_bytes()
    _same_or_all_lost(outcome, lambda est: assert_same(est.forest_.to_bytes(), local))


def test_every_worker_killed_at_once_mid_permutation(own_client, data):
    X, y = data
    est = fi.RandomForestClassifier(n_estimators=300, random_state=0).fit(X, y)
    local = fi.importance.permutation(est, X, y, oob=True, n_repeats=3, random_state=0)
    outcome, _ = kill_a_worker_during(
        own_client,
        lambda: fdask.permutation(
            est, X, y, oob=True, n_repeats=3, random_state=0, client=own_client, n_tasks=6
        ),
        "_oob_part",
        True,
    )
    _same_or_all_lost(
        outcome, lambda r: np.testing.assert_array_equal(r.importances, local.importances)
    )


def assert_same(a, b):
    assert a == b


def test_a_cluster_left_without_workers_fails_in_bounded_time(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(_dask_tasks, "WORKER_WAIT", "1s")
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as c:
        threading.Timer(0.5, lambda: cluster.scale(0)).start()
        start = time.monotonic()
        with pytest.raises(ClusterError, match="fit: the Dask cluster lost all its workers"):
            fdask.fit(_make().set_params(n_estimators=3000), X, y, client=c)
        assert time.monotonic() - start < 60


def test_a_task_that_kills_its_workers_is_a_cluster_error(own_client):
    # Dask gives up on a task after its allowed failures (KilledWorker): said plainly.
    import os

    def submit(_):
        return own_client.submit(os._exit, 1, pure=False)

    with pytest.raises(ClusterError, match="workers died 4 times|lost all its workers"):
        _dask_tasks.gather(own_client, submit, [None], "a test")


@pytest.mark.parametrize("damage", ["truncated", "bad magic", "header claims more"])
def test_a_damaged_npy_on_the_workers_is_a_data_error(client, data, tmp_path, damage):
    X, y = data
    path = tmp_path / "X.npy"
    np.save(path, X[:500])
    raw = path.read_bytes()
    if damage == "truncated":
        raw = raw[: len(raw) - 800]
    elif damage == "bad magic":
        raw = b"NOTNPY" + raw[6:]
    else:
        raw = raw[:8] + (60000).to_bytes(2, "little") + raw[10:]
    path.write_bytes(raw)
    with pytest.raises(DataError, match="X.npy"):
        fdask.fit(fi.RandomForestClassifier(n_estimators=2), path, y[:500], client=client)
    ypath = tmp_path / "y.npy"
    np.save(ypath, y[:500].astype(float))
    ypath.write_bytes(ypath.read_bytes()[:-16])
    np.save(path, X[:500])
    with pytest.raises(DataError, match="y.npy"):
        fdask.fit(fi.RandomForestRegressor(n_estimators=2), path, ypath, client=client)

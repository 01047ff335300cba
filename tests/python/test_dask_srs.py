"""Batched Sequential Random Subspace, in one process and on a LocalCluster of worker
processes: B = 1 is Algorithm 1, and the cluster gives the in-process selection for any
number of workers and any kind of input."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from forestimp.ensemble import ExtraTreesClassifier, TotallyRandomizedTreesClassifier
from forestimp.exceptions import InvalidParameterError
from forestimp.selection import SequentialRandomSubspace

from conftest import kill_a_worker_during

sys.path.insert(0, str(Path(__file__).parent))
from test_selection_srs import exhaustive, fingerprint, planted  # noqa: E402

distributed = pytest.importorskip("distributed")
fdask = pytest.importorskip("forestimp.dask")

KW = dict(q=10, alpha=0.5, n_iterations=24, n_probes=30, random_state=0)


def full_fingerprint(srs):
    """``fingerprint`` plus what batches add: rounds, draws, bytes read, F1 per step."""
    extra = [(s.round, s.n_found, s.f1, s.bytes_read) for s in srs.history_]
    return fingerprint(srs), extra, srs.n_draws_.tolist(), srs.bytes_read_


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def data():
    return planted()


# -------------------------------------------------------------------- in one process
@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_batch_of_one_is_algorithm_1(data, alpha):
    X, y, truth = data
    kw = {**KW, "alpha": alpha}
    ref = SequentialRandomSubspace(**kw).fit(X, y, true_support=truth)
    got = SequentialRandomSubspace(batch_size=1, **kw).fit(X, y, true_support=truth)
    assert fingerprint(got) == fingerprint(ref)
    assert [s.round for s in got.history_] == list(range(24))
    assert ref.support_.sum() >= 3  # R was drawn from a non-empty F


def test_rounds_draw_from_the_found_set_of_their_start(data):
    X, y, truth = data
    srs = SequentialRandomSubspace(batch_size=5, **KW).fit(X, y, true_support=truth)
    assert [s.round for s in srs.history_] == [t // 5 for t in range(24)]  # 5 rounds, last 4
    found_at_start: dict[int, set] = {0: set()}
    for s in srs.history_:
        F = found_at_start.setdefault(s.round, set(srs.history_[s.step - 1].kept))
        assert len(s.reused) == min(5, len(F)) and set(s.reused) <= F
        assert len(s.features) == 10
    assert np.flatnonzero(srs.support_).tolist() == truth
    # Columns 3 and 40 are found at fit 2; fits 3 and 4 of the same round still reuse none
    # (Algorithm 1 would reuse both).
    assert srs.history_[2].new.tolist() == [3, 40]
    assert [len(srs.history_[t].reused) for t in (3, 4, 5)] == [0, 0, 2]


def test_callback_stops_in_the_middle_of_a_round(data):
    X, y, truth = data
    srs = SequentialRandomSubspace(batch_size=5, callback=lambda s: s.f1 == 1.0, **KW)
    srs.fit(X, y, true_support=truth)
    # F is complete at fit 15, the first of round 3: fits 16-19 are not recorded.
    assert srs.n_iterations_ == len(srs.history_) == 16
    assert srs.history_[-1].round == 3 and srs.history_[-1].f1 == 1.0


def test_batched_rounds_still_find_exactly_the_relevant_set():
    # Prop. 7.1 holds round by round: each fit tests its subspace as Algorithm 1 does.
    X, y = exhaustive()
    srs = SequentialRandomSubspace(
        TotallyRandomizedTreesClassifier(n_estimators=20),
        q=4, alpha=0.5, n_iterations=40, n_probes=0, batch_size=4, random_state=0,
    )  # fmt: skip
    assert np.flatnonzero(srs.fit(X, y).support_).tolist() == [1, 5, 6]


def test_bad_batch_size_is_a_typed_error(data):
    X, y, _ = data
    for bad in (0, -2, 1.5, "4"):
        with pytest.raises(InvalidParameterError, match="batch_size"):
            SequentialRandomSubspace(batch_size=bad, **KW).fit(X, y)


# --------------------------------------------------------------------- on a cluster
@pytest.mark.parametrize("n_workers", [1, 2])
def test_cluster_equals_one_process_for_any_number_of_workers(client, data, n_workers):
    X, y, truth = data
    selector = SequentialRandomSubspace(batch_size=4, **KW)
    ref = SequentialRandomSubspace(batch_size=4, **KW).fit(X, y, true_support=truth)
    if n_workers == 2:
        got = fdask.srs(selector, X, y, true_support=truth, client=client)
        assert len(client.scheduler_info()["workers"]) == 2
    else:
        with (
            distributed.LocalCluster(
                n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as own,
            distributed.Client(own) as c,
        ):
            got = fdask.srs(selector, X, y, true_support=truth, client=c)
    assert full_fingerprint(got) == full_fingerprint(ref)
    assert not hasattr(selector, "support_")  # the selector given is left unfitted
    assert np.flatnonzero(got.support_).tolist() == truth


def test_cluster_batch_of_one_is_algorithm_1(client, data):
    X, y, truth = data
    ref = SequentialRandomSubspace(**KW).fit(X, y)
    got = fdask.srs(SequentialRandomSubspace(batch_size=1, **KW), X, y, client=client)
    assert fingerprint(got) == fingerprint(ref)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    X, y, truth = planted(n=300, p=50, seed=2)
    X = X.astype(np.float32)
    d = tmp_path_factory.mktemp("dask_srs")
    np.save(d / "f.npy", np.asfortranarray(X))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    pytest.importorskip("pyarrow")
    frame.assign(target=y).to_parquet(d / "x.parquet", row_group_size=128)
    return X, y, truth, frame, {"npy": str(d / "f.npy"), "parquet": str(d / "x.parquet")}


@pytest.mark.parametrize("kind", ["npy", "parquet", "frame"])
def test_workers_read_paths_and_frames(client, stored, kind):
    X, y, truth, frame, paths = stored
    kw = {**KW, "q": 8, "n_iterations": 20, "random_state": 7}
    ref = SequentialRandomSubspace(batch_size=3, **kw).fit(X, y, true_support=truth)
    X_in, y_in = {
        "npy": (paths["npy"], y),
        "parquet": (paths["parquet"], "target"),
        "frame": (frame.assign(target=y), "target"),
    }[kind]
    got = fdask.srs(
        SequentialRandomSubspace(batch_size=3, **kw), X_in, y_in, true_support=truth, client=client
    )
    assert fingerprint(got) == fingerprint(ref)
    assert ref.support_.sum() >= 2
    if kind == "npy":  # a Fortran .npy: each fit reads exactly its q columns
        assert got.bytes_read_ == 20 * 8 * 300 * 4
    if kind != "npy":
        assert list(got.feature_names_in_) == list(frame.columns)


def test_cluster_bad_input_is_a_typed_error(client, data):
    X, y, _ = data
    with pytest.raises(InvalidParameterError, match="batch_size"):
        fdask.srs(SequentialRandomSubspace(**KW), X, y, client=client)
    with pytest.raises(InvalidParameterError, match="SequentialRandomSubspace"):
        fdask.srs(object(), X, y, client=client)
    da = pytest.importorskip("dask.array")
    with pytest.raises(InvalidParameterError, match="Parquet"):
        fdask.srs(SequentialRandomSubspace(batch_size=2, **KW), da.from_array(X), y, client=client)
    with pytest.raises(InvalidParameterError, match="X must be"):
        fdask.srs(SequentialRandomSubspace(batch_size=2, **KW), "x.csv", y, client=client)


def test_a_worker_killed_mid_round_changes_nothing(client):
    # The lost fit is run again on the other worker (or the restarted one): a fit depends
    # only on its subspace and seeds, so the selection is the one of one process.
    X, y, _ = planted(n=2000, seed=3)
    selector = SequentialRandomSubspace(
        ExtraTreesClassifier(n_estimators=150, max_features=5),
        q=10, n_iterations=4, n_probes=20, batch_size=4, random_state=0,
    )  # fmt: skip
    fitted, _ = kill_a_worker_during(
        client, lambda: fdask.srs(selector, X, y, client=client), "_fit_on_worker"
    )
    assert fingerprint(fitted) == fingerprint(selector.fit(X, y))

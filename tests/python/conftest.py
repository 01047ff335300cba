"""Shared data and helpers for the forestimp Python tests (no downloads, small sizes)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sklearn.datasets import make_classification, make_regression

import forestimp

CLASSIFIERS = [
    forestimp.RandomForestClassifier,
    forestimp.ExtraTreesClassifier,
    forestimp.RandomPatchesClassifier,
    forestimp.TotallyRandomizedTreesClassifier,
]
REGRESSORS = [
    forestimp.RandomForestRegressor,
    forestimp.ExtraTreesRegressor,
    forestimp.RandomPatchesRegressor,
    forestimp.TotallyRandomizedTreesRegressor,
]
ALL_ESTIMATORS = CLASSIFIERS + REGRESSORS


def core_fit_kwargs(**overrides):
    """Every keyword of ``_core.Forest.fit`` with small, valid values (a 2-class RF)."""
    kw = dict(
        n_classes=2,
        criterion="gini",
        splitter="best",
        n_estimators=5,
        max_features=2,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        bootstrap=True,
        max_samples=None,
        tree_features=None,
        balanced_subsample=False,
        random_state=0,
        n_jobs=1,
    )
    kw.update(overrides)
    return kw


@pytest.fixture(scope="session")
def clf_data():
    """3-class problem, 600 x 10, 4 informative features."""
    X, y = make_classification(
        n_samples=600,
        n_features=10,
        n_informative=4,
        n_redundant=2,
        n_classes=3,
        random_state=0,
    )
    return X, y


@pytest.fixture(scope="session")
def reg_data():
    """Regression, 500 x 8, 3 informative features."""
    X, y = make_regression(n_samples=500, n_features=8, n_informative=3, noise=5.0, random_state=0)
    return X, y


# Sutera (PhD, ch. 6), the context-dependent importances of the two context problems
# (``forestimp.datasets.make_context_problem``), keyed by ``ContextImportances`` attribute;
# per-context rows are contexts 0 and 1.
TABLE_6_2 = {
    "importances": [1.0, 0.125, 0.125],
    "per_context": [[1.0, 0.5, 0.0], [1.0, 0.0, 0.5]],
    "absolute": [[0.0, 0.375, 0.125], [0.0, 0.125, 0.375]],
    "signed": [[0.0, -0.375, 0.125], [0.0, 0.125, -0.375]],
    "global_signed": [0.0, -0.125, -0.125],
}
TABLE_6_3 = {
    "importances": [0.5727, 0.7514, 0.5528, 0.687, 0.1746, 0.0753, 0.1073, 0],
    "per_context": [
        [0.4127, 0.5815, 0.5312, 0.5421, 0.6566, 0.2258, 0.372, 0],
        [0.6243, 0.8057, 0.5577, 0.7343, 0, 0, 0, 0],
    ],
    "absolute": [
        [0.2263, 0.2431, 0.1181, 0.2241, 0.4139, 0.1961, 0.2861, 0],
        [0.0987, 0.0611, 0.021, 0.0736, 0.1746, 0.0753, 0.1073, 0],
    ],
    "signed": [
        [0.2179, 0.2422, 0.1111, 0.2190, -0.3839, -0.1389, -0.2346, 0],
        [-0.0516, -0.0543, -0.0049, -0.0473, 0.1746, 0.0753, 0.1073, 0],
    ],
}
# Context 0, X1..X4 of Problem 2 when nodes without context-0 samples are skipped (research
# digest section 7.4).
SKIP_6_3 = {
    "absolute": [0.1437, 0.1479, 0.0450, 0.1333],
    "signed": [0.1353, 0.1470, 0.0380, 0.1282],
}


@pytest.fixture(scope="module")
def two_workers():
    """A client of a LocalCluster of 2 one-thread worker processes, for one test module."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, distributed.Client(cluster) as c:
        yield c


def kill_a_worker_during(client, work, task_name: str, every: bool = False):
    """Runs ``work()`` in a thread, kills (``os._exit``) a worker of ``client`` while it
    runs a task whose key names ``task_name``, and returns ``(work's result, the killed
    worker's address)`` once the killed worker's nanny has restarted it. Fails if the work
    ended before the kill or did not end after.

    ``every`` kills all the workers at once and returns ``(result or the exception work
    raised, None)`` without waiting for them: a nanny whose worker is killed as it starts
    may never bring it back, so such a cluster is for one test only."""
    import os
    import threading
    import time

    out: dict = {}

    def run() -> None:
        try:
            out["result"] = work()
        except Exception as e:  # noqa: BLE001 - returned to the caller
            out["result"] = e

    thread = threading.Thread(target=run)
    n_workers = len(client.scheduler_info()["workers"])
    thread.start()
    victim, deadline = None, time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        time.sleep(0.05)
        for addr, keys in client.processing().items():
            if any(task_name in str(key) for key in keys):
                victim = addr
    assert victim is not None, f"no {task_name} task seen running"
    try:
        client.run(os._exit, 1, workers=None if every else [victim])
    except Exception:  # noqa: BLE001 - the worker dies under the call
        pass
    assert thread.is_alive(), "the work ended before the worker was killed"
    thread.join(timeout=300)
    assert not thread.is_alive()
    if every:
        return out["result"], None
    if isinstance(out["result"], Exception):
        raise out["result"]
    # The nanny restarts the killed worker; slowly on a loaded machine.
    client.wait_for_workers(n_workers, timeout=240)
    return out["result"], victim


def run_fuzz_child(code: str, args: list[str], seconds: float, **env: str) -> int:
    """Runs a fuzzing child (``python -c code *args``, this folder importable) that prints
    each case before running it and ``DONE <count>`` at the end; returns the count. A
    crash, a non-zero exit or a hang fails the calling test with the case it was on."""
    path = os.pathsep.join([str(Path(__file__).parent), *sys.path])
    child = [sys.executable, "-c", code, *args]
    try:
        run = subprocess.run(
            child,
            capture_output=True,
            text=True,
            timeout=seconds + 120,
            env={**os.environ, "PYTHONPATH": path, **env},
        )
    except subprocess.TimeoutExpired as e:
        last = (e.stdout or b"").decode(errors="replace").strip().splitlines()[-1:]
        pytest.fail(f"{args}: hung at case {last}")
    lines = run.stdout.strip().splitlines()
    if run.returncode != 0 or not lines or not lines[-1].startswith("DONE"):
        pytest.fail(
            f"{args}: exit code {run.returncode} at case {lines[-3:]}\n"
            + textwrap.shorten(run.stderr[-4000:], 4000)
        )
    return int(lines[-1].split()[1])

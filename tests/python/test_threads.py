"""Threads and processes: fork after a parallel fit, concurrent prediction, Ctrl-C."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.datasets import make_classification

import forestimp as fi


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=2000, n_features=10, n_informative=4, random_state=0)
    return X, y


def _fit_and_predict(X, y, conn):
    try:
        est = fi.RandomForestClassifier(n_estimators=30, n_jobs=2, random_state=0).fit(X, y)
        conn.send(("ok", est.predict_proba(X), est.forest_.to_bytes()))
    except BaseException as e:  # report anything, including a panic, to the parent
        conn.send(("error", repr(e), b""))
    finally:
        conn.close()


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_fit_in_a_forked_child_after_a_parallel_fit(data):
    X, y = data
    # The parent has a live thread pool when it forks; the child must not wait on it.
    parent = fi.RandomForestClassifier(n_estimators=30, n_jobs=2, random_state=0).fit(X, y)
    parent.predict_proba(X)
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_fit_and_predict, args=(X, y, send))
    child.start()
    send.close()
    try:
        assert recv.poll(60), "forked child did not finish its fit within 60 s (deadlock?)"
        status, proba, model = recv.recv()
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()
    assert status == "ok", proba
    assert child.exitcode == 0
    assert model == parent.forest_.to_bytes()
    np.testing.assert_array_equal(proba, parent.predict_proba(X))


def test_concurrent_predict_from_python_threads(data):
    X, y = data
    est = fi.ExtraTreesClassifier(n_estimators=50, n_jobs=2, random_state=0).fit(X, y)
    ref = est.predict_proba(X)
    ref_leaves = est.apply(X)

    def work(i):
        rows = slice(0, None) if i % 2 == 0 else slice(None, None, -1)
        return i, est.predict_proba(X[rows]), est.apply(X[rows])

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(32)))
    for i, proba, leaves in results:
        rows = slice(0, None) if i % 2 == 0 else slice(None, None, -1)
        assert np.array_equal(proba, ref[rows]), i
        assert np.array_equal(leaves, ref_leaves[rows]), i


def test_concurrent_fits_from_python_threads(data):
    X, y = data

    def fit(seed):
        est = fi.RandomForestClassifier(n_estimators=12, n_jobs=2, random_state=seed % 3)
        return seed % 3, est.fit(X, y).forest_.to_bytes()

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(fit, range(12)))
    by_seed: dict[int, set[bytes]] = {}
    for seed, model in results:
        by_seed.setdefault(seed, set()).add(model)
    assert all(len(models) == 1 for models in by_seed.values())
    assert len({next(iter(m)) for m in by_seed.values()}) == 3


LONG_WORK = {
    "fit": "fi.RandomForestClassifier(n_estimators=5000, n_jobs=2, random_state=0).fit(X, y)",
    # The booster's monitor is called from the fitting thread, which takes the GIL per round.
    "boosting_monitor": (
        "print('explaining', flush=True)\n"
        "est = fi.GradientBoostingClassifier(n_estimators=100000, n_jobs=2)\n"
        "est.fit(X, y, monitor=lambda i, est, frame: False)"
    ),
    "shap_interactions": (
        "est = fi.RandomForestClassifier(n_estimators=50, n_jobs=2, random_state=0).fit(X, y)\n"
        "from forestimp.importance import shap_values\n"
        "print('explaining', flush=True)\n"
        "shap_values(est, X[:5000], interactions=True)"
    ),
    "oob_permutation": (
        "est = fi.RandomForestClassifier(n_estimators=50, n_jobs=2, random_state=0).fit(X, y)\n"
        "from forestimp.importance import permutation\n"
        "print('explaining', flush=True)\n"
        "permutation(est, X, y, oob=True, n_repeats=100, n_jobs=2)"
    ),
}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("work", sorted(LONG_WORK))
def test_ctrl_c_interrupts_long_work(work):
    code = (
        textwrap.dedent(
            """
        import signal
        import sys
        import numpy as np
        import forestimp as fi
        # A runner started in the background (nohup, `cmd &`) passes SIGINT down ignored;
        # a user at a terminal has Python's handler, which is what this test is about.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        rng = np.random.default_rng(0)
        X = rng.normal(size=(20000, 30))
        y = (X[:, 0] + rng.normal(size=20000) > 0).astype(int)
        print("fitting", flush=True)
        """
        )
        + LONG_WORK[work]
        + "\nprint('finished', flush=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "fitting"
        if work != "fit":
            assert proc.stdout.readline().strip() == "explaining"
        time.sleep(1.0)
        assert proc.poll() is None, "the work ended before the signal"
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "KeyboardInterrupt" in err, err[-2000:]
    assert proc.returncode != 0
    assert elapsed < 5.0, f"took {elapsed:.1f} s to stop after Ctrl-C"

"""Every public entry point goes through the one doorway into the engine (src/python/doorway.rs):
it works in a child forked from a process that already used it, and it runs on exactly the
``n_jobs`` threads asked for, never on rayon's global pool."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

import forestimp as fi
from forestimp.importance import (
    context,
    local_mdi,
    local_permutation,
    mdi,
    permutation,
    significance,
    unbiased,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork and /proc are Linux's")


def _calls(clf, reg, X, y, Xr, yr):
    """Every public function that reaches the engine, as (name, thunk) pairs."""
    return [
        ("fit", lambda: fi.RandomForestClassifier(8, oob_score=True, n_jobs=2).fit(X, y)),
        ("fit-et", lambda: fi.ExtraTreesClassifier(n_estimators=8, n_jobs=2).fit(X, y)),
        ("fit-hist", lambda: fi.RandomForestRegressor(10, splitter="hist", n_jobs=2).fit(Xr, yr)),
        ("predict_proba", lambda: clf.predict_proba(X)),
        ("predict", lambda: reg.predict(Xr)),
        ("apply", lambda: clf.apply(X)),
        ("decision_path", lambda: clf.decision_path(X)),
        ("feature_importances_", lambda: clf.feature_importances_),
        ("mdi_importances_", lambda: clf.mdi_importances_),
        ("tree_importances", lambda: clf.tree_importances()),
        ("importances_std_", lambda: clf.importances_std_),
        ("mdi-by-depth", lambda: mdi(clf, by_depth=True)),
        ("local_mdi", lambda: local_mdi(clf, X[:50], n_jobs=2)),
        ("permutation-held-out", lambda: permutation(clf, X[:80], y[:80], n_jobs=2)),
        ("permutation-oob", lambda: permutation(clf, X, y, oob=True, n_jobs=2)),
        ("local_permutation", lambda: local_permutation(clf, X[:50], y[:50], n_jobs=2)),
        ("unbiased-air", lambda: unbiased(clf, X, y, method="air", n_jobs=2)),
        ("unbiased-mdi_oob", lambda: unbiased(clf, X, y, method="mdi_oob", n_jobs=2)),
        ("context", lambda: context(clf, X[:200], y[:200], context=X[:200, 0] > 0, n_jobs=2)),
        ("significance", lambda: significance(clf, X, y, n_permutations=2, random_state=0)),
        ("pickle", lambda: pickle.loads(pickle.dumps(clf)).predict(X[:5])),
        ("tree_arrays", lambda: clf.forest_.tree_arrays(0)),
    ]


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification(n_samples=600, n_features=8, n_informative=4, random_state=0)
    Xr, yr = make_regression(n_samples=600, n_features=8, random_state=0)
    clf = fi.RandomForestClassifier(n_estimators=20, oob_score=True, n_jobs=2, random_state=0)
    reg = fi.RandomForestRegressor(n_estimators=20, n_jobs=2, random_state=0)
    return clf.fit(X, y), reg.fit(Xr, yr), X, y, Xr, yr


def _in_forked_child(thunk, timeout=60.0) -> str:
    """Runs ``thunk`` in a child forked from this process: 'ok', 'error' or 'hung'."""
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            thunk()
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "ok" if os.waitstatus_to_exitcode(status) == 0 else "error"
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return "hung"


def test_every_entry_point_works_in_a_forked_child(fitted):
    calls = _calls(*fitted)
    for _, thunk in calls:  # the parent uses each one first, with its threads alive
        thunk()
    outcomes = {name: _in_forked_child(thunk) for name, thunk in calls}
    assert all(v == "ok" for v in outcomes.values()), outcomes


def test_the_issue_reproducer_does_not_hang():
    # Issue #19: importances ran on rayon's global pool, which a forked child waits on forever.
    X, y = make_classification(3000, 30, random_state=0)
    rf = fi.RandomForestClassifier(n_estimators=30, random_state=0, n_jobs=2).fit(X, y)
    want = rf.feature_importances_
    check = lambda: np.testing.assert_array_equal(rf.feature_importances_, want)  # noqa: E731
    assert _in_forked_child(check) == "ok"


# Runs in a fresh interpreter, so that the threads it sees are its own.
_THREADS_SCRIPT = """
import os, sys
sys.path.insert(0, {tests!r})
from forestimp import _core
from test_doorway import _calls, fitted_objects

def threads():
    out = {{}}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{{tid}}/comm") as f:
                out[tid] = f.read().strip()
        except FileNotFoundError:
            pass
    return out

before = set(threads())
objs = fitted_objects(n_jobs=3)
report = {{}}
for name, thunk in _calls(*objs):
    counts = dict(_core._install_counts())
    thunk()
    after = dict(_core._install_counts())
    report[name] = sorted(k for k, c in after.items() if c > counts.get(k, 0))
strangers = [n for t, n in threads().items() if t not in before and not n.startswith("forestimp-")]
print(repr((report, strangers)))
"""


def fitted_objects(n_jobs):
    """Small fitted models for the thread-count script (same shapes as ``fitted``)."""
    X, y = make_classification(n_samples=600, n_features=8, n_informative=4, random_state=0)
    Xr, yr = make_regression(n_samples=600, n_features=8, random_state=0)
    clf = fi.RandomForestClassifier(n_estimators=20, oob_score=True, n_jobs=n_jobs)
    reg = fi.RandomForestRegressor(n_estimators=20, n_jobs=n_jobs)
    return clf.fit(X, y), reg.fit(Xr, yr), X, y, Xr, yr


def test_n_jobs_sizes_the_pool_and_the_global_pool_is_never_used():
    script = _THREADS_SCRIPT.format(tests=os.path.dirname(__file__))
    # Functions given n_jobs=2 explicitly above keep 2; the estimator's n_jobs (3) applies
    # to everything else.
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report, strangers = eval(out.stdout.strip().splitlines()[-1])
    assert strangers == [], f"threads outside the n_jobs pools: {strangers}"
    explicit = {name for name, _ in _calls(*fitted_objects(1)) if _passes_n_jobs(name)}
    for name, sizes in report.items():
        if name == "tree_arrays":  # sequential: a one-thread pool
            assert sizes == [1], (name, sizes)
            continue
        k = 2 if name in explicit else 3
        # Besides the n_jobs pool, only one-thread ones: reads of a model (pickle's bytes; the
        # trees' arrays every fit reads for its exported thresholds, forestimp._float32_routing).
        assert k in sizes and set(sizes) <= {k, 1}, (name, sizes)


def _passes_n_jobs(name: str) -> bool:
    return name in {
        "fit",
        "fit-et",
        "fit-hist",
        "local_mdi",
        "permutation-held-out",
        "permutation-oob",
        "local_permutation",
        "unbiased-air",
        "unbiased-mdi_oob",
        "context",
    }

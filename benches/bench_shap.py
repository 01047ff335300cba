"""TreeSHAP: ``forestimp.importance.shap_values`` against ``shap.TreeExplainer`` (same trees).

Data: ``make_classification(n_samples, n_features, n_informative=n_features // 2,
random_state=0)``; a ``RandomForestClassifier`` of ``--trees`` fully grown trees is fitted on
all rows and the first ``--explain`` rows are explained. shap cannot read forestimp models,
so it gets the same trees as its dictionary model (node arrays from
``Forest.tree_arrays``, leaf class frequencies divided by the number of trees): both sides
explain ``predict_proba`` of exactly the same forest, path-dependent, and the largest
difference between their values is printed. shap's C++ walk runs on one thread; forestimp
is timed with ``n_jobs=1`` and with ``--n-jobs``. Times are best of ``--repeats`` (other work
on the machine only ever adds time), with every run listed to show the spread.

Not a test: run it by hand, ``python benches/bench_shap.py`` (defaults: 5000 x 20, 100 trees,
1000 rows explained, 2 threads) or ``--quick`` for a smoke run. ``--interactions`` times the
interaction values instead (on ``--explain`` / 10 rows: they cost about 20 times more).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.datasets import make_classification

from forestimp import RandomForestClassifier
from forestimp.importance import shap_values


def runs(fn: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    """Wall-clock seconds of ``repeats`` calls, and the last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def shap_model(est: Any) -> dict[str, Any]:
    """The forest as shap's dictionary of trees (same as tests/python/test_shap.py)."""
    n = est.n_estimators
    trees = []
    for i in range(n):
        a = est.forest_.tree_arrays(i)
        trees.append(
            {
                "children_left": a["children_left"],
                "children_right": a["children_right"],
                "children_default": a["children_right"],
                "features": a["feature"],
                "thresholds": a["threshold"],
                "values": a["value"] / n,
                "node_sample_weight": a["weighted_n_node_samples"],
            }
        )
    return {"trees": trees, "base_offset": 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--explain", type=int, default=1000)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--interactions", action="store_true")
    ap.add_argument("--quick", action="store_true", help="1000 x 10, 10 trees, 200 rows")
    a = ap.parse_args()
    if a.quick:
        a.samples, a.features, a.trees, a.explain = 1000, 10, 10, 200
    import shap

    X, y = make_classification(a.samples, a.features, n_informative=a.features // 2, random_state=0)
    est = RandomForestClassifier(n_estimators=a.trees, random_state=0, n_jobs=a.n_jobs).fit(X, y)
    depth = max(int(est.forest_.tree_arrays(i)["children_left"].size) for i in range(a.trees))
    rows = X[: a.explain // 10 if a.interactions else a.explain]
    print(
        f"forestimp vs shap {shap.__version__}: {a.samples} x {a.features}, {a.trees} trees "
        f"(largest {depth} nodes), {len(rows)} rows explained"
        + (", interaction values" if a.interactions else "")
    )
    explainer = shap.TreeExplainer(shap_model(est))
    if a.interactions:
        peer = explainer.shap_interaction_values

        def ours(jobs: int) -> np.ndarray:
            return shap_values(est, rows, interactions=True, n_jobs=jobs).interaction_values
    else:
        peer = explainer.shap_values

        def ours(jobs: int) -> np.ndarray:
            return shap_values(est, rows, n_jobs=jobs).values

    t_shap, ref = runs(lambda: np.asarray(peer(rows)), a.repeats)
    t_one, v1 = runs(lambda: ours(1), a.repeats)
    t_par, vp = runs(lambda: ours(a.n_jobs), a.repeats)
    assert np.array_equal(v1, vp), "n_jobs changed the values"
    diff = float(np.abs(v1 - ref).max())

    def show(name: str, t: list[float]) -> None:
        listed = ", ".join(f"{s:.3f}" for s in t)
        ratio = min(t_shap) / min(t)
        print(f"  {name:<28} best {min(t):8.3f} s   runs: {listed}   shap / this: {ratio:6.1f}x")

    show("shap.TreeExplainer (1 thread)", t_shap)
    show("forestimp n_jobs=1", t_one)
    show(f"forestimp n_jobs={a.n_jobs}", t_par)
    print(f"  largest |forestimp - shap|: {diff:.1e}")


if __name__ == "__main__":
    main()

"""Gradient boosting (issue #23): forestimp against its peers, each fitted once per run.

Exact mode: ``GradientBoosting*(splitter="best")`` against scikit-learn's
``GradientBoosting*`` (same parameters: 100 rounds, depth 3, learning rate 0.1, all rows and
features, so the two fit the same trees) on ``make_classification`` / ``make_regression``,
on ``make_regression`` with every other column quantized to 2-40 levels (``mixed``),
and on statsmodels' ``randhie`` regression table, whose columns hold few values.

Histogram mode: ``splitter="hist"`` with 100 rounds of 31-leaf trees (best-first,
``max_leaf_nodes=31``, no depth limit), learning rate 0.1, 255 bins, 2 threads, against
LightGBM (``num_leaves=31``) and scikit-learn's ``HistGradientBoosting*`` (``max_leaf_nodes=31``,
no early stopping) on ``make_classification(100000, 50)`` / ``make_regression(100000, 50)``;
XGBoost (``tree_method="hist"``) when it is installed. Every fit is timed once (the best of
``--repeats`` fits), in this process, on an 80/20 split; held-out accuracy (classification) or
R² (regression) is printed beside.

Run: ``python benches/bench_boosting.py [--quick] [--repeats N] [--exact-only | --hist-only |
--sizes]`` (after ``pip install .``).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split

THREADS = 2
REPEATS = 1  # fits per contender, the best timed (--repeats)
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))

import forestimp as fi  # noqa: E402


def data(task: str, n: int, p: int) -> tuple[np.ndarray, ...]:
    if task == "randhie":
        # A real table of ties (statsmodels' RAND Health Insurance Experiment, 20 190 x 9,
        # few levels per column): the exact search reads lossless codes and kept bins.
        from statsmodels.datasets import randhie

        ds = randhie.load_pandas()
        X, y = ds.exog.to_numpy(np.float32), ds.endog.to_numpy()
        return tuple(train_test_split(X, y, test_size=0.2, random_state=0))
    if task == "classification":
        X, y = make_classification(n, p, n_informative=10, n_redundant=5, random_state=0)
    else:
        X, y = make_regression(n, p, n_informative=10, noise=1.0, random_state=0)
    if task == "mixed":
        # Every other column quantized to 2-40 levels (lossless byte codes), the others
        # continuous: the exact search ranks both kinds once per fit.
        rng = np.random.default_rng(0)
        for j in range(0, p, 2):
            q = int(rng.integers(2, 41))
            X[:, j] = np.digitize(X[:, j], np.quantile(X[:, j], np.linspace(0, 1, q + 1)[1:-1]))
    X = X.astype(np.float32)
    return tuple(train_test_split(X, y, test_size=0.2, random_state=0))


def timed(make: Callable[[], Any], X: np.ndarray, y: np.ndarray) -> tuple[float, Any]:
    best = float("inf")
    for _ in range(REPEATS):
        est = make()
        t = time.perf_counter()
        est.fit(X, y)
        best = min(best, time.perf_counter() - t)
    return best, est


def run(task: str, n: int, p: int, contenders: dict[str, Callable[[], Any]]) -> None:
    Xtr, Xte, ytr, yte = data(task, n, p)
    metric = "accuracy" if task == "classification" else "R2"
    n, p = len(ytr) + len(yte), Xtr.shape[1]
    print(f"\n{task}, n={n} ({len(ytr)} fitted), p={p}, {THREADS} threads")
    base = None
    for name, make in contenders.items():
        seconds, est = timed(make, Xtr, ytr)
        score = est.score(Xte, yte)
        base = base or seconds
        print(
            f"  {name:34s} {seconds:8.3f} s  x{seconds / base:6.2f} of first  {metric} {score:.4f}"
        )


def exact(task: str, n: int, p: int) -> None:
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    ours = (
        fi.GradientBoostingClassifier if task == "classification" else fi.GradientBoostingRegressor
    )
    peer = GradientBoostingClassifier if task == "classification" else GradientBoostingRegressor
    kw = {"n_estimators": 100, "max_depth": 3, "learning_rate": 0.1, "random_state": 0}
    run(
        task,
        n,
        p,
        {
            "forestimp best (n_jobs=2)": lambda: ours(**kw, n_jobs=THREADS),
            "forestimp best (n_jobs=1)": lambda: ours(**kw, n_jobs=1),
            "scikit-learn GradientBoosting": lambda: peer(**kw),
        },
    )


def hist(task: str, n: int, p: int) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    clf = task == "classification"
    ours = fi.GradientBoostingClassifier if clf else fi.GradientBoostingRegressor
    hgb = HistGradientBoostingClassifier if clf else HistGradientBoostingRegressor
    common = {"learning_rate": 0.1, "random_state": 0}
    contenders: dict[str, Callable[[], Any]] = {
        "forestimp hist": lambda: ours(
            splitter="hist",
            n_estimators=100,
            max_leaf_nodes=31,
            max_depth=None,
            n_jobs=THREADS,
            **common,
        ),
    }
    try:
        import lightgbm as lgb

        model = lgb.LGBMClassifier if clf else lgb.LGBMRegressor
        contenders["LightGBM"] = lambda model=model: model(
            n_estimators=100, num_leaves=31, n_jobs=THREADS, verbose=-1, **common
        )
    except ImportError:
        print("(LightGBM not installed)")
    contenders["scikit-learn HistGradientBoosting"] = lambda: hgb(
        max_iter=100, max_leaf_nodes=31, early_stopping=False, **common
    )
    try:
        import xgboost as xgb

        model = xgb.XGBClassifier if clf else xgb.XGBRegressor
        contenders["XGBoost hist"] = lambda model=model: model(
            n_estimators=100,
            tree_method="hist",
            max_leaves=31,
            grow_policy="lossguide",
            max_depth=0,
            n_jobs=THREADS,
            **common,
        )
    except ImportError:
        print("(XGBoost not installed: not timed)")
    run(task, n, p, contenders)


def sizes() -> None:
    """The exact booster alone on larger and smaller shapes (depth 3, n_jobs=2), with the
    process's peak RSS: the ranks and the lists of one tree take 16 bytes per cell."""
    import resource

    for n, p, rounds in ((100_000, 50, 20), (20_000, 400, 10), (5_000, 20, 100)):
        X, y = make_regression(n, p, n_informative=10, noise=1.0, random_state=0)
        X = X.astype(np.float32)
        est = fi.GradientBoostingRegressor(
            n_estimators=rounds, max_depth=3, random_state=0, n_jobs=THREADS
        )
        seconds, _ = timed(lambda est=est: est, X, y)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"exact {n} x {p}, {rounds} rounds: {seconds:.2f} s, peak RSS so far {rss:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10x fewer rows")
    ap.add_argument("--exact-only", action="store_true", help="skip the histogram mode")
    ap.add_argument("--hist-only", action="store_true", help="skip the exact mode")
    ap.add_argument("--sizes", action="store_true", help="only the exact booster's sizes")
    ap.add_argument("--repeats", type=int, default=1, help="fits per contender, best timed")
    args = ap.parse_args()
    global REPEATS
    REPEATS = max(1, args.repeats)
    if args.sizes:
        sizes()
        return
    scale = 10 if args.quick else 1
    if not args.hist_only:
        for task in ("classification", "regression", "mixed"):
            exact(task, 20000 // scale, 20)
        exact("randhie", 0, 0)
    if args.exact_only:
        return
    for task in ("classification", "regression"):
        hist(task, 100000 // scale, 50)


if __name__ == "__main__":
    main()

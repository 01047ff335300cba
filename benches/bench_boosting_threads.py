"""Gradient boosting at n_jobs 1 and 2 (issue #23): one tree's split search in parallel.

Two modes, each timed in paired, alternating runs so that a machine whose load changes
affects both thread counts alike; prints every fit, then the median and range of each
thread count and the speed-up:

* ``hist``: bench_boosting.py's hist fit (80 000 of make_classification /
  make_regression(100000, 50) rows, 100 rounds, 31 leaves best-first, learning rate 0.1);
  large nodes fill their histograms in parallel over features.
* ``exact``: ``splitter="best"``, 100 rounds of depth 3, learning rate 0.1, all rows and
  features, on 80 % of make_regression(20000, 20) (float32) and on statsmodels' randhie
  table (20 190 x 9, mostly integer-coded, all rows); large nodes search their candidate
  features in parallel.

The model is the same for any n_jobs (the scores printed are equal).

Run: ``PYTHONPATH=python python benches/bench_boosting_threads.py [--mode exact] [--reps 4]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator

import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split

import forestimp as fi

Case = tuple[str, Callable[[int], object], np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def hist_cases() -> Iterator[Case]:
    for task in ("classification", "regression"):
        if task == "classification":
            X, y = make_classification(100000, 50, n_informative=10, n_redundant=5, random_state=0)
            est = fi.GradientBoostingClassifier
        else:
            X, y = make_regression(100000, 50, n_informative=10, noise=1.0, random_state=0)
            est = fi.GradientBoostingRegressor
        Xtr, Xte, ytr, yte = train_test_split(
            X.astype(np.float32), y, test_size=0.2, random_state=0
        )

        def model(jobs: int, est: type = est) -> object:
            return est(
                splitter="hist",
                n_estimators=100,
                max_leaf_nodes=31,
                max_depth=None,
                learning_rate=0.1,
                n_jobs=jobs,
                random_state=0,
            )

        yield f"hist {task}", model, Xtr, ytr, Xte, yte


def exact_model(jobs: int) -> object:
    return fi.GradientBoostingRegressor(
        n_estimators=100, max_depth=3, learning_rate=0.1, n_jobs=jobs, random_state=0
    )


def exact_cases() -> Iterator[Case]:
    X, y = make_regression(20000, 20, n_informative=10, noise=1.0, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X.astype(np.float32), y, test_size=0.2, random_state=0)
    yield "exact regression 16 000 x 20", exact_model, Xtr, ytr, Xte, yte
    import statsmodels.api as sm

    frame = sm.datasets.randhie.load_pandas()
    X = frame.exog.to_numpy(np.float64)
    y = frame.endog.to_numpy(np.float64)
    yield "exact randhie 20 190 x 9", exact_model, X, y, X, y


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--mode", choices=("exact", "hist", "both"), default="both")
    args = ap.parse_args()
    cases: list[Case] = []
    if args.mode in ("exact", "both"):
        cases += exact_cases()
    if args.mode in ("hist", "both"):
        cases += hist_cases()
    for name, make, Xtr, ytr, Xte, yte in cases:
        times: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.reps):
            for jobs in times:
                model = make(jobs)
                t = time.perf_counter()
                model.fit(Xtr, ytr)  # type: ignore[attr-defined]
                times[jobs].append(time.perf_counter() - t)
                score = model.score(Xte, yte)  # type: ignore[attr-defined]
                print(f"{name} n_jobs={jobs} {times[jobs][-1]:.3f} s score {score:.4f}")
        for jobs, ts in times.items():
            print(
                f"{name} n_jobs={jobs}: median {np.median(ts):.3f} s, "
                f"range {min(ts):.3f}-{max(ts):.3f} s over {len(ts)} runs"
            )
        print(f"{name}: speed-up {np.median(times[1]) / np.median(times[2]):.2f}x")


if __name__ == "__main__":
    main()

"""Gradient boosting's histogram mode at n_jobs 1 and 2 (issue #23, item 2 of the
follow-up): bench_boosting.py's hist fit (80 000 of make_classification /
make_regression(100000, 50) rows, 100 rounds, 31 leaves best-first, learning rate 0.1),
timed in paired, alternating runs so that a machine whose load changes affects both
thread counts alike. Prints every fit, then the median and range of each thread count.

Run: ``PYTHONPATH=python python benches/bench_boosting_threads.py [--reps 4]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification, make_regression
from sklearn.model_selection import train_test_split

import forestimp as fi


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4)
    args = ap.parse_args()
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
        times: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.reps):
            for jobs in times:
                model = est(
                    splitter="hist",
                    n_estimators=100,
                    max_leaf_nodes=31,
                    max_depth=None,
                    learning_rate=0.1,
                    n_jobs=jobs,
                    random_state=0,
                )
                t = time.perf_counter()
                model.fit(Xtr, ytr)
                times[jobs].append(time.perf_counter() - t)
                score = model.score(Xte, yte)
                print(f"{task} n_jobs={jobs} {times[jobs][-1]:.3f} s score {score:.4f}")
        for jobs, ts in times.items():
            print(
                f"{task} n_jobs={jobs}: median {np.median(ts):.3f} s, "
                f"range {min(ts):.3f}-{max(ts):.3f} s over {len(ts)} runs"
            )


if __name__ == "__main__":
    main()

"""Per-call latency of small calls through the engine's doorway, median of many calls.

A 50-tree RF on make_classification(2000, 20), n_jobs=2: predict_proba of one row,
feature_importances_, and a pickle followed by a one-row predict (a sequential call, then a
parallel one). Run it once per build to compare them:

    PYTHONPATH=<build> python benches/bench_call_latency.py
"""

import pickle
import time

import numpy as np
from sklearn.datasets import make_classification

import forestimp as fi


def median_us(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def main() -> None:
    X, y = make_classification(2000, 20, random_state=0)
    est = fi.RandomForestClassifier(50, random_state=0, n_jobs=2).fit(X, y)
    row = X[:1]
    print("| call | median µs |")
    print("|---|---:|")
    print(f"| predict_proba, 1 row | {median_us(lambda: est.predict_proba(row), 300):.0f} |")
    print(f"| feature_importances_ | {median_us(lambda: est.feature_importances_, 300):.0f} |")
    both = lambda: (pickle.dumps(est), est.predict_proba(row))  # noqa: E731
    print(f"| pickle, then predict_proba of 1 row | {median_us(both, 100):.0f} |")


if __name__ == "__main__":
    main()

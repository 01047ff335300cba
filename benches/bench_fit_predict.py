"""Fit and predict_proba timings of RF, ET and the histogram RF, for an A/B of two builds.

The issue's workload: make_classification(100000, 50, n_informative=10), float32 C-order,
80 000 rows to fit and 20 000 to predict, ``--trees`` trees, ``--threads`` threads. Each model
is fitted and predicted ``--repeats`` times; the minimum and median of each are printed as a
Markdown table. Run it once per build, alternating, and compare the minima:

    PYTHONPATH=/path/to/build_a python benches/bench_fit_predict.py
    PYTHONPATH=/path/to/build_b python benches/bench_fit_predict.py
"""

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification

import forestimp as fi

MODELS = {
    "RF": (fi.RandomForestClassifier, {}),
    "ET": (fi.ExtraTreesClassifier, {}),
    "hist": (fi.RandomForestClassifier, {"splitter": "hist"}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trees", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    X, y = make_classification(100000, 50, n_informative=10, random_state=0)
    X = X.astype(np.float32)
    X_fit, y_fit, X_test = X[:80000], y[:80000], np.ascontiguousarray(X[80000:])
    print("| model | fit min s | fit median s | predict min s | predict median s |")
    print("|---|---:|---:|---:|---:|")
    for name in args.models.split(","):
        cls, kw = MODELS[name]
        fits, preds = [], []
        for _ in range(args.repeats):
            model = cls(n_estimators=args.trees, random_state=0, n_jobs=args.threads, **kw)
            start = time.perf_counter()
            model.fit(X_fit, y_fit)
            fits.append(time.perf_counter() - start)
            start = time.perf_counter()
            model.predict_proba(X_test)
            preds.append(time.perf_counter() - start)
        print(
            f"| {name} | {min(fits):.3f} | {np.median(fits):.3f} "
            f"| {min(preds):.4f} | {np.median(preds):.4f} |"
        )


if __name__ == "__main__":
    main()

"""predict_proba timing, min and median of several calls, for an A/B of two builds.

The issue's workload (make_classification(100000, 50, n_informative=10), float32 C-order,
80 000 rows to fit, 20 000 to predict), 50 trees of RF and of Extra-Trees fitted once; then
`predict_proba` on the held-out rows at n_jobs 1 and 2. A single call takes tens of
milliseconds, so the minimum of `--repeats` calls is the stable figure on a shared machine.

    python benches/bench_predict.py [--repeats 7] [--rows 20000]
"""

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification

import forestimp as fi


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rows", type=int, default=20000, help="rows to predict (tiled)")
    args = ap.parse_args()
    X, y = make_classification(100000, 50, n_informative=10, random_state=0)
    X = X.astype(np.float32)
    X_fit, y_fit, X_test = X[:80000], y[:80000], X[80000:]
    reps = -(-args.rows // len(X_test))
    X_test = np.ascontiguousarray(np.tile(X_test, (reps, 1))[: args.rows])
    print("| model | n_jobs | min s | median s |")
    print("|---|---:|---:|---:|")
    for name, cls in [("RF", fi.RandomForestClassifier), ("ET", fi.ExtraTreesClassifier)]:
        model = cls(n_estimators=50, random_state=0, n_jobs=2).fit(X_fit, y_fit)
        for n_jobs in (1, 2):
            model.set_params(n_jobs=n_jobs)
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                model.predict_proba(X_test)
                times.append(time.perf_counter() - start)
            print(f"| {name} | {n_jobs} | {min(times):.4f} | {np.median(times):.4f} |")


if __name__ == "__main__":
    main()

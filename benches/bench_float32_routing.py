"""What the exported thresholds cost at fit (issue #50, item 1).

Every fit on float64 data now sorts each split column once and looks up every threshold in
it (``forestimp/_float32_routing.py``), so that ``estimators_`` / ``to_sklearn()`` route the
training rows as the forest does. This prints, for RF and ET on ``--n`` rows of
``--p`` standard-normal float64 columns (the worst case: no value is a float32), the
median and range over ``--repeats`` of the whole fit and of that step alone, its share, and
how many thresholds moved. float32 X skips the step.

    python benches/bench_float32_routing.py [--n 100000 --p 20 --trees 50 --repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import forestimp as fi
from forestimp import _float32_routing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, args.p))
    y = X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=args.n)
    print(f"{args.n} x {args.p} float64, {args.trees} trees, n_jobs={args.n_jobs}")
    print(f"{'model':<24}{'fit s':>14}{'routing s':>16}{'share':>8}{'moved':>8}{'ties':>6}")
    for cls in (fi.RandomForestRegressor, fi.ExtraTreesRegressor):
        fits, steps = [], []
        for _ in range(args.repeats):
            est = cls(args.trees, min_samples_leaf=5, n_jobs=args.n_jobs, random_state=0)
            start = time.perf_counter()
            est.fit(X, y)
            fits.append(time.perf_counter() - start)
            start = time.perf_counter()
            nodes, _, ties = _float32_routing.corrections(est.forest_, X, 0, args.n_jobs)
            steps.append(time.perf_counter() - start)
        fit, step = statistics.median(fits), statistics.median(steps)
        print(
            f"{cls.__name__:<24}{fit:>7.2f} ({min(fits):.2f}-{max(fits):.2f})"
            f"{step:>8.3f} ({min(steps):.3f}-{max(steps):.3f}){step / fit:>7.1%}"
            f"{len(nodes):>8}{ties:>6}"
        )


if __name__ == "__main__":
    main()

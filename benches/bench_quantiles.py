"""Quantile regression forests (issue #53): the time of 9 quantiles against the mean
prediction of the same forest, against quantile-forest (zillow, ``pip install
quantile-forest``; skipped when absent) on a forest of the same size, and the memory of the
leaf values against the forest's model bytes; held-out coverage of the 90 % band beside.

    python benches/bench_quantiles.py            # 20 000 training rows, 100 000 predicted
    python benches/bench_quantiles.py --quick    # 10x fewer

Data: 10 uniform columns, Friedman #1's target with noise growing with the first column.
Both forests: 100 trees, ``min_samples_leaf=5``, bootstrap, all features, 2 threads; the
quantiles 0.1, 0.2, ..., 0.9. Times are the best of ``--repeats`` calls.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import forestimp as fi

QUANTILES = [k / 10 for k in range(1, 10)]


def make(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 10))
    mean = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3]
    return X, mean + 5 * X[:, 4] + (0.5 + 2 * X[:, 0]) * rng.normal(size=n)


def best(f, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times)


def coverage(band: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((y >= band[:, 0]) & (y <= band[:, -1])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trees", type=int, default=100)
    args = ap.parse_args()
    n_train, n_test = (2_000, 10_000) if args.quick else (20_000, 100_000)
    X, y = make(n_train, 0)
    Xt, yt = make(n_test, 1)
    kw = dict(n_estimators=args.trees, min_samples_leaf=5, max_features=1.0, random_state=0)
    ours = fi.RandomForestRegressor(**kw, n_jobs=2, store_leaf_values=True).fit(X, y)
    mean_s = best(lambda: ours.predict(Xt), args.repeats)
    quant_s = best(lambda: ours.predict_quantiles(Xt, QUANTILES), args.repeats)
    band = ours.predict_quantiles(Xt, [0.05, 0.95])
    leaf_bytes = sum(a.nbytes for a in ours._leaf_values.parts())
    forest_bytes = len(ours.forest_.to_bytes())
    print(f"{n_train} training rows, {n_test} predicted, {args.trees} trees, 9 quantiles")
    print(f"forestimp mean predict      {mean_s:8.3f} s")
    print(f"forestimp predict_quantiles {quant_s:8.3f} s  ({quant_s / mean_s:.1f}x the mean)")
    print(f"leaf values {leaf_bytes / 2**20:.1f} MiB, forest {forest_bytes / 2**20:.1f} MiB")
    print(f"90 % band coverage (held out): forestimp {coverage(band, yt):.3f}")
    try:
        from quantile_forest import RandomForestQuantileRegressor
    except ImportError:
        print("quantile-forest: not installed (pip install quantile-forest), skipped")
        return
    theirs = RandomForestQuantileRegressor(**kw, n_jobs=2).fit(X, y)
    theirs_s = best(lambda: theirs.predict(Xt, quantiles=QUANTILES), args.repeats)
    their_band = theirs.predict(Xt, quantiles=[0.05, 0.95])
    print(
        f"quantile-forest predict     {theirs_s:8.3f} s  (forestimp / quantile-forest "
        f"{quant_s / theirs_s:.2f}); 90 % band coverage {coverage(their_band, yt):.3f}"
    )


if __name__ == "__main__":
    main()

"""Quantile regression forests (issue #53): the time of 9 quantiles against the mean
prediction of the same forest, against quantile-forest (zillow, ``pip install
quantile-forest``; skipped when absent) and R's ranger ``quantreg = TRUE`` (through
``Rscript``, ``benches/_quantiles_ranger.R``; skipped when Rscript or ranger is absent) on a
forest of the same size, and the memory of the leaf values against the forest's model bytes;
held-out coverage of the 90 % band beside each.

    python benches/bench_quantiles.py            # 20 000 training rows, 100 000 predicted
    python benches/bench_quantiles.py --quick    # 10x fewer

Data: 10 uniform columns, Friedman #1's target with noise growing with the first column.
Every forest: 100 trees, bootstrap, all features (ranger ``mtry`` = 10), 2 threads; leaves of
at least 5 rows (``min_samples_leaf=5``; ranger 0.14.1 has no minimum leaf size, its
``min.node.size = 5`` stops splitting nodes of 5 rows or fewer, so its leaves hold 1 to 5);
the quantiles 0.1, 0.2, ..., 0.9. Times are the best of ``--repeats`` calls, ranger's measured
inside R on the same data (X as float32).

What each quantile is. forestimp: Meinshausen's weighted quantile of every in-bag training
target of the leaves a row reaches. quantile-forest with its default ``max_samples_leaf=1``
keeps ONE training target drawn at random in each leaf, so a row's quantiles are those of one
value a tree (``max_samples_leaf=None``, measured too, keeps them all: Meinshausen's
definition). ranger also keeps one target per leaf, drawn among all the training rows that
reach it (in-bag or not), and takes R's ``quantile(type = 7)`` of the tree values in an R
loop over the rows. One target a leaf is cheaper, and a coarser estimate of the distribution.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import forestimp as fi

QUANTILES = [k / 10 for k in range(1, 10)]
BAND = [0.05, 0.95]


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
    ap.add_argument("--no-ranger", action="store_true")
    args = ap.parse_args()
    n_train, n_test = (2_000, 10_000) if args.quick else (20_000, 100_000)
    X, y = make(n_train, 0)
    Xt, yt = make(n_test, 1)
    kw = dict(n_estimators=args.trees, min_samples_leaf=5, max_features=1.0, random_state=0)
    ours = fi.RandomForestRegressor(**kw, n_jobs=2, store_leaf_values=True).fit(X, y)
    mean_s = best(lambda: ours.predict(Xt), args.repeats)
    quant_s = best(lambda: ours.predict_quantiles(Xt, QUANTILES), args.repeats)
    band = ours.predict_quantiles(Xt, BAND)
    leaf_bytes = ours._leaf_values.nbytes
    forest_bytes = len(ours.forest_.to_bytes())
    print(f"{n_train} training rows, {n_test} predicted, {args.trees} trees, 9 quantiles")
    print(f"{'forestimp mean predict':<36} {mean_s:8.3f} s")
    print(
        f"{'forestimp predict_quantiles':<36} {quant_s:8.3f} s  ({quant_s / mean_s:.1f}x the mean)"
    )
    print(
        f"leaf values {leaf_bytes / 2**20:.1f} MiB in memory, forest {forest_bytes / 2**20:.1f} "
        "MiB (model bytes)"
    )
    print(f"90 % band coverage (held out): forestimp {coverage(band, yt):.3f}")
    quantile_forest(X, y, Xt, yt, kw, quant_s, args.repeats)
    if not args.no_ranger:
        ranger(X, y, Xt, yt, quant_s, args)


def quantile_forest(X, y, Xt, yt, kw, quant_s: float, repeats: int) -> None:
    """quantile-forest on forestimp's trees (``_quantiles_same_trees``), then timed with its
    default ``max_samples_leaf=1`` (one random training target kept per leaf) and with
    ``None`` (all of them), unweighted (its default) and with Meinshausen's weights."""
    try:
        from quantile_forest import RandomForestQuantileRegressor
    except ImportError:
        print("quantile-forest: not installed (pip install quantile-forest), skipped")
        return
    import _quantiles_same_trees as same

    diffs = same.compare()
    print("quantile-forest on forestimp's trees (no bootstrap, 1 000 rows, 11 quantiles):")
    print("  largest |difference| for q > 0, and at q = 0 (weighted_leaves=True):")
    print("  " + ", ".join(f"{h} {d:.1e} / {d0:.1e}" for h, (d, d0) in diffs.items()))
    print("quantile-forest: max_samples_leaf=1 (its default) keeps one random training target")
    print("  per leaf, None keeps them all; weighted_leaves=True weighs them as Meinshausen")
    print("  (as forestimp), its default False weighs every leaf sample alike")
    fitted = {}
    for leaf, weighted in ((1, False), (None, False), (None, True)):
        if leaf not in fitted:
            fitted[leaf] = RandomForestQuantileRegressor(**kw, n_jobs=2, max_samples_leaf=leaf).fit(
                X, y
            )
        theirs, how = fitted[leaf], dict(weighted_leaves=weighted)
        theirs_s = best(lambda m=theirs, h=how: m.predict(Xt, quantiles=QUANTILES, **h), repeats)
        their_band = theirs.predict(Xt, quantiles=BAND, **how)
        label = f"quantile-forest leaf={leaf}" + (" weighted" if weighted else "")
        print(
            f"{label:<36} {theirs_s:8.3f} s  (forestimp / quantile-forest "
            f"{quant_s / theirs_s:.2f}); 90 % band coverage {coverage(their_band, yt):.3f}"
        )


def ranger(X, y, Xt, yt, quant_s: float, args: argparse.Namespace) -> None:
    """ranger's ``quantreg = TRUE`` forest of the same size, timed inside R."""
    import _peerlib as L

    why = L.ranger_available()
    if why is not None:
        print(f"ranger quantreg: {why}")
        return
    split = L.RangerData((X, Xt, y, yt))
    try:
        rows = L.measure_ranger_quantiles(
            [split], BAND, args.trees, 2, 5, repeats=args.repeats, timed=QUANTILES
        )
    finally:
        split.close()
    if rows is None:
        print("ranger quantreg: failed (stderr), skipped")
        return
    (row,) = rows
    print(
        f"{'ranger quantreg':<36} {row['predict_s']:8.3f} s  (forestimp / ranger "
        f"{quant_s / row['predict_s']:.3f}); fit {row['fit_s']:.2f} s; "
        f"90 % band coverage {coverage(row['quantiles'], yt):.3f}"
    )


if __name__ == "__main__":
    main()

"""Coverage and width of 90 % prediction intervals on held-out rows of real tables (#53):
every ``predict_interval`` method of forestimp (``"quantile"``: its ``predict_quantiles`` band), the
quantile forests of quantile-forest (``pip install quantile-forest``; skipped when absent)
and R's ranger (``quantreg = TRUE`` through ``Rscript``, ``benches/_quantiles_ranger.R``;
skipped when Rscript or ranger is absent), averaged over random splits.

    python benches/bench_intervals.py            # 20 splits, about 1.5 minutes on 2 cores
    python benches/bench_intervals.py --quick    # 4 splits, randhie cut to 2 000: ~15 s

Tables, shipped with statsmodels (read from the installed package, no download):

* ``engel`` (235 rows): household food expenditure on income, Koenker & Bassett's example of
  heteroscedastic noise (its spread grows with income). One feature.
* ``randhie`` (20 190 rows): the RAND health insurance experiment, ``mdvis``, the number of
  doctor visits (a count: 31 % zeros, a long right tail), on its 9 covariates. Each split
  draws ``--max-rows`` rows (default 8 000) of it at random first.

Each split (seed ``s``): the rows shuffled by ``default_rng(s)``, 75 % to fit, 25 % held out.
Every forest: 100 trees, bootstrap, all features, leaves of at least 5 rows
(``min_samples_leaf=5``; ranger's ``min.node.size = 5``, after which its leaves hold 1 to 5),
``random_state=s``, 2 threads. Bands: ``predict_interval(alpha=0.1, method=m)`` for each
method the estimator has (those it refuses are listed and skipped); the 5 % and 95 %
quantiles of quantile-forest with ``max_samples_leaf=1`` (its default: ONE training target
drawn at random is kept per leaf, so a row's quantiles are those of one value a tree) and
``None`` with ``weighted_leaves=True`` (every target, Meinshausen's weights: forestimp's
estimator), and of ranger (one target per leaf,
drawn among all the training rows that reach it, R's ``quantile(type = 7)``).

Printed per table and band: the coverage (held-out rows with ``lower <= y <= upper``) as its
mean over the splits ± the standard error of that mean (standard deviation / √splits; the
splits share rows, so it is a rough one), whether the mean is within ±0.02 of 0.90, the mean
width, and the guarantee the method claims (``docs/intervals.md``). A count target has ties:
an interval's ends fall on whole numbers and the rows equal to them are inside, so coverage
above 0.90 is expected there.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import forestimp as fi
from forestimp.exceptions import InvalidParameterError

ALPHA = 0.1
BAND = [ALPHA / 2, 1 - ALPHA / 2]
TREES, LEAF = 100, 5
# Every method name predict_interval has had or may have; those it refuses are skipped.
METHODS = ("jackknife+", "conformal", "quantile")
CLAIMS = {
    "jackknife+": ">= 1 - 2 alpha = 0.80, finite samples",
    "conformal": "~ 0.90 asymptotically",
}
NO_CLAIM = "none in finite samples"


def engel() -> tuple[np.ndarray, np.ndarray, str]:
    from statsmodels.datasets import engel

    frame = engel.load_pandas().data
    X = frame[["income"]].to_numpy(dtype=np.float64)
    return X, frame["foodexp"].to_numpy(dtype=np.float64), "food expenditure on income"


def randhie() -> tuple[np.ndarray, np.ndarray, str]:
    from statsmodels.datasets import randhie

    frame = randhie.load_pandas().data
    X = frame.drop(columns="mdvis").to_numpy(dtype=np.float64)
    return X, frame["mdvis"].to_numpy(dtype=np.float64), "doctor visits (count)"


def splits(n: int, count: int, max_rows: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(fit rows, held-out rows)`` of each split: ``min(n, max_rows)`` rows shuffled by
    seed ``s``, the first 75 % to fit."""
    out = []
    for s in range(count):
        rows = np.random.default_rng(s).permutation(n)[: min(n, max_rows)]
        cut = int(round(0.75 * len(rows)))
        out.append((rows[:cut], rows[cut:]))
    return out


def ours(s: int) -> Any:
    return fi.RandomForestRegressor(
        n_estimators=TREES, min_samples_leaf=LEAF, max_features=1.0, random_state=s, n_jobs=2,
        store_leaf_values=True,
    )  # fmt: skip


def forestimp_bands(X, y, parts, skipped: dict[str, str]) -> dict[str, list[np.ndarray]]:
    """Each band of forestimp on each split's held-out rows."""
    bands: dict[str, list[np.ndarray]] = {}
    for s, (fit_rows, test_rows) in enumerate(parts):
        est = ours(s).fit(X[fit_rows], y[fit_rows])
        Xt = X[test_rows]
        for method in METHODS:
            if method in skipped:
                continue
            try:
                band = est.predict_interval(Xt, alpha=ALPHA, method=method)
            except (AttributeError, InvalidParameterError) as e:
                skipped[method] = str(e).splitlines()[0][:120]
                continue
            bands.setdefault(f"forestimp {method}", []).append(band)
    return bands


def quantile_forest_bands(X, y, parts) -> dict[str, list[np.ndarray]]:
    try:
        from quantile_forest import RandomForestQuantileRegressor
    except ImportError:
        print("[skip] quantile-forest: not installed (pip install quantile-forest)")
        return {}
    bands: dict[str, list[np.ndarray]] = {}
    for leaf in (1, None):
        for s, (fit_rows, test_rows) in enumerate(parts):
            est = RandomForestQuantileRegressor(
                n_estimators=TREES, min_samples_leaf=LEAF, max_features=1.0, random_state=s,
                n_jobs=2, max_samples_leaf=leaf,
            ).fit(X[fit_rows], y[fit_rows])  # fmt: skip
            # leaf=None: Meinshausen's weights (its default weighs every leaf sample alike).
            band = est.predict(X[test_rows], quantiles=BAND, weighted_leaves=leaf is None)
            bands.setdefault(f"quantile-forest leaf={leaf}", []).append(band)
    return bands


def ranger_bands(X, y, parts) -> dict[str, list[np.ndarray]]:
    import _peerlib as L

    why = L.ranger_available()
    if why is not None:
        print(f"[skip] ranger quantreg: {why}")
        return {}
    data = [L.RangerData((X[a], X[b], y[a], y[b])) for a, b in parts]
    try:
        rows = L.measure_ranger_quantiles(data, BAND, TREES, 2, LEAF)
    finally:
        for d in data:
            d.close()
    return {} if rows is None else {"ranger quantreg": [row["quantiles"] for row in rows]}


def summary(bands: list[np.ndarray], ys: list[np.ndarray]) -> tuple[float, float, float]:
    """``(mean coverage, its standard error, mean width)`` over the splits."""
    cover = np.array(
        [np.mean((y >= b[:, 0]) & (y <= b[:, 1])) for b, y in zip(bands, ys, strict=True)]
    )
    se = float(cover.std(ddof=1) / np.sqrt(len(cover))) if len(cover) > 1 else float("nan")
    width = float(np.mean([np.mean(b[:, 1] - b[:, 0]) for b in bands]))
    return float(cover.mean()), se, width


def claim(name: str) -> str:
    method = name.removeprefix("forestimp ")
    return CLAIMS.get(method, NO_CLAIM)


def run_table(load: Callable, args: argparse.Namespace, skipped: dict[str, str]) -> None:
    X, y, what = load()
    parts = splits(len(y), args.splits, args.max_rows)
    start = time.perf_counter()
    with warnings.catch_warnings():
        # A training row drawn into every tree has no out-of-bag prediction (rare at 100).
        warnings.simplefilter("ignore", UserWarning)
        bands = forestimp_bands(X, y, parts, skipped)
    bands.update(quantile_forest_bands(X, y, parts))
    if not args.no_ranger:
        bands.update(ranger_bands(X, y, parts))
    ys = [y[test] for _, test in parts]
    n_fit, n_test = len(parts[0][0]), len(parts[0][1])
    print(
        f"\n{load.__name__}: {what}, {n_fit} rows fitted / {n_test} held out of {len(y)}, "
        f"{args.splits} splits ({time.perf_counter() - start:.0f} s)"
    )
    print("| band | coverage ± s.e. | within 0.90 ± 0.02 | mean width | claims |")
    print("|---|---|---|---|---|")
    for name, per_split in bands.items():
        mean, se, width = summary(per_split, ys)
        within = "yes" if abs(mean - (1 - ALPHA)) <= 0.02 else "no"
        print(f"| {name} | {mean:.3f} ± {se:.3f} | {within} | {width:.4g} | {claim(name)} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 splits, randhie cut to 2 000 rows")
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--max-rows", type=int, default=8_000, help="rows drawn per split")
    ap.add_argument("--no-ranger", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.splits, args.max_rows = 4, 2_000
    skipped: dict[str, str] = {}
    for load in (engel, randhie):
        run_table(load, args, skipped)
    for method, why in skipped.items():
        print(f"[skip] predict_interval(method={method!r}): {why}")


if __name__ == "__main__":
    main()

"""Held-out accuracy / R² with 20 % of X missing (MCAR), forestimp against scikit-learn.

The issue's target: on data with 20 % of values missing, forestimp's score is at least
scikit-learn's with the same parameters. ``make_classification`` and ``make_regression``
(``--rows`` rows, 20 features), values blanked by a seeded RNG in both the training and the
held-out halves; the same estimator class and parameters in both libraries, ``--seeds``
forests each. Prints both mean scores and the fit CPU-time ratio (forestimp / scikit-learn).

A second table (``--table hist``) scores the histogram models on the same data: forestimp's
``splitter="hist"`` forest and booster (NaN in its own bin) against scikit-learn's
``HistGradientBoosting*`` and LightGBM, which handle NaN natively; the boosters with the same
shape (100 rounds, learning rate 0.1, 31 leaves grown best-first, at least 20 rows a leaf,
255 bins, no early stopping), fit CPU time relative to scikit-learn's:

    PYTHONPATH=python python benches/bench_missing.py --table all
"""

import argparse
import time

import numpy as np
import sklearn.ensemble as ske
from sklearn.datasets import make_classification, make_regression
from threadpoolctl import threadpool_limits

try:
    import lightgbm
except ImportError:  # the table then has no LightGBM column
    lightgbm = None

import forestimp as fi

PAIRS = {
    "RF classifier": (fi.RandomForestClassifier, ske.RandomForestClassifier, "clf"),
    "ET classifier": (fi.ExtraTreesClassifier, ske.ExtraTreesClassifier, "clf"),
    "RF regressor": (fi.RandomForestRegressor, ske.RandomForestRegressor, "reg"),
    "ET regressor": (fi.ExtraTreesRegressor, ske.ExtraTreesRegressor, "reg"),
}


def blank(X: np.ndarray, rate: float, seed: int) -> np.ndarray:
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


BOOST = dict(n_estimators=100, learning_rate=0.1)
HGB = {
    "clf": lambda s: ske.HistGradientBoostingClassifier(
        max_iter=100, learning_rate=0.1, early_stopping=False, random_state=s
    ),
    "reg": lambda s: ske.HistGradientBoostingRegressor(
        max_iter=100, learning_rate=0.1, early_stopping=False, random_state=s
    ),
}
HIST_MODELS = {
    # name: (task, forestimp model, LightGBM's model); each is compared with HGB[task]
    "hist RF classifier": (
        "clf",
        lambda s: fi.RandomForestClassifier(splitter="hist", random_state=s, n_jobs=1),
        None,
    ),
    "hist GB classifier": (
        "clf",
        lambda s: fi.GradientBoostingClassifier(
            splitter="hist",
            max_leaf_nodes=31,
            max_depth=None,
            min_samples_leaf=20,
            random_state=s,
            **BOOST,
        ),
        lambda s: lightgbm.LGBMClassifier(random_state=s, n_jobs=1, verbose=-1, **BOOST),
    ),
    "hist RF regressor": (
        "reg",
        lambda s: fi.RandomForestRegressor(splitter="hist", random_state=s, n_jobs=1),
        None,
    ),
    "hist GB regressor": (
        "reg",
        lambda s: fi.GradientBoostingRegressor(
            splitter="hist",
            max_leaf_nodes=31,
            max_depth=None,
            min_samples_leaf=20,
            random_state=s,
            **BOOST,
        ),
        lambda s: lightgbm.LGBMRegressor(random_state=s, n_jobs=1, verbose=-1, **BOOST),
    ),
}


def hist_table(data: dict, n: int, seeds: int) -> None:
    """The histogram models' held-out scores and fit CPU times (ratio to scikit-learn's
    HistGradientBoosting of the same task, which the forests are compared with too)."""
    print(
        "| model | forestimp | HistGradientBoosting | LightGBM "
        "| fit CPU forestimp / HGB | fit CPU LightGBM / HGB |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, (task, ours, lgbm) in HIST_MODELS.items():
        X, y = data[task]
        makers = {"ours": ours, "hgb": HGB[task]}
        if lightgbm is not None and lgbm is not None:
            makers["lgbm"] = lgbm
        scores: dict = {k: [] for k in makers}
        cpu = dict.fromkeys(makers, 0.0)
        for seed in range(seeds):
            for key, make in makers.items():
                est = make(seed)
                # One thread each (HGB's OpenMP threads would count their spinning).
                with threadpool_limits(1):
                    start = time.process_time()
                    est.fit(X[:n], y[:n])
                    cpu[key] += time.process_time() - start
                scores[key].append(est.score(X[n:], y[n:]))
        lg, lg_cpu = "–", "–"
        if "lgbm" in scores:
            lg, lg_cpu = f"{np.mean(scores['lgbm']):.4f}", f"{cpu['lgbm'] / cpu['hgb']:.2f}"
        print(
            f"| {name} | {np.mean(scores['ours']):.4f} | {np.mean(scores['hgb']):.4f} | {lg} "
            f"| {cpu['ours'] / cpu['hgb']:.2f} | {lg_cpu} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rate", type=float, default=0.2)
    ap.add_argument("--table", choices=["forests", "hist", "all"], default="forests")
    args = ap.parse_args()
    n = args.rows
    Xc, yc = make_classification(2 * n, 20, n_informative=8, random_state=0)
    Xr, yr = make_regression(2 * n, 20, n_informative=8, noise=10.0, random_state=0)
    data = {"clf": (blank(Xc, args.rate, 1), yc), "reg": (blank(Xr, args.rate, 2), yr)}
    print(f"{n} training rows, {n} held out, 20 features, {args.rate:.0%} missing (MCAR)")
    if args.table in ("hist", "all"):
        hist_table(data, n, args.seeds)
    if args.table == "hist":
        return
    print("| model | forestimp score | scikit-learn score | fit CPU ratio |")
    print("|---|---:|---:|---:|")
    for name, (ours, theirs, task) in PAIRS.items():
        X, y = data[task]
        scores = {"ours": [], "sk": []}
        cpu = {"ours": 0.0, "sk": 0.0}
        for seed in range(args.seeds):
            for key, cls in (("ours", ours), ("sk", theirs)):
                est = cls(n_estimators=args.trees, random_state=seed, n_jobs=1)
                start = time.process_time()
                est.fit(X[:n], y[:n])
                cpu[key] += time.process_time() - start
                scores[key].append(est.score(X[n:], y[n:]))
        print(
            f"| {name} | {np.mean(scores['ours']):.4f} | {np.mean(scores['sk']):.4f} "
            f"| {cpu['ours'] / cpu['sk']:.2f} |"
        )


if __name__ == "__main__":
    main()

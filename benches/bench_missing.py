"""Held-out accuracy / R² with 20 % of X missing (MCAR), forestimp against scikit-learn.

The issue's target: on data with 20 % of values missing, forestimp's score is at least
scikit-learn's with the same parameters. ``make_classification`` and ``make_regression``
(``--rows`` rows, 20 features), values blanked by a seeded RNG in both the training and the
held-out halves; the same estimator class and parameters in both libraries, ``--seeds``
forests each. Prints both mean scores and the fit CPU-time ratio (forestimp / scikit-learn):

    PYTHONPATH=python python benches/bench_missing.py
"""

import argparse
import time

import numpy as np
import sklearn.ensemble as ske
from sklearn.datasets import make_classification, make_regression

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4000)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rate", type=float, default=0.2)
    args = ap.parse_args()
    n = args.rows
    Xc, yc = make_classification(2 * n, 20, n_informative=8, random_state=0)
    Xr, yr = make_regression(2 * n, 20, n_informative=8, noise=10.0, random_state=0)
    data = {"clf": (blank(Xc, args.rate, 1), yc), "reg": (blank(Xr, args.rate, 2), yr)}
    print(f"{n} training rows, {n} held out, 20 features, {args.rate:.0%} missing (MCAR)")
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

"""Gradient boosting (issue #23), accuracy target: for every loss, the same parameters give
5-fold CV scores within 0.01 of scikit-learn's ``GradientBoosting*``.

Regression losses on diabetes (R²), ``log_loss`` and ``exponential`` on breast cancer and
``log_loss`` (multinomial, 10 trees per round) on digits (accuracy). Both libraries fit 100
rounds of depth-3 trees, learning rate 0.1, with their default ``subsample=1`` and
``max_features=None``, on the same ``KFold(5, shuffle=True, random_state=0)`` folds; X is
float32 (scikit-learn's own cast). Timings are not the point here (see
``bench_boosting.py``) but are printed.

With ``--seeds N`` every case runs over N CV seeds (``s = 0..N-1`` shuffles the folds and
seeds both models) and prints each library's mean and standard deviation over seeds, and the
mean, standard deviation and range of the paired difference; ``--losses`` keeps some losses.

Run: ``PYTHONPATH=python python benches/bench_boosting_accuracy.py [--seeds 10]
[--losses quantile,absolute_error]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

import forestimp as fi

CASES = [
    ("diabetes", load_diabetes, "squared_error", False),
    ("diabetes", load_diabetes, "absolute_error", False),
    ("diabetes", load_diabetes, "huber", False),
    ("diabetes", load_diabetes, "quantile", False),
    ("breast cancer", load_breast_cancer, "log_loss", True),
    ("breast cancer", load_breast_cancer, "exponential", True),
    ("digits", load_digits, "log_loss", True),
]


def scores(name: str, load, loss: str, classifier: bool, seed: int) -> tuple[float, float]:
    """Mean 5-fold CV score of forestimp and scikit-learn with folds and models seeded by
    ``seed``."""
    kw = {"n_estimators": 100, "max_depth": 3, "learning_rate": 0.1, "random_state": seed}
    X, y = load(return_X_y=True)
    X = X.astype(np.float32)
    if classifier:
        cv = StratifiedKFold(5, shuffle=True, random_state=seed)
        ours, peer = fi.GradientBoostingClassifier, GradientBoostingClassifier
    else:
        cv = KFold(5, shuffle=True, random_state=seed)
        ours, peer = fi.GradientBoostingRegressor, GradientBoostingRegressor
    a = cross_val_score(ours(loss=loss, **kw), X, y, cv=cv).mean()
    b = cross_val_score(peer(loss=loss, **kw), X, y, cv=cv).mean()
    return a, b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--losses", default="")
    args = ap.parse_args()
    keep = set(args.losses.split(",")) if args.losses else None
    cases = [c for c in CASES if keep is None or c[2] in keep]
    if args.seeds > 1:
        print(f"{'data':14s} {'loss':15s} {'forestimp':>16s} {'sklearn':>16s} {'diff':>26s}")
        for name, load, loss, classifier in cases:
            pairs = np.array([scores(name, load, loss, classifier, s) for s in range(args.seeds)])
            a, b, d = pairs[:, 0], pairs[:, 1], pairs[:, 0] - pairs[:, 1]
            print(
                f"{name:14s} {loss:15s} {a.mean():8.4f} +- {a.std(ddof=1):.4f} "
                f"{b.mean():8.4f} +- {b.std(ddof=1):.4f} {d.mean():+8.4f} +- {d.std(ddof=1):.4f} "
                f"[{d.min():+.4f}, {d.max():+.4f}] over {args.seeds} seeds"
            )
        return
    main_one(cases)


def main_one(cases: list) -> None:
    kw = {"n_estimators": 100, "max_depth": 3, "learning_rate": 0.1, "random_state": 0}
    print(f"{'data':14s} {'loss':15s} {'forestimp':>10s} {'sklearn':>10s} {'diff':>8s}  seconds")
    for name, load, loss, classifier in cases:
        X, y = load(return_X_y=True)
        X = X.astype(np.float32)
        if classifier:
            cv = StratifiedKFold(5, shuffle=True, random_state=0)
            ours, peer = fi.GradientBoostingClassifier, GradientBoostingClassifier
        else:
            cv = KFold(5, shuffle=True, random_state=0)
            ours, peer = fi.GradientBoostingRegressor, GradientBoostingRegressor
        t0 = time.perf_counter()
        a = cross_val_score(ours(loss=loss, **kw), X, y, cv=cv).mean()
        t1 = time.perf_counter()
        b = cross_val_score(peer(loss=loss, **kw), X, y, cv=cv).mean()
        t2 = time.perf_counter()
        print(
            f"{name:14s} {loss:15s} {a:10.4f} {b:10.4f} {a - b:+8.4f}  "
            f"{t1 - t0:.2f} vs {t2 - t1:.2f}"
        )


if __name__ == "__main__":
    main()

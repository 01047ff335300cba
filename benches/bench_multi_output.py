"""CPU seconds (one thread, best of 2) of multi-output fits, forestimp against scikit-learn
on the same data in the same run: 20 000 x 20 float32, three outputs (regression, and the
same outputs cut at their medians for classification), 20 trees.

    PYTHONPATH=python python benches/bench_multi_output.py
"""

import time

import numpy as np
from sklearn import ensemble as sk

import forestimp as fi


def best_of_2(cls, X: np.ndarray, y: np.ndarray) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        cls(n_estimators=20, random_state=0, n_jobs=1).fit(X, y)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 20)).astype(np.float32)
    signal = np.c_[X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 2]) * X[:, 3], X[:, 4] - X[:, 5]]
    Y = signal + 0.1 * rng.normal(size=signal.shape)
    labels = (Y > np.median(Y, axis=0)).astype(int)
    cases = [
        ("RF-reg", fi.RandomForestRegressor, sk.RandomForestRegressor, Y),
        ("ET-reg", fi.ExtraTreesRegressor, sk.ExtraTreesRegressor, Y),
        ("RF-clf", fi.RandomForestClassifier, sk.RandomForestClassifier, labels),
        ("ET-clf", fi.ExtraTreesClassifier, sk.ExtraTreesClassifier, labels),
    ]
    for name, ours, theirs, y in cases:
        a, b = best_of_2(ours, X, y), best_of_2(theirs, X, y)
        print(f"{name}: forestimp {a:.2f} s, scikit-learn {b:.2f} s ({b / a:.2f}x)")


if __name__ == "__main__":
    main()

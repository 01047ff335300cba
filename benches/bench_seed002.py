"""Seed 002's experiment (Alonso Liso; ``shared/research`` digest, part B §B.2) on a real
regression data set that a package ships: random-forest versus gradient-boosting importances,
their pruning paths (10 % of the features removed per step, by the model's own importances),
and the stability of their rankings across 20 seeds.

Data: scikit-learn's diabetes (442 rows, 10 inputs), shuffled with a fixed seed into a
training and a test half. Models, with the thesis' best parameters on Bike Sharing
(Table 4.2.1): ``RandomForestRegressor(n_estimators=200, max_depth=10, max_features=0.5,
min_samples_split=4, min_samples_leaf=2)`` and ``GradientBoostingRegressor(n_estimators=200,
max_depth=4, max_features=0.5, min_samples_split=8, min_samples_leaf=2)`` (learning rate 0.1,
subsample 1, as the thesis), both forestimp's. Importances are the normalized MDI
(``feature_importances_``) of each.

Printed: (1) both importance profiles at seed 0 and their rankings; (2) the pruning paths:
test MSE after refitting on the kept features at each step; (3) stability: the minimum
number of swaps (inversions) between the rankings of every pair of the 20 seeds, mean and
maximum, and the features whose rank moves.

Run: ``PYTHONPATH=python python benches/bench_seed002.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import train_test_split

import forestimp as fi

SEEDS = 20


def models(seed: int) -> dict[str, object]:
    return {
        "RF": fi.RandomForestRegressor(
            n_estimators=200,
            max_depth=10,
            max_features=0.5,
            min_samples_split=4,
            min_samples_leaf=2,
            random_state=seed,
            n_jobs=2,
        ),
        "GB": fi.GradientBoostingRegressor(
            n_estimators=200,
            max_depth=4,
            max_features=0.5,
            min_samples_split=8,
            min_samples_leaf=2,
            random_state=seed,
            n_jobs=2,
        ),
    }


def swaps(a: np.ndarray, b: np.ndarray) -> int:
    """Minimum number of adjacent swaps turning ranking ``a`` into ``b`` (inversions)."""
    pos = {f: i for i, f in enumerate(b)}
    seq = [pos[f] for f in a]
    return sum(1 for i, j in itertools.combinations(range(len(seq)), 2) if seq[i] > seq[j])


def pruning_path(name: str, Xtr, ytr, Xte, yte, names) -> list[tuple[int, float, str]]:
    """Refit on the features kept, removing ``max(1, round(0.1 p))`` of the least important
    ones per step (by the model refitted at that step)."""
    kept = np.arange(Xtr.shape[1])
    path = []
    step = max(1, round(0.1 * Xtr.shape[1]))
    while len(kept) >= 1:
        est = models(0)[name]
        est.fit(Xtr[:, kept], ytr)
        mse = mean_squared_error(yte, est.predict(Xte[:, kept]))
        path.append((len(kept), mse, ",".join(names[kept])))
        if len(kept) == 1:
            break
        order = np.argsort(-est.feature_importances_, kind="stable")
        kept = np.sort(kept[order[: max(1, len(kept) - step)]])
    return path


def main() -> None:
    data = load_diabetes()
    X, y, names = data.data.astype(np.float32), data.target, np.array(data.feature_names)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=0)
    rankings: dict[str, list[np.ndarray]] = {"RF": [], "GB": []}
    importances: dict[str, np.ndarray] = {}
    for seed in range(SEEDS):
        for name, est in models(seed).items():
            est.fit(Xtr, ytr)
            imp = est.feature_importances_
            rankings[name].append(np.argsort(-imp, kind="stable"))
            if seed == 0:
                importances[name] = imp
    print("(1) normalized MDI at seed 0")
    print(f"{'feature':8s} {'RF':>7s} {'GB':>7s}")
    for j, n in enumerate(names):
        print(f"{n:8s} {importances['RF'][j]:7.3f} {importances['GB'][j]:7.3f}")
    for name in ("RF", "GB"):
        print(f"{name} ranking: {' > '.join(names[rankings[name][0]])}")
    common = swaps(rankings["RF"][0], rankings["GB"][0])
    print(f"RF vs GB ranking at seed 0: {common} swaps (of {math.comb(len(names), 2)} pairs)")
    print("\n(2) pruning paths (10 % per step), test MSE")
    for name in ("RF", "GB"):
        for k, mse, kept in pruning_path(name, Xtr, ytr, Xte, yte, names):
            print(f"  {name} {k:2d} features  MSE {mse:8.1f}  [{kept}]")
    print(f"\n(3) ranking stability over {SEEDS} seeds (swaps between every pair of seeds)")
    for name in ("RF", "GB"):
        r = rankings[name]
        s = [swaps(a, b) for a, b in itertools.combinations(r, 2)]
        ranks = np.array([np.argsort(x) for x in r])  # rank of every feature per seed
        moving = [n for j, n in enumerate(names) if ranks[:, j].min() != ranks[:, j].max()]
        print(
            f"  {name}: mean {np.mean(s):.2f}, max {max(s)} swaps; "
            f"top feature always {names[r[0][0]]}: {all(x[0] == r[0][0] for x in r)}; "
            f"features whose rank moves: {', '.join(moving) or 'none'}"
        )


if __name__ == "__main__":
    main()

"""What a categorical column costs a fit (issue #52): 100 000 rows of 20 float32 columns and
one 50-level category, declared categorical or read as its codes, one thread, CPU seconds
(best of 2) with the training R² beside.

    python benches/bench_categorical_cost.py
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

import forestimp as fi


def main() -> None:
    rng = np.random.default_rng(0)
    n, p, levels = 100_000, 20, 50
    X = rng.normal(size=(n, p)).astype(np.float32)
    codes = rng.integers(0, levels, n)
    y = X[:, 0] + rng.normal(size=levels)[codes] + 0.3 * rng.normal(size=n)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    frame["cat"] = pd.Categorical(codes)
    as_codes = frame.assign(cat=codes.astype(np.float32))
    models = {
        "GB hist 50 rounds": lambda: fi.GradientBoostingRegressor(
            n_estimators=50, max_depth=None, max_leaf_nodes=31, splitter="hist", n_jobs=1
        ),
        "RF hist 20 trees": lambda: fi.RandomForestRegressor(
            n_estimators=20, splitter="hist", max_features=0.5, n_jobs=1, min_samples_leaf=5
        ),
        "RF best 10 trees": lambda: fi.RandomForestRegressor(
            n_estimators=10, max_features=0.5, n_jobs=1, min_samples_leaf=5
        ),
    }

    def timed(make, data, **kw) -> tuple[float, float]:
        best = np.inf
        for _ in range(2):
            est = make().set_params(random_state=0, **kw)
            start = time.process_time()
            est.fit(data, y)
            best = min(best, time.process_time() - start)
        return best, est.score(data, y)

    for name, make in models.items():
        native = timed(make, frame)
        ordinal = timed(make, as_codes, categorical_features=None)
        print(
            f"{name}: native {native[0]:.2f} s (R² {native[1]:.3f}), codes {ordinal[0]:.2f} s "
            f"(R² {ordinal[1]:.3f}), ratio {native[0] / ordinal[0]:.2f}"
        )


if __name__ == "__main__":
    main()

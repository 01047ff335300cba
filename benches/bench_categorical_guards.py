"""Held-out score of native categorical splits under the guards of the best set (issue #52)
against ordinal codes, on one table of ``bench_categorical.py``.

    python benches/bench_categorical_guards.py flights "0,1,0,0,0;0,1,0,0;0,20,0,0.01" rf

Each setting is ``smoothing,min_samples,max_side,min_share[,penalty]``
(``category_smoothing``, ``min_category_samples``, ``max_category_side`` (0: None),
``min_category_share``, ``category_penalty``, 1 when left out); models:
``rf`` (exact), ``hist`` (RF hist), ``gbh`` / ``gb`` (boosters, hist / exact); 50 trees or
100 rounds, 2 threads, the table's 80/20 split.
"""

from __future__ import annotations

import sys
import time

from _categorical_tables import LOADERS, _codes, make_split

import forestimp as fi


def model(name: str, classification: bool) -> tuple[type, dict]:
    if name in ("rf", "hist"):
        cls = fi.RandomForestClassifier if classification else fi.RandomForestRegressor
        kw = dict(n_estimators=50, n_jobs=2, random_state=0)
        return cls, (kw | {"splitter": "hist"} if name == "hist" else kw)
    cls = fi.GradientBoostingClassifier if classification else fi.GradientBoostingRegressor
    splitter = "hist" if name == "gbh" else "best"
    kw = dict(n_estimators=100, max_depth=None, max_leaf_nodes=31, min_samples_leaf=20)
    return cls, kw | dict(splitter=splitter, n_jobs=2, random_state=0)


def main(argv: list[str]) -> None:
    table = LOADERS[argv[0]](100_000)
    settings = argv[1].split(";") if len(argv) > 1 else ["0,1,0,0,0", "0,1,0,0"]
    split = make_split(table, 128)
    X, y = table.X, table.y
    Xtr, Xte, ytr, yte = X.iloc[split.train], X.iloc[split.test], y[split.train], y[split.test]
    for name in argv[2].split(",") if len(argv) > 2 else ["rf"]:
        cls, kw = model(name, table.task == "classification")
        for setting in ["ordinal", *settings]:
            if setting == "ordinal":
                est = cls(**kw, categorical_features=None)
                train, test = _codes(Xtr, table.cats), _codes(Xte, table.cats)
            else:
                s, m, side, share, *penalty = setting.split(",")
                guards = dict(category_smoothing=float(s), min_category_samples=int(m))
                guards |= dict(max_category_side=int(side) or None, min_category_share=float(share))
                guards |= dict(category_penalty=float(penalty[0]) if penalty else 1.0)
                est, train, test = cls(**kw, **guards), Xtr, Xte
            start = time.perf_counter()
            est.fit(train, ytr)
            fit = time.perf_counter() - start
            print(
                f"{table.name} {name:5s} {setting:14s} {est.score(test, yte):.4f}  fit {fit:.1f} s"
            )


if __name__ == "__main__":
    main(sys.argv[1:])

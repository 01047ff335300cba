"""The booster's exact search of ranked columns changes no model.

A booster's depth-first exact trees of a table without lossless codes read every column's
rows in an order sorted once per fit (``src/data/ranks.rs``) and split every node from
lists partitioned at each split, instead of sorting each node's values. ``boosting_ranks.json``
holds the digests of these fits made by the engine *before* ranks existed (every node
sorted), so this test checks that the models are the same, bit for bit.

The data: continuous columns, columns of repeated values with more levels than codes take
(300 to 600 of 700 rows), tables mixing these with columns of lossless byte codes (ranked
too; before ranks their bins were summed and subtracted), float64 and float32, C and Fortran
order; every loss, subsample,
real weights with zeros, max_features above and below p/2, per-tree feature subsets, leaf
rules, deep trees, early stopping; and tables that are not ranked (a column holding both
-0.0 and 0.0, NaN, best-first trees), whose models must not change either.

Regenerate only for a change meant to change models:
``FORESTIMP_GOLDEN_WRITE=1 python -m pytest tests/python/test_boosting_ranks.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import forestimp as fi

GOLDEN = Path(__file__).with_name("boosting_ranks.json")
WRITE = os.environ.get("FORESTIMP_GOLDEN_WRITE") == "1"

R, C = fi.GradientBoostingRegressor, fi.GradientBoostingClassifier


def _data() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    n, p = 700, 7
    X = rng.normal(size=(n, p))
    X[:, 1] = rng.normal(size=n)
    X[:, 2] = np.round(X[:, 2] * 400) / 10  # repeated values, about 570 levels
    X[:, 3] = rng.integers(0, 2000, n) * 0.37  # repeated values, about 590 levels
    y = X[:, 0] * 2 + np.sin(X[:, 2]) + X[:, 3] * 0.01 + rng.normal(size=n) * 0.3
    zeros = X.copy()
    zeros[:5, 4], zeros[5:9, 4] = 0.0, -0.0
    const = X.copy()
    const[:, 5] = 1.5
    nan = np.where(rng.random(X.shape) < 0.1, np.nan, X)
    w = rng.uniform(0, 2, n)
    w[::17] = 0.0
    classes3 = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    mixed = X.copy()
    mixed[:, 0] = np.round(X[:, 0] * 3)  # about 20 levels: lossless byte codes
    mixed[:, 5] = rng.integers(0, 3, n)
    return {
        "X": X,
        "zeros": zeros,
        "const": const,
        "nan": nan,
        "mixed": mixed,
        "y": y,
        "y2": (y > np.median(y)).astype(int),
        "y3": classes3,
        "w": w,
    }


D = _data()

CASES: list[tuple[str, type, str, str, bool, dict[str, Any]]] = [
    # (name, estimator, X, y, weighted, parameters)
    *[
        (f"{loss}", R, "X", "y", loss == "huber", {"loss": loss, "max_depth": 4})
        for loss in ("squared_error", "absolute_error", "huber", "quantile")
    ],
    ("log_loss", C, "X", "y2", False, {}),
    ("log_loss3", C, "X", "y3", False, {"n_estimators": 8}),
    ("exponential", C, "X", "y2", False, {"loss": "exponential"}),
    ("subsample", R, "X", "y", True, {"subsample": 0.6}),
    ("subsample3", C, "X", "y3", False, {"subsample": 0.7, "n_estimators": 6}),
    ("max_features6", R, "X", "y", False, {"max_features": 6}),
    ("max_features4", R, "X", "y", False, {"max_features": 4}),
    ("max_features2", R, "X", "y", False, {"max_features": 2}),
    ("tree_features", R, "X", "y", False, {"tree_features": 5}),
    ("leaf_rules", R, "X", "y", False, {"min_samples_leaf": 7, "min_samples_split": 20}),
    ("weight_fraction", R, "X", "y", True, {"min_weight_fraction_leaf": 0.05}),
    ("deep", R, "X", "y", False, {"max_depth": None, "n_estimators": 3}),
    ("early", R, "X", "y", False, {"n_iter_no_change": 3, "validation_fraction": 0.2}),
    ("mixed", R, "mixed", "y", False, {}),
    ("mixed_weighted", R, "mixed", "y", True, {"subsample": 0.8}),
    ("mixed_log_loss3", C, "mixed", "y3", False, {"n_estimators": 6}),
    ("both_zeros", R, "zeros", "y", False, {}),
    ("constant", R, "const", "y", False, {}),
    ("nan", R, "nan", "y", False, {"n_estimators": 6}),
    ("best_first", R, "X", "y", False, {"max_leaf_nodes": 9}),
]


def _fit_digest(case: tuple[str, type, str, str, bool, dict[str, Any]], layout: str) -> str:
    _, est, xname, yname, weighted, params = case
    dtype, order = {"f64C": (np.float64, "C"), "f32F": (np.float32, "F")}[layout]
    X = np.asarray(D[xname], dtype=dtype, order=order)
    kw = {"n_estimators": 12, "random_state": 0, **params}
    digests = set()
    for n_jobs in (1, 2):
        m = est(n_jobs=n_jobs, **kw).fit(X, D[yname], sample_weight=D["w"] if weighted else None)
        digests.add(hashlib.sha1(bytes(m.booster_.to_bytes())).hexdigest()[:16])
    assert len(digests) == 1, "n_jobs changed the model"
    return digests.pop()


def _golden() -> dict[str, str]:
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


@pytest.mark.parametrize("layout", ["f64C", "f32F"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_ranked_boosters_are_the_sorted_boosters(case, layout) -> None:
    key = f"{case[0]}-{layout}"
    got = _fit_digest(case, layout)
    if WRITE:
        golden = _golden()
        golden[key] = got
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
        return
    assert got == _golden()[key], key

"""Model bytes pinned for the split paths ``golden.json`` and ``lossless_codes.json`` leave
out: missing values in every splitter, sparse X, boosters (ranked, best-first, histogram),
monotonic constraints, absolute error, wide integer codes, and a real-valued histogram fit
with every feature a candidate (code lists read row by row and by bin).

Issue #51 moves the split search into one route table, one row scan and one bin scan; none
of it may change a model. Each case names the route it exercises (the route table of
``src/tree/split/``); the digest is the SHA-256 of its model bytes. Regenerate only for a
change meant to change models (and bump the model format then):
``FORESTIMP_ROUTE_WRITE=1 python -m pytest tests/python/test_route_digests.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.sparse import csc_matrix, csr_matrix

import forestimp as fi

DIGESTS = Path(__file__).with_name("route_digests.json")
WRITE = os.environ.get("FORESTIMP_ROUTE_WRITE") == "1"


def _table(n: int, seed: int, nan: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian, rounded (ties), 6-level and 300-level integer codes, binary; a fraction
    ``nan`` of the first four columns missing."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(size=(n, 2)),
            np.round(rng.normal(size=n), 1),
            rng.integers(0, 6, n),
            rng.integers(0, 300, n),
            rng.integers(0, 2, n),
        ]
    ).astype(np.float64)
    y_reg = X[:, 0] + np.sin(X[:, 1]) + 0.2 * X[:, 3] + 0.003 * X[:, 4] + 0.3 * rng.normal(size=n)
    y_clf = np.digitize(y_reg, [-0.5, 0.8])
    if nan:
        X[:, :4][rng.random((n, 4)) < nan] = np.nan
    return X, y_clf, y_reg


def _sparse(n: int, seed: int) -> tuple[Any, np.ndarray, np.ndarray]:
    X, y_clf, y_reg = _table(n, seed)
    X[np.random.default_rng(seed + 1).random(X.shape) < 0.6] = 0.0
    return X, y_clf, y_reg


def _model_bytes(est: Any) -> bytes:
    return (est.booster_ if hasattr(est, "booster_") else est.forest_).to_bytes()


def _fit(make: Callable[[], Any], data: Callable[[], tuple], target: str, wrap=None) -> bytes:
    X, y_clf, y_reg = data()
    X = wrap(X) if wrap is not None else X
    return _model_bytes(make().fit(X, y_clf if target == "clf" else y_reg))


T = dict(random_state=0)
CASES: dict[str, Callable[[], bytes]] = {
    # Rows 10/13/14: the exact search with NaN in values and codes (three passes).
    "rf-nan-clf": lambda: _fit(
        lambda: fi.RandomForestClassifier(8, **T), lambda: _table(600, 1, 0.15), "clf"
    ),
    # Row 13 with random thresholds (no digest pinned it before).
    "et-nan-reg": lambda: _fit(
        lambda: fi.ExtraTreesRegressor(8, **T), lambda: _table(600, 2, 0.15), "reg"
    ),
    "rp-random-nan-clf": lambda: _fit(
        lambda: fi.RandomPatchesClassifier(8, splitter="random", **T),
        lambda: _table(600, 3, 0.1),
        "clf",
    ),
    # Rows 5-8, 12: histograms with NaN, every feature a candidate (lists, then bins).
    "rf-hist-nan-kp-reg": lambda: _fit(
        lambda: fi.RandomForestRegressor(8, splitter="hist", max_features=1.0, **T),
        lambda: _table(1500, 4, 0.1),
        "reg",
    ),
    # Row 5 both ways (by row and by bin) on real values, every feature a candidate.
    "rf-hist-real-kp-reg": lambda: _fit(
        lambda: fi.RandomForestRegressor(8, splitter="hist", max_features=1.0, **T),
        lambda: _table(3000, 5),
        "reg",
    ),
    # Row 17: sparse entries and absent columns, best and random.
    "rf-sparse-clf": lambda: _fit(
        lambda: fi.RandomForestClassifier(8, **T), lambda: _sparse(600, 6), "clf", csc_matrix
    ),
    "et-sparse-reg": lambda: _fit(
        lambda: fi.ExtraTreesRegressor(8, **T), lambda: _sparse(600, 7), "reg", csr_matrix
    ),
    # Row 15: a 300-level integer column in the wide codes (boosters keep them).
    "gb-wide-reg": lambda: _fit(
        lambda: fi.GradientBoostingRegressor(n_estimators=15, max_depth=4, **T),
        lambda: _table(800, 8),
        "reg",
    ),
    # Row 1: ranked code lists of depth-first boosters, multiclass (K trees a round).
    "gb-ranked-clf": lambda: _fit(
        lambda: fi.GradientBoostingClassifier(n_estimators=10, max_depth=3, subsample=0.8, **T),
        lambda: _table(600, 9),
        "clf",
    ),
    # Best-first boosters (max_leaf_nodes): no lists, no kept bins.
    "gb-best-first-reg": lambda: _fit(
        lambda: fi.GradientBoostingRegressor(n_estimators=10, max_leaf_nodes=8, **T),
        lambda: _table(600, 10),
        "reg",
    ),
    # Rows 7-8: the booster's histograms with NaN, child scans in parallel.
    "gb-hist-nan-reg": lambda: _fit(
        lambda: fi.GradientBoostingRegressor(
            n_estimators=10, splitter="hist", max_depth=4, n_jobs=2, **T
        ),
        lambda: _table(1500, 11, 0.1),
        "reg",
    ),
    "gb-nan-huber-reg": lambda: _fit(
        lambda: fi.GradientBoostingRegressor(n_estimators=10, loss="huber", max_depth=3, **T),
        lambda: _table(600, 12, 0.1),
        "reg",
    ),
    # Monotonic constraints in the exact and random searches.
    "rf-mono-reg": lambda: _fit(
        lambda: fi.RandomForestRegressor(8, monotonic_cst=[1, 0, 0, 1, 1, 0], **T),
        lambda: _table(600, 13),
        "reg",
    ),
    "et-mono-reg": lambda: _fit(
        lambda: fi.ExtraTreesRegressor(8, monotonic_cst=[1, -1, 0, 1, 0, 0], **T),
        lambda: _table(600, 14),
        "reg",
    ),
    # Rows 10-11 through the median: absolute error, exact and random, NaN in one.
    "rf-ae-reg": lambda: _fit(
        lambda: fi.RandomForestRegressor(6, criterion="absolute_error", **T),
        lambda: _table(500, 15),
        "reg",
    ),
    "et-ae-nan-reg": lambda: _fit(
        lambda: fi.ExtraTreesRegressor(6, criterion="absolute_error", **T),
        lambda: _table(500, 16, 0.1),
        "reg",
    ),
    # Rows 2-4 and 16: deep coded trees (pairs, 3-4 rows, kept code bins) with K = p.
    "rf-coded-kp-clf": lambda: _fit(
        lambda: fi.RandomForestClassifier(8, max_features=1.0, **T),
        lambda: _table(2000, 17),
        "clf",
    ),
}


def _digest(case: str) -> str:
    return hashlib.sha256(CASES[case]()).hexdigest()


@pytest.fixture(scope="module")
def pinned() -> dict[str, str]:
    if WRITE:
        table = {case: _digest(case) for case in CASES}
        DIGESTS.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        return table
    return json.loads(DIGESTS.read_text())


def test_every_case_is_pinned(pinned):
    assert sorted(pinned) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_model_bytes_are_pinned(case, pinned):
    assert _digest(case) == pinned[case], f"{case}: the model bytes changed"

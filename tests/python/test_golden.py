"""Golden outputs: every model's bytes, predictions and importances, pinned bit for bit.

Refactoring the engine must not change any model. Each case fits one estimator on data with
continuous, low-cardinality, binary and constant columns (so sorted scans, random thresholds,
histogram bins, code lists and constant-feature draws all run), then hashes its model bytes
and every output of the public API. ``tests/python/golden.json`` holds the digests.

Regenerate the table only for a change that is meant to change models (and bump the model
format version then): ``FORESTIMP_GOLDEN_WRITE=1 python -m pytest tests/python/test_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

import forestimp as fi
from forestimp.datasets import make_led
from forestimp.importance import (
    context,
    local_mdi,
    local_permutation,
    mdi,
    permutation,
    unbiased,
)

GOLDEN = Path(__file__).with_name("golden.json")
WRITE = os.environ.get("FORESTIMP_GOLDEN_WRITE") == "1"


def _table(n: int, seed: int, dtype=np.float64, order: str = "C"):
    """Columns: 3 Gaussian, 2 integer codes (6 and 40 values), 1 binary, 1 constant, 1
    Gaussian rounded to 1 decimal (ties); the class depends on the first five."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(size=(n, 3)),
            rng.integers(0, 6, n),
            rng.integers(0, 40, n),
            rng.integers(0, 2, n),
            np.full(n, 3.0),
            np.round(rng.normal(size=n), 1),
        ]
    ).astype(dtype)
    s = X[:, 0] + 0.5 * X[:, 1] - X[:, 2] + 0.3 * (X[:, 3] > 2) + 0.02 * X[:, 4]
    s = s + 0.4 * rng.normal(size=n)
    y_clf = np.digitize(s, [-0.5, 0.7])
    y_reg = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * X[:, 3] + 0.2 * rng.normal(size=n)
    return np.asarray(X, order=order), y_clf, y_reg


def _led(n: int, seed: int):
    X, y = make_led(n_samples=n, random_state=seed)
    return np.asarray(X, dtype=np.float64), np.asarray(y)


# name: (estimator class, kind, constructor arguments, data variant)
CASES = {
    "rf-gini": (fi.RandomForestClassifier, "clf", {"oob_score": True}, "f64"),
    "rf-entropy-f32-F": (fi.RandomForestClassifier, "clf", {"criterion": "entropy"}, "f32F"),
    "rf-depth-leafmin": (
        fi.RandomForestClassifier,
        "clf",
        {"max_depth": 6, "min_samples_leaf": 3, "max_features": 0.5},
        "f64",
    ),
    "rf-maxleaf-balanced": (
        fi.RandomForestClassifier,
        "clf",
        {"max_leaf_nodes": 30, "class_weight": "balanced_subsample", "max_samples": 0.6},
        "f64",
    ),
    "rf-reg": (fi.RandomForestRegressor, "reg", {"oob_score": True}, "f64"),
    "rf-reg-weights": (fi.RandomForestRegressor, "reg", {"max_features": 1.0}, "weights"),
    "rf-hist-clf": (fi.RandomForestClassifier, "clf", {"splitter": "hist"}, "f64"),
    "rf-hist-clf-bins": (
        fi.RandomForestClassifier,
        "clf",
        {"splitter": "hist", "max_bins": 16, "max_features": None},
        "f32F",
    ),
    "rf-hist-reg": (fi.RandomForestRegressor, "reg", {"splitter": "hist"}, "f64"),
    "rf-hist-reg-leaves": (
        fi.RandomForestRegressor,
        "reg",
        {"splitter": "hist", "max_leaf_nodes": 50, "min_samples_leaf": 4},
        "weights",
    ),
    "et-gini": (fi.ExtraTreesClassifier, "clf", {}, "f64"),
    "et-entropy-bootstrap": (
        fi.ExtraTreesClassifier,
        "clf",
        {"criterion": "entropy", "bootstrap": True, "oob_score": True},
        "f32F",
    ),
    "et-reg": (fi.ExtraTreesRegressor, "reg", {"min_samples_split": 5}, "f64"),
    "et-reg-weights-leaves": (
        fi.ExtraTreesRegressor,
        "reg",
        {"max_leaf_nodes": 40, "bootstrap": True},
        "weights",
    ),
    "rp-random": (fi.RandomPatchesClassifier, "clf", {}, "f64"),
    "rp-best-reg": (fi.RandomPatchesRegressor, "reg", {"splitter": "best"}, "f64"),
    "rp-hist": (
        fi.RandomPatchesClassifier,
        "clf",
        {"splitter": "hist", "bootstrap": True},
        "f64",
    ),
    "trt-entropy": (fi.TotallyRandomizedTreesClassifier, "clf", {"criterion": "entropy"}, "f64"),
    "trt-reg": (fi.TotallyRandomizedTreesRegressor, "reg", {}, "f32F"),
    "trt-multiway-led": (
        fi.TotallyRandomizedTreesClassifier,
        "led",
        {"criterion": "entropy", "multiway": True},
        "led",
    ),
    "et-multiway-led": (
        fi.ExtraTreesClassifier,
        "led",
        {"max_features": 3, "multiway": True, "bootstrap": True},
        "led",
    ),
}


def _data(kind: str, variant: str):
    if kind == "led":
        X, y = _led(400, 3)
        return X, y, None, X[:50], y[:50]
    n = 2500 if "hist" in variant else 700
    dtype = np.float32 if variant.startswith("f32") else np.float64
    order = "F" if variant.endswith("F") else "C"
    X, yc, yr = _table(n + 200, 5, dtype, order)
    y = yc if kind == "clf" else yr
    w = None
    if variant == "weights":
        w = 0.5 + np.random.default_rng(9).integers(0, 4, n) / 2
    return X[:n], y[:n], w, X[n:], y[n:]


def _context_scores(est, X, y, kind: str) -> np.ndarray:
    labels = np.asarray(y) % 2 if kind == "led" else X[:, 5]
    res = context(est, X, y, context=labels, n_permutations=3, random_state=1)
    return np.concatenate([res.importances_mean, res.absolute.ravel(), res.signed.ravel()])


def _digest(parts: list[tuple[str, object]]) -> dict[str, str]:
    out = {}
    for name, value in parts:
        h = hashlib.sha256()
        if isinstance(value, bytes):
            h.update(value)
        else:
            a = np.ascontiguousarray(np.asarray(value))
            h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
        out[name] = h.hexdigest()[:20]
    return out


def _outputs(case: str) -> dict[str, str]:
    cls, kind, kwargs, variant = CASES[case]
    X, y, w, Xt, yt = _data(kind, variant)
    est = cls(n_estimators=12, random_state=7, **kwargs).fit(X, y, sample_weight=w)
    parts: list[tuple[str, object]] = [
        ("bytes", est.forest_.to_bytes()),
        ("predict", est.predict(Xt)),
        ("apply", est.apply(Xt)),
        ("decision_path", est.decision_path(Xt)[0].indices),
        ("feature_importances", est.feature_importances_),
        ("mdi", mdi(est).importances_mean),
        ("mdi_per_tree", mdi(est).per_tree),
        ("mdi_by_depth", mdi(est, by_depth=True).by_depth),
        ("local_mdi", local_mdi(est, Xt).values),
        ("held_out_permutation", permutation(est, Xt, yt, n_repeats=2, random_state=1).importances),
        ("local_permutation", local_permutation(est, Xt, yt, random_state=2).values),
        ("context", _context_scores(est, Xt, yt, kind)),
    ]
    if hasattr(est, "predict_proba"):
        parts.append(("predict_proba", est.predict_proba(Xt)))
    if getattr(est, "oob_score", False):
        parts.append(("oob_score", np.float64(est.oob_score_)))
    oob = (
        est.bootstrap
        or kwargs.get("max_samples") is not None
        or cls
        in (
            fi.RandomPatchesClassifier,
            fi.RandomPatchesRegressor,
        )
    )
    if oob:
        parts.append(("oob_permutation", permutation(est, X, y, oob=True, random_state=3).per_tree))
        parts.append(("mdi_oob", unbiased(est, X, y, method="mdi_oob").per_tree))
    if kind != "led":
        parts.append(("air", unbiased(est, X, y, method="air", random_state=4).per_tree))
    return _digest(parts)


@pytest.fixture(scope="module")
def golden():
    if WRITE:
        table = {case: _outputs(case) for case in sorted(CASES)}
        GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_match_the_golden_table(case, golden):
    got = _outputs(case)
    want = golden[case]
    assert set(got) == set(want), "the case's outputs changed: update the golden table"
    changed = [name for name in sorted(got) if got[name] != want[name]]
    assert not changed, f"{case}: changed outputs {changed}"

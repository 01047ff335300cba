"""Lossless codes in the exact and random splitters change no model.

A column with at most 256 distinct values is split from one-byte codes (counted or
summed into bins) instead of its sorted values. ``lossless_codes.json`` holds the digests
of these fits made by the engine *before* the codes existed (every column sorted), so this
test checks that the trees are the same, bit for bit: model bytes and predictions.

The data mix what the codes must get right: few levels, exactly 256 and 257 levels,
negative and fractional levels, a column holding both -0.0 and 0.0, huge values,
constant and continuous columns, integer and real regression targets (bins are exact for
the first only), unit, integer and fractional weights. The ``wide`` cases have columns of
300 to 600 levels on 4 000 rows, which wide (two-byte) codes bin in the larger nodes; their
digests were made by the engine before wide codes existed (sorted there). The last six
cases draw K >= p/2 candidates with whole sums, where the exact search keeps the coded
columns' bins and subtracts them (``src/tree/split/state/kept_codes.rs``); their digests were
made by the engine with those bins disabled (every node gathering its codes).
The ``coded`` cases have a code for every column and sums that are not whole (real
targets or weights), where the exact search grows subtrees of up to 1 024 rows from lists
of the codes (``src/tree/split/source/listed.rs``); their digests were made by the engine before
those lists (every node gathering its codes).

Regenerate only for a change meant to change models:
``FORESTIMP_GOLDEN_WRITE=1 python -m pytest tests/python/test_lossless_codes.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_digits

import forestimp as fi

GOLDEN = Path(__file__).with_name("lossless_codes.json")
WRITE = os.environ.get("FORESTIMP_GOLDEN_WRITE") == "1"


def _table(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    big = np.array([-1e300, -1.5e300, 1e300, 1.7e300, 0.0])
    return np.column_stack(
        [
            rng.integers(0, 2, n),  # binary
            rng.integers(-3, 4, n) * 0.1,  # negative, fractional levels
            rng.integers(0, 20, n),
            rng.integers(0, 256, n),  # at most 256 levels
            np.r_[np.arange(257), rng.integers(0, 257, n - 257)],  # 257 levels: sorted
            rng.choice([-0.0, 0.0, 1.0, -2.0], n),  # -0.0 and 0.0 compare equal
            rng.choice(big, n),  # near the ends of the float range
            np.full(n, 2.5),  # constant
            rng.normal(size=n),  # continuous
            np.round(rng.normal(size=n), 1),  # ties, about 60 levels
        ]
    )


def _wide_table(n: int, seed: int) -> np.ndarray:
    """Columns with 257 to 4 096 levels and repeats (wide codes), beside narrow ones."""
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [
            rng.integers(0, 600, n),  # about 600 levels
            rng.integers(-170, 170, n) * 0.25,  # 340 negative and fractional levels
            np.r_[[-0.0, 0.0], rng.integers(1, 400, n - 2)],  # -0.0 and 0.0: not coded
            rng.integers(0, 5, n),
            np.round(rng.normal(size=n), 2),  # about 500 levels, most rows in a few
            rng.normal(size=n),  # continuous: n levels, too few repeats
        ]
    )


def _coded(variant: str):
    """Only `_table`'s coded columns (a constant one among them), a real target."""
    n = 3000 if "big" in variant else 900
    X = _table(n, 5)[:, [0, 1, 2, 3, 5, 6, 7, 9]]
    rng = np.random.default_rng(6)
    s = X[:, 1] + 0.2 * X[:, 2] - 0.01 * X[:, 3] + X[:, 4] + X[:, 7] + rng.normal(size=n)
    w = 0.3 + rng.random(n) if "realweights" in variant else None
    return X, np.digitize(s, [-1.0, 0.5, 2.0]), s, w


def _data(variant: str):
    rng = np.random.default_rng(4)
    if variant.startswith("coded"):
        return _coded(variant)
    if variant.startswith("wide"):
        n = 4000
        X = _wide_table(n, 3)
        s = X[:, 0] / 200 - X[:, 1] / 20 + X[:, 3] * 0.3 + X[:, 4] + rng.normal(size=n)
        y_clf = np.digitize(s, [0.0, 1.0, 2.5])
        w = rng.integers(0, 4, n).astype(np.float64) if variant == "wide-intweights" else None
        if variant == "wide-f32F":
            X = np.asfortranarray(X.astype(np.float32))
        return X, y_clf, s, w
    if variant == "digits":
        X, y = load_digits(return_X_y=True)
        X, y = X[:900], y[:900]
        return X, y, y.astype(np.float64) * 3.0, None
    n = 900
    X = _table(n, 2)
    s = X[:, 1] + 0.2 * X[:, 2] - 0.01 * X[:, 3] + X[:, 5] + X[:, 8] + rng.normal(size=n)
    y_clf = np.digitize(s, [-1.0, 0.5, 2.0])
    y_real = s + 0.01 * X[:, 4]
    if variant == "f32F":
        X = np.asfortranarray(X[:, [0, 1, 2, 3, 5, 8, 9]].astype(np.float32))
    w = None
    if variant == "intweights":
        w = rng.integers(0, 4, n).astype(np.float64)
    elif variant == "realweights":
        w = 0.3 + rng.random(n)
    return X, y_clf, y_real, w


# name: (estimator class, target, constructor arguments, data variant)
CASES = {
    "rf-digits": (fi.RandomForestClassifier, "clf", {}, "digits"),
    "rf-digits-entropy-all": (
        fi.RandomForestClassifier,
        "clf",
        {"criterion": "entropy", "max_features": None},
        "digits",
    ),
    "rf-digits-reg-int": (fi.RandomForestRegressor, "clf", {"max_features": 0.5}, "digits"),
    "rf-clf": (fi.RandomForestClassifier, "clf", {}, "mixed"),
    "rf-clf-f32F": (fi.RandomForestClassifier, "clf", {"max_features": 3}, "f32F"),
    "rf-clf-leaf3": (fi.RandomForestClassifier, "clf", {"min_samples_leaf": 3}, "mixed"),
    "rf-clf-bestfirst": (
        fi.RandomForestClassifier,
        "clf",
        {"max_leaf_nodes": 40, "max_depth": 8},
        "mixed",
    ),
    "rf-clf-intweights": (fi.RandomForestClassifier, "clf", {}, "intweights"),
    "rf-clf-realweights": (
        fi.RandomForestClassifier,
        "clf",
        {"min_weight_fraction_leaf": 0.01},
        "realweights",
    ),
    "rf-clf-balanced": (
        fi.RandomForestClassifier,
        "clf",
        {"class_weight": "balanced_subsample"},
        "mixed",
    ),
    "rf-reg-int": (fi.RandomForestRegressor, "int", {"max_features": 0.5}, "mixed"),
    "rf-reg-real": (fi.RandomForestRegressor, "real", {}, "mixed"),
    "rf-reg-real-f32F": (fi.RandomForestRegressor, "real", {"min_samples_leaf": 2}, "f32F"),
    "rf-reg-intweights": (fi.RandomForestRegressor, "int", {}, "intweights"),
    "et-digits": (fi.ExtraTreesClassifier, "clf", {}, "digits"),
    "et-clf": (fi.ExtraTreesClassifier, "clf", {"bootstrap": True}, "mixed"),
    "et-clf-realweights": (fi.ExtraTreesClassifier, "clf", {"min_samples_leaf": 2}, "realweights"),
    "et-reg": (fi.ExtraTreesRegressor, "real", {}, "mixed"),
    "trt-clf": (fi.TotallyRandomizedTreesClassifier, "clf", {}, "mixed"),
    "trt-reg-f32F": (fi.TotallyRandomizedTreesRegressor, "real", {}, "f32F"),
    "rp-best": (fi.RandomPatchesClassifier, "clf", {"splitter": "best"}, "mixed"),
    "rp-random-reg": (fi.RandomPatchesRegressor, "int", {}, "mixed"),
    "rf-wide-clf": (fi.RandomForestClassifier, "clf", {}, "wide"),
    "rf-wide-clf-f32F": (fi.RandomForestClassifier, "clf", {"max_features": 3}, "wide-f32F"),
    "rf-wide-clf-leaf3": (fi.RandomForestClassifier, "clf", {"min_samples_leaf": 3}, "wide"),
    "rf-wide-clf-entropy-nobootstrap": (
        fi.RandomForestClassifier,
        "clf",
        {"criterion": "entropy", "bootstrap": False},
        "wide",
    ),
    "rf-wide-clf-intweights": (fi.RandomForestClassifier, "clf", {}, "wide-intweights"),
    "rf-wide-reg-int": (fi.RandomForestRegressor, "int", {"max_features": 0.5}, "wide"),
    "rf-wide-reg-real": (fi.RandomForestRegressor, "real", {}, "wide"),
    "et-wide-clf": (fi.ExtraTreesClassifier, "clf", {}, "wide"),
    # K >= p/2 with whole sums: the exact search keeps the coded columns' bins.
    "rf-reg-int-all-leaf3": (
        fi.RandomForestRegressor,
        "int",
        {"max_features": None, "min_samples_leaf": 3},
        "mixed",
    ),
    "rf-reg-int-all-depth6": (fi.RandomForestRegressor, "int", {"max_depth": 6}, "intweights"),
    "rf-clf-all-nobootstrap-f32F": (
        fi.RandomForestClassifier,
        "clf",
        {"max_features": None, "bootstrap": False},
        "f32F",
    ),
    "rf-wide-clf-intweights-k06": (
        fi.RandomForestClassifier,
        "clf",
        {"max_features": 0.6},
        "wide-intweights",
    ),
    # Unit weights: the kept bins count rows in place of summing weights.
    "rf-reg-int-all-nobootstrap": (
        fi.RandomForestRegressor,
        "int",
        {"max_features": None, "bootstrap": False},
        "mixed",
    ),
    "rf-wide-reg-int-k06-nobootstrap": (
        fi.RandomForestRegressor,
        "int",
        {"max_features": 0.6, "bootstrap": False},
        "wide",
    ),
    # Every column coded, sums not whole, K >= p/2: lists of codes in the exact search.
    "rf-coded-reg-real": (fi.RandomForestRegressor, "real", {"max_features": 0.5}, "coded"),
    "rf-coded-reg-real-big": (fi.RandomForestRegressor, "real", {"max_features": 0.5}, "coded-big"),
    "rf-coded-reg-real-all-leaf3-big": (
        fi.RandomForestRegressor,
        "real",
        {"max_features": None, "min_samples_leaf": 3},
        "coded-big",
    ),
    "rf-coded-reg-real-depth7-nobootstrap": (
        fi.RandomForestRegressor,
        "real",
        {"max_depth": 7, "bootstrap": False},
        "coded-big",
    ),
    "rf-coded-reg-realweights": (
        fi.RandomForestRegressor,
        "real",
        {"max_features": 0.6, "min_weight_fraction_leaf": 0.01},
        "coded-realweights",
    ),
    "rf-coded-reg-bestfirst": (
        fi.RandomForestRegressor,
        "real",
        {"max_leaf_nodes": 60, "max_features": 0.5},
        "coded-big",
    ),
    "rf-coded-reg-poisson": (
        fi.RandomForestRegressor,
        "positive",
        {"criterion": "poisson", "max_features": 0.5},
        "coded",
    ),
    "rf-coded-reg-monotonic": (
        fi.RandomForestRegressor,
        "real",
        {"max_features": 0.5, "monotonic_cst": [0, 1, 1, 0, 1, 0, 0, 0]},
        "coded",
    ),
    "rf-coded-reg-two-outputs": (
        fi.RandomForestRegressor,
        "two",
        {"max_features": 0.5},
        "coded-big",
    ),
    "rf-coded-clf-realweights-big": (
        fi.RandomForestClassifier,
        "clf",
        {"max_features": 0.6},
        "coded-big-realweights",
    ),
    "rf-coded-clf-entropy-realweights": (
        fi.RandomForestClassifier,
        "clf",
        {"criterion": "entropy", "max_features": None},
        "coded-realweights",
    ),
    "rp-coded-best-reg": (
        fi.RandomPatchesRegressor,
        "real",
        {"splitter": "best", "max_features": 0.75},
        "coded-big",
    ),
}


def _digest(est, Xt) -> dict[str, str]:
    outputs = {"bytes": est.forest_.to_bytes(), "predict": est.predict(Xt)}
    if hasattr(est, "predict_proba"):
        outputs["predict_proba"] = est.predict_proba(Xt)
    out = {}
    for name, value in outputs.items():
        raw = value if isinstance(value, bytes) else np.ascontiguousarray(value).tobytes()
        out[name] = hashlib.sha256(raw).hexdigest()[:20]
    return out


def _fit(case: str) -> dict[str, str]:
    cls, target, kwargs, variant = CASES[case]
    X, y_clf, y_real, w = _data(variant)
    y = {
        "clf": y_clf,
        "int": y_clf.astype(np.float64) * 7 - 3,
        "real": y_real,
        # Exact operations only: numpy's exp rounds by the CPU's vector unit.
        "positive": np.abs(y_real) + 0.25,
        "two": np.column_stack([y_real, np.sin(y_real)]),
    }[target]
    if variant == "digits" and target != "clf":
        y = y_real
    est = cls(n_estimators=8, random_state=11, **kwargs).fit(
        X[:-150], y[:-150], sample_weight=w if w is None else w[:-150]
    )
    return _digest(est, X[-150:])


@pytest.fixture(scope="module")
def golden() -> dict:
    if WRITE:
        return {}
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("case", sorted(CASES))
def test_models_are_unchanged_by_lossless_codes(case, golden):
    got = _fit(case)
    if WRITE:
        table = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
        table[case] = got
        GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        return
    assert got == golden[case]

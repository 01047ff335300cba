"""Shared by the hostile-input sweeps (test_hostile_inputs_sweep.py,
test_hostile_inputs_functions.py): the data, the hostile variants of X and y, and the rule.

The rule: a call works, or raises a ``ValueError`` (DataError, InvalidParameterError,
NotFittedError, scikit-learn's own) or a MemoryError, with a message. Anything else (a Rust
panic, ``pyo3_runtime.PanicException``, is a BaseException; an IndexError, KeyError,
AttributeError or TypeError from inside) propagates and fails the test. Cases that crashed,
aborted or hung before their fix run in a fresh interpreter with a time limit (``isolated``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import forestimp as fi

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 4))
YC = (X[:, 0] > 0).astype(int)
YR = X[:, 0] + 0.1 * RNG.normal(size=40)
FORESTS = [
    fi.RandomForestClassifier, fi.RandomForestRegressor, fi.ExtraTreesClassifier,
    fi.ExtraTreesRegressor, fi.RandomPatchesClassifier, fi.RandomPatchesRegressor,
    fi.TotallyRandomizedTreesClassifier, fi.TotallyRandomizedTreesRegressor,
]  # fmt: skip
EVERY = [*FORESTS, fi.GradientBoostingClassifier, fi.GradientBoostingRegressor]


def name(cls: type) -> str:
    return cls.__name__


def typed(call):
    """``call()``, or None when it raised a ValueError or MemoryError with a message."""
    try:
        return call()
    except (ValueError, MemoryError) as e:
        assert str(e).strip(), f"{type(e).__name__} without a message"
        return None


def isolated(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """``code`` run by a fresh interpreter; a hang fails the calling test."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
            timeout=timeout, env={**os.environ, "RUST_BACKTRACE": "0"},
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for more than {timeout} s:\n{code}")


def make(cls, **params):
    return cls(**{"n_estimators": 3, "random_state": 0, **params})


def target(cls):
    return YC if cls.__name__.endswith("Classifier") else YR


def model_bytes(est) -> bytes:
    return (est.forest_ if hasattr(est, "forest_") else est.booster_).to_bytes()


def rows(Xv) -> int:
    """The rows of a hostile X (40 for one that has none to count)."""
    return np.shape(Xv)[0] if np.ndim(Xv) else 40


DIAGONAL = np.eye(40, 4, dtype=bool)
BAD_X = {
    "empty 0x0": np.empty((0, 0)),
    "empty 0x4": np.empty((0, 4)),
    "no columns": np.empty((40, 0)),
    "one row": X[:1],
    "inf": np.where(DIAGONAL, np.inf, X),
    "-inf": np.where(DIAGONAL, -np.inf, X),
    "1e308": np.where(DIAGONAL, 1e308, X),
    "float max": np.where(X > 0, np.finfo(float).max, -np.finfo(float).max),
    "subnormal": X * 1e-310,
    "all nan": np.full((40, 4), np.nan),
    "words": X.astype(str),
    "object words": np.array([["a", "b", "c", "d"]] * 40, dtype=object),
    "3-D": X.reshape(40, 2, 2),
    "1-D": X[:, 0],
    "complex": X.astype(complex),
    "None": None,
    "scalar": 3.0,
    "dates": np.full((40, 4), np.datetime64("2020-01-01")),
    "float32 1e38": (X * 1e38).astype(np.float32),
    "uint64 above 2**63": (np.abs(X) * 1e18).astype(np.uint64) + np.uint64(2**63),
}
BAD_PREDICT_X = {
    "fewer columns": X[:, :3],
    "more columns": np.hstack([X, X]),
    "3-D": X.reshape(40, 2, 2),
    "no rows": X[:0],
    "inf": X * np.inf,
    "words": X.astype(str),
    "1-D": X[0],
    "None": None,
}
_AT3 = np.arange(40) == 3
BAD_Y = {
    "nan": np.where(_AT3, np.nan, 1.0 * YC),
    "inf": np.where(_AT3, np.inf, 1.0 * YC),
    "short": YC[:10],
    "empty": YC[:0],
    "3-D": YC[:, None, None],
    "None": None,
    "constant": np.zeros(40),
    "mixed objects": np.array([1, "a"] * 20, dtype=object),
    "objects": YC.astype(object),
    "uint64 above 2**63": YC.astype(np.uint64) + np.uint64(2**63),
    "words": YC.astype(str),
}
BAD_WEIGHTS = {
    "negative": -np.ones(40),
    "nan": np.where(_AT3, np.nan, 1.0),
    "all zero": np.zeros(40),
    "inf": np.where(_AT3, np.inf, 1.0),
    "short": np.ones(5),
    "2-D": np.ones((40, 1)),
    "words": np.array(["a"] * 40),
    "1e308": np.full(40, 1e308),
    "one non-zero": np.eye(1, 40)[0],
}
ABSURD = (0, -1, 1e18, 10**18, 2**64, float("nan"), float("inf"), "3", "abc", True, 2.5, [], None)
ODD_SEEDS = (-1, 2**32, 2**64, 1.5, "x", np.random.default_rng(0), [], float("nan"),
             np.uint64(2**63))  # fmt: skip

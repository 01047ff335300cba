"""Hostile inputs to every public estimator, the selectors and model files: each works
(then correctly: a layout or dtype fits the model of its values) or raises a typed error
with a message (the rule of ``hostile_kit``). Importances, proximities and the theory
module: test_hostile_inputs_functions.py.
"""

from __future__ import annotations

import io
import os
import pickle

import numpy as np
import pytest
from hostile_kit import (
    ABSURD,
    BAD_PREDICT_X,
    BAD_WEIGHTS,
    BAD_X,
    BAD_Y,
    EVERY,
    ODD_SEEDS,
    YC,
    X,
    isolated,
    make,
    model_bytes,
    name,
    rows,
    target,
    typed,
)  # fmt: skip

import forestimp as fi
from forestimp import persistence
from forestimp.exceptions import DataError, InvalidParameterError, ModelFormatError
from forestimp.selection import RFE, Boruta, SelectFromImportance, SequentialRandomSubspace


# -- estimators -----------------------------------------------------------------------------
@pytest.mark.parametrize("case", BAD_X)
@pytest.mark.parametrize("cls", EVERY, ids=name)
def test_fit_on_hostile_X(cls, case):
    Xv, n = BAD_X[case], rows(BAD_X[case])
    est = typed(lambda: make(cls).fit(Xv, target(cls)[:n]))
    if est is not None and np.ndim(Xv) == 2:
        pred = typed(lambda: est.predict(Xv))
        assert pred is None or pred.shape[0] == n


def _ints(dtype):
    values = (np.abs(X) * 1e6).astype(dtype) if dtype == np.uint64 else (X * 10).astype(dtype)
    return values, values.astype(float)


SAME_AS = {  # a layout or dtype, and the float array whose model it must fit, bit for bit
    "strided": (np.repeat(X, 2, axis=1)[:, ::2], X),
    "fortran": (np.asfortranarray(X), X),
    "big-endian f8": (X.astype(">f8"), X),
    "big-endian f4": (X.astype(">f4"), X.astype(np.float32)),
    "int8": _ints(np.int8),
    "uint64": _ints(np.uint64),
    "bool": (X > 0, (X > 0).astype(float)),
    "float16": (X.astype(np.float16), X.astype(np.float16).astype(float)),
    "list": (X.tolist(), X),
    "object numbers": (X.astype(object), X),
}


@pytest.mark.parametrize("case", SAME_AS)
@pytest.mark.parametrize("cls", EVERY, ids=name)
def test_layouts_and_dtypes_fit_the_model_of_their_values(cls, case):
    given, plain = SAME_AS[case]
    a, b = make(cls).fit(given, target(cls)), make(cls).fit(plain, target(cls))
    assert model_bytes(a) == model_bytes(b)
    np.testing.assert_array_equal(a.predict(given), b.predict(plain))


@pytest.mark.parametrize("cls", EVERY, ids=name)
def test_fit_on_hostile_y_and_sample_weight(cls):
    for yv in BAD_Y.values():
        typed(lambda yv=yv: make(cls).fit(X, yv))
    for sw in BAD_WEIGHTS.values():
        typed(lambda sw=sw: make(cls).fit(X, target(cls), sample_weight=sw))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        make(cls).fit(X, target(cls)[:10])


PARAMS = ("max_depth", "max_features", "min_samples_leaf", "min_samples_split",
          "max_leaf_nodes", "min_weight_fraction_leaf", "min_impurity_decrease", "ccp_alpha",
          "max_bins", "n_jobs", "verbose", "max_samples", "learning_rate", "subsample",
          "n_iter_no_change", "validation_fraction", "tol", "alpha", "n_estimators")  # fmt: skip


@pytest.mark.parametrize("cls", EVERY, ids=name)
def test_absurd_parameters_and_seeds(cls):
    for param in [p for p in PARAMS if p in cls().get_params()]:
        for value in ABSURD:
            if param == "n_estimators" and value in (1e18, 10**18, 2**64):
                continue  # MemoryError by design: test_hostile_models
            typed(lambda p=param, v=value: make(cls, **{p: v}).fit(X, target(cls)))
        with pytest.raises(InvalidParameterError, match=param):
            make(cls, **{param: "abc"}).fit(X, target(cls))
    for seed in ODD_SEEDS:
        with pytest.raises(InvalidParameterError, match="random_state"):
            make(cls, random_state=seed).fit(X, target(cls))
    make(cls, random_state=np.random.RandomState(0)).fit(X, target(cls))


@pytest.mark.parametrize("cls", EVERY, ids=name)
def test_predict_on_hostile_X(cls):
    est = make(cls).fit(X, target(cls))
    methods = ["predict", "apply"] + (["predict_proba"] if hasattr(est, "classes_") else [])
    for method in methods:
        for Xv in BAD_PREDICT_X.values():
            typed(lambda m=method, Xv=Xv: getattr(est, m)(Xv))
        with pytest.raises(ValueError, match="features"):
            getattr(est, method)(X[:, :3])


def test_huge_n_iter_no_change_runs_as_never_stopping():
    # It aborted the process: the engine allocated 10**18 past losses.
    done = isolated(
        """
        import numpy as np, forestimp as fi
        X = np.random.default_rng(0).normal(size=(60, 3))
        kw = dict(n_estimators=5, random_state=0)  # also the validation split's seed
        a = fi.GradientBoostingRegressor(n_iter_no_change=10**18, **kw).fit(X, X[:, 0])
        b = fi.GradientBoostingRegressor(n_iter_no_change=5, **kw).fit(X, X[:, 0])
        assert a.n_estimators_ == 5 and a.booster_.to_bytes() == b.booster_.to_bytes()
        """
    )
    assert done.returncode == 0, done.stderr[-2000:]


# -- selectors ------------------------------------------------------------------------------
SELECTORS = {
    "Boruta": lambda **k: Boruta(**{"max_iter": 3, "n_estimators": 5, **k}),
    "RFE": RFE,
    "SRS": lambda **k: SequentialRandomSubspace(**{"n_iterations": 3, **k}),
    "SelectFromImportance": SelectFromImportance,
}


@pytest.mark.parametrize("selector", SELECTORS)
def test_selectors_on_hostile_input(selector):
    build = SELECTORS[selector]
    for Xv in BAD_X.values():
        typed(lambda Xv=Xv: build(random_state=0).fit(Xv, YC[: rows(Xv)]))
    for yv in BAD_Y.values():
        typed(lambda yv=yv: build(random_state=0).fit(X, yv))
    for seed in ODD_SEEDS:
        typed(lambda seed=seed: build(random_state=seed).fit(X, YC))
    fitted = build(random_state=0).fit(X, YC)
    for Xv in BAD_PREDICT_X.values():
        typed(lambda Xv=Xv: fitted.transform(Xv))


def test_rfe_refuses_an_empty_cv_and_an_undefined_oob_score():
    # An empty cv was an IndexError deep in cross_val_score; one row, a NaN score path.
    with pytest.raises(InvalidParameterError, match=r"no \(train, test\) split"):
        RFE(cv=[]).fit(X, YC)
    with (
        pytest.warns(UserWarning, match="No input has an OOB score"),
        pytest.raises(DataError, match="n_samples = 1"),
    ):
        RFE(fi.RandomForestClassifier(n_estimators=5)).fit(X[:1], YC[:1])


# -- model files ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def blob():
    return persistence.dumps(make(fi.RandomForestClassifier).fit(X, YC))


def test_loads_of_hostile_bytes(blob):
    flipped = blob[:50] + bytes([blob[50] ^ 0xFF]) + blob[51:]
    for data in (b"", b"x" * 100, blob[: len(blob) // 2], blob[:1], blob + blob, blob + b"\0",
                 pickle.dumps(X), flipped):  # fmt: skip
        with pytest.raises(ModelFormatError):
            persistence.loads(data)
    for wrong in ("abc", None, 5, bytearray(blob)):
        with pytest.raises(TypeError, match="loads expects bytes"):
            persistence.loads(wrong)


def test_load_refuses_what_is_not_a_path_or_a_regular_file(tmp_path, blob):
    for wrong in (None, 3, io.BytesIO(blob)):  # 3 was read, then closed, as a descriptor
        with pytest.raises(TypeError, match="load expects a path"):
            persistence.load(wrong)
    with pytest.raises(ModelFormatError, match="not a regular file"):
        persistence.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        persistence.load(tmp_path / "absent.fi")
    (tmp_path / "m.fi").write_bytes(blob)
    assert persistence.load(str(tmp_path / "m.fi")).predict(X).shape == (40,)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs /dev/zero and FIFOs")
def test_load_of_a_device_or_a_fifo_neither_exhausts_memory_nor_blocks(tmp_path):
    # /dev/zero was read until the process was killed for memory; a FIFO blocked forever.
    fifo = tmp_path / "model.fi"
    os.mkfifo(fifo)
    done = isolated(
        f"""
        from forestimp import load
        from forestimp.exceptions import ModelFormatError
        for path in ("/dev/zero", {str(fifo)!r}):
            try:
                load(path)
            except ModelFormatError as e:
                assert "not a regular file" in str(e)
            else:
                raise AssertionError(path)
        """,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr[-2000:]

"""Malformed sparse X gives the documented exception, never a crash or a silent wrong answer.

The sparse part of the bad-input battery (``test_bad_input.py`` has the rest): indexes out of
range, unsorted or repeated, inconsistent ``indptr``, stored NaN or infinity, wrong shapes,
and the engine's own checks when the Python layer is skipped.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import forestimp as fi
from forestimp import _core
from forestimp.exceptions import DataError

from conftest import core_fit_kwargs

RNG = np.random.default_rng(0)
X10 = RNG.normal(size=(10, 3))
Y10 = np.array([0, 1] * 5)


def _core_fit(X):
    return _core.Forest.fit(X, Y10.astype(np.float64), None, **core_fit_kwargs())


def _csr():
    X = X10.copy()
    X[X < 0] = 0.0
    return sp.csr_matrix(X)


def _mutated(fmt, edit):
    X = _csr().asformat(fmt)
    edit(X)
    return X


def _set(name, k, v):
    return lambda X: getattr(X, name).__setitem__(k, v)


def _swap_first_two(X):
    X.indices[:2] = X.indices[:2][::-1].copy()


# (id, X, exception, message fragment): malformed indexes are refused before scipy (whose
# format conversions do not check bounds) or the engine reads them.
SPARSE_CASES = [
    ("index-out-of-range", _mutated("csr", _set("indices", 0, 7)), DataError, "malformed"),
    ("negative-index", _mutated("csc", _set("indices", 0, -1)), DataError, "malformed"),
    ("indptr-decreasing", _mutated("csr", _set("indptr", 2, 0)), DataError, "malformed"),
    ("indptr-too-long", _mutated("csc", _set("indptr", -1, 10**6)), DataError, "malformed"),
    ("stored-nan", _mutated("csr", _set("data", 0, np.nan)), ValueError, "NaN"),
    ("stored-inf", _mutated("csc", _set("data", 1, -np.inf)), ValueError, "infinity"),
    ("empty", sp.csr_matrix((0, 3)), ValueError, "0 sample"),
    ("no-features", sp.csc_array((10, 0)), ValueError, "0 feature"),
    ("complex", _csr() * 1j, ValueError, "[Cc]omplex"),
]


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
@pytest.mark.parametrize(
    "X, exc, match", [c[1:] for c in SPARSE_CASES], ids=[c[0] for c in SPARSE_CASES]
)
def test_bad_sparse_data(cls, X, exc, match):
    est = cls(n_estimators=3, random_state=0)
    with pytest.raises(exc, match=match):
        est.fit(X, Y10)
    fitted = cls(n_estimators=3, random_state=0).fit(_csr(), Y10)
    if X.shape[0] and X.shape[1]:
        with pytest.raises(exc, match=match):
            fitted.predict(X)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("stale", [False, True])
def test_sparse_that_reads_as_toarray(fmt, stale):
    # Unsorted and 64-bit indices are repaired, not refused: the forest is that of toarray(),
    # also when scipy's cached "sorted" flag is stale (set before the edit).
    X = _csr().asformat(fmt)
    if stale:
        assert X.has_canonical_format
    _swap_first_two(X)
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    sparse = fi.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, Y10)
    dense = fi.RandomForestClassifier(n_estimators=3, random_state=0).fit(X.toarray(), Y10)
    assert sparse.forest_.to_bytes() == dense.forest_.to_bytes()
    assert np.array_equal(sparse.predict_proba(X), dense.predict_proba(X.toarray()))


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_sparse_wrong_shape_at_predict(cls):
    est = cls(n_estimators=3, random_state=0).fit(_csr(), Y10)
    for bad in (sp.csr_matrix((4, 2)), sp.csc_array((4, 5))):
        with pytest.raises(ValueError, match="features"):
            est.predict(bad)
        with pytest.raises(ValueError, match="features"):
            est.apply(bad)


def test_core_refuses_malformed_sparse():
    # The engine checks the index itself (a caller may skip the Python layer).
    X = _csr().tocsc()
    good = _core_fit(X)
    for edit, match in [
        (_set("indices", 0, 99), "out of range"),
        (_swap_first_two, "unsorted or repeated"),
        (_set("indptr", -1, 1), "indptr"),
        (_set("indptr", 1, 30), "indptr|range"),
    ]:
        bad = X.copy()
        edit(bad)
        with pytest.raises(DataError, match=match):
            _core_fit(bad)
        with pytest.raises(DataError, match=match):
            good.predict(bad)
    with pytest.raises(TypeError, match="CSC"):
        _core_fit(_csr())
    wide = X.copy()
    wide.indices = wide.indices.astype(np.int64)
    with pytest.raises(TypeError, match="int32"):
        _core_fit(wide)
    with pytest.raises(TypeError, match="float32 or float64"):
        _core_fit(X.astype(np.int32))
    with pytest.raises(DataError, match="column|feature"):
        good.predict(sp.csc_matrix((4, 2)))
    assert good.predict(sp.csc_matrix((0, 3))).shape == (0, 2)
    assert np.array_equal(good.predict(X), good.predict(X.toarray()))


def test_sparse_nan_is_refused_whatever_the_dense_rule():
    # The engine's sparse conversion refuses stored NaN itself, so a dense rule that admits
    # missing values does not let them into the sparse fit (which knows no NaN side).
    from forestimp._sparse import engine_csc

    for bad in (np.nan, np.inf):
        X = _mutated("csr", _set("data", 0, bad))
        with pytest.raises(DataError, match="NaN or infinity"):
            engine_csc(X)
    X = _mutated("csc", _set("data", 2, np.nan))
    with pytest.raises(DataError, match="non-finite"):
        _core_fit(X)

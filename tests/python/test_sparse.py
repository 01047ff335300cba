"""Sparse X (``scipy.sparse``): the forest grown on a sparse matrix is the one grown on its
dense twin ``X.toarray()`` (same dtype, same ``random_state``), byte for byte, and every
prediction path reads the sparse matrix to the same numbers."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import forestimp as fi
from forestimp.importance import local_mdi, permutation

from conftest import ALL_ESTIMATORS

N, P = 240, 30


def _data(dtype=np.float64, seed=0):
    """A sparse matrix with negative, positive and explicit zero entries, and targets that
    depend on a few of its columns."""
    rng = np.random.default_rng(seed)
    X = sp.random(N, P, density=0.15, format="csr", random_state=seed, dtype=dtype)
    X.data -= 0.3  # negative values too
    X.data[::17] = 0.0  # explicit zeros are zeros
    dense = X.toarray()
    y_class = (dense[:, 0] + dense[:, 1] > 0.1).astype(int) + (dense[:, 2] > 0.2)
    y_reg = 2 * dense[:, 0] - dense[:, 3] + 0.1 * rng.normal(size=N)
    return X, y_class, y_reg


def _target(cls, y_class, y_reg):
    return y_class if cls.__name__.endswith("Classifier") else y_reg


def _same_forest(a, b):
    assert a.forest_.to_bytes() == b.forest_.to_bytes()


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"bootstrap": True, "oob_score": True, "max_samples": 0.8},
        {"max_depth": 4, "min_samples_leaf": 3},
    ],
    ids=["default", "bootstrap-oob", "shallow"],
)
def test_sparse_grows_the_dense_forest(cls, params):
    X, y_class, y_reg = _data()
    y = _target(cls, y_class, y_reg)
    dense = cls(n_estimators=6, random_state=3, **params).fit(X.toarray(), y)
    sparse = cls(n_estimators=6, random_state=3, **params).fit(X, y)
    _same_forest(dense, sparse)
    Xd = X.toarray()
    assert np.array_equal(dense.predict(Xd), sparse.predict(X))
    assert np.array_equal(dense.apply(Xd), sparse.apply(X.tocsc()))
    pd, ps = dense.decision_path(Xd), sparse.decision_path(X)
    assert (pd[0] != ps[0]).nnz == 0 and np.array_equal(pd[1], ps[1])
    if hasattr(dense, "predict_proba"):
        assert np.array_equal(dense.predict_proba(Xd), sparse.predict_proba(sp.coo_array(X)))
    assert dense.score(Xd, y) == sparse.score(X, y)
    if params.get("oob_score"):
        assert dense.oob_score_ == sparse.oob_score_
        oob = "oob_decision_function_" if hasattr(dense, "classes_") else "oob_prediction_"
        np.testing.assert_array_equal(getattr(dense, oob), getattr(sparse, oob))


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
@pytest.mark.parametrize(
    "convert",
    [sp.csr_matrix, sp.csc_matrix, sp.csr_array, sp.csc_array, sp.coo_matrix, sp.lil_array],
    ids=lambda f: f.__name__,
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_format_and_dtype(cls, convert, dtype):
    X, y_class, y_reg = _data(dtype)
    y = _target(cls, y_class, y_reg)
    dense = cls(n_estimators=4, random_state=0).fit(X.toarray(), y)
    sparse = cls(n_estimators=4, random_state=0).fit(convert(X), y)
    _same_forest(dense, sparse)


def test_sample_weight_and_class_weight():
    X, y, _ = _data()
    w = np.random.default_rng(1).uniform(0, 2, size=N)
    kw = dict(n_estimators=5, random_state=1, class_weight="balanced_subsample")
    dense = fi.RandomForestClassifier(**kw).fit(X.toarray(), y, sample_weight=w)
    sparse = fi.RandomForestClassifier(**kw).fit(X, y, sample_weight=w)
    _same_forest(dense, sparse)


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("weights", ["none", "whole", "fractional"])
def test_whole_sums_read_from_the_entries(cls, weights):
    """Whole targets and weights: a sparse candidate's sums are its entries' and the rest
    of the node's (the Extra-Trees search reads only the entries), still the dense forest."""
    X, y_class, y_reg = _data(seed=4)
    y = _target(cls, y_class, np.round(3 * y_reg))
    rng = np.random.default_rng(5)
    w = {"none": None, "whole": rng.integers(0, 4, N), "fractional": rng.uniform(0, 2, N)}
    kw = dict(n_estimators=5, random_state=2, bootstrap=True)
    dense = cls(**kw).fit(X.toarray(), y, sample_weight=w[weights])
    sparse = cls(**kw).fit(X, y, sample_weight=w[weights])
    _same_forest(dense, sparse)


def test_unsorted_duplicate_and_int64_indices_read_as_toarray():
    X, y, _ = _data()
    X = X.tocsr()
    # Each row's entries reversed (unsorted) and its first entry split in two halves
    # (duplicates, which toarray sums exactly), with 64-bit indices.
    data, indices, indptr = [], [], [0]
    for i in range(N):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        d, j = list(X.data[lo:hi][::-1]), list(X.indices[lo:hi][::-1])
        if d:
            d = [d[0] / 2, *d[1:], d[0] / 2]
            j = [j[0], *j[1:], j[0]]
        data += d
        indices += j
        indptr.append(len(data))
    messy = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=X.shape)
    messy.indices = messy.indices.astype(np.int64)  # scipy would choose int32
    messy.indptr = messy.indptr.astype(np.int64)
    assert not messy.has_sorted_indices
    np.testing.assert_array_equal(messy.toarray(), X.toarray())
    assert not messy.has_canonical_format
    dense = fi.ExtraTreesClassifier(n_estimators=4, random_state=0).fit(messy.toarray(), y)
    sparse = fi.ExtraTreesClassifier(n_estimators=4, random_state=0).fit(messy, y)
    _same_forest(dense, sparse)


def test_all_zero_and_single_entry_columns():
    rng = np.random.default_rng(2)
    X = sp.csc_matrix((50, 6))
    X = sp.lil_matrix(X)
    X[3, 1] = 2.0  # one entry
    X[:, 4] = rng.normal(size=(50, 1))  # dense column
    y = (X.toarray()[:, 4] > 0).astype(int)
    for cls in (fi.RandomForestClassifier, fi.ExtraTreesClassifier):
        dense = cls(n_estimators=5, random_state=0).fit(X.toarray(), y)
        sparse = cls(n_estimators=5, random_state=0).fit(X, y)
        _same_forest(dense, sparse)


def test_same_bytes_for_any_n_jobs():
    X, _, y = _data(np.float32)
    one = fi.ExtraTreesRegressor(n_estimators=6, random_state=4, n_jobs=1).fit(X, y)
    two = fi.ExtraTreesRegressor(n_estimators=6, random_state=4, n_jobs=2).fit(X, y)
    _same_forest(one, two)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))


def test_warm_start_and_pickle():
    X, y, _ = _data()
    est = fi.ExtraTreesClassifier(n_estimators=3, random_state=0, warm_start=True).fit(X, y)
    est.set_params(n_estimators=7).fit(X, y)
    once = fi.ExtraTreesClassifier(n_estimators=7, random_state=0).fit(X.toarray(), y)
    _same_forest(est, once)
    again = pickle.loads(pickle.dumps(est))
    assert np.array_equal(again.predict_proba(X), once.predict_proba(X.toarray()))


@pytest.mark.parametrize("dense_fit", [True, False])
def test_predict_mixes_dense_and_sparse(dense_fit):
    X, y, _ = _data()
    Xf = X.toarray() if dense_fit else X
    est = fi.RandomForestClassifier(n_estimators=5, random_state=0).fit(Xf, y)
    Xt, _, _ = _data(seed=9)
    assert np.array_equal(est.predict_proba(Xt), est.predict_proba(Xt.toarray()))


@pytest.mark.parametrize(
    "est",
    [
        fi.RandomForestClassifier(splitter="hist"),
        fi.ExtraTreesClassifier(multiway=True),
        fi.TotallyRandomizedTreesRegressor(multiway=True),
    ],
    ids=["hist", "multiway-c", "multiway-r"],
)
def test_splitters_that_refuse_sparse(est):
    X, y, _ = _data()
    assert not est.__sklearn_tags__().input_tags.sparse
    with pytest.raises(TypeError, match="sparse X"):
        est.fit(X, y)


def test_measures_taking_x():
    X, y, _ = _data()
    est = fi.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    # Local MDI and held-out permutation importance read the sparse X as they read the dense.
    np.testing.assert_array_equal(local_mdi(est, X).values, local_mdi(est, X.toarray()).values)
    a = permutation(est, X, y, n_repeats=2, random_state=0).importances
    b = permutation(est, X.toarray(), y, n_repeats=2, random_state=0).importances
    np.testing.assert_array_equal(a, b)
    oob = fi.ExtraTreesClassifier(n_estimators=5, random_state=0, bootstrap=True).fit(X, y)
    a = permutation(oob, X, y, oob=True, n_repeats=2, random_state=0).importances
    b = permutation(oob, X.toarray(), y, oob=True, n_repeats=2, random_state=0).importances
    np.testing.assert_array_equal(a, b)
    # The others refuse a sparse X with scikit-learn's TypeError (pass X.toarray()).
    from forestimp.importance import shap_values
    from forestimp.proximity import proximity

    with pytest.raises(TypeError, match="[Ss]parse"):
        shap_values(est, X)
    with pytest.raises(TypeError, match="scorer"):
        permutation(est, X, y, scoring=lambda e, X, y: 0.0)
    # Proximities read the leaves that apply gives, so they take a sparse X too.
    assert (proximity(est, X) != proximity(est, X.toarray())).nnz == 0

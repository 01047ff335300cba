"""Proximities and the leaf embedding against counting shared leaves tree by tree."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

import forestimp as fi
from forestimp.exceptions import InvalidParameterError
from forestimp.proximity import leaf_embedding, proximity


def by_hand(est, X, X2=None):
    a = est.apply(X)
    b = a if X2 is None else est.apply(X2)
    return (a[:, None, :] == b[None, :, :]).sum(axis=2) / a.shape[1]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(400, 8, random_state=0)
    return X, y


FORESTS = {
    "rf": lambda: fi.RandomForestClassifier(40, random_state=0),
    "et": lambda: fi.ExtraTreesClassifier(40, min_samples_leaf=5, random_state=0),
    "hist": lambda: fi.RandomForestClassifier(30, splitter="hist", max_depth=6, random_state=0),
    "trt-multiway": lambda: fi.TotallyRandomizedTreesClassifier(30, multiway=True, random_state=0),
}


@pytest.mark.parametrize("kind", list(FORESTS))
def test_proximity_counts_shared_leaves(kind, data):
    X, y = data
    if kind == "trt-multiway":
        X = np.clip(np.round(X), -2, 2)
    est = FORESTS[kind]().fit(X, y)
    expected = by_hand(est, X)
    assert np.array_equal(proximity(est, X, dense=True), expected)
    sparse = proximity(est, X)
    assert np.array_equal(sparse.toarray(), expected)
    assert sparse.nnz == np.count_nonzero(expected)
    np.testing.assert_array_equal(np.diag(expected), 1.0)
    other = X[:50] + 0.01
    assert np.array_equal(proximity(est, other, X, dense=True), by_hand(est, other, X))


def test_embedding_is_one_leaf_per_tree_and_its_kernel_is_the_proximity(data):
    X, y = data
    est = fi.RandomForestRegressor(25, random_state=0).fit(*make_regression(400, 8, random_state=0))
    phi = leaf_embedding(est, X)
    assert phi.shape == (len(X), int(est.forest_.node_counts().sum()))
    np.testing.assert_array_equal(np.asarray(phi.sum(axis=1)).ravel(), 25)
    _, n_nodes_ptr = est.decision_path(X[:5])
    assert phi.shape[1] == n_nodes_ptr[-1]
    np.testing.assert_allclose((phi @ phi.T).toarray() / 25, by_hand(est, X), rtol=0, atol=1e-15)


@pytest.mark.parametrize("include_self", [True, False])
def test_k_nearest_rows(data, include_self):
    X, y = data
    est = fi.RandomForestClassifier(30, min_samples_leaf=3, random_state=1).fit(X, y)
    full = by_hand(est, X)
    if not include_self:
        np.fill_diagonal(full, -1.0)
    idx, val = proximity(est, X, k=7, include_self=include_self)
    cols = np.tile(np.arange(len(X)), (len(X), 1))
    order = np.lexsort((cols, -full), axis=1)[:, :7]
    assert np.array_equal(idx, order)
    assert np.array_equal(val, np.take_along_axis(full, order, axis=1))
    if include_self:  # a row is its own nearest (tied with rows that share all its leaves)
        np.testing.assert_array_equal(val[:, 0], 1.0)


def test_rows_with_few_neighbours_are_padded():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    est = fi.RandomForestClassifier(5, bootstrap=False, random_state=0).fit(X, y)
    idx, val = proximity(est, X, k=3, include_self=False)
    assert (idx == -1).all() and (val == 0).all()  # fully grown: every row alone in its leaf


def test_bad_arguments(data):
    X, y = data
    est = fi.RandomForestClassifier(5, random_state=0).fit(X, y)
    with pytest.raises(InvalidParameterError):
        proximity(est, X, k=3, dense=True)
    with pytest.raises(InvalidParameterError):
        proximity(est, X, k=0)
    with pytest.raises(ValueError):
        proximity(est, X[:, :3])

"""A booster's trees stop at pure nodes, as scikit-learn's do: compared on structure.

scikit-learn stops at a node whose impurity ``Σwy²/w − ȳ²`` is at most ``EPSILON``. Equal
residuals leave that one-pass value a few ulps of ``ȳ²`` above zero, which on thousands of
rows is above ``EPSILON``: forestimp's boosters then split equal residuals one row at a
time (a round of 20 000 rows grew 20 000 nodes at depth 5 500). Such nodes are now checked
again without the cancellation (``Criterion::is_pure``).
"""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.ensemble as sk

import forestimp


def _separable(n=20000, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, 5)
    return X, (X[:, 0] * 3).astype(int)


def test_equal_residuals_are_not_split():
    """Three separable classes: after the first round every leaf's residuals are equal,
    so no later tree splits a node whose training rows all have the same residual."""
    X, y = _separable()
    est = forestimp.GradientBoostingClassifier(n_estimators=3, max_depth=None, random_state=0)
    est.fit(X, y)
    ref = sk.GradientBoostingClassifier(n_estimators=3, max_depth=None, random_state=0)
    ref.fit(X, y)
    for r in range(1, 3):
        for k in range(3):
            ours, theirs = est.estimators_[r, k].tree_, ref.estimators_[r, k].tree_
            internal = ours.children_left >= 0
            assert not (internal & (ours.impurity <= 1e-15)).any()
            assert ours.max_depth <= 5 and ours.node_count <= theirs.node_count
    np.testing.assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("max_depth", [None, 6])
def test_trees_are_scikit_learns_where_purity_is_exact(max_depth):
    """Integer targets, no initial model, a learning rate of 1: every pure node has an
    impurity of exactly 0 for both, and the trees are the same node for node."""
    rng = np.random.RandomState(0)
    X = np.round(rng.rand(5000, 4), 2)
    y = ((X[:, 0] * 4).astype(int) + (X[:, 1] > 0.5)).astype(float)
    kw = dict(n_estimators=2, max_depth=max_depth, init="zero", learning_rate=1.0)
    ours = forestimp.GradientBoostingRegressor(random_state=0, **kw).fit(X, y)
    theirs = sk.GradientBoostingRegressor(random_state=0, **kw).fit(X, y)
    for r in range(2):
        a, b = ours.estimators_[r, 0].tree_, theirs.estimators_[r, 0].tree_
        assert (a.node_count, a.max_depth) == (b.node_count, b.max_depth)
        np.testing.assert_array_equal(a.feature, b.feature)
        np.testing.assert_allclose(a.threshold, b.threshold)
        np.testing.assert_allclose(a.value, b.value)

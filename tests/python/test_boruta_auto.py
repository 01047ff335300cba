"""``Boruta(n_estimators=...)``: BorutaPy's ``"auto"`` tree count, recomputed each iteration
from the columns of its forest, a fixed count, and the counts kept in ``n_estimators_``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier as SkForest
from sklearn.tree import DecisionTreeClassifier

import forestimp
from forestimp.exceptions import InvalidParameterError
from forestimp.selection import Boruta
from forestimp.selection import _boruta as boruta_module
from forestimp.selection._boruta import auto_n_estimators


def borutapy_tree_num(n_feat: int, depth: int | None) -> int:
    """BorutaPy 0.4's ``_get_tree_num`` for ``n_feat`` features not rejected (the oracle)."""
    depth = 10 if depth is None else depth
    multi = (n_feat * 2) / (np.sqrt(n_feat * 2) * depth)
    return int(multi * 100)


def _problem(n=300, p=12):
    X, y = make_classification(
        n, p, n_informative=3, n_redundant=0, shuffle=False, random_state=0
    )  # fmt: skip
    return X, y


def test_auto_count_is_borutapys():
    # BorutaPy's own test: max_depth=10, 10 and 100 features -> 44 and 141 trees.
    assert auto_n_estimators(2 * 10, 10) == 44
    assert auto_n_estimators(2 * 100, 10) == 141
    for n_feat in [1, 3, 5, 7, 10, 50, 99, 100, 1000, 12345]:
        for depth in [None, 1, 3, 5, 7, 10, 20]:
            assert auto_n_estimators(2 * n_feat, depth) == max(1, borutapy_tree_num(n_feat, depth))
    # No depth limit: None, or LightGBM's -1 and 0, stand for depth 10.
    assert auto_n_estimators(200, -1) == auto_n_estimators(200, 0) == 141
    # Never zero trees: 2 columns at depth 1000 would give int(0.14) = 0.
    assert auto_n_estimators(2, 1000) == 1
    assert auto_n_estimators(200, 5) == math.floor(100 * math.sqrt(200) / 5)


def _spy(monkeypatch):
    """Record the trees of every forestimp forest Boruta grows."""
    grown = []
    real = boruta_module.shadow_importances

    def spy(est, *args, **kwargs):
        grown.append(est.n_estimators)
        return real(est, *args, **kwargs)

    monkeypatch.setattr(boruta_module, "shadow_importances", spy)
    return grown


def test_auto_recomputed_each_iteration_on_the_forest_columns(monkeypatch):
    grown = _spy(monkeypatch)
    X, y = _problem()
    est = forestimp.RandomForestClassifier(max_depth=4)
    sel = Boruta(est, importance="mdi", n_estimators="auto", max_iter=20, random_state=0)
    sel.fit(X, y)
    expected = []
    for step in sel.history_:
        columns = len(step.features) + max(len(step.features), 5)  # features + shadows
        expected.append(auto_n_estimators(columns, 4))
        assert step.n_estimators == expected[-1]
    assert grown == expected == sel.n_estimators_.tolist()
    # 12 features and 12 shadows at depth 4: int(100 sqrt(24) / 4) = 122 trees, then fewer
    # as features are rejected.
    assert expected[0] == 122
    sizes = [len(s.features) for s in sel.history_]
    assert sizes[-1] < sizes[0] and expected[-1] < expected[0]
    assert np.all(np.diff(expected) <= 0)
    assert sel.history_frame()["n_estimators"].tolist() == expected


def test_auto_without_depth_limit_and_on_a_foreign_forest():
    X, y = _problem()
    default = Boruta(n_estimators="auto", importance="mdi", max_iter=2, random_state=0).fit(X, y)
    assert default.n_estimators_.tolist()[0] == int(100 * math.sqrt(24) / 10)  # depth 10: 48
    grown = []

    class Recording(SkForest):
        def fit(self, X, y, sample_weight=None):
            grown.append(self.n_estimators)
            return super().fit(X, y, sample_weight=sample_weight)

    sel = Boruta(Recording(max_depth=3), importance="mdi", n_estimators="auto", max_iter=3,
                 random_state=0).fit(X, y)  # fmt: skip
    assert grown == sel.n_estimators_.tolist() == [auto_n_estimators(24, 3)] * 3 == [163] * 3


def test_fixed_and_default_counts(monkeypatch):
    grown = _spy(monkeypatch)
    X, y = _problem()
    fixed = Boruta(n_estimators=7, max_iter=3, random_state=0).fit(X, y)
    assert grown == fixed.n_estimators_.tolist() == [7, 7, 7]
    grown.clear()
    own = Boruta(forestimp.RandomForestClassifier(9), max_iter=2, random_state=0).fit(X, y)
    assert grown == own.n_estimators_.tolist() == [9, 9]
    grown.clear()
    default = Boruta(max_iter=2, random_state=0).fit(X, y)
    assert grown == default.n_estimators_.tolist() == [100, 100]


def test_a_model_without_trees():
    X, y = _problem()
    tree = DecisionTreeClassifier(max_depth=3)
    sel = Boruta(tree, importance="mdi", max_iter=2, random_state=0).fit(X, y)
    assert sel.n_estimators_.tolist() == [0, 0]
    for value in ("auto", 10):
        with pytest.raises(InvalidParameterError, match="no 'n_estimators' parameter"):
            Boruta(tree, importance="mdi", n_estimators=value).fit(X, y)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "many", "AUTO", True])
def test_bad_counts_are_refused(bad):
    X, y = _problem(60, 6)
    with pytest.raises(InvalidParameterError, match="'n_estimators' parameter"):
        Boruta(n_estimators=bad, max_iter=2).fit(X, y)


def test_auto_keeps_the_selection_of_a_large_fixed_forest():
    # BorutaPy's setup: depth 5, MDI, FDR. "auto" grows 97 trees on the 24 columns of the
    # first iteration, then fewer; it confirms the informative features (the first 3), as
    # 500 trees at every iteration do.
    X, y = _problem()
    setup = dict(importance="mdi", rule="fdr", alpha=0.05, max_iter=30, random_state=0)
    est = forestimp.RandomForestClassifier(max_depth=5, splitter="hist")
    auto = Boruta(est, n_estimators="auto", **setup).fit(X, y)
    fixed = Boruta(est, n_estimators=500, **setup).fit(X, y)
    assert auto.n_estimators_[0] == 97  # int(100 sqrt(24) / 5)
    assert np.flatnonzero(auto.support_).tolist() == [0, 1, 2]
    assert auto.support_.tolist() == fixed.support_.tolist()

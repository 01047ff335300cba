"""Shared data and helpers for the forestimp Python tests (no downloads, small sizes)."""

from __future__ import annotations

import pytest
from sklearn.datasets import make_classification, make_regression

import forestimp

CLASSIFIERS = [
    forestimp.RandomForestClassifier,
    forestimp.ExtraTreesClassifier,
    forestimp.RandomPatchesClassifier,
    forestimp.TotallyRandomizedTreesClassifier,
]
REGRESSORS = [
    forestimp.RandomForestRegressor,
    forestimp.ExtraTreesRegressor,
    forestimp.RandomPatchesRegressor,
    forestimp.TotallyRandomizedTreesRegressor,
]
ALL_ESTIMATORS = CLASSIFIERS + REGRESSORS


def core_fit_kwargs(**overrides):
    """Every keyword of ``_core.Forest.fit`` with small, valid values (a 2-class RF)."""
    kw = dict(
        n_classes=2,
        criterion="gini",
        splitter="best",
        n_estimators=5,
        max_features=2,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0,
        max_leaf_nodes=None,
        bootstrap=True,
        max_samples=None,
        tree_features=None,
        balanced_subsample=False,
        random_state=0,
        n_jobs=1,
    )
    kw.update(overrides)
    return kw


@pytest.fixture(scope="session")
def clf_data():
    """3-class problem, 600 x 10, 4 informative features."""
    X, y = make_classification(
        n_samples=600,
        n_features=10,
        n_informative=4,
        n_redundant=2,
        n_classes=3,
        random_state=0,
    )
    return X, y


@pytest.fixture(scope="session")
def reg_data():
    """Regression, 500 x 8, 3 informative features."""
    X, y = make_regression(n_samples=500, n_features=8, n_informative=3, noise=5.0, random_state=0)
    return X, y

"""The selectors of ``forestimp.selection`` with a forest whose ``categorical_features`` is a
mask or indices (issue #52): the flags follow the columns into RFE's refits on subsets, SRS's
subspaces, and the probes of the threshold and Boruta, so the category stays split by sets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forestimp as fi
from forestimp.exceptions import DataError
from forestimp.selection import RFE, Boruta, SelectFromImportance, SequentialRandomSubspace
from forestimp.selection._base import on_columns


def data(n: int = 800, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Column 3 holds 30 category codes whose effect no threshold on the codes follows;
    column 0 a number that matters; the rest noise."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 8))
    codes = rng.integers(0, 30, n)
    X[:, 3] = codes
    odd = codes % 2 == 1
    y = (odd ^ (rng.random(n) < 0.05)).astype(int) + (X[:, 0] > 0.5)
    return X, (y > 0).astype(int) + (y > 1)


def forest(**kw):
    return fi.RandomForestClassifier(n_estimators=30, random_state=0, **kw)


def test_on_columns_cuts_the_flags_to_the_columns_kept():
    est = forest(categorical_features=[3])
    assert list(on_columns(est, np.array([3, 0, 3]), 8).categorical_features) == [True, False, True]
    assert on_columns(est, np.array([0, 1]), 8).categorical_features is None
    # "from_dtype" is read from each fit's data: left as it is.
    assert on_columns(forest(), np.array([0]), 8).categorical_features == "from_dtype"


@pytest.mark.parametrize(
    "make",
    [
        lambda est: RFE(est, random_state=0),
        lambda est: SelectFromImportance(est, importance="permutation", n_probes=8, random_state=0),
        lambda est: Boruta(est, max_iter=15, random_state=0),
        lambda est: SequentialRandomSubspace(est, q=4, n_iterations=20, random_state=0, n_probes=8),
    ],
    ids=["rfe", "probes", "boruta", "srs"],
)
def test_selectors_keep_a_category_split_by_sets(make):
    X, y = data()
    selector = make(forest(categorical_features=np.arange(8) == 3)).fit(X, y)
    assert selector.support_[3] and selector.support_[0]
    if isinstance(selector, RFE):
        assert list(selector.estimator_.is_categorical_) == [
            c == 3 for c in np.flatnonzero(selector.support_)
        ]


def test_srs_refuses_a_category_column_of_a_frame_by_name():
    X, y = data(200)
    frame = pd.DataFrame(X, columns=[f"c{j}" for j in range(8)])
    frame["c3"] = pd.Categorical(X[:, 3].astype(int))
    with pytest.raises(DataError, match="'c3'"):
        SequentialRandomSubspace(forest(), q=4, n_iterations=2).fit(frame, y)

"""scikit-learn's estimator contract (``check_estimator``) for the four selectors of
:mod:`forestimp.selection`, Sequential Random Subspace included, and the guarantee that
every public estimator and selector is run through it somewhere.

Small settings (few trees, few iterations) keep each check to a fraction of a second. No
check is expected to fail (``xfail_strict``: an expected failure that starts passing would be
noticed too).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import forestimp as fi
from forestimp import selection
from forestimp.exceptions import DataError
from forestimp.selection import RFE, Boruta, SelectFromImportance, SequentialRandomSubspace

SELECTORS = [
    SequentialRandomSubspace(n_iterations=3, n_probes=5, random_state=0),
    SequentialRandomSubspace(
        fi.ExtraTreesClassifier(5),
        q=0.5,
        n_iterations=4,
        n_probes=3,
        batch_size=2,
        random_state=0,
    ),
    SequentialRandomSubspace(
        fi.RandomForestRegressor(5),
        n_iterations=2,
        n_probes=3,
        importance="permutation",
        probe_risk=None,
        random_state=0,
    ),
    Boruta(max_iter=3, random_state=0),
    Boruta(
        fi.RandomForestClassifier(max_depth=3),
        importance="mdi",
        rule="fdr",
        n_estimators="auto",
        max_iter=3,
        random_state=0,
    ),
    RFE(fi.RandomForestClassifier(10, random_state=0)),
    SelectFromImportance(fi.RandomForestRegressor(10, random_state=0), threshold="probe"),
]

# The contract tests of the forests and of boosting live beside their code.
CHECKED_ELSEWHERE = {
    "tests/python/test_sklearn_checks.py": [
        fi.RandomForestClassifier, fi.RandomForestRegressor, fi.ExtraTreesClassifier,
        fi.ExtraTreesRegressor, fi.RandomPatchesClassifier, fi.RandomPatchesRegressor,
        fi.TotallyRandomizedTreesClassifier, fi.TotallyRandomizedTreesRegressor,
    ],
    "tests/python/test_boosting_contract.py": [
        fi.GradientBoostingClassifier, fi.GradientBoostingRegressor,
    ],
}  # fmt: skip


@parametrize_with_checks(SELECTORS, expected_failed_checks=lambda est: {}, xfail_strict=True)
def test_selector_contract(estimator, check):
    check(estimator)


def _public_estimators(module) -> set[type]:
    return {
        obj
        for name in module.__all__
        if inspect.isclass(obj := getattr(module, name))
        and issubclass(obj, BaseEstimator)
        and not inspect.isabstract(obj)
        and not name.startswith("Base")
    }


def test_every_public_estimator_and_selector_runs_the_contract():
    # A new public estimator must join one of the lists, or this fails.
    checked = {type(s) for s in SELECTORS}
    checked |= {cls for classes in CHECKED_ELSEWHERE.values() for cls in classes}
    public = _public_estimators(fi) | _public_estimators(selection)
    assert public - checked == set()
    assert {SequentialRandomSubspace, Boruta, RFE, SelectFromImportance} <= public


# -------------------------------------------- SRS: what check_estimator found on main
def _xy(n=56, p=10, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.uniform(size=(n, p))
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def test_srs_takes_numbers_held_as_objects():
    # scikit-learn's check_dtype_object: an object array of numbers is numbers.
    X, y = _xy()
    params = dict(q=5, n_iterations=4, n_probes=5, random_state=0)
    as_floats = SequentialRandomSubspace(**params).fit(X, y)
    as_objects = SequentialRandomSubspace(**params).fit(X.astype(object), y)
    assert as_objects.support_.tolist() == as_floats.support_.tolist()
    assert as_objects.importances_.tolist() == as_floats.importances_.tolist()
    as_lists = SequentialRandomSubspace(**params).fit(X.tolist(), y)
    assert as_lists.support_.tolist() == as_floats.support_.tolist()
    X_bad = X.astype(object)
    X_bad[0, 0] = {"foo": "bar"}
    with pytest.raises(TypeError, match="argument must be .* string.* number"):
        SequentialRandomSubspace(**params).fit(X_bad, y)


def test_srs_does_not_copy_a_float_array():
    from forestimp.selection._srs import in_memory

    X, _ = _xy()
    for array in (X, np.asfortranarray(X, dtype=np.float32), X[:, ::2], X > 0.5):
        assert in_memory(array) is array or np.shares_memory(in_memory(array), array)


@pytest.mark.parametrize(
    ("shape", "words"),
    [((0, 3), "0 sample(s) (shape=(0, 3))"), ((12, 0), "0 feature(s) (shape=(12, 0))")],
)
def test_srs_says_what_is_empty(shape, words):
    # On main: "The 'q' parameter must be an int in [1, 0]", about a parameter not given.
    y = np.arange(shape[0]) % 2
    with pytest.raises(ValueError) as info:
        SequentialRandomSubspace().fit(np.empty(shape), y)
    assert words in str(info.value) and "'q' parameter" not in str(info.value)


def test_srs_says_what_is_empty_in_a_frame():
    pd = pytest.importorskip("pandas")
    only_target = pd.DataFrame({"y": [0, 1] * 6})
    with pytest.raises(DataError, match=r"0 feature\(s\) \(shape=\(12, 0\)\)"):
        SequentialRandomSubspace().fit(only_target, "y")
    no_rows = pd.DataFrame({"a": np.zeros(0), "b": np.zeros(0)})
    with pytest.raises(DataError, match=r"0 sample\(s\) \(shape=\(0, 2\)\)"):
        SequentialRandomSubspace().fit(no_rows, np.zeros(0))


def test_srs_without_y_and_with_complex_x():
    X, y = _xy()
    with pytest.raises(ValueError, match="requires y to be passed, but the target y is None"):
        SequentialRandomSubspace().fit(X, None)
    with pytest.raises(ValueError, match="Complex data not supported"):
        SequentialRandomSubspace().fit(X + 1j, y)

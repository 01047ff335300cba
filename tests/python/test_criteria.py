"""scikit-learn 1.9's remaining criteria and parameters (issue #22, item 6): ``max_samples``
and ``bootstrap`` as its forests check them, ``friedman_mse``, ``poisson``, ``ccp_alpha``;
parity with scikit-learn's trees on deterministic single-tree forests."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import ensemble as sk_ensemble

import forestimp as fi
from forestimp._core import InvalidParameterError, in_bag_counts


def _drawn(est: object, tree: int = 0) -> int:
    return int(in_bag_counts(est.forest_, tree).sum())  # type: ignore[attr-defined]


# --------------------------------------------------------------------- max_samples, bootstrap
def test_max_samples_counts_rows_as_scikit_learn():
    rng = np.random.default_rng(0)
    X, y = rng.random((101, 3)), rng.random(101)
    # A float is a fraction of n rounded down, above 1 too (with replacement).
    for frac, want in [(0.35, 35), (0.999, 100), (1.5, 151)]:
        est = fi.RandomForestRegressor(3, max_samples=frac, random_state=0).fit(X, y)
        assert _drawn(est) == want
    # With weights it is a fraction of their sum (scikit-learn 1.9).
    sw = np.full(101, 2.0)
    est = fi.RandomForestRegressor(3, max_samples=0.5, random_state=0).fit(X, y, sw)
    assert _drawn(est) == 101
    # An int is the count itself, above n too.
    est = fi.ExtraTreesRegressor(3, bootstrap=True, max_samples=150, random_state=0).fit(X, y)
    assert _drawn(est) == 150
    # Random Patches keeps Bagging's rule: a rounded fraction of n, without replacement.
    est = fi.RandomPatchesRegressor(3, max_samples=0.355, random_state=0).fit(X, y)
    assert _drawn(est) == 36


def test_max_samples_warns_as_scikit_learn_when_few_rows():
    X, y = np.random.default_rng(0).random((50, 2)), np.arange(50.0)
    with pytest.warns(UserWarning, match="low number"):
        fi.RandomForestRegressor(2, max_samples=0.1, random_state=0).fit(X, y)


@pytest.mark.parametrize(
    ("cls", "params"),
    [
        (fi.RandomForestClassifier, dict(bootstrap=False, max_samples=5)),
        (fi.ExtraTreesClassifier, dict(max_samples=0.5)),
        (fi.TotallyRandomizedTreesRegressor, dict(max_samples=3)),
        (fi.RandomForestRegressor, dict(bootstrap=np.int64(1))),
        (fi.RandomForestRegressor, dict(max_samples=-1)),
    ],
)
def test_bootstrap_and_max_samples_errors_are_scikit_learns(cls, params):
    X, y = np.random.default_rng(0).random((20, 2)), np.arange(20) % 2
    with pytest.raises(InvalidParameterError) as ours:
        cls(2, **params).fit(X, y)
    sk_cls = getattr(sk_ensemble, cls.__name__.replace("TotallyRandomizedTrees", "ExtraTrees"))
    with pytest.raises(ValueError) as theirs:
        sk_cls(2, **params).fit(X, y)
    # The same message, scikit-learn's `max_sample` typo aside.
    want = str(theirs.value).replace("`max_sample`", "`max_samples`").replace("max_sample=", "max_samples=")
    assert str(ours.value).replace(cls.__name__, sk_cls.__name__) == want

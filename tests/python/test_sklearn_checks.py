"""scikit-learn's estimator contract (``check_estimator``) over all eight estimators (and
the histogram splitter). The estimators tag sparse input (``input_tags.sparse``) except with
``splitter="hist"``, so the sparse checks run for them."""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import (
    check_sample_weight_equivalence_on_dense_data,
    parametrize_with_checks,
)

import forestimp as fi

from conftest import ALL_ESTIMATORS

# Estimators that draw rows per tree (bootstrap, or a subsample of max_samples < n).
_RESAMPLING_REASON = (
    "rows are drawn per tree (bootstrap or subsampling), so an integer sample weight is not "
    "equivalent to repeating the row: repeated rows are drawn independently. scikit-learn "
    "marks the same check for its RandomForest* and Bagging* (meta-issue #16298)."
)


def _draws_rows(estimator) -> bool:
    params = estimator.get_params()
    max_samples = params.get("max_samples")
    subsample = max_samples is not None and max_samples != 1.0
    return bool(params.get("bootstrap")) or subsample


def expected_failed_checks(estimator) -> dict[str, str]:
    """Checks that are expected to fail for ``estimator``, each with the reason."""
    failed = {}
    if _draws_rows(estimator):
        failed["check_sample_weight_equivalence_on_dense_data"] = _RESAMPLING_REASON
        if estimator.__sklearn_tags__().input_tags.sparse:
            failed["check_sample_weight_equivalence_on_sparse_data"] = _RESAMPLING_REASON
    return failed


@parametrize_with_checks(
    [cls(n_estimators=10, random_state=0) for cls in ALL_ESTIMATORS]
    + [
        fi.RandomForestClassifier(n_estimators=10, random_state=0, splitter="hist"),
        fi.RandomForestRegressor(n_estimators=10, random_state=0, splitter="hist"),
    ],
    expected_failed_checks=expected_failed_checks,
    xfail_strict=True,  # an expected failure that starts passing must be noticed
)
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "estimator",
    [
        fi.RandomForestClassifier(n_estimators=10, bootstrap=False, random_state=0),
        fi.RandomForestRegressor(n_estimators=10, bootstrap=False, random_state=0),
        fi.RandomPatchesClassifier(n_estimators=10, max_samples=1.0, random_state=0),
        fi.RandomPatchesRegressor(n_estimators=10, max_samples=1.0, random_state=0),
    ],
    ids=lambda e: type(e).__name__,
)
def test_sample_weights_are_repetitions_without_row_sampling(estimator):
    # The expected failure above is due to the row draws alone: without them, an integer
    # weight is exactly a repeated row, zero-weight rows included.
    check_sample_weight_equivalence_on_dense_data(type(estimator).__name__, estimator)

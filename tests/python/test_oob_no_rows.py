"""oob_score=True when some or all training rows have no out-of-bag prediction.

scikit-learn warns "Some inputs do not have OOB scores" (and scores such rows as if
predicted 0); forestimp warns the same words and leaves them out of the score. With no row
out of bag at all, the score is NaN with its own warning, never a metric's error on an
empty array.
"""

import math
import warnings

import numpy as np
import pytest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import accuracy_score, r2_score

from forestimp import ensemble
from forestimp._dask_patches import _within_patch_oob
from forestimp.boosting import GradientBoostingClassifier, GradientBoostingRegressor

X2 = np.array([[0.0], [1.0]])
SEEDS = range(8)
FORESTS = [
    (ensemble.RandomForestClassifier, {}),
    (ensemble.RandomForestRegressor, {}),
    (ensemble.ExtraTreesClassifier, {"bootstrap": True}),
    (ensemble.ExtraTreesRegressor, {"bootstrap": True}),
    (ensemble.TotallyRandomizedTreesClassifier, {"bootstrap": True}),
    (ensemble.TotallyRandomizedTreesRegressor, {"bootstrap": True}),
    (
        ensemble.RandomPatchesClassifier,
        {"bootstrap": True, "max_features": 1.0, "max_samples": 1.0},
    ),
    (ensemble.RandomPatchesRegressor, {"bootstrap": True, "max_features": 1.0, "max_samples": 1.0}),
]


def _target(cls, multi):
    classifier = cls.__name__.endswith("Classifier")
    if multi:
        return np.array([[0, 1], [1, 0]]) if classifier else np.array([[0.0, 1.0], [1.0, 3.0]])
    return np.array([0, 1]) if classifier else np.array([0.0, 1.0])


def _fit(cls, extra, y, seed, oob_score=True):
    est = cls(n_estimators=1, oob_score=oob_score, random_state=seed, **extra)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X2, y)
    messages = [str(w.message) for w in caught if w.category is UserWarning]
    _, counts = est.forest_.oob_predict(X2)
    return est, counts > 0, messages


@pytest.mark.parametrize("multi", [False, True], ids=["single", "multi-output"])
@pytest.mark.parametrize(("cls", "extra"), FORESTS, ids=lambda v: getattr(v, "__name__", ""))
def test_two_rows_one_tree_warns_and_scores_only_the_rows_out_of_bag(cls, extra, multi):
    y = _target(cls, multi)
    cases = set()
    for seed in SEEDS:
        est, seen, messages = _fit(cls, extra, y, seed)
        if not seen.any():
            cases.add("none")
            assert math.isnan(est.oob_score_)
            assert any(m.startswith("No input has an OOB score") for m in messages), messages
        else:
            cases.add("some")  # a bootstrap of 2 rows never leaves both out
            assert any(m.startswith("Some inputs do not have OOB scores") for m in messages)
            if cls.__name__.endswith("Regressor"):
                # R² of one row is undefined: NaN, with scikit-learn's own warning
                assert math.isnan(est.oob_score_)
                pred = est.oob_prediction_
                assert np.isnan(pred[~seen]).all() and np.isfinite(pred[seen]).all()
            else:
                decision = est.oob_decision_function_
                votes = np.argmax(decision[seen], axis=1)
                want = accuracy_score(y[seen], votes)  # codes equal labels 0/1 here
                assert est.oob_score_ == want
    assert cases == {"none", "some"}, f"seeds {list(SEEDS)} did not reach both cases"


def test_a_callable_oob_score_is_not_called_without_rows():
    calls = []

    def scorer(y_true, y_pred):
        calls.append(len(y_true))
        return 1.0

    for seed in SEEDS:
        est, seen, _ = _fit(ensemble.RandomForestRegressor, {}, X2[:, 0], seed, oob_score=scorer)
        assert (est.oob_score_ == 1.0) if seen.any() else math.isnan(est.oob_score_)
    assert calls and all(n == 1 for n in calls)


def test_every_row_out_of_bag_somewhere_gives_no_warning_and_the_plain_score():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = ensemble.RandomForestRegressor(n_estimators=40, oob_score=True, random_state=0)
        est.fit(X, y)
    assert est.oob_score_ == r2_score(y, est.oob_prediction_)


def test_a_saved_nan_oob_score_loads_back(tmp_path):
    from forestimp import load

    for seed in SEEDS:
        est, seen, _ = _fit(ensemble.RandomForestClassifier, {}, np.array([0, 1]), seed)
        if not seen.any():
            break
    est.save(tmp_path / "m.fi")
    assert math.isnan(load(tmp_path / "m.fi").oob_score_)


def test_booster_rounds_without_out_of_bag_rows_warn():
    with pytest.warns(UserWarning, match="2 of 2 boosting rounds had no out-of-bag row"):
        est = GradientBoostingRegressor(n_estimators=2, subsample=0.5).fit([[0.0]], [1.0])
    assert np.isnan(est.oob_scores_).all() and math.isnan(est.oob_score_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GradientBoostingClassifier(n_estimators=2, subsample=0.5, random_state=0).fit(
            [[0.0], [1.0], [2.0], [3.0]], [0, 1, 0, 1]
        )


@pytest.mark.parametrize("classes", [None, np.array([0, 1])], ids=["regressor", "classifier"])
def test_dask_patches_with_no_out_of_bag_row_score_nan(classes):
    width = 1 if classes is None else 2
    y = np.array([0.0, 1.0]) if classes is None else np.array([0, 1])
    nothing = {"oob": (np.full((2, width), np.nan), np.zeros(2))}
    state: dict = {}
    with pytest.warns(UserWarning, match="No input has an OOB score"):
        _within_patch_oob(state, [nothing], [(0, 2)], 2, classes, y)
    assert math.isnan(state["oob_score_"])
    one = {"oob": (np.array([[1.0] * width, [np.nan] * width]), np.array([1.0, 0.0]))}
    if classes is not None:
        one["oob"][0][0] = [0.2, 0.8]
    with pytest.warns(UserWarning, match="Some inputs do not have OOB scores"):
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # R² of one row
        _within_patch_oob(state, [one], [(0, 2)], 2, classes, y)
    if classes is not None:
        assert state["oob_score_"] == 0.0  # row 0 is voted class 1, its label is 0

"""warm_start: growing more trees gives the model of all the trees grown at once."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

import forestimp as fi
from forestimp.exceptions import DataError, InvalidParameterError

ESTIMATORS = [
    fi.RandomForestClassifier,
    fi.RandomForestRegressor,
    fi.ExtraTreesClassifier,
    fi.ExtraTreesRegressor,
    fi.RandomPatchesClassifier,
    fi.RandomPatchesRegressor,
    fi.TotallyRandomizedTreesClassifier,
    fi.TotallyRandomizedTreesRegressor,
]


def data(cls):
    if cls._is_classifier:
        return make_classification(300, 6, n_informative=3, n_classes=3, random_state=0)
    return make_regression(300, 6, noise=1.0, random_state=0)


def model_bytes(est):
    return est.forest_.to_bytes()


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("random_state", [0, None, "instance"])
def test_ten_then_twenty_five_is_twenty_five_at_once(cls, random_state, monkeypatch):
    X, y = data(cls)
    bootstrap = {} if cls.__name__.startswith("RandomPatches") else {"bootstrap": True}
    params = dict(oob_score=True, n_jobs=2, **bootstrap)
    seed = np.random.RandomState(3) if random_state == "instance" else random_state
    warm = cls(10, warm_start=True, random_state=seed, **params).fit(X, y)
    first = model_bytes(warm)
    warm.set_params(n_estimators=25).fit(X, y)
    assert model_bytes(warm) != first
    # None and a RandomState draw the engine seed at the first fit: grow the 25 trees at
    # once from that seed.
    engine_seed = warm.forest_.random_state
    monkeypatch.setattr(fi._params, "seed_from", lambda _: engine_seed)
    at_once = cls(25, random_state=seed, **params).fit(X, y)
    assert model_bytes(warm) == model_bytes(at_once)
    assert warm.oob_score_ == at_once.oob_score_
    np.testing.assert_array_equal(warm.predict(X), at_once.predict(X))


def test_more_trees_than_before_only():
    X, y = data(fi.RandomForestClassifier)
    est = fi.RandomForestClassifier(10, warm_start=True, random_state=0).fit(X, y)
    before = model_bytes(est)
    with pytest.warns(UserWarning, match="does not fit new trees"):
        est.fit(X, y)
    assert model_bytes(est) == before
    with pytest.raises(InvalidParameterError, match="larger or equal"):
        est.set_params(n_estimators=5).fit(X, y)


@pytest.mark.parametrize(
    "change, error",
    [
        ("labels", DataError),
        ("params", InvalidParameterError),
        ("seed", InvalidParameterError),
    ],
)
def test_new_trees_need_the_first_fits_classes_and_parameters(change, error):
    # Other data is accepted (test_warm_start_sklearn.py); its classes must be the same.
    X, y = data(fi.RandomForestClassifier)
    est = fi.RandomForestClassifier(10, warm_start=True, random_state=0).fit(X, y)
    est.set_params(n_estimators=20)
    if change == "labels":
        y = np.array(["a", "b", "c"])[y]
    elif change == "params":
        est.set_params(max_depth=3)
    else:
        est.set_params(random_state=1)
    with pytest.raises(error):
        est.fit(X, y)


def test_warm_start_off_refits_and_a_pickled_model_keeps_growing():
    X, y = data(fi.ExtraTreesRegressor)
    est = fi.ExtraTreesRegressor(8, random_state=0).fit(X, y)
    refit = est.set_params(n_estimators=12).fit(X, y)
    assert refit.forest_.n_estimators == 12
    warm = fi.ExtraTreesRegressor(8, warm_start=True, random_state=0).fit(X, y)
    grown = pickle.loads(pickle.dumps(warm)).set_params(n_estimators=12).fit(X, y)
    assert model_bytes(grown) == model_bytes(refit)

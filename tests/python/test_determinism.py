"""Same random_state => same model bytes and predictions, whatever n_jobs."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

import forestimp as fi


@pytest.fixture(scope="module")
def data():
    Xc, yc = make_classification(
        n_samples=1500, n_features=12, n_informative=5, n_classes=3, random_state=1
    )
    Xr, yr = make_regression(n_samples=1500, n_features=12, n_informative=5, random_state=1)
    return {"clf": (Xc, yc), "reg": (Xr, yr)}


CASES = {
    "RF-classifier": (fi.RandomForestClassifier, "clf", {}),
    "ET-regressor": (fi.ExtraTreesRegressor, "reg", {}),
    "RandomPatches-best": (fi.RandomPatchesClassifier, "clf", {"splitter": "best"}),
    "RandomPatches-random-reg": (fi.RandomPatchesRegressor, "reg", {"bootstrap": True}),
}


def _fit(case, data, n_jobs, random_state=0):
    cls, kind, extra = CASES[case]
    X, y = data[kind]
    est = cls(n_estimators=24, n_jobs=n_jobs, random_state=random_state, **extra)
    return est.fit(X, y)


def _outputs(est, X):
    out = {"predict": est.predict(X)}
    if hasattr(est, "predict_proba"):
        out["predict_proba"] = est.predict_proba(X)
    out["apply"] = est.apply(X)
    out["mdi"] = est.mdi_importances_
    out["feature_importances"] = est.feature_importances_
    out["tree_importances"] = est.tree_importances()
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_bytes_and_outputs_for_any_n_jobs(case, data):
    X = data[CASES[case][1]][0]
    fits = {n_jobs: _fit(case, data, n_jobs) for n_jobs in (1, 2, 4)}
    ref = fits[1]
    ref_bytes = ref.forest_.to_bytes()
    ref_out = _outputs(ref, X)
    for n_jobs, est in fits.items():
        assert est.forest_.to_bytes() == ref_bytes, f"n_jobs={n_jobs}"
        assert pickle.dumps(est.forest_) == pickle.dumps(ref.forest_), f"n_jobs={n_jobs}"
        for name, value in _outputs(est, X).items():
            # Exact equality: reductions run in tree order, not in completion order.
            assert np.array_equal(value, ref_out[name]), f"{name}, n_jobs={n_jobs}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_predict_is_identical_for_any_n_jobs(case, data):
    # Prediction threads split rows and trees; the sums must still be taken in tree order.
    est = _fit(case, data, 2)
    X = data[CASES[case][1]][0]
    ref = est.forest_.predict(X, n_jobs=1)
    for n_jobs in (2, 3, 8):
        assert np.array_equal(est.forest_.predict(X, n_jobs=n_jobs), ref), n_jobs
        assert np.array_equal(est.forest_.apply(X, n_jobs=n_jobs), est.forest_.apply(X)), n_jobs


@pytest.mark.parametrize("case", sorted(CASES))
def test_random_state_matters(case, data):
    a = _fit(case, data, 2, random_state=0).forest_.to_bytes()
    b = _fit(case, data, 2, random_state=1).forest_.to_bytes()
    assert a != b
    # None draws a fresh seed from numpy's global state on every fit.
    c = _fit(case, data, 2, random_state=None).forest_.to_bytes()
    d = _fit(case, data, 2, random_state=None).forest_.to_bytes()
    assert c != d


def test_random_state_accepts_a_random_state_instance(data):
    X, y = data["clf"]

    def fit(rs):
        return fi.RandomForestClassifier(n_estimators=5, random_state=rs).fit(X, y)

    a = fit(np.random.RandomState(7)).forest_.to_bytes()
    b = fit(np.random.RandomState(7)).forest_.to_bytes()
    assert a == b
    # Refitting the same estimator with an int seed repeats itself.
    est = fi.RandomForestClassifier(n_estimators=5, random_state=3)
    assert est.fit(X, y).forest_.to_bytes() == est.fit(X, y).forest_.to_bytes()

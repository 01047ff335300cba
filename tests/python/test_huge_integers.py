"""Huge integers (2**63, 2**64, -2**63 - 1, 10**30) and lying model-file metadata are typed
errors: a parameter raises ``InvalidParameterError`` naming it, and anything wrong in a
file raises ``ModelFormatError`` at load; never ``OverflowError`` from the engine's integer
conversions nor a plain ``ValueError`` from NumPy or scikit-learn."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import forestimp as fi
from forestimp import importance, persistence, selection
from forestimp.exceptions import InvalidParameterError, ModelFormatError

from conftest import ALL_ESTIMATORS
from model_forge import file_sections, seal_file

HUGE = [2**63, 2**64, -(2**63) - 1, 10**30]
FORESTS = ALL_ESTIMATORS
BOOSTERS = [fi.GradientBoostingClassifier, fi.GradientBoostingRegressor]


def _data():
    X = np.random.RandomState(0).rand(40, 4)
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


def _target(cls, y):
    return y if cls._is_classifier else y * 1.5


def _param_error(name):
    return pytest.raises(InvalidParameterError, match=name)


# ------------------------------------------------------------------------- estimators
@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("cls", FORESTS + BOOSTERS, ids=lambda c: c.__name__)
def test_fit_refuses_huge_n_jobs(cls, value):
    X, y = _data()
    with _param_error("n_jobs"):
        cls(n_estimators=2, n_jobs=value).fit(X, _target(cls, y))


MAX_SAMPLES = [
    (fi.RandomForestClassifier, 2**64),
    (fi.RandomForestClassifier, 10**30),
    (fi.RandomForestClassifier, float("inf")),
    (fi.ExtraTreesRegressor, 1e300),
    (fi.RandomPatchesClassifier, 2**64),
    (fi.RandomPatchesRegressor, 10**30),
]


@pytest.mark.parametrize("cls, value", MAX_SAMPLES, ids=repr)
def test_fit_refuses_huge_max_samples(cls, value):
    """Ints beyond 64 bits, and floats (scikit-learn's forests read floats above 1 as
    fractions of n over 1) whose row count is: with bootstrap, any count is asked for."""
    X, y = _data()
    with _param_error("max_samples"):
        cls(n_estimators=2, bootstrap=True, max_samples=value).fit(X, _target(cls, y))


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize(
    "cls", [fi.RandomForestClassifier, fi.GradientBoostingRegressor], ids=lambda c: c.__name__
)
@pytest.mark.parametrize("method", ["predict", "apply"])
def test_prediction_refuses_huge_n_jobs_set_after_fit(cls, method, value):
    X, y = _data()
    est = cls(n_estimators=2, random_state=0).fit(X, _target(cls, y))
    est.set_params(n_jobs=value)
    with _param_error("n_jobs"):
        getattr(est, method)(X)


# ------------------------------------------------------------------------ importances
@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forest = fi.RandomForestClassifier(4, random_state=0, oob_score=True).fit(X, y)
    booster = fi.GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, y)
    return X, y, forest, booster


IMPORTANCE_CALLS = {
    "permutation": lambda f, b, X, y, v: importance.permutation(f, X, y, n_jobs=v),
    "permutation-oob": lambda f, b, X, y, v: importance.permutation(f, X, y, oob=True, n_jobs=v),
    "permutation-booster": lambda f, b, X, y, v: importance.permutation(b, X, y, n_jobs=v),
    "local_permutation": lambda f, b, X, y, v: importance.local_permutation(f, X, y, n_jobs=v),
    "local_mdi": lambda f, b, X, y, v: importance.local_mdi(f, X, n_jobs=v),
    "local_mdi-booster": lambda f, b, X, y, v: importance.local_mdi(b, X, n_jobs=v),
    "shap_values": lambda f, b, X, y, v: importance.shap_values(f, X, n_jobs=v),
    "shap_values-booster": lambda f, b, X, y, v: importance.shap_values(b, X, n_jobs=v),
    "unbiased": lambda f, b, X, y, v: importance.unbiased(f, X, y, n_jobs=v),
    "context": lambda f, b, X, y, v: importance.context(f, X, y, X[:, 3] > 0.5, n_jobs=v),
}


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("call", sorted(IMPORTANCE_CALLS))
def test_importances_refuse_huge_n_jobs(fitted, call, value):
    X, y, forest, booster = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with _param_error("n_jobs"):
            IMPORTANCE_CALLS[call](forest, booster, X, y, value)


@pytest.mark.parametrize("value", HUGE)
def test_significance_refuses_huge_random_state(fitted, value):
    X, y, forest, _ = fitted
    with _param_error("random_state"):
        importance.significance(forest, X, y, n_permutations=1, random_state=value)


# -------------------------------------------------------------------------- selectors
def _selector(cls, **params):
    est = fi.RandomForestClassifier(3, random_state=0)
    extra = {
        selection.Boruta: {"max_iter": 2},
        selection.SequentialRandomSubspace: {"n_iterations": 2, "n_probes": 2},
    }.get(cls, {})
    return cls(estimator=est, **{**extra, **params})


SELECTORS = [
    selection.SelectFromImportance,
    selection.RFE,
    selection.Boruta,
    selection.SequentialRandomSubspace,
]


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("name", ["n_jobs", "random_state"])
@pytest.mark.parametrize("cls", SELECTORS, ids=lambda c: c.__name__)
def test_selectors_refuse_huge_ints(cls, name, value):
    X, y = _data()
    with _param_error(name):
        _selector(cls, **{name: value}).fit(X, y)


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize(
    "cls, name",
    [
        (selection.RFE, "step"),
        (selection.RFE, "cv"),
        (selection.SequentialRandomSubspace, "verbose"),
    ],
)
def test_selector_counts_refuse_huge_ints(cls, name, value):
    X, y = _data()
    with _param_error(name):
        _selector(cls, **{name: value}).fit(X, y)


# ---------------------------------------------------------------------- model files
@pytest.fixture(scope="module")
def files():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        forest = fi.RandomForestClassifier(3, random_state=0, oob_score=True).fit(X, y)
    booster = fi.GradientBoostingRegressor(n_estimators=3, random_state=0).fit(X, y * 1.5)
    return {"forest": persistence.dumps(forest), "booster": persistence.dumps(booster)}


def _with_meta(data, edit, arrays=None):
    """``data`` with its META JSON edited (``edit(meta)``; a str result replaces the text)
    and, when ``arrays`` is given, these ARRY bodies, every checksum right."""
    sections = file_sections(data)
    meta = json.loads(sections[0][1])
    text = edit(meta)
    body = (text if isinstance(text, str) else json.dumps(meta)).encode()
    if arrays is not None:
        sections = [sections[0], *((b"ARRY", a) for a in arrays), sections[-1]]
    return seal_file([(b"META", body), *sections[1:]])


def _param(name, value):
    return lambda meta: meta["params"].update({name: value})


FILE_PARAMS = {
    "n_jobs=10**30": ("forest", _param("n_jobs", 10**30)),
    "n_jobs=2**63": ("forest", _param("n_jobs", 2**63)),
    "n_jobs=-2**63-1": ("forest", _param("n_jobs", -(2**63) - 1)),
    "n_jobs=2**40": ("forest", _param("n_jobs", 2**40)),
    "n_jobs=0": ("forest", _param("n_jobs", 0)),
    "max_depth=2**70": ("forest", _param("max_depth", 2**70)),
    "min_samples_leaf=-2**64": ("forest", _param("min_samples_leaf", -(2**64))),
    "random_state=2**64": ("forest", _param("random_state", 2**64)),
    "random_state=-1": ("forest", _param("random_state", -1)),
    "monotonic_cst=[2**64]": ("forest", _param("monotonic_cst", {"list": [2**64, 0, 0, 0]})),
    "class_weight={0: 10**30}": ("forest", _param("class_weight", {"dict": [[0, 10**30]]})),
    "booster n_jobs=10**30": ("booster", _param("n_jobs", 10**30)),
    "booster max_depth=2**70": ("booster", _param("max_depth", 2**70)),
    "booster learning_rate=-1": ("booster", _param("learning_rate", -1.0)),
    "booster n_estimators=0": ("booster", _param("n_estimators", 0)),
    "booster subsample=2**64": ("booster", _param("subsample", 2**64)),
}


@pytest.mark.parametrize("case", sorted(FILE_PARAMS))
def test_load_refuses_absurd_parameters(files, case):
    kind, edit = FILE_PARAMS[case]
    with pytest.raises(ModelFormatError, match="parameter"):
        persistence.loads(_with_meta(files[kind], edit))


def test_load_refuses_non_finite_untagged_floats(files):
    """JSON reads ``1e999`` as infinity; a file spells non-finite floats as tagged values."""

    def edit(meta):
        meta["params"]["min_impurity_decrease"] = 12345.5
        return json.dumps(meta).replace("12345.5", "1e999")

    with pytest.raises(ModelFormatError, match="finite"):
        persistence.loads(_with_meta(files["forest"], edit))


@pytest.mark.parametrize("value", ["1e999", "-1e999", str(10**30)])
def test_load_refuses_absurd_fitted_scores(files, value):
    def edit(meta):
        meta["fitted"]["oob_score_"] = 0.125
        return json.dumps(meta).replace("0.125", value)

    with pytest.raises(ModelFormatError):
        persistence.loads(_with_meta(files["forest"], edit))


def test_load_accepts_a_nan_oob_score(files):
    est = persistence.loads(
        _with_meta(files["forest"], lambda m: m["fitted"].update(oob_score_={"float": "nan"}))
    )
    assert np.isnan(est.oob_score_)


@pytest.mark.parametrize("shape", [[2**62, 0], [0, 2**62], [2**61, 0], [2**64, 0], [0, 2**63 - 1]])
def test_load_refuses_huge_array_shapes(files, shape):
    """An empty body with a zero dimension matches any other dimension's claim: the shape
    itself must be one NumPy can build."""
    data = files["forest"]
    sections = file_sections(data)
    bodies = [body for tag, body in sections if tag == b"ARRY"]

    def edit(meta):
        meta["arrays"][-1].update(shape=shape)

    with pytest.raises(ModelFormatError, match="shape"):
        persistence.loads(_with_meta(data, edit, arrays=[*bodies[:-1], b""]))

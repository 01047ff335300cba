"""Malformed inputs and hyper-parameters give the documented exception, never a crash.

A Rust panic would surface as ``pyo3_runtime.PanicException``, which derives from
``BaseException``: every ``pytest.raises`` below names the precise type, so a panic (or a
bare ``Exception``) fails the test instead of passing as "some error".
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import forestimp as fi
from forestimp import _core
from forestimp.exceptions import (
    DataError,
    InvalidParameterError,
    ModelFormatError,
    NotFittedError,
)

from conftest import ALL_ESTIMATORS, CLASSIFIERS, REGRESSORS, core_fit_kwargs

RNG = np.random.default_rng(0)
X10 = RNG.normal(size=(10, 3))
Y10 = np.array([0, 1] * 5)


def test_exception_hierarchy():
    for exc in (InvalidParameterError, DataError, ModelFormatError):
        assert issubclass(exc, ValueError)
    assert issubclass(NotFittedError, (ValueError, AttributeError))
    assert fi.exceptions.InvalidParameterError is _core.InvalidParameterError


def _nan():
    X = X10.copy()
    X[3, 1] = np.nan
    return X


def _inf(sign=1):
    X = X10.copy()
    X[7, 2] = sign * np.inf
    return X


# (id, X, y, sample_weight, exception, message fragment)
DATA_CASES = [
    ("inf", _inf(), Y10, None, ValueError, "infinity"),
    ("-inf", _inf(-1), Y10, None, ValueError, "infinity"),
    ("X-1d", X10[:, 0], Y10, None, ValueError, "2D"),
    ("X-3d", X10.reshape(10, 3, 1), Y10, None, ValueError, "dim 3"),
    ("y-length", X10, Y10[:7], None, ValueError, "inconsistent numbers of samples"),
    ("X-empty", np.empty((0, 3)), np.empty(0), None, ValueError, "0 sample"),
    ("X-no-features", np.empty((10, 0)), Y10, None, ValueError, "0 feature"),
    ("sw-length", X10, Y10, np.ones(4), ValueError, "sample_weight"),
    ("sw-negative", X10, Y10, np.r_[-1.0, np.ones(9)], ValueError, "[Nn]egative"),
    ("sw-all-zero", X10, Y10, np.zeros(10), ValueError, "non-zero|positive"),
    ("sw-nan", X10, Y10, np.r_[np.nan, np.ones(9)], ValueError, "NaN"),
    ("X-strings", np.array([["a", "b", "c"]] * 10), Y10, None, ValueError, "convert"),
    ("X-complex", X10 + 1j, Y10, None, ValueError, "[Cc]omplex"),
]


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
@pytest.mark.parametrize(
    ("X", "y", "sample_weight", "exc", "match"),
    [c[1:] for c in DATA_CASES],
    ids=[c[0] for c in DATA_CASES],
)
def test_bad_data(cls, X, y, sample_weight, exc, match):
    est = cls(n_estimators=3, random_state=0)
    with pytest.raises(exc, match=match):
        est.fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_infinity_at_predict(cls):
    est = cls(n_estimators=3, random_state=0).fit(X10, Y10)
    with pytest.raises(ValueError, match="infinity"):
        est.predict(_inf())
    with pytest.raises(ValueError, match="infinity"):
        est.apply(_inf())


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_nan_is_a_missing_value_not_bad_input(cls):
    """NaN in X is accepted (``test_missing.py``), by every splitter: ``splitter="hist"``
    and multiway trees too."""
    est = cls(n_estimators=3, random_state=0).fit(_nan(), Y10)
    assert np.isfinite(est.predict(_nan())).all()
    hist = fi.RandomForestClassifier(n_estimators=3, splitter="hist").fit(_nan(), Y10)
    assert np.isfinite(hist.predict_proba(_nan())).all()
    multiway = fi.ExtraTreesRegressor(n_estimators=3, multiway=True).fit(np.round(_nan()), Y10)
    assert np.isfinite(multiway.predict(np.round(_nan()))).all()


P = X10.shape[1]
# (estimator class, parameter, bad value); each must raise InvalidParameterError naming it.
PARAM_CASES = [
    (fi.RandomForestClassifier, "n_estimators", 0),
    (fi.RandomForestClassifier, "n_estimators", -3),
    (fi.RandomForestClassifier, "n_estimators", 2.5),
    (fi.RandomForestClassifier, "max_depth", 0),
    (fi.RandomForestClassifier, "min_samples_split", 1),
    (fi.RandomForestClassifier, "min_samples_split", 0.0),
    (fi.RandomForestClassifier, "min_samples_leaf", 0),
    (fi.RandomForestClassifier, "max_features", 0),
    (fi.RandomForestClassifier, "max_features", 1.5),
    (fi.RandomForestClassifier, "max_features", 0.0),
    (fi.RandomForestClassifier, "max_features", "bogus"),
    (fi.RandomForestClassifier, "max_features", P + 1),
    (fi.ExtraTreesRegressor, "max_features", P + 1),
    (fi.ExtraTreesRegressor, "max_features", "auto"),
    (fi.RandomForestClassifier, "max_samples", 0),
    (fi.RandomForestClassifier, "max_samples", -0.5),
    (fi.RandomForestClassifier, "max_samples", "half"),
    (fi.RandomForestClassifier, "max_samples", True),
    (fi.RandomForestRegressor, "bootstrap", 1),
    (fi.ExtraTreesClassifier, "bootstrap", "yes"),
    (fi.RandomPatchesClassifier, "bootstrap", None),
    (fi.ExtraTreesRegressor, "max_samples", 0.5),
    (fi.RandomForestRegressor, "max_samples", 0.0),
    (fi.RandomForestClassifier, "criterion", "bogus"),
    (fi.RandomForestClassifier, "criterion", "squared_error"),
    (fi.RandomForestRegressor, "criterion", "gini"),
    (fi.RandomForestClassifier, "max_leaf_nodes", 1),
    (fi.RandomForestClassifier, "min_weight_fraction_leaf", 0.7),
    (fi.RandomForestClassifier, "min_weight_fraction_leaf", -0.1),
    (fi.RandomForestClassifier, "min_impurity_decrease", -1.0),
    (fi.RandomForestClassifier, "class_weight", "bogus"),
    (fi.RandomForestClassifier, "n_jobs", 0),
    (fi.RandomForestClassifier, "random_state", "seed"),
    (fi.RandomPatchesClassifier, "splitter", "bogus"),
    (fi.RandomPatchesClassifier, "max_features_node", 0),
    (fi.RandomPatchesRegressor, "max_features", 0.0),
    (fi.RandomPatchesRegressor, "max_samples", 1.5),
    (fi.TotallyRandomizedTreesClassifier, "criterion", "bogus"),
    (fi.RandomForestRegressor, "criterion", "absolute_errors"),
    (fi.RandomForestClassifier, "criterion", "poisson"),
    (fi.RandomForestClassifier, "ccp_alpha", -0.5),
    (fi.RandomPatchesRegressor, "ccp_alpha", "big"),
    (fi.ExtraTreesRegressor, "monotonic_cst", [1, 0]),
    (fi.RandomForestClassifier, "monotonic_cst", np.array([2, 0, 0])),
    (fi.RandomForestRegressor, "monotonic_cst", 1),
    (fi.RandomForestRegressor, "monotonic_cst", "increasing"),
]


@pytest.mark.parametrize(
    ("cls", "name", "value"),
    PARAM_CASES,
    ids=[f"{c.__name__}-{n}={v!r}" for c, n, v in PARAM_CASES],
)
def test_invalid_hyper_parameter(cls, name, value):
    y = Y10 if cls in CLASSIFIERS else X10[:, 0]
    est = cls(n_estimators=3, random_state=0).set_params(**{name: value})
    with pytest.raises(InvalidParameterError, match=name):
        est.fit(X10, y)


def test_parameters_are_validated_in_fit_not_init():
    # scikit-learn's contract: __init__ stores, fit validates.
    est = fi.RandomForestClassifier(n_estimators=0, max_features="bogus")
    assert est.get_params()["n_estimators"] == 0


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_predict_before_fit(cls):
    est = cls()
    methods = ["predict", "apply", "decision_path"]
    if cls in CLASSIFIERS:
        methods += ["predict_proba", "predict_log_proba"]
    for method in methods:
        with pytest.raises(NotFittedError):
            getattr(est, method)(X10)
    for attr in ("feature_importances_", "mdi_importances_"):
        with pytest.raises(NotFittedError):
            getattr(est, attr)
    with pytest.raises(NotFittedError):
        est.tree_importances()


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_wrong_number_of_features_at_predict(cls):
    est = cls(n_estimators=3, random_state=0).fit(X10, Y10)
    for n_features in (2, 4):
        X = RNG.normal(size=(5, n_features))
        with pytest.raises(ValueError, match="features"):
            est.predict(X)
        with pytest.raises(ValueError, match="features"):
            est.apply(X)


@pytest.mark.parametrize("cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor])
def test_oob_needs_row_sampling(cls):
    est = cls(n_estimators=3, oob_score=True, bootstrap=False, random_state=0)
    with pytest.raises(ValueError, match="[Oo]ut of bag|oob"):
        est.fit(X10, Y10)


@pytest.mark.parametrize("cls", REGRESSORS, ids=lambda c: c.__name__)
def test_regressor_with_string_targets(cls):
    y = np.array(["a", "b"] * 5)
    with pytest.raises(ValueError):
        cls(n_estimators=3).fit(X10, y)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_classifier_with_continuous_targets(cls):
    with pytest.raises(ValueError, match="[Uu]nknown label type|continuous"):
        cls(n_estimators=3).fit(X10, np.linspace(0, 1, 10))


# ------------------------------------------------------------- the engine, used directly
def _core_fit(X=None, y=None, sample_weight=None, **kw):
    X = np.ascontiguousarray(X10) if X is None else X
    y = Y10.astype(np.float64) if y is None else y
    return _core.Forest.fit(X, y, sample_weight, **core_fit_kwargs(**kw))


def test_core_fit_happy_path():
    forest = _core_fit()
    assert (forest.n_estimators, forest.n_features, forest.n_classes) == (5, 3, 2)
    proba = forest.predict(X10)
    assert proba.shape == (10, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # Float32 input is read as it is.
    assert _core_fit(X=X10.astype(np.float32)).predict(X10.astype(np.float32)).shape == (10, 2)
    # uint32 class codes (read in place) and the same codes as floats give the same model.
    assert _core_fit(y=Y10.astype(np.uint32)).to_bytes() == forest.to_bytes()


CORE_CASES = [
    # (id, kwargs for _core_fit, exception, message fragment)
    ("code-out-of-range", dict(y=np.array([0, 1, 2.0] * 3 + [0])), DataError, "class code"),
    ("code-fractional", dict(y=np.r_[0.5, Y10[1:]].astype(float)), DataError, "class code"),
    ("code-negative", dict(y=np.r_[-1.0, Y10[1:]]), DataError, "class code"),
    ("code-nan", dict(y=np.r_[np.nan, Y10[1:]]), DataError, "class code"),
    ("n_classes-too-small", dict(n_classes=1), DataError, "class code"),
    (
        "regression-y-nan",
        dict(y=np.r_[np.nan, np.ones(9)], n_classes=0, criterion="squared_error"),
        DataError,
        "non-finite",
    ),
    ("gini-for-regression", dict(n_classes=0), InvalidParameterError, "criterion"),
    (
        "poisson-y-negative",
        dict(y=np.r_[-1.0, np.ones(9)], n_classes=0, criterion="poisson"),
        DataError,
        "negative",
    ),
    (
        "poisson-y-all-zero",
        dict(y=np.zeros(10), n_classes=0, criterion="poisson"),
        DataError,
        "strictly positive",
    ),
    ("poisson-for-classes", dict(criterion="poisson"), InvalidParameterError, "criterion"),
    ("ccp_alpha-negative", dict(ccp_alpha=-1.0), InvalidParameterError, "ccp_alpha"),
    ("ccp_alpha-nan", dict(ccp_alpha=float("nan")), InvalidParameterError, "ccp_alpha"),
    ("ccp_alpha-inf", dict(ccp_alpha=float("inf")), InvalidParameterError, "ccp_alpha"),
    ("mse-for-classes", dict(criterion="squared_error"), InvalidParameterError, "criterion"),
    ("criterion", dict(criterion="bogus"), InvalidParameterError, "criterion"),
    ("splitter", dict(splitter="bogus"), InvalidParameterError, "splitter"),
    ("max_features-0", dict(max_features=0), InvalidParameterError, "max_features"),
    ("max_features-p+1", dict(max_features=4), InvalidParameterError, "max_features"),
    (
        "max_features>tree_features",
        dict(max_features=3, tree_features=2),
        InvalidParameterError,
        "max_features",
    ),
    ("tree_features-0", dict(tree_features=0), InvalidParameterError, "tree_features"),
    ("tree_features-p+1", dict(tree_features=4), InvalidParameterError, "tree_features"),
    ("n_estimators-0", dict(n_estimators=0), InvalidParameterError, "n_estimators"),
    ("max_depth-0", dict(max_depth=0), InvalidParameterError, "max_depth"),
    ("min_samples_split-1", dict(min_samples_split=1), InvalidParameterError, "min_samples"),
    ("min_samples_leaf-0", dict(min_samples_leaf=0), InvalidParameterError, "min_samples"),
    (
        "min_wfl-nan",
        dict(min_weight_fraction_leaf=float("nan")),
        InvalidParameterError,
        "min_weight_fraction_leaf",
    ),
    (
        "min_impurity-inf",
        dict(min_impurity_decrease=float("inf")),
        InvalidParameterError,
        "min_impurity_decrease",
    ),
    ("max_leaf_nodes-1", dict(max_leaf_nodes=1), InvalidParameterError, "max_leaf_nodes"),
    ("max_samples-0", dict(max_samples=0), InvalidParameterError, "max_samples"),
    (
        "max_samples>n-no-bootstrap",
        dict(max_samples=11, bootstrap=False),
        InvalidParameterError,
        "max_samples",
    ),
    ("n_jobs-0", dict(n_jobs=0), InvalidParameterError, "n_jobs"),
    ("y-length", dict(y=np.zeros(9)), DataError, "rows"),
    (
        "X-inf-f32",
        dict(X=np.where(np.eye(10, 3) > 0, np.inf, X10).astype(np.float32)),
        DataError,
        "non-finite",
    ),
    ("X-empty", dict(X=np.empty((0, 3)), y=np.empty(0)), DataError, "sample"),
    ("X-no-columns", dict(X=np.empty((10, 0))), DataError, "feature"),
    ("sw-length", dict(sample_weight=np.ones(3)), DataError, "sample_weight"),
    ("sw-negative", dict(sample_weight=-np.ones(10)), DataError, "sample_weight"),
    ("sw-inf", dict(sample_weight=np.r_[np.inf, np.ones(9)]), DataError, "sample_weight"),
    ("sw-zero", dict(sample_weight=np.zeros(10)), DataError, "zero"),
    # Wrong dtypes and layouts are refused before anything is read.
    ("X-int64", dict(X=np.arange(30).reshape(10, 3)), TypeError, "float"),
    ("X-float16", dict(X=X10.astype(np.float16)), TypeError, "float"),
    ("X-1d", dict(X=np.ascontiguousarray(X10[:, 0])), TypeError, "2-D"),
    ("X-list", dict(X=X10.tolist()), TypeError, None),
    ("X-strided", dict(X=np.repeat(X10, 2, axis=1)[:, ::2]), TypeError, "contiguous"),
    ("y-float32", dict(y=Y10.astype(np.float32)), TypeError, "'y'"),
    ("y-int64", dict(y=Y10), TypeError, "'y'"),
    ("y-2d", dict(y=Y10.astype(float).reshape(-1, 1)), TypeError, "'y'"),
    ("y-uint32-regression", dict(y=Y10.astype(np.uint32), n_classes=0), TypeError, "float64"),
    ("y-uint32-strided", dict(y=np.repeat(Y10.astype(np.uint32), 2)[::2]), TypeError, "contiguous"),
    ("y-uint32-code-too-large", dict(y=np.full(10, 2, np.uint32)), DataError, "class code 2"),
    ("y-strided", dict(y=np.repeat(Y10.astype(float), 2)[::2]), TypeError, "contiguous"),
    ("sw-strided", dict(sample_weight=np.ones(20)[::2]), TypeError, "contiguous"),
    ("random_state-negative", dict(random_state=-1), OverflowError, None),
    ("n_classes-negative", dict(n_classes=-1), OverflowError, None),
    ("progress-not-callable", dict(progress=3), TypeError, "callable"),
]


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [c[1:] for c in CORE_CASES],
    ids=[c[0] for c in CORE_CASES],
)
def test_core_fit_misuse(kwargs, exc, match):
    with pytest.raises(exc, match=match) as info:
        _core_fit(**kwargs)
    assert type(info.value).__module__ != "pyo3_runtime"


def test_core_progress_callback_errors_propagate():
    calls = []

    def progress(done, total):
        calls.append((done, total))
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        _core_fit(n_estimators=50, progress=progress)
    assert calls and calls[0][1] == 50


def test_core_progress_callback_sees_every_tree():
    calls = []
    _core_fit(n_estimators=37, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (37, 37)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_core_predict_misuse():
    forest = _core_fit()
    with pytest.raises(DataError, match="column|feature"):
        forest.predict(np.zeros((4, 2)))
    with pytest.raises(DataError, match="column|feature"):
        forest.apply(np.zeros((4, 5)))
    with pytest.raises(DataError, match="non-finite"):
        forest.predict(np.full((2, 3), -np.inf))
    assert np.isfinite(forest.predict(np.full((2, 3), np.nan))).all()  # a missing value
    with pytest.raises(TypeError):
        forest.predict(np.zeros((4, 3), dtype=np.int32))
    with pytest.raises(TypeError):
        forest.predict(np.zeros((4, 6))[:, ::2])
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        forest.predict(X10, n_jobs=0)
    with pytest.raises(IndexError):
        forest.tree_arrays(5)
    with pytest.raises(OverflowError):
        forest.tree_arrays(-1)
    # No rows is a valid, empty request or a clean DataError, never a crash.
    try:
        out = forest.predict(np.empty((0, 3)))
    except DataError:
        pass
    else:
        assert out.shape == (0, 2)


def test_core_oob_without_subsampling():
    forest = _core_fit(bootstrap=False)
    with pytest.raises((InvalidParameterError, DataError)):
        forest.oob_predict(X10)


def test_core_oob_on_other_rows():
    forest = _core_fit()
    with pytest.raises(DataError):
        forest.oob_predict(np.ascontiguousarray(X10[:7]))


def test_absurd_n_estimators_is_not_allocated_up_front():
    # Trees are collected as they grow: 10**12 of them must not be reserved at the start
    # (an allocation failure would abort the interpreter, so this runs in a child). The
    # progress callback stops the fit at its first report.
    code = textwrap.dedent(
        """
        import numpy as np
        from forestimp import _core
        X = np.random.default_rng(0).normal(size=(10, 3))
        y = np.array([0.0, 1.0] * 5)
        kw = dict(n_classes=2, criterion="gini", splitter="best", n_estimators=10**12,
                  max_features=2, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                  min_weight_fraction_leaf=0.0, min_impurity_decrease=0.0,
                  max_leaf_nodes=None, bootstrap=True, max_samples=None, tree_features=None,
                  balanced_subsample=False, random_state=0, n_jobs=2)
        def stop(done, total):
            raise KeyboardInterrupt
        try:
            _core.Forest.fit(X, y, None, progress=stop, **kw)
        except KeyboardInterrupt:
            print("stopped")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.startswith("stopped"), proc.stdout


def test_absurd_n_classes_is_refused_not_allocated():
    # 2**40 class columns per node cannot be allocated: an allocation failure would abort
    # the interpreter, so the check runs in a child process.
    code = textwrap.dedent(
        """
        import numpy as np
        from forestimp import _core
        X = np.random.default_rng(0).normal(size=(10, 3))
        y = np.array([0.0, 1.0] * 5)
        kw = dict(n_classes=2**40, criterion="gini", splitter="best", n_estimators=2,
                  max_features=2, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                  min_weight_fraction_leaf=0.0, min_impurity_decrease=0.0,
                  max_leaf_nodes=None, bootstrap=True, max_samples=None, tree_features=None,
                  balanced_subsample=False, random_state=0, n_jobs=1)
        try:
            _core.Forest.fit(X, y, None, **kw)
        except (ValueError, MemoryError) as e:
            print("refused:", type(e).__name__, e)
        else:
            print("fitted")
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout.startswith("refused:"), proc.stdout


@pytest.mark.parametrize(
    "params",
    [
        {"n_jobs": 10**9},
        {"min_samples_leaf": 2**62},
        {"max_leaf_nodes": 2**62},
        {"max_depth": 2**62},
    ],
    ids=["n_jobs", "min_samples_leaf", "max_leaf_nodes", "max_depth"],
)
def test_extreme_but_valid_values_neither_hang_nor_overflow(params):
    # n_jobs is capped at 4 threads per core; sizes saturate instead of wrapping around.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    est = fi.RandomForestClassifier(n_estimators=3, random_state=0, **params).fit(X, y)
    if "min_samples_leaf" in params:
        assert (est.forest_.node_counts() == 1).all()
    else:
        assert est.score(X, y) > 0.9

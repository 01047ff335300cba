"""Errors at the seams with other tools say what to do (issue #57, item 6).

* A text, category or date column of X, at fit or predict, is a ``DataError`` that names the
  column and the cure (``forestimp._frames``), where scikit-learn's conversion said
  ``could not convert string to float: 'x'``; what scikit-learn converts still fits.
* ``shap.TreeExplainer`` recognises models by their class and has no hook a forestimp model
  could use, so its error cannot point anywhere (decision in docs/importances.md); the two
  routes that work, ``shap.TreeExplainer(est.to_sklearn())`` and
  ``forestimp.importance.shap_values``, give the same values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from forestimp import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from forestimp.exceptions import DataError
from forestimp.importance import shap_values
from forestimp.selection import RFE, Boruta, SelectFromImportance

MODELS = [RandomForestRegressor, GradientBoostingRegressor]


def frame(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.random(n), "b": rng.random(n)})
    return X, X["a"].to_numpy() + 0.1 * rng.random(n)


def small(cls):
    return cls(n_estimators=5, random_state=0)


def undeclared(cls):
    """``small(cls)`` reading category columns as values, not as categorical features (the
    forests' ``categorical_features=None``; issue #52)."""
    est = small(cls)
    if "categorical_features" in est.get_params():
        est.set_params(categorical_features=None)
    return est


# ----------------------------------------------------------------- non-numeric columns
@pytest.mark.parametrize("cls", MODELS)
@pytest.mark.parametrize(
    ("column", "kind"),
    [
        (np.array(["Paris", "Lyon"] * 40, dtype=object), "text column 'city'"),
        (pd.array(["Paris", "Lyon"] * 40, dtype="string"), "text column 'city'"),
        (pd.Categorical(["Paris", "Lyon"] * 40), "category column 'city'"),
        (pd.date_range("2020-01-01", periods=80), "date/time column 'city'"),
        (np.array([1.0, "Lyon"] * 40, dtype=object), "text column 'city'"),
    ],
)
def test_fit_names_a_non_numeric_column_and_the_cure(cls, column, kind):
    X, y = frame()
    with pytest.raises(DataError, match=kind) as info:
        undeclared(cls).fit(X.assign(city=column), y)
    message = str(info.value)
    assert "get_dummies" in message and "OneHotEncoder" in message
    assert "'a'" not in message and "'b'" not in message  # numeric columns are not named


@pytest.mark.parametrize("cls", MODELS)
def test_predict_names_the_column_too(cls):
    X, y = frame()
    est = small(cls).fit(X.assign(city=1.0), y)
    with pytest.raises(DataError, match="text column 'city'"):
        est.predict(X.assign(city="Paris"))


def test_several_columns_are_named_by_kind():
    X, y = frame()
    X = X.assign(town=["x", "y"] * 40, zone=pd.Categorical(["u", "v"] * 40), day="Mon")
    with pytest.raises(DataError, match="text columns 'town', 'day'; category column 'zone'"):
        undeclared(RandomForestRegressor).fit(X, y)


def test_a_numpy_text_column_is_named_by_its_index():
    X, y = frame()
    A = np.column_stack([X.to_numpy(), np.array(["x", "y"] * 40)]).astype(object)
    with pytest.raises(DataError, match="text column at index 2, which does not convert"):
        small(RandomForestRegressor).fit(A, y)


def test_what_scikit_learn_converts_still_fits_to_the_same_trees():
    """Numeric categories (their values), numbers stored as objects or numeric strings,
    booleans and pandas' nullable integers pass, as they did."""
    X, y = frame()
    codes = np.arange(80) % 3
    float_version = X.assign(c=codes.astype(float), d=codes.astype(float))
    variants = X.assign(c=pd.Categorical(codes), d=codes.astype(object))
    reference = small(RandomForestRegressor).fit(float_version, y).predict(float_version)
    fitted = undeclared(RandomForestRegressor).fit(variants, y)
    np.testing.assert_array_equal(fitted.predict(variants), reference)
    small(RandomForestRegressor).fit(X.assign(c=codes > 0, d=pd.array(codes, dtype="Int64")), y)
    small(RandomForestRegressor).fit(X.to_numpy().astype(str), y)  # numeric strings


def test_a_dict_in_an_object_array_keeps_scikit_learns_type_error():
    # check_estimator's check_dtype_object expects this TypeError and message.
    X = np.random.default_rng(0).random((20, 3)).astype(object)
    X[0, 0] = {"foo": "bar"}
    with pytest.raises(TypeError, match="argument must be a string.* number"):
        small(RandomForestRegressor).fit(X, np.arange(20.0))


@pytest.mark.parametrize("selector", [SelectFromImportance, Boruta, RFE])
def test_selectors_name_the_column(selector):
    X, y = frame()
    with pytest.raises(DataError, match="text column 'city'"):
        selector().fit(X.assign(city="Paris"), y)


# ----------------------------------------------------------------------------- shap
shap = pytest.importorskip("shap")


def test_shap_tree_explainer_does_not_read_a_forestimp_model():
    """The limitation the docs describe; if shap learns to read forestimp models, this
    fails, and docs/importances.md should say so instead."""
    X, y = frame()
    est = small(RandomForestRegressor).fit(X, y)
    with pytest.raises(shap.utils._exceptions.InvalidModelError, match="not yet supported"):
        shap.TreeExplainer(est)


@pytest.mark.parametrize(
    "cls",
    [RandomForestRegressor, GradientBoostingRegressor, RandomForestClassifier,
     ExtraTreesClassifier, GradientBoostingClassifier],
)  # fmt: skip
def test_to_sklearn_and_native_treeshap_agree(cls):
    X, y = frame(n=150)
    if not cls.__name__.endswith("Regressor"):
        y = (y > 0.5).astype(int) + (y > 0.8).astype(int) * (cls is ExtraTreesClassifier)
    est = cls(n_estimators=8, random_state=0).fit(X, y)
    reference = np.asarray(shap.TreeExplainer(est.to_sklearn()).shap_values(X.iloc[:30]))
    ours = shap_values(est, X.iloc[:30]).values
    assert ours.shape == reference.shape
    np.testing.assert_allclose(ours, reference, atol=1e-10)

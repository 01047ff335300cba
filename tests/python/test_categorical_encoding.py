"""Declaring categorical features and encoding them by category (issue #52): the
``categorical_features`` forms of HistGradientBoosting, categories learned at fit, values
matched by category whatever their code, unseen and missing values, and typed errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import forestimp as fi
from forestimp import _categorical as cat
from forestimp.exceptions import DataError, InvalidParameterError


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "city": pd.Categorical(["Liège", "Paris", None, "Liège", "Oslo"]),
            "size": [1.0, 2.0, 3.0, np.nan, 5.0],
            "grade": ["b", "a", "c", "a", None],
        }
    )


def test_every_declaration_form_gives_the_same_mask():
    X = frame()
    expected = np.array([True, False, True])
    assert list(cat.resolve_mask(X, "from_dtype")) == [True, False, False]
    for spec in ([True, False, True], [0, 2], [-3, -1], ["city", "grade"]):
        assert list(cat.resolve_mask(X, spec)) == list(expected), spec
    assert cat.resolve_mask(X, None) is None
    assert cat.resolve_mask(X, [False, False, False]) is None
    assert cat.resolve_mask(X, []) is None
    # A numpy array has no dtypes to read.
    assert cat.resolve_mask(np.zeros((3, 2)), "from_dtype") is None


@pytest.mark.parametrize(
    "spec, words",
    [
        ("auto", "from_dtype"),
        ([True, False], "mask of 2"),
        ([3], "out of range"),
        (["town"], "does not have"),
        ([[0, 1]], "one-dimensional"),
        ([0.5], "dtype float64"),
    ],
)
def test_bad_declarations_are_refused_by_name(spec, words):
    with pytest.raises(InvalidParameterError, match=words):
        cat.resolve_mask(frame(), spec)


def test_names_need_a_frame():
    with pytest.raises(InvalidParameterError, match="DataFrame"):
        cat.resolve_mask(np.zeros((2, 2)), ["a"])


def test_values_are_matched_by_category_not_by_code():
    X = frame()
    mask = cat.resolve_mask(X, [0, 2])
    categories = cat.learn(X, mask)
    assert list(categories[0]) == ["Liège", "Oslo", "Paris"]
    assert categories[1] is None
    assert list(categories[2]) == ["a", "b", "c"]
    coded = cat.encode(X, categories)
    np.testing.assert_array_equal(coded["city"], [0, 2, np.nan, 0, 1])
    np.testing.assert_array_equal(coded["grade"], [1, 0, 2, 0, np.nan])
    np.testing.assert_array_equal(coded["size"], X["size"])
    # The same rows with the categories declared in another order: the same codes.
    other = X.copy()
    other["city"] = other["city"].cat.reorder_categories(["Paris", "Oslo", "Liège"])
    assert list(other["city"].cat.codes) != list(X["city"].cat.codes)
    np.testing.assert_array_equal(cat.encode(other, categories)["city"], coded["city"])
    # A category not seen at fit: -1, where unseen values go; the input is left as it was.
    new = X.copy()
    new["grade"] = ["z", "a", None, "b", "c"]
    np.testing.assert_array_equal(cat.encode(new, categories)["grade"], [-1, 0, np.nan, 1, 2])
    assert X.equals(frame())


def test_numeric_categories_of_an_array_are_sorted_values():
    X = np.array([[10.0, 1.0], [2.5, 2.0], [10.0, np.nan], [7.0, 4.0]])
    categories = cat.learn(X, np.array([True, False]))
    np.testing.assert_array_equal(categories[0], [2.5, 7.0, 10.0])
    coded = cat.encode(X, categories)
    assert coded.dtype == np.float64
    np.testing.assert_array_equal(coded[:, 0], [2, 0, 2, 1])
    np.testing.assert_array_equal(coded[:, 1], X[:, 1])
    # Integers match the floats learned (1 == 1.0), unseen values give -1.
    np.testing.assert_array_equal(cat.encode(np.array([[7, 0], [3, 0]]), categories)[:, 0], [1, -1])


def test_mixed_types_and_stray_text_are_typed_errors():
    X = np.array([["a", 1.0], [2, 2.0], ["b", 3.0]], dtype=object)
    with pytest.raises(DataError, match="mixes values of types"):
        cat.learn(X, np.array([True, False]))
    Y = np.array([["a", "x"], ["b", "y"]], dtype=object)
    categories = cat.learn(Y, np.array([True, False]))
    with pytest.raises(DataError, match="outside its categorical columns"):
        cat.encode(Y, categories)


def test_arrow_dictionary_columns_are_categorical():
    pa = pytest.importorskip("pyarrow")
    values = ["b", "a", None, "c", "a", "b"] * 20
    arrow = pd.Series(pd.array(values, dtype=pd.ArrowDtype(pa.dictionary(pa.int8(), pa.string()))))
    X = pd.DataFrame({"cat": arrow, "x": np.arange(len(values), dtype=float)})
    y = np.array([v == "a" for v in values], dtype=int)
    est = fi.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert list(est.is_categorical_) == [True, False]
    assert sorted(est.categories_[0]) == ["a", "b", "c"]
    same = X.assign(cat=pd.Categorical(values))
    np.testing.assert_array_equal(est.predict_proba(same), est.predict_proba(X))

"""Columns a forest cannot split on, refused by their names before scikit-learn converts X.

A forest splits on numbers. Given a text, category or date column, scikit-learn's conversion
fails with ``could not convert string to float: 'Paris'`` (or a numpy ``DTypePromotionError``),
naming neither the column nor the cure; :func:`check_numeric` raises a
:class:`~forestimp.exceptions.DataError` that names both. Every fit and predict entry calls it
on X first, next to :func:`forestimp._sparse.checked`.

What passes is what scikit-learn converts today: numeric and boolean columns (numpy or
pandas' nullable ones), object columns holding numbers only, and category columns whose
categories are numbers (their values, not their codes, reach the forest).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ._core import DataError

# Names shown in the message; the count says how many more there are.
_SHOWN = 8
# pandas.api.types.infer_dtype's names for object columns that convert to float64.
_NUMERIC_OBJECTS = frozenset(
    {"integer", "floating", "mixed-integer-float", "decimal", "boolean", "empty"}
)


def check_numeric(X: Any, name: str = "X") -> None:
    """Raise :class:`DataError` naming the columns of ``X`` that hold text, non-numeric
    categories or dates (a pandas DataFrame, a numpy array of strings or objects, or a Dask
    DataFrame by its dtypes); anything else passes unread."""
    X = _dask_meta(X)
    frame = _is_frame(X)
    kinds = _frame_kinds(X) if frame else _array_kinds(X)
    if not kinds:
        return
    where = "" if frame else " at index"
    by_kind: dict[str, list[str]] = {}
    for column, kind in kinds:
        by_kind.setdefault(kind, []).append(column)
    parts = []
    for kind, columns in by_kind.items():
        shown = ", ".join(columns[:_SHOWN])
        more = f" and {len(columns) - _SHOWN} more" if len(columns) > _SHOWN else ""
        plural = "s" if len(columns) > 1 else ""
        parts.append(f"{kind} column{plural}{where} {shown}{more}")
    verb = "does" if len(kinds) == 1 else "do"
    raise DataError(
        f"{name} has {'; '.join(parts)}, which {verb} not convert to the numbers a forest "
        "splits on. Encode such columns first (pandas.get_dummies(X, columns=[...]), or "
        "scikit-learn's OneHotEncoder / OrdinalEncoder in a Pipeline; dates as numbers, "
        "e.g. days since a start), declare them categorical when the estimator takes "
        "categorical_features (a pandas category column, docs/categorical.md), or drop "
        "them. `forestimp rank` and `forestimp select` split the text columns of a CSV or "
        "Parquet file as categories themselves."
    )


def _dask_meta(X: Any) -> Any:
    """A Dask DataFrame's empty pandas twin (its dtypes, nothing computed), else ``X``. An
    object column there holds no value to infer from and passes; Dask reads text as
    ``string`` by default, which does not."""
    dd = sys.modules.get("dask.dataframe")
    if dd is not None and isinstance(X, dd.DataFrame):
        return X._meta
    return X


def _is_frame(X: Any) -> bool:
    """Whether ``X`` is a pandas DataFrame (pandas is not imported to find out)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(X, pd.DataFrame)


def _frame_kinds(X: Any) -> list[tuple[str, str]]:
    """``(repr of the column name, kind)`` for each column of the DataFrame ``X`` that
    scikit-learn could not convert to float64."""
    import pandas as pd

    types = pd.api.types
    found = []
    for column, dtype in X.dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype):
            categories = dtype.categories
            ok = types.is_numeric_dtype(categories.dtype) or types.is_bool_dtype(categories.dtype)
            kind = None if ok else "category"
        elif types.is_datetime64_any_dtype(dtype) or types.is_timedelta64_dtype(dtype):
            kind = "date/time"
        elif isinstance(dtype, pd.PeriodDtype):
            kind = "date/time"
        elif isinstance(dtype, np.dtype) and dtype.kind == "O":
            inferred = types.infer_dtype(X[column], skipna=True)
            kind = None if inferred in _NUMERIC_OBJECTS else _object_kind(inferred)
        elif types.is_string_dtype(dtype):
            kind = "text"
        else:
            kind = None
        if kind is not None:
            found.append((repr(column), kind))
    return found


def _object_kind(inferred: str) -> str:
    """The word for an object column that pandas infers as ``inferred``."""
    if inferred in ("datetime", "datetime64", "date", "timedelta", "time", "period"):
        return "date/time"
    return "text" if inferred in ("string", "bytes", "mixed-integer", "mixed") else "non-numeric"


def _array_kinds(X: Any) -> list[tuple[str, str]]:
    """``(column index, "text")`` for the columns of a 2-D numpy array of strings or
    objects that do not convert to float64 (numeric strings do, as in scikit-learn). A
    TypeError there (a dict in X) is left to scikit-learn, whose message its own estimator
    checks expect."""
    if not isinstance(X, np.ndarray) or X.ndim != 2 or X.dtype.kind not in "OUS":
        return []
    try:
        X.astype(np.float64)
        return []
    except (TypeError, ValueError):
        pass
    found = []
    for j in range(X.shape[1]):
        try:
            X[:, j].astype(np.float64)
        except ValueError:
            found.append((str(j), "text"))
        except TypeError:
            return []
    return found

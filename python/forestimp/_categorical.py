"""Categorical features: which columns are categorical, the categories learned at fit, and X
with those columns as category codes for the engine (issue #52).

``categorical_features`` follows scikit-learn's ``HistGradientBoosting*``: ``"from_dtype"``
(the default: pandas ``category`` columns), ``None`` (none), a boolean mask, integer indices
or feature names. A value is matched by its category, not by a code: a column's codes are
positions in ``categories_[j]``, learned at fit (a category column's categories in its
dtype's order, otherwise its distinct values sorted), so a DataFrame whose category order
differs at predict encodes the same rows the same. Missing values (NaN, ``None``,
``pd.NA``) stay NaN, the trees' missing value; a category not seen at fit becomes ``-1``,
which every categorical split sends where unseen values go (the side with more training
samples).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._core import DataError, InvalidParameterError, ModelFormatError

# The defaults of the best categorical split's guards (`CategoryGuards` in src/params.rs;
# docs/categorical.md): category_smoothing, min_category_samples, min_category_share,
# max_category_side guard nothing by default: a guard that keeps a column of thousands of
# noisy levels from fitting noise also hides an informative column of many small levels.
# category_penalty (1: a best set is compared with the other candidates net of what its
# levels gain by chance) keeps such a column from winning every node it is drawn in without
# changing which set is best within it (docs/categorical.md, BENCHMARKS.md).
SMOOTHING = 0.0
MIN_SAMPLES = 1
MAX_SIDE: int | None = None
MIN_SHARE = 0.0
PENALTY = 1.0

# The engine's bound on a feature's categories (`tree::categories::MAX_CATEGORIES`).
MAX_CATEGORIES = 1 << 24
UNSEEN = -1.0


def guards(est: Any) -> tuple[float, int, float, int, float]:
    """The engine's ``category_guards`` of ``est``'s ``category_smoothing``,
    ``min_category_samples``, ``min_category_share``, ``max_category_side`` (0: no limit)
    and ``category_penalty``, checked."""
    from . import _params as P

    smoothing = P.check_real(
        "category_smoothing", getattr(est, "category_smoothing", SMOOTHING), 0.0, np.inf
    )
    min_samples = P.check_int(
        "min_category_samples", getattr(est, "min_category_samples", MIN_SAMPLES), 1
    )
    side = getattr(est, "max_category_side", MAX_SIDE)
    max_side = P.check_int("max_category_side", side, 1, none_ok=True)
    share = getattr(est, "min_category_share", MIN_SHARE)
    min_share = P.check_real("min_category_share", share, 0.0, 0.999)
    penalty = P.check_real(
        "category_penalty", getattr(est, "category_penalty", PENALTY), 0.0, np.inf
    )
    return smoothing, min_samples, min_share, max_side or 0, penalty


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _n_columns(X: Any) -> int:
    return len(X.columns) if _is_frame(X) else np.shape(X)[1]


def _is_category(column: Any) -> bool:
    """A pandas ``category`` column, or an Arrow dictionary one (``pd.ArrowDtype``)."""
    dtype = getattr(column, "dtype", None)
    arrow = getattr(dtype, "pyarrow_dtype", None)
    return getattr(dtype, "name", None) == "category" or type(arrow).__name__ == "DictionaryType"


def _as_category(column: Any) -> Any:
    """A category column as a pandas ``category`` one (an Arrow dictionary column's
    dictionary becomes its categories)."""
    if getattr(column.dtype, "name", None) == "category":
        return column
    import pandas as pd

    chunks = column.array._pa_array.combine_chunks()
    dictionary = chunks.dictionary.to_pylist()
    codes = chunks.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    return pd.Series(pd.Categorical.from_codes(codes, dictionary), index=column.index)


def resolve_mask(X: Any, spec: Any) -> np.ndarray | None:
    """The boolean mask of the categorical columns of ``X`` under ``spec`` (see the module
    docs); None when no column is categorical."""
    if spec is None:
        return None
    if isinstance(spec, str):
        if spec != "from_dtype":
            raise InvalidParameterError(
                f"categorical_features={spec!r}: expected 'from_dtype', None, a boolean "
                "mask, indices or feature names"
            )
        # (X is read only when it is a DataFrame: anything else is left to the checks.)
        if not _is_frame(X):
            return None
        mask = np.array([_is_category(X.iloc[:, j]) for j in range(X.shape[1])], dtype=bool)
        return mask if mask.any() else None
    p = _n_columns(X)
    values = np.asarray(spec)
    if values.ndim != 1:
        raise InvalidParameterError("categorical_features must be one-dimensional")
    if values.dtype == bool:
        if len(values) != p:
            raise InvalidParameterError(
                f"categorical_features is a mask of {len(values)} values for {p} features"
            )
        mask = values.copy()
    elif values.dtype.kind in "iu":
        bad = values[(values < -p) | (values >= p)]
        if len(bad):
            raise InvalidParameterError(
                f"categorical_features index {int(bad[0])} is out of range for {p} features"
            )
        mask = np.zeros(p, dtype=bool)
        mask[values] = True
    elif values.dtype.kind in "UO" and len(values):
        if not _is_frame(X):
            raise InvalidParameterError(
                "categorical_features given by name needs X as a DataFrame with those columns"
            )
        names = [str(c) for c in X.columns]
        missing = [str(v) for v in values if str(v) not in names]
        if missing:
            raise InvalidParameterError(
                f"categorical_features names columns X does not have: {missing[:8]}"
            )
        mask = np.isin(np.array(names, dtype=object), values.astype(str))
    elif len(values) == 0:
        return None
    else:
        raise InvalidParameterError(
            f"categorical_features of dtype {values.dtype}: expected booleans, integers or names"
        )
    return mask if mask.any() else None


def _column(X: Any, j: int) -> Any:
    return X.iloc[:, j] if _is_frame(X) else np.asarray(X)[:, j]


def _missing(values: np.ndarray) -> np.ndarray:
    """Which entries of an object or float array are missing (NaN, None, pd.NA, NaT)."""
    import pandas as pd

    return np.asarray(pd.isna(values), dtype=bool)


def _name(X: Any, j: int) -> str:
    return repr(str(X.columns[j])) if _is_frame(X) else f"at index {j}"


def learn(X: Any, mask: np.ndarray) -> list[np.ndarray | None]:
    """``categories_``: for each feature of ``X``, its categories (None for the others)."""
    if hasattr(X, "tocsc"):  # scipy.sparse: no column reads as categories
        raise InvalidParameterError(
            "categorical features are split in dense X only: pass X.toarray(), or "
            "categorical_features=None"
        )
    out: list[np.ndarray | None] = []
    for j, categorical in enumerate(mask):
        if not categorical:
            out.append(None)
            continue
        column = _column(X, j)
        if _is_category(column):
            categories = np.asarray(_as_category(column).cat.categories)
        else:
            values = np.asarray(column, dtype=object)
            present = values[~_missing(values)]
            try:
                categories = np.array(sorted(set(present.tolist())), dtype=object)
            except TypeError as e:
                kinds = sorted({type(v).__name__ for v in present.tolist()})
                raise DataError(
                    f"categorical column {_name(X, j)} mixes values of types {kinds}, which "
                    "have no common order: convert it to one type (or a pandas category)"
                ) from e
            if len(categories) and all(isinstance(v, (int, float, np.number)) for v in categories):
                categories = categories.astype(np.float64)
        if len(categories) > MAX_CATEGORIES:
            raise DataError(
                f"categorical column {_name(X, j)} has {len(categories)} categories; at "
                f"most {MAX_CATEGORIES} are supported"
            )
        out.append(categories)
    return out


def _codes(column: Any, cats: np.ndarray) -> np.ndarray:
    """The codes of ``column``'s values in ``cats`` (float64; NaN missing, -1 unseen)."""
    import pandas as pd

    index = pd.Index(cats)
    if _is_category(column):
        # Through the column's own categories: one lookup per category, not per row.
        column = _as_category(column)
        ours = index.get_indexer(pd.Index(column.cat.categories.tolist(), dtype=object))
        theirs = np.asarray(column.cat.codes)
        coded = np.where(ours[theirs] >= 0, ours[theirs], UNSEEN).astype(np.float64)
        coded[theirs < 0] = np.nan
        return coded
    values = np.asarray(column)
    if values.dtype.kind in "biuf" and index.dtype.kind in "biuf":
        values = values.astype(np.float64)
        missing = np.isnan(values)
        found = index.get_indexer(values[~missing])
    else:
        values = values.astype(object)
        missing = _missing(values)
        # pandas matches values across types as Python does (1 == 1.0), strings by equality.
        found = index.get_indexer(pd.Index(values[~missing].tolist(), dtype=object))
    coded = np.full(len(values), np.nan)
    coded[~missing] = np.where(found >= 0, found, UNSEEN)
    return coded


def encode(X: Any, categories: Sequence[np.ndarray | None]) -> Any:
    """``X`` with each categorical column replaced by its codes in ``categories`` (NaN for a
    missing value, -1 for a category not seen at fit). A DataFrame stays a DataFrame (its
    other columns untouched), an array becomes a float array. The codes are float32 when
    every other column is (codes below 2^24 are exact in float32), so that the forest reads
    X as float32 (half the sort keys of float64), else float64."""
    frame = _is_frame(X)
    codes_of = {j: _codes(_column(X, j), c) for j, c in enumerate(categories) if c is not None}
    others = [j for j in range(len(categories)) if j not in codes_of]
    if frame:
        single = all(X.dtypes.iloc[j] == np.float32 for j in others)
        coded_frame = X.copy()
        for j, coded in codes_of.items():
            coded_frame.isetitem(j, coded.astype(np.float32) if single else coded)
        return coded_frame
    array = np.asarray(X)
    dtype = np.float32 if array.dtype == np.float32 else np.float64
    try:
        out = np.array(array, dtype=dtype if array.dtype.kind in "biuf" else object, copy=True)
        for j, coded in codes_of.items():
            out[:, j] = coded
        return out.astype(dtype, copy=False)
    except (TypeError, ValueError) as e:
        raise DataError(
            "X holds text outside its categorical columns: declare those columns in "
            "categorical_features, or encode them"
        ) from e


# ------------------------------------------------------------------------- model files
_FILE_ARRAY = re.compile(r"categories_\[(0|[1-9][0-9]{0,9})\]")


def is_file_array(name: str) -> bool:
    """Whether ``name`` is an array of the categories a model file holds: ``is_categorical_``
    and ``categories_[j]`` for each categorical feature ``j``."""
    return name == "is_categorical_" or _FILE_ARRAY.fullmatch(name) is not None


def file_state(est: Any) -> dict[str, np.ndarray]:
    """The categories of fitted ``est`` as the arrays a model file holds (none when no
    feature is categorical)."""
    mask = est.__dict__.get("is_categorical_")
    if mask is None:
        return {}
    categories = est.__dict__["categories_"]
    state = {"is_categorical_": np.asarray(mask, dtype=bool)}
    for j in np.flatnonzero(mask):
        state[f"categories_[{j}]"] = np.asarray(categories[j])
    return state


def restored(state: dict[str, Any], p: int) -> dict[str, Any]:
    """``is_categorical_`` and ``categories_`` from the arrays of :func:`file_state` in
    ``state``, checked for ``p`` features (both None when there are none)."""
    names = {k for k in state if is_file_array(k)}
    if not names:
        return {"is_categorical_": None, "categories_": None}
    mask = state.get("is_categorical_")
    if (
        not isinstance(mask, np.ndarray)
        or mask.dtype != bool
        or mask.shape != (p,)
        or not mask.any()
    ):
        raise ModelFormatError(f"is_categorical_ must be {p} booleans, one of them true")
    flagged = {f"categories_[{j}]" for j in np.flatnonzero(mask)}
    if names - {"is_categorical_"} != flagged:
        raise ModelFormatError("the categories stored do not match is_categorical_")
    categories: list[np.ndarray | None] = [None] * p
    for j in np.flatnonzero(mask):
        cats = state[f"categories_[{j}]"]
        good = isinstance(cats, np.ndarray) and cats.ndim == 1 and cats.dtype.kind in "biufUO"
        if not good or len(cats) > MAX_CATEGORIES:
            raise ModelFormatError(f"categories_[{j}] must be a 1-D array of categories")
        if cats.dtype.kind == "f" and np.isnan(cats).any():
            raise ModelFormatError(f"categories_[{j}] holds NaN, which is a missing value")
        if len(set(cats.tolist())) != len(cats):
            raise ModelFormatError(f"categories_[{j}] repeats a category")
        categories[j] = cats
    return {"is_categorical_": mask, "categories_": categories}

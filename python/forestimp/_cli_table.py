"""How ``forestimp rank`` and ``forestimp select`` read a table: the file (CSV with any
separator, or Parquet), the columns left out, the target and its task, and the features as
the forest sees them.

Text and category columns are categorical (issue #52): each becomes one column of category
codes that the forests split natively, by sets of categories (``categorical_features``). With
``--one-hot`` each level becomes a 0/1 column instead, and the report sums them back to their
source column. Every refusal is a :class:`UsageError`, which :func:`forestimp.cli.main` prints
on one line (``forestimp <command>: error: <message>``) with exit status 2. Missing feature
values are kept, in numeric and in categorical columns: forestimp's forests route them
(``docs/missing-values.md``); a missing target value is refused unless
``--drop-missing-target`` drops its row.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._core import DataError
from ._task import infer_task

# A text column with more distinct values than this is probably an identifier or free text
# (one-hot encoding: as many columns as values).
MANY_LEVELS = 100
PARQUET = (".parquet", ".pq")


class UsageError(Exception):
    """What a ``forestimp`` command refuses: :func:`forestimp.cli.main` prints it on one
    line, ``forestimp <command>: error: <message>``, and exits with status 2."""


def fail(message: str) -> UsageError:
    """A usage error of a ``forestimp`` command, to raise: the caller's ``raise`` shows where
    it is refused, and :func:`forestimp.cli.main` says it as argparse says its own."""
    return UsageError(message)


def note(message: str) -> None:
    """A line for the person at the terminal: stderr, so that stdout stays the report."""
    print(message, file=sys.stderr)


@dataclass
class Table:
    """The inputs as the forest sees them, and which encoded columns each source column became."""

    X: np.ndarray  # (n_samples, n_encoded) float64, NaN where a value is missing
    y: Any  # pandas Series
    names: list[str]  # source column names
    groups: list[np.ndarray]  # encoded column indices of each source column
    encoded_names: list[str]  # "col", or "col=level" for a one-hot level
    missing: dict[str, int] = field(default_factory=dict)  # column: missing values
    rows_dropped: int = 0  # rows left out for a missing target (--drop-missing-target)
    text: list[str] = field(default_factory=list)  # text and category source columns
    one_hot: bool = False  # text columns one-hot encoded (else category codes)

    @property
    def categorical(self) -> np.ndarray | None:
        """``categorical_features`` of the forests: the mask of the columns of X that hold
        category codes (None: none do)."""
        if self.one_hot or not self.text:
            return None
        return np.isin(np.array(self.names, dtype=object), self.text)

    @property
    def encoding(self) -> str:
        """How text columns are given to the forest: ``"native"`` or ``"one-hot"``."""
        return "one-hot" if self.one_hot else "native"


def read_frame(path: str, sep: str | None = None) -> Any:
    """A DataFrame from a CSV file (``sep``; None: a tab for ``.tsv``, else a comma) or a
    Parquet file (``.parquet``, ``.pq``)."""
    import pandas as pd

    lower = path.lower()
    if lower.endswith(PARQUET) and sep is not None:
        raise fail(f"--sep applies to CSV files; {path} is read as Parquet")
    try:
        if lower.endswith(PARQUET):
            from ._parquet import read_parquet  # its DataError names the file

            try:
                return read_parquet(path)
            except ImportError:
                raise fail(
                    f"reading the Parquet file {path} needs pyarrow: pip install pyarrow "
                    "(or pip install 'forestimp[parquet]')"
                ) from None
        if sep is None:
            sep = "\t" if lower.endswith((".tsv", ".tsv.gz")) else ","
        return pd.read_csv(path, sep=sep)
    except DataError:  # a damaged Parquet file: its message names the file
        raise
    except (OSError, ValueError, MemoryError) as exc:  # MemoryError: a footer that lies
        raise fail(f"cannot read {path}: {exc}") from None
    except re.error as exc:  # a --sep of several characters is a regular expression
        raise fail(f"--sep {sep!r} is not a valid regular expression: {exc}") from None


def resolve_drop(tokens: list[str], columns: Any, path: str) -> list[Any]:
    """The columns ``--drop`` names: a token that is a column's name is that column (even
    with a comma in it), any other token a comma-separated list of names."""
    by_name = {str(c): c for c in columns}
    out: list[Any] = []
    absent: list[str] = []
    for token in tokens:
        parts = [token] if token in by_name else [p.strip() for p in token.split(",")]
        for part in filter(None, parts):
            (out if part in by_name else absent).append(by_name.get(part, part))
    if absent:
        raise fail(f"--drop: no column {', '.join(map(repr, absent))} in {path}")
    return list(dict.fromkeys(out))


def check_target(y: Any, drop_option: bool = True) -> None:
    """Refuse missing or infinite target values by the column's name: scikit-learn's own
    complaint names neither the column nor the cure."""
    import pandas as pd

    if y.isna().any():
        cure = "drop those rows with --drop-missing-target" if drop_option else "drop them"
        raise fail(f"the target {y.name!r} has {int(y.isna().sum())} missing values; {cure}")
    if pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y):
        infinite = int(np.isinf(y.to_numpy(dtype=np.float64, na_value=np.nan)).sum())
        if infinite:
            raise fail(f"the target {y.name!r} has {infinite} infinite values; drop them")


def _without_missing_target(df: Any, target: str, drop_missing_target: bool) -> tuple[Any, int]:
    """``df`` less the rows whose target is missing, when asked to; else checked to have none."""
    missing = df[target].isna()
    if not (drop_missing_target and missing.any()):
        return df, 0
    dropped = int(missing.sum())
    note(f"dropped {dropped} rows with a missing {target!r} (--drop-missing-target)")
    return df.loc[~missing], dropped


def encode(
    df: Any,
    target: str,
    drop: list[str],
    path: str,
    drop_missing_target: bool = False,
    one_hot: bool = False,
) -> Table:
    """Split off the target and encode the features: numbers as float64 (NaN where missing),
    text and category columns as category codes (NaN where missing), or, with ``one_hot``,
    as one 0/1 column per level."""
    import pandas as pd

    if target not in df.columns:
        cols = ", ".join(map(str, df.columns[:20]))
        seps = [c for c in ";\t|," if df.shape[1] == 1 and c in str(df.columns[0])]
        arg = {"\t": "tab"}.get(seps[0], f"'{seps[0]}'") if seps else ""
        hint = f"; one column only: is the separator {arg}? (--sep {arg})" if seps else ""
        raise fail(f"no column {target!r} in {path} (columns: {cols}){hint}")
    drop = [c for c in resolve_drop(drop, df.columns, path) if c != target]
    df, rows_dropped = _without_missing_target(df, target, drop_missing_target)
    if len(df) < 2:  # a forest needs rows, and out-of-bag rows besides those it is grown on
        raise fail(f"{path} has {len(df)} row(s) of data; a forest needs at least 2")
    y = df[target]
    check_target(y)
    df = df.drop(columns=[target, *drop])
    if df.shape[1] == 0:
        raise fail("no feature column left")
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    values = {c: df[c].to_numpy(dtype=np.float64, na_value=np.nan) for c in numeric}
    infinite = [str(c) for c in numeric if np.isinf(values[c]).any()]
    if infinite:
        raise fail(f"infinite values in {', '.join(infinite)}; replace them first")
    text = [c for c in df.columns if c not in numeric]
    if not one_hot:  # a missing category is routed as a missing number is
        values.update({c: category_codes(df[c]) for c in text})
    missing = {str(c): int(np.isnan(v).sum()) for c, v in values.items()}
    missing = {c: n for c, n in missing.items() if n}
    if missing:
        listed = ", ".join(f"{c} ({n})" for c, n in list(missing.items())[:5])
        more = f" and {len(missing) - 5} more columns" if len(missing) > 5 else ""
        note(f"missing values in {listed}{more}: kept, the trees route them "
             "(docs/missing-values.md)")  # fmt: skip
    if text and one_hot:
        note(f"one-hot encoding non-numeric columns: {', '.join(map(str, text))}")
    elif text:
        note(f"categorical columns, split natively: {', '.join(map(str, text))}")
    blocks, groups, start, encoded = [], [], 0, []
    for c in df.columns:
        if c in values:
            block = values[c][:, None]
            encoded.append(str(c))
        else:
            block, levels = _one_hot(df[c])
            encoded += [f"{c}={level}" for level in levels]
        _warn_identifier(df[c], c, c in numeric, one_hot)
        blocks.append(block)
        groups.append(np.arange(start, start + block.shape[1]))
        start += block.shape[1]
    X = np.ascontiguousarray(np.hstack(blocks))
    return Table(X, y, [str(c) for c in df.columns], groups, encoded, missing, rows_dropped,
                 [str(c) for c in text], one_hot)  # fmt: skip


def _one_hot(column: Any) -> tuple[np.ndarray, list[Any]]:
    """``(0/1 columns, their levels)`` of a text column; a missing value is a level."""
    import pandas as pd

    dummies = pd.get_dummies(column, dummy_na=bool(column.isna().any()), dtype=np.float64)
    return dummies.to_numpy(), list(dummies.columns)


def _warn_identifier(column: Any, name: Any, numeric: bool, one_hot: bool) -> None:
    """Warn of a text column that looks like an identifier: a value per row (and, one-hot
    encoded, more than MANY_LEVELS columns)."""
    if numeric:
        return
    levels = column.nunique(dropna=False)
    if (one_hot and levels > MANY_LEVELS) or (levels == len(column) and levels > 2):
        note(f"warning: text column {name!r} has {levels} distinct values (an "
             f"identifier?); leave it out with --drop {name}")  # fmt: skip


def category_codes(column: Any) -> np.ndarray:
    """A text or category column as float64 category codes (NaN where missing): positions in
    its categories, a category column's own or else its distinct values sorted. Values of
    several types are refused: they have no order, and ``12`` and ``'12'`` would be two
    categories where the file has one."""
    import pandas as pd

    if not isinstance(column.dtype, pd.CategoricalDtype):
        if pd.api.types.infer_dtype(column, skipna=True) in ("mixed", "mixed-integer"):
            raise fail(_mixed_message(column))
        column = column.astype("category")
    codes = column.cat.codes.to_numpy().astype(np.float64)
    codes[codes < 0] = np.nan  # pandas' code of a missing value
    return codes


def _mixed_message(column: Any) -> str:
    """What to say of a column that holds values of several types."""
    first: dict[str, Any] = {}
    for value in column.dropna():
        first.setdefault(type(value).__name__, value)
    examples = " and ".join(f"{v!r} ({t})" for t, v in list(first.items())[:3])
    return (
        f"column {column.name!r} mixes value types, e.g. {examples}: no category order, and "
        "12 and '12' would be two categories (pandas reads a long CSV column in chunks, each "
        f"typed on its own). Make its values one type, or leave it out with --drop {column.name}"
    )


def prepare_target(task: str, y: Any) -> tuple[str, str, np.ndarray]:
    """``(task, why, target values)`` for ``--task`` (``auto``: :func:`infer_task`) and the
    target column ``y``; regression needs numbers, given as float64."""
    import pandas as pd

    task, reason = (task, "--task") if task != "auto" else infer_task(y)
    if task == "classification":
        return task, reason, y.to_numpy()
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        raise fail(f"--task regression needs a numeric target, {y.name!r} is {y.dtype}")
    return task, reason, y.to_numpy(dtype=np.float64)

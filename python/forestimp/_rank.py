"""``forestimp rank``: read a table, fit a forest with its out-of-bag score, rank the columns.

Every call into :mod:`forestimp.importance` goes through :func:`_measure`, the one place to
change when that API changes. Importances of the one-hot columns of a text column are summed
back to it, and so is each tree's (or repeat's) value, so that the standard error of a column
is the spread of its summed per-draw values, not a combination of per-column errors.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

# Integer targets with more distinct values than this are treated as regression (auto task).
MAX_CLASSES = 20
# A text column with more distinct values than this is probably an identifier or free text.
MANY_LEVELS = 100

MEASURES = {
    "permutation": "OOB permutation importance: mean increase of each tree's out-of-bag error "
    "(0/1 loss, or squared error) when the column is permuted",
    "air": "AIR, actual impurity reduction: MDI minus the MDI of a permuted shadow copy",
    "mdi_oob": "MDI-oob: impurity decreases re-scored on each tree's out-of-bag rows",
    "mdi": "MDI, normalized (scikit-learn's feature_importances_); biased towards many-valued "
    "columns",
}
# Measures that are sums over the splits (or nodes) of the trees: the importance of a set of
# encoded columns is exactly the sum of theirs.
ADDITIVE = ("air", "mdi_oob", "mdi")
PARQUET = (".parquet", ".pq")


# Integer-valued floats beyond this are not class labels (2**53: the last integer float64
# counts exactly; scikit-learn casts labels to int and calls larger ones "continuous").
MAX_LABEL = 2.0**53


class UsageError(Exception):
    """What a ``forestimp`` command refuses: :func:`forestimp.cli.main` prints it on one
    line, ``forestimp <command>: error: <message>``, and exits with status 2."""


def fail(message: str) -> UsageError:
    """A usage error of a ``forestimp`` command, to raise: the caller's ``raise`` shows where
    it is refused, and :func:`forestimp.cli.main` says it as argparse says its own."""
    return UsageError(message)


@dataclass
class Table:
    """The inputs as the forest sees them, and which encoded columns each source column became."""

    X: np.ndarray  # (n_samples, n_encoded) float64
    y: Any  # pandas Series
    names: list[str]  # source column names
    groups: list[np.ndarray]  # encoded column indices of each source column
    encoded_names: list[str]  # "col" for a numeric column, "col=level" for a one-hot one


def read_frame(path: str) -> Any:
    """A DataFrame from a CSV (any extension, ``.tsv`` tab-separated) or Parquet file."""
    import pandas as pd

    lower = path.lower()
    try:
        if lower.endswith(PARQUET):
            try:
                return pd.read_parquet(path)
            except ImportError:
                raise fail(
                    f"reading the Parquet file {path} needs pyarrow: pip install pyarrow "
                    "(or pip install 'forestimp[parquet]')"
                ) from None
        sep = "\t" if lower.endswith((".tsv", ".tsv.gz")) else ","
        return pd.read_csv(path, sep=sep)
    except (OSError, ValueError, MemoryError) as exc:  # MemoryError: a footer that lies
        raise fail(f"cannot read {path}: {exc}") from None


def check_target(y: Any) -> None:
    """Refuse missing or infinite target values by the column's name: scikit-learn's own
    complaint names neither the column nor the cure."""
    import pandas as pd

    if y.isna().any():
        raise fail(f"the target {y.name!r} has {int(y.isna().sum())} missing values; drop them")
    if pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y):
        infinite = int(np.isinf(y.to_numpy(dtype=np.float64)).sum())
        if infinite:
            raise fail(f"the target {y.name!r} has {infinite} infinite values; drop them")


def encode(df: Any, target: str, drop: list[str], path: str) -> Table:
    """Split off the target, one-hot encode the text columns, refuse missing numeric values."""
    import pandas as pd

    if target not in df.columns:
        cols = ", ".join(map(str, df.columns[:20]))
        raise fail(f"no column {target!r} in {path} (columns: {cols})")
    absent = [c for c in drop if c not in df.columns]
    if absent:
        raise fail(f"--drop: no column {', '.join(map(repr, absent))} in {path}")
    if len(df) < 2:  # a forest needs rows, and out-of-bag rows besides those it is grown on
        raise fail(f"{path} has {len(df)} row(s) of data; a forest needs at least 2")
    y = df[target]
    check_target(y)
    df = df.drop(columns=[target, *drop])
    if df.shape[1] == 0:
        raise fail("no feature column left")
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    missing = [str(c) for c in numeric if df[c].isna().any()]
    if missing:
        raise fail(f"missing values in {', '.join(missing)}; impute them first")
    infinite = [str(c) for c in numeric if np.isinf(df[c].to_numpy(dtype=np.float64)).any()]
    if infinite:
        raise fail(f"infinite values in {', '.join(infinite)}; replace them first")
    text = [c for c in df.columns if c not in numeric]
    if text:
        print(f"one-hot encoding non-numeric columns: {', '.join(map(str, text))}", file=sys.stderr)
    blocks, groups, start, encoded = [], [], 0, []
    for c in df.columns:
        if c in numeric:
            block = df[[c]].to_numpy(dtype=np.float64)
            encoded.append(str(c))
        else:
            levels = df[c].nunique(dropna=False)
            if levels > MANY_LEVELS or (levels == len(df) and levels > 2):
                print(
                    f"warning: text column {c!r} has {levels} distinct values (an identifier?);"
                    f" leave it out with --drop {c}",
                    file=sys.stderr,
                )
            dummies = pd.get_dummies(df[c], dummy_na=bool(df[c].isna().any()), dtype=np.float64)
            encoded += [f"{c}={level}" for level in dummies.columns]
            block = dummies.to_numpy()
        blocks.append(block)
        groups.append(np.arange(start, start + block.shape[1]))
        start += block.shape[1]
    X = np.ascontiguousarray(np.hstack(blocks))
    return Table(X, y, [str(c) for c in df.columns], groups, encoded)


def infer_task(y: Any) -> tuple[str, str]:
    """``(task, reason)``: regression for non-integer numbers or more than MAX_CLASSES integers."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(y) or not pd.api.types.is_numeric_dtype(y):
        return "classification", "non-numeric target"
    values = y.to_numpy(dtype=np.float64)
    if not np.all(np.abs(values) <= MAX_LABEL) or np.any(values != np.round(values)):
        return "regression", "non-integer numeric target"
    levels = y.nunique()
    if levels > MAX_CLASSES:
        return "regression", f"{levels} distinct integer values (> {MAX_CLASSES})"
    return "classification", f"{levels} distinct integer values (<= {MAX_CLASSES})"


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


def build_model(model: str, task: str, n_estimators: int, seed: int, n_jobs: int) -> Any:
    """The forest, always with bootstrap samples and an out-of-bag score."""
    from . import ensemble as E

    models = {
        "rf": (E.RandomForestClassifier, E.RandomForestRegressor),
        "et": (E.ExtraTreesClassifier, E.ExtraTreesRegressor),
        "trt": (E.TotallyRandomizedTreesClassifier, E.TotallyRandomizedTreesRegressor),
        "patches": (E.RandomPatchesClassifier, E.RandomPatchesRegressor),
    }
    # "hist": a Random Forest on histograms, for large files (no sort per node).
    models["hist"] = models["rf"]
    extra = {"splitter": "hist"} if model == "hist" else {}
    cls = models[model][task == "regression"]
    return cls(
        n_estimators=n_estimators,
        random_state=seed,
        n_jobs=n_jobs,
        bootstrap=True,
        oob_score=True,
        **extra,
    )


def _measure(
    est: Any, X: np.ndarray, y: Any, name: str, seed: int, n_jobs: int, n_repeats: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """``(importances (p,), per-draw values (p, n_draws))`` of the encoded columns.

    The only call into :mod:`forestimp.importance`. A draw is a tree; NaN columns mark trees
    on which the measure is undefined. ``X, y`` are the training data, which the out-of-bag
    measures need.
    """
    from .importance import Importances, mdi, permutation, unbiased

    r: Importances
    if name == "permutation":
        res = permutation(
            est, X, y, oob=True, n_repeats=n_repeats, random_state=seed, n_jobs=n_jobs
        )
        assert isinstance(res, Importances)  # one scorer gives one result, not a dict
        r = res
    elif name in ("air", "mdi_oob"):
        r = unbiased(est, X, y, method=name, random_state=seed, n_jobs=n_jobs)
    elif name == "mdi":
        r = mdi(est, normalize=True)
    else:
        raise ValueError(f"unknown measure {name!r}")
    assert r.importances is not None  # every measure here has per-tree values
    return r.importances_mean, r.importances


def by_source(
    values: np.ndarray, draws: np.ndarray, groups: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(importance, std, standard error)`` of each source column.

    Importance and every draw are summed over the column's encoded columns; ``std`` and the
    standard error follow the package's one rule over the summed draws
    (:func:`forestimp.importance._result.spread`: ddof 0, draws with a NaN left out).
    """
    from .importance._result import spread

    imp = np.array([values[g].sum() for g in groups])
    summed = np.stack([draws[g].sum(axis=0) for g in groups])
    std, se = spread(summed, len(groups))
    return imp, std, se


@dataclass
class Fit:
    """What the report says about the forest before the importances."""

    model: str
    task: str
    task_reason: str
    n_rows: int
    n_features: int  # source columns
    n_encoded: int
    metric: str  # "accuracy" or "r2"
    oob_score: float
    chance: float  # majority-class rate, or 0 for R²

    @property
    def at_chance(self) -> bool:
        return not self.oob_score > self.chance

    @property
    def near_chance(self) -> bool:
        """Above the majority-class rate by less than two binomial standard errors of it."""
        if self.metric != "accuracy" or self.at_chance:
            return False
        margin = 2 * np.sqrt(self.chance * (1 - self.chance) / self.n_rows)
        return bool(self.oob_score <= self.chance + margin)

    def oob_line(self) -> str:
        if self.metric == "accuracy":
            return f"OOB accuracy {self.oob_score:.4f} (majority-class rate {self.chance:.4f})"
        return f"OOB R² {self.oob_score:.4f}"

    def warning(self) -> str | None:
        if self.near_chance:
            return (
                "WARNING: the OOB accuracy is above the majority-class rate by less than two "
                "standard errors (binomial, of that rate): the forest may have learned nothing; "
                "read the importances with care."
            )
        if not self.at_chance:
            return None
        if self.metric == "accuracy":
            what = "not above the majority-class rate: the forest predicts no better than "
            what += "always answering the most frequent class"
        else:
            what = "not above 0: the forest predicts no better than the mean"
        return (
            f"WARNING: the out-of-bag score is {what}; its importances describe noise, "
            "not a relation to the target. Check the target, the task and the features."
        )


def fit_forest(args: Any, table: Table) -> tuple[Any, Fit, np.ndarray]:
    """``(estimator, summary, y it was fitted on)``; chance-level fits are reported on stderr."""
    task, reason, y = prepare_target(args.task, table.y)
    est = build_model(args.model, task, args.n_estimators, args.random_state, args.n_jobs)
    try:
        est.fit(table.X, y)
    except ValueError as exc:  # forestimp's errors are ValueErrors, as select says them
        raise fail(f"{type(est).__name__}: {exc}") from None
    if task == "classification":
        _, counts = np.unique(y, return_counts=True)
        metric, chance = "accuracy", counts.max() / counts.sum()
    else:
        metric, chance = "r2", 0.0
    fit = Fit(
        type(est).__name__,
        task,
        reason,
        table.X.shape[0],
        len(table.names),
        table.X.shape[1],
        metric,
        float(est.oob_score_),
        float(chance),
    )
    if fit.warning():
        print(fit.warning(), file=sys.stderr)
    return est, fit, y


def _records(names: list[str], groups: list[np.ndarray], imp, std, se) -> list[dict[str, Any]]:
    order = np.argsort(-np.nan_to_num(imp, nan=-np.inf), kind="stable")

    def num(v: float) -> float | None:
        return None if np.isnan(v) else float(v)

    return [
        {
            "rank": r,
            "feature": names[j],
            "importance": num(imp[j]),
            "std": num(std[j]),
            "standard_error": num(se[j]),
            "n_columns": len(groups[j]),
        }
        for r, j in enumerate(order, 1)
    ]


def render(fmt: str, fit: Fit, args: Any, rows: list[dict[str, Any]]) -> str:
    """The report as a human table, CSV or JSON."""
    if fmt == "json":
        meta = {
            "file": args.file,
            "target": args.target,
            "model": fit.model,
            "task": fit.task,
            "n_estimators": args.n_estimators,
            "n_rows": fit.n_rows,
            "n_features": fit.n_features,
            "measure": args.measure,
            "additive": args.measure in ADDITIVE,
            "oob_metric": fit.metric,
            "oob_score": fit.oob_score,
            "chance_level": fit.chance,
            "at_chance": fit.at_chance,
            "near_chance": fit.near_chance,
        }
        return json.dumps({**meta, "features": rows}, indent=2) + "\n"
    cols = ["rank", "feature", "importance", "std", "standard_error", "n_columns"]
    if fmt == "csv":
        import pandas as pd

        return pd.DataFrame(rows, columns=cols).to_csv(index=False)
    width = max([7] + [len(r["feature"]) for r in rows])
    flag = "   <- CHANCE LEVEL" if fit.at_chance else "   <- near chance" if fit.near_chance else ""
    lines = [
        f"{fit.model}, {args.n_estimators} trees, {fit.task} ({fit.task_reason}), "
        f"{fit.n_rows} rows, {fit.n_features} features ({fit.n_encoded} encoded columns)",
        fit.oob_line() + flag,
        f"importance: {MEASURES[args.measure]}; ± standard error over trees",
        f"{'rank':>4}  {'feature':<{width}}  {'importance':>10}  {'std':>9}  {'s.e.':>9}",
    ]
    for r in rows:
        v = [np.nan if r[k] is None else r[k] for k in ("importance", "std", "standard_error")]
        lines.append(
            f"{r['rank']:>4}  {r['feature']:<{width}}  {v[0]:10.4f}  {v[1]:9.4f}  {v[2]:9.4f}"
        )
    return "\n".join(lines) + "\n"


def run(args: Any) -> int:
    """``forestimp rank``."""
    table = encode(read_frame(args.file), args.target, args.drop, args.file)
    est, fit, y = fit_forest(args, table)
    values, draws = _measure(
        est, table.X, y, args.measure, args.random_state, args.n_jobs, args.n_repeats
    )
    imp, std, se = by_source(values, draws, table.groups)
    rows = _records(table.names, table.groups, imp, std, se)[: args.top]
    text = render(args.output, fit, args, rows)
    # stdout stays machine-readable: with csv/json there, every other line goes to stderr.
    info = sys.stdout if args.output == "table" or args.out else sys.stderr
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"{fit.oob_line()}; ranking written to {os.fspath(args.out)}", file=info)
    else:
        sys.stdout.write(text)
    if args.plot:
        from .plotting import plot_importances

        vals = np.array([np.nan if r["importance"] is None else r["importance"] for r in rows])
        errs = np.array(
            [np.nan if r["standard_error"] is None else r["standard_error"] for r in rows]
        )
        plot_importances(
            [r["feature"] for r in rows],
            vals,
            errs,
            xlabel=args.measure,
            title=f"{fit.model} on {args.file}",
            path=args.plot,
        )
        print(f"plot written to {args.plot}", file=info)
    return 0

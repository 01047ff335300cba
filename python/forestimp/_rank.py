"""``forestimp rank``: read a table, fit a forest with its out-of-bag score, rank the columns.

Every call into :mod:`forestimp.importance` goes through :func:`_measure`, the one place to
change when that API changes. Text and category columns are split by the trees as categories,
one column each; with ``--one-hot`` the importances of a text column's one-hot columns are
summed back to it, and so is each tree's (or repeat's) value, so that the standard error of a
column is the spread of its summed per-draw values, not a combination of per-column errors.
The table is read by :mod:`forestimp._cli_table`, the forest judged by
:mod:`forestimp._cli_quality`.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np

from ._cli_quality import Fit, assess, build_model
from ._cli_table import (
    PARQUET,
    Table,
    UsageError,
    check_target,
    encode,
    fail,
    prepare_target,
    read_frame,
)
from ._task import infer_task

__all__ = [
    "PARQUET", "Fit", "Table", "UsageError", "build_model", "by_source", "check_target",
    "encode", "fail", "infer_task", "prepare_target", "read_frame", "run",
]  # fmt: skip

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


def check_class_weight(class_weight: str | None, task: str) -> None:
    """``--class-weight`` weighs classes: refused for a regression target."""
    if class_weight is not None and task != "classification":
        raise fail(f"--class-weight applies to classification; the task is {task}")


def fit_forest(args: Any, table: Table) -> tuple[Any, Fit, np.ndarray]:
    """``(estimator, summary, y it was fitted on)``; chance-level fits are reported on stderr."""
    task, reason, y = prepare_target(args.task, table.y)
    check_class_weight(args.class_weight, task)
    est = build_model(args.model, task, args.n_estimators, args.random_state, args.n_jobs,
                      args.class_weight, table.categorical)  # fmt: skip
    try:
        est.fit(table.X, y)
    except ValueError as exc:  # forestimp's errors are ValueErrors, as select says them
        raise fail(f"{type(est).__name__}: {exc}") from None
    fit = assess(est, y, task, reason, len(table.names), table.X.shape[1], args.class_weight)
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


def render(fmt: str, fit: Fit, args: Any, rows: list[dict[str, Any]], table: Table) -> str:
    """The report as a human table, CSV or JSON."""
    if fmt == "json":
        meta = {
            "file": args.file,
            "target": args.target,
            "model": fit.model,
            "task": fit.task,
            "task_reason": fit.task_reason,
            "n_estimators": args.n_estimators,
            "n_rows": fit.n_rows,
            "n_rows_dropped": table.rows_dropped,
            "n_features": fit.n_features,
            "n_encoded": fit.n_encoded,
            "missing_values": table.missing,
            "encoding": table.encoding,
            "categorical_columns": table.text,
            "measure": args.measure,
            "n_repeats": args.n_repeats if args.measure == "permutation" else None,
            "additive": args.measure in ADDITIVE,
            **fit.as_json(),
            "warnings": [w for w in [fit.warning()] if w],
        }
        return json.dumps({**meta, "features": rows}, indent=2) + "\n"
    cols = ["rank", "feature", "importance", "std", "standard_error", "n_columns"]
    if fmt == "csv":
        import pandas as pd

        return pd.DataFrame(rows, columns=cols).to_csv(index=False)
    width = max([7] + [len(r["feature"]) for r in rows])
    native = table.categorical is not None
    columns = f"{len(table.text)} categorical" if native else f"{fit.n_encoded} encoded columns"
    lines = [
        f"{fit.model}, {args.n_estimators} trees, {fit.task} ({fit.task_reason}), "
        f"{fit.n_rows} rows, {fit.n_features} features ({columns})",
        fit.oob_line() + fit.flag(),
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
    table = encode(read_frame(args.file, args.sep), args.target, args.drop, args.file,
                   args.drop_missing_target, args.one_hot)  # fmt: skip
    est, fit, y = fit_forest(args, table)
    values, draws = _measure(
        est, table.X, y, args.measure, args.random_state, args.n_jobs, args.n_repeats
    )
    imp, std, se = by_source(values, draws, table.groups)
    rows = _records(table.names, table.groups, imp, std, se)[: args.top]
    text = render(args.output, fit, args, rows, table)
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

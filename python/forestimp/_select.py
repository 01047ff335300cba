"""``forestimp select``: keep the columns of a table that matter for a target.

One selector of :mod:`forestimp.selection` runs on a CSV or Parquet file, or, with no file,
on a built-in problem whose relevant columns are known, and the report then says how close
the selection came. Files are read and encoded as ``forestimp rank`` reads them
(:mod:`forestimp._rank`); a text column is kept when any of its one-hot levels is, with the
best level's score. ``--method srs`` reads a Parquet file out of core.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._rank import PARQUET, build_model, check_target, encode, fail, prepare_target, read_frame

METHODS = {
    "boruta": "Boruta, all-relevant: each column against the best of the permuted copies "
    "(shadows) of the columns, binomial tests over the iterations",
    "rfe": "recursive elimination: refit, drop the least important fifth, keep the fewest "
    "columns whose out-of-bag score is within alpha standard errors of the best",
    "threshold": "one forest; keep the columns whose importance reaches the threshold",
    "srs": "Sequential Random Subspace: forests on q columns at a time, the columns found "
    "so far kept in the next subspaces; never more than q columns in memory",
}
# The options that apply to some methods only.
ONLY = {
    "alpha": ("boruta", "rfe", "srs"),
    "max_iter": ("boruta",),
    "step": ("rfe",),
    "threshold": ("threshold",),
    "memory_features": ("srs",),
    "iterations": ("srs",),
    "batch_size": ("srs",),
    "scheduler": ("srs",),
}
KEPT = ("kept", "confirmed", "found")
BUILTIN = "built-in MADELON-like data (seed 0)"


@dataclass
class Problem:
    """What the selector runs on."""

    X: Any  # float matrix, or the path of a Parquet file read out of core
    y: np.ndarray
    names: list[str] | None  # source columns (None: the Parquet file's, known after fit)
    groups: list[np.ndarray] | None  # encoded columns of each source column
    label: str
    task: str
    reason: str
    relevant: dict[str, list[str]] | None = None  # the known answer, by kind


def builtin_problem() -> Problem:
    """Guyon's MADELON recipe at 2000 x 100: 5 informative columns in an XOR-like cluster
    structure (no one of them separates the classes alone), 5 redundant linear combinations
    of them, 90 Gaussian noise columns, named by role and shuffled."""
    from .datasets import make_madelon_like

    X, y, relevant = make_madelon_like(
        2000, n_features=100, n_informative=5, n_redundant=5, n_clusters_per_class=4,
        shuffle=True, random_state=0, return_relevant=True,
    )  # fmt: skip
    names = [""] * X.shape[1]
    for i, j in enumerate(relevant):
        names[j] = f"informative_{i + 1}" if i < 5 else f"redundant_{i - 4}"
    noise = [j for j in range(X.shape[1]) if not names[j]]
    for i, j in enumerate(noise):
        names[j] = f"noise_{i + 1}"
    known = {
        kind: [n for n in names if n.startswith(kind)] for kind in ("informative", "redundant")
    }
    groups = [np.array([j]) for j in range(X.shape[1])]
    return Problem(X, y, names, groups, BUILTIN, "classification", "2 classes", known)


def load_problem(args: Any) -> Problem:
    """The built-in data, a Parquet file SRS reads out of core, or a table read whole."""
    if args.file is None:
        if args.target is not None or args.drop:
            raise fail("--target and --drop need a FILE (without one: the built-in data)")
        return builtin_problem()
    if args.target is None:
        raise fail("--target COL is required with a FILE")
    if args.method == "srs" and args.file.lower().endswith(PARQUET):
        if args.drop:
            raise fail("--drop is not available when SRS reads a Parquet file out of core")
        return parquet_problem(args)
    import pandas as pd

    table = encode(read_frame(args.file), args.target, args.drop, args.file)
    task, reason, y = prepare_target(args.task, table.y)
    # Named columns: the selector's feature_names_in_ and plots say "colour=red", not "x9".
    X = pd.DataFrame(table.X, columns=table.encoded_names, copy=False)
    return Problem(X, y, table.names, table.groups, args.file, task, reason)


def parquet_problem(args: Any) -> Problem:
    """SRS on a Parquet file read out of core: only the target is read here, by the reader
    SRS uses, which checks the file against its size before it trusts the footer (pandas
    allocates the rows a lying footer claims). Its ``DataError`` is the command's error."""
    import pandas as pd

    from .selection._columns import open_source

    try:
        source, values = open_source(args.file, target=args.target)
    except ImportError:
        raise fail("reading Parquet needs pyarrow: pip install 'forestimp[parquet]'") from None
    source.close()  # SRS opens the file again, q columns at a time
    assert values is not None  # a target was named
    target = pd.Series(values, name=args.target)
    check_target(target)
    task, reason, y = prepare_target(args.task, target)
    return Problem(args.file, y, None, None, args.file, task, reason)


def model_for(args: Any, problem: Problem) -> Any:
    """None (the selector's own default model) unless ``--model`` / ``--n-estimators`` ask
    for another or the default would guess the task wrong (integer regression targets)."""
    from sklearn.utils.multiclass import type_of_target

    guessed = "regression" if type_of_target(problem.y) == "continuous" else "classification"
    if args.model is None and args.n_estimators is None and guessed == problem.task:
        return None
    model = args.model or ("et" if args.method == "srs" else "rf")
    n_estimators = args.n_estimators or 100
    return build_model(model, problem.task, n_estimators, args.random_state, args.n_jobs)


def build_selector(args: Any, problem: Problem) -> Any:
    """The selector ``--method`` names, with the options given (the others at its defaults)."""
    from . import selection as S

    given = {
        "importance": args.importance,
        "alpha": args.alpha,
        "max_iter": args.max_iter,
        "step": args.step,
        "q": args.memory_features,
        "n_iterations": args.iterations,
        "batch_size": args.batch_size,
    }
    params: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    params.update(random_state=args.random_state, n_jobs=args.n_jobs)
    params["estimator"] = model_for(args, problem)
    if args.method == "threshold":
        params["threshold"] = parse_threshold(args.threshold)
    kind = {
        "boruta": S.Boruta,
        "rfe": S.RFE,
        "threshold": S.SelectFromImportance,
        "srs": S.SequentialRandomSubspace,
    }[args.method]
    return kind(**params)


def parse_threshold(text: str | None) -> Any:
    """``--threshold``: a number, or a name the selector knows ("mean", "1.5*mean", "probe")."""
    if text is None:
        return "mean"
    try:
        return float(text)
    except ValueError:
        return text


class Progress:
    """The progress bar over a selector's steps (tqdm on stderr, shown on a terminal)."""

    def __init__(self, total: int | None, unit: str, enabled: bool) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, unit=unit, file=sys.stderr, disable=None if enabled else True)

    def __call__(self, step: Any) -> bool:
        from .selection import BorutaStep, RFEStep, SRSStep

        if isinstance(step, BorutaStep):
            self.bar.set_postfix_str(f"{len(step.kept)} not rejected", refresh=False)
        elif isinstance(step, RFEStep):
            self.bar.set_postfix_str(f"{step.n_features} columns, score {step.score:.4f}",
                                     refresh=False)  # fmt: skip
        elif isinstance(step, SRSStep):
            self.bar.set_postfix_str(f"{step.n_found} found", refresh=False)
        self.bar.update(1)
        return False

    def close(self) -> None:
        self.bar.close()


def steps_expected(args: Any, selector: Any, problem: Problem) -> tuple[int | None, str]:
    """``(most steps, unit)`` of the progress bar (None: not known in advance)."""
    if args.method == "boruta":
        return selector.max_iter, "iteration"
    if args.method == "srs" and not isinstance(problem.X, str):
        return selector._check_params(problem.X.shape[1])[2], "iteration"
    return (1, "fit") if args.method == "threshold" else (None, "step")


def encoded_results(selector: Any) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``(status, score, extra columns)`` of each column the selector saw."""
    from .selection import RFE, Boruta, SequentialRandomSubspace

    support = selector.support_
    if isinstance(selector, Boruta):
        status = np.where(support, "confirmed", np.where(selector.support_weak_, "tentative",
                                                         "rejected"))  # fmt: skip
        with np.errstate(all="ignore"):
            score = np.nanmedian(selector.importance_history_, axis=0)
        return status, score, {"hit_rate": selector.hit_rates_}
    if isinstance(selector, SequentialRandomSubspace):
        status = np.where(support, "found", "not found")
        return status, selector.importances_, {"n_draws": selector.n_draws_}
    status = np.where(support, "kept", "dropped")
    if isinstance(selector, RFE):
        score = np.full(len(support), np.nan)
        for step in selector.history_:  # later steps overwrite: the last fit each was in
            score[step.features] = step.scores
        return status, score, {}
    return status, selector.importances_, {}


def source_rows(selector: Any, problem: Problem) -> list[dict[str, Any]]:
    """One record per source column, ranked (kept first, by score), best level for groups."""
    status, score, extra = encoded_results(selector)
    names = problem.names
    groups = problem.groups
    if names is None or groups is None:  # out of core: the file's columns, as read
        from .selection._plots import feature_names

        names = feature_names(selector)
        groups = [np.array([j]) for j in range(len(names))]
    order_of = {"confirmed": 0, "kept": 0, "found": 0, "tentative": 1}
    rows = []
    for name, g in zip(names, groups, strict=True):
        best = g[np.argmin(selector.ranking_[g])]
        values = score[g][np.isfinite(score[g])]
        best_score = float(values.max()) if len(values) else None
        key = (order_of.get(status[best], 2), int(selector.ranking_[best]), -(best_score or 0.0))
        row = {
            "feature": name,
            "status": status[best],
            "score": best_score,
            **{k: float(v[best]) for k, v in extra.items()},
            "n_columns": len(g),
            "_key": key,
        }
        rows.append(row)
    rows.sort(key=lambda r: r.pop("_key"))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def known_answer(problem: Problem, rows: list[dict[str, Any]], method: str) -> str:
    """How the kept set compares with the built-in problem's relevant columns."""
    assert problem.relevant is not None
    kept = {r["feature"] for r in rows if r["status"] in KEPT}
    relevant = {n for names in problem.relevant.values() for n in names}
    hits = kept & relevant
    parts = [f"{len(kept & set(v))}/{len(v)} {k}" for k, v in problem.relevant.items()]
    precision = len(hits) / len(kept) if kept else float("nan")
    lines = [
        f"known answer: {len(relevant)} relevant columns; kept {', '.join(parts)} and "
        f"{len(kept - relevant)} noise: recall {len(hits) / len(relevant):.2f}, "
        f"precision {precision:.2f}"
    ]
    missed_redundant = set(problem.relevant.get("redundant", [])) - kept
    if method in ("rfe", "threshold") and missed_redundant:
        lines.append(
            "(RFE and thresholds look for a small predictive set: a redundant column, a "
            "combination of informative ones, may be left out at no loss; Boruta and SRS look "
            "for every relevant column)"
        )
    return "\n".join(lines) + "\n"


def summary(args: Any, selector: Any, problem: Problem, n_columns: int) -> str:
    """What ran, and the method's decision rule in numbers."""
    p = selector.n_features_in_
    encoded = f" ({p} encoded)" if p != n_columns else ""
    lines = [
        f"{args.method}: {METHODS[args.method]}",
        f"data: {problem.label}, {len(problem.y)} rows, {n_columns} columns{encoded}, "
        f"{problem.task} ({problem.reason})",
    ]
    if args.method == "threshold":
        lines.append(f"threshold {selector.threshold_:.5g} ({selector.threshold})")
    elif args.method == "boruta":
        lines.append(f"{selector.n_iter_} iterations, rule {selector.rule}, alpha {selector.alpha}")
    elif args.method == "rfe":
        res = selector.cv_results_
        best = int(np.argmax(res["mean_test_score"]))
        chosen = int(np.flatnonzero(res["n_features"] == selector.n_features_)[0])
        lines.append(
            f"path of {len(selector.history_)} steps; score {res['mean_test_score'][chosen]:.4f} "
            f"at {selector.n_features_} columns (best {res['mean_test_score'][best]:.4f} at "
            f"{res['n_features'][best]})"
        )
    else:
        q = len(selector.history_[0].features) if selector.history_ else 0
        lines.append(
            f"{selector.n_iterations_} iterations of q = {q} columns; "
            f"{selector.bytes_read_ / 1e6:.1f} MB read"
        )
    return "\n".join(lines) + "\n"


def render(fmt: str, args: Any, head: str, rows: list[dict[str, Any]]) -> str:
    """The kept columns (``--all``: every column) as a table, or every column as CSV/JSON."""
    if fmt == "json":
        meta = {"file": args.file, "target": args.target, "method": args.method}
        return json.dumps({**meta, "features": rows}, indent=2) + "\n"
    if fmt == "csv":
        import pandas as pd

        return pd.DataFrame(rows).to_csv(index=False)
    shown = rows if args.all else [r for r in rows if r["status"] in (*KEPT, "tentative")]
    kept = sum(r["status"] in KEPT for r in rows)
    extra = [k for k in ("hit_rate", "n_draws") if rows and k in rows[0]]
    width = max([7] + [len(r["feature"]) for r in shown])
    lines = [head.rstrip("\n"), f"kept {kept} of {len(rows)} columns:"]
    lines.append(
        f"{'rank':>4}  {'feature':<{width}}  {'status':<10}  {'score':>10}"
        + "".join(f"  {k:>8}" for k in extra)
    )
    for r in shown:
        score = np.nan if r["score"] is None else r["score"]
        lines.append(
            f"{r['rank']:>4}  {r['feature']:<{width}}  {r['status']:<10}  {score:10.4g}"
            + "".join(f"  {r[k]:8.3g}" for k in extra)
        )
    dropped = [r["feature"] for r in rows if r not in shown]
    if dropped:
        more = ", ... (--all lists them)" if len(dropped) > 8 else ""
        lines.append(f"dropped {len(dropped)}: {', '.join(dropped[:8])}{more}")
    return "\n".join(lines) + "\n"


def fit_on_cluster(selector: Any, X: Any, y: Any, address: str) -> Any:
    """Batched SRS with each round's fits on the Dask cluster at ``address``
    (:func:`forestimp.dask.srs`): the selection of the same run in one process."""
    try:
        from distributed import Client

        from .dask import srs
    except ImportError:
        raise fail("--scheduler needs Dask: pip install 'forestimp[dask]'") from None
    with Client(address, timeout=30) as client:
        return srs(selector, X, y, client=client)


def run(args: Any) -> int:
    """``forestimp select``."""
    for option, methods in ONLY.items():
        if getattr(args, option) is not None and args.method not in methods:
            flag = option.replace("_", "-")
            raise fail(f"--{flag} applies to --method {' or '.join(methods)} only")
    if args.scheduler is not None and args.batch_size is None:
        raise fail("--scheduler runs the rounds of --batch-size subspaces: give --batch-size")
    problem = load_problem(args)
    selector = build_selector(args, problem)
    progress = Progress(*steps_expected(args, selector, problem), enabled=not args.no_progress)
    selector.set_params(callback=progress)
    y = args.target if isinstance(problem.X, str) else problem.y
    try:
        if args.scheduler is not None:
            selector = fit_on_cluster(selector, problem.X, y, args.scheduler)
        else:
            selector.fit(problem.X, y)
    except (ValueError, OSError) as exc:  # forestimp's errors are ValueErrors
        raise fail(f"{args.method}: {exc}") from None
    finally:
        progress.close()
    rows = source_rows(selector, problem)
    text = render(args.output, args, summary(args, selector, problem, len(rows)), rows)
    # stdout stays machine-readable: with csv/json there, every other line goes to stderr.
    info = sys.stdout if args.output == "table" or args.out else sys.stderr
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        kept = sum(r["status"] in KEPT for r in rows)
        print(f"kept {kept} of {len(rows)} columns; written to {os.fspath(args.out)}", file=info)
    else:
        sys.stdout.write(text)
    if problem.relevant is not None:
        print(known_answer(problem, rows, args.method), end="", file=info)
    if args.plot:
        ax = selector.plot()
        ax.figure.tight_layout()
        ax.figure.savefig(args.plot, dpi=120)
        print(f"plot written to {args.plot}", file=info)
    return 0

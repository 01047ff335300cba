"""``forestimp select``: keep the columns of a table that matter for a target.

One selector of :mod:`forestimp.selection` runs on a CSV or Parquet file, or, with no file, on
a built-in problem whose relevant columns are known, and the report then says how close the
selection came. Files are read and encoded as ``forestimp rank`` reads them
(:mod:`forestimp._cli_table`): text and category columns are split natively as categories by
every method (with ``--one-hot``, encoded as levels, and a text column is kept when any of its
levels is, with the best level's score). ``--method srs`` reads a Parquet file out of core when
its features are all numbers and nothing is dropped. A forest on all the columns, and one on
the kept ones, are scored out of bag (:mod:`forestimp._cli_quality`): a selection from a forest
at chance level is noise. The report is :mod:`forestimp._select_report`'s."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._cli_quality import Fit, assess, build_model
from ._cli_table import (
    PARQUET,
    check_target,
    encode,
    fail,
    note,
    prepare_target,
    read_frame,
)
from ._select_report import (
    KEPT,
    count_sources,
    iterations,
    known_answer,
    render,
    selection_warnings,
    source_rows,
    summary,
)

# The options that apply to some methods only.
ONLY = {
    "alpha": ("boruta", "rfe", "srs"),
    "max_iter": ("boruta",),
    "step": ("rfe",),
    "scoring": ("rfe",),
    "threshold": ("threshold",),
    "memory_features": ("srs",),
    "iterations": ("srs",),
    "batch_size": ("srs",),
    "scheduler": ("srs",),
}
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
    n_columns: int = 0  # encoded columns (the file's, out of core)
    missing: dict[str, int] = field(default_factory=dict)  # column: missing values
    categorical: np.ndarray | None = None  # columns of X split as categories (the forests')
    text: list[str] = field(default_factory=list)  # text and category source columns
    encoding: str = "native"  # of the text columns: "native" or "one-hot"


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
    return Problem(X, y, names, groups, BUILTIN, "classification", "2 classes", known,
                   X.shape[1])  # fmt: skip


def load_problem(args: Any) -> Problem:
    """The built-in data, a Parquet file SRS reads out of core, or a table read whole."""
    if args.file is None:
        given = [o for o, v in (("--target", args.target), ("--drop", args.drop), ("--sep",
                 args.sep), ("--drop-missing-target", args.drop_missing_target),
                 ("--one-hot", args.one_hot)) if v]  # fmt: skip
        if given:
            raise fail(f"{' and '.join(given)} need a FILE (without one: the built-in data)")
        return builtin_problem()
    if args.target is None:
        raise fail("--target COL is required with a FILE")
    if args.method == "srs" and args.file.lower().endswith(PARQUET):
        if args.sep is not None:
            raise fail(f"--sep applies to CSV files; {args.file} is read as Parquet")
        problem = parquet_problem(args)
        if problem is not None:
            return problem
    import pandas as pd

    table = encode(read_frame(args.file, args.sep), args.target, args.drop, args.file,
                   args.drop_missing_target, args.one_hot)  # fmt: skip
    if args.method == "boruta" and table.missing:
        cols = ", ".join(list(table.missing)[:5])
        text = set(table.missing) & set(table.text)
        level = ", --one-hot (a missing text value is then a level)" if text else ""
        raise fail(
            f"boruta needs complete features: missing values in {cols}; impute them{level}, "
            "or use --method rfe, threshold or srs, whose forests route missing values"
        )
    task, reason, y = prepare_target(args.task, table.y)
    # Named columns: the selector's feature_names_in_ and plots say "colour=red", not "x9".
    X = pd.DataFrame(table.X, columns=table.encoded_names, copy=False)
    return Problem(X, y, table.names, table.groups, args.file, task, reason, None,
                   table.X.shape[1], table.missing, table.categorical, table.text,
                   table.encoding)  # fmt: skip


def parquet_text_columns(path: str, target: str) -> list[str] | None:
    """The non-numeric feature columns of a Parquet file, from its footer, read as SRS's
    reader reads it (its size checked first); None when it cannot be read, which the reader
    then says."""
    try:
        from .selection._columns import open_parquet

        with open_parquet(path) as fh:
            schema = fh.schema_arrow
    except Exception:  # noqa: BLE001 (any failure is the reader's to report)
        return None
    index = (schema.pandas_metadata or {}).get("index_columns", [])
    text = []
    for f in schema:
        if f.name == target or f.name in index:
            continue
        try:
            kind = np.dtype(f.type.to_pandas_dtype()).kind
        except (NotImplementedError, TypeError):
            kind = "O"
        if kind not in "biuf":
            text.append(f.name)
    return text


def parquet_problem(args: Any) -> Problem | None:
    """SRS on a Parquet file read out of core, or None when it must be read whole: text
    columns to encode, ``--drop``, or rows to drop for a missing target. Only the target is
    read here, by the reader SRS uses, which checks the file against its size before it
    trusts the footer (pandas allocates the rows a lying footer claims). Its ``DataError`` is
    the command's error."""
    import pandas as pd

    from .selection._columns import open_source

    text = parquet_text_columns(args.file, args.target)
    whole = "--drop" if args.drop else f"text columns ({', '.join(text[:3])})" if text else ""
    if not whole:
        try:
            source, values = open_source(args.file, target=args.target)
        except ImportError:
            raise fail("reading Parquet needs pyarrow: pip install 'forestimp[parquet]'") from None
        n_columns = source.n_columns
        source.close()  # SRS opens the file again, q columns at a time
        assert values is not None  # a target was named
        target = pd.Series(values, name=args.target)
        if args.drop_missing_target and target.isna().any():
            whole = "--drop-missing-target"
    if whole:
        note(f"reading {args.file} whole for {whole}: SRS reads a Parquet file out of core "
             "only when its features are all numbers and no column or row is dropped")  # fmt: skip
        return None
    check_target(target)
    task, reason, y = prepare_target(args.task, target)
    return Problem(args.file, y, None, None, args.file, task, reason, None, n_columns)


# The model of each method when the CLI has to build it (--model, --n-estimators,
# --class-weight, or a task the selector's default would read otherwise): the selector's own.
DEFAULT_MODEL = {"boruta": "rf", "rfe": "hist", "threshold": "rf", "srs": "et"}
# The CLI's importance where it departs from the selector's default: a mean threshold on MDI
# keeps many-valued noise (docs/importances.md); out of bag, as forestimp rank measures it.
DEFAULT_IMPORTANCE = {"threshold": "permutation"}


def model_for(args: Any, problem: Problem, selector: Any) -> Any:
    """None (the selector's own default model) unless ``--model`` / ``--n-estimators`` /
    ``--class-weight`` ask for another, the default would guess the task wrong (integer
    regression targets) or the forest must split categorical columns."""
    from ._task import silent_default_task

    guessed = silent_default_task(problem.y)
    own = args.model is None and args.n_estimators is None
    plain = args.class_weight is None and problem.categorical is None
    if own and plain and guessed == problem.task:
        return None
    if own and args.method == "srs":  # SRS's own Extra-Trees, with the CLI's additions
        from .selection._srs import default_estimator

        q = selector._check_params(problem.n_columns)[0]
        model = default_estimator(problem.task == "classification", q + selector.n_probes,
                                  args.n_jobs)  # fmt: skip
        model.set_params(**weights(args, problem))
        if problem.categorical is not None:
            model.set_params(categorical_features=problem.categorical)
        return model
    model = args.model or DEFAULT_MODEL[args.method]
    return build_model(model, problem.task, args.n_estimators or 100, args.random_state,
                       args.n_jobs, args.class_weight, problem.categorical)  # fmt: skip


def weights(args: Any, problem: Problem) -> dict[str, Any]:
    """``class_weight`` for a model, refused for a regression target."""
    from ._rank import check_class_weight

    check_class_weight(args.class_weight, problem.task)
    return {} if args.class_weight is None else {"class_weight": args.class_weight}


def build_selector(args: Any, problem: Problem) -> Any:
    """The selector ``--method`` names, with the options given (the others at its defaults)."""
    from . import selection as S

    weights(args, problem)
    given = {
        "importance": args.importance or DEFAULT_IMPORTANCE.get(args.method),
        "alpha": args.alpha,
        "max_iter": args.max_iter,
        "step": args.step,
        "scoring": args.scoring,
        "q": args.memory_features,
        "n_iterations": args.iterations,
        "batch_size": args.batch_size,
    }
    params: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    params.update(random_state=args.random_state, n_jobs=args.n_jobs)
    if args.method == "threshold":
        params["threshold"] = parse_threshold(args.threshold)
    kind = {
        "boruta": S.Boruta,
        "rfe": S.RFE,
        "threshold": S.SelectFromImportance,
        "srs": S.SequentialRandomSubspace,
    }[args.method]
    selector = kind(**params)
    return selector.set_params(estimator=model_for(args, problem, selector))


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


@dataclass
class Quality:
    """The out-of-bag score of a forest on all the columns (out of core: on the found ones),
    and of one on the kept columns."""

    fit: Fit
    columns: str  # "all" or "found"
    n_estimators: int
    kept_score: float | None  # the same metric, on the kept columns (None: none kept)
    n_kept: int  # source columns

    def line(self) -> str:
        fit = self.fit
        line = (f"model quality: {fit.oob_line()} with {self.columns} {fit.n_features} columns "
                f"({fit.model}, {self.n_estimators} trees)")  # fmt: skip
        if self.kept_score is not None:
            metric = {"r2": "R²"}.get(fit.metric, fit.metric.replace("_", " "))
            line += f"; {metric} {self.kept_score:.4f} with the {self.n_kept} kept"
        return line + fit.flag()

    def warning(self) -> str | None:
        return self.fit.warning("the columns selected with such forests reflect noise")

    def as_json(self) -> dict[str, Any]:
        return {
            "oob_model": self.fit.model,
            "oob_n_estimators": self.n_estimators,
            "oob_columns": self.columns,
            **self.fit.as_json(),
            "kept_oob_score": self.kept_score,
        }


def _score(args: Any, problem: Problem, X: Any, n_sources: int,
           categorical: np.ndarray | None = None) -> Fit:  # fmt: skip
    """The :class:`Fit` of the report's forest (``--model``, default rf) on ``X``, whose
    ``categorical`` columns it splits as categories."""
    model = build_model(args.model or "rf", problem.task, args.n_estimators or 100,
                        args.random_state, args.n_jobs, args.class_weight,
                        categorical)  # fmt: skip
    try:
        model.fit(X, problem.y)
    except ValueError as exc:
        raise fail(f"{type(model).__name__}: {exc}") from None
    return assess(model, problem.y, problem.task, problem.reason, n_sources, X.shape[1],
                  args.class_weight)  # fmt: skip


def assess_quality(args: Any, problem: Problem, selector: Any) -> Quality | None:
    """The :class:`Quality` of the data the selection ran on (None: out of core, with no
    column found or more found than the q columns SRS may hold in memory)."""
    support = np.asarray(selector.support_)
    n_kept = count_sources(support, problem.groups)
    n_trees = args.n_estimators or 100
    if isinstance(problem.X, str):  # out of core: only the found columns are read
        q = selector._check_params(problem.n_columns)[0]
        if not support.any() or support.sum() > q:  # within the memory SRS was given
            return None
        from ._parquet import read_parquet
        from .selection._plots import feature_names

        found = [n for n, s in zip(feature_names(selector), support, strict=True) if s]
        X = read_parquet(problem.X, columns=found).to_numpy(dtype=np.float64,
                                                            na_value=np.nan)  # fmt: skip
        return Quality(_score(args, problem, X, len(found)), "found", n_trees, None, n_kept)
    X = np.asarray(problem.X, dtype=np.float64)
    n_sources = len(problem.groups) if problem.groups is not None else X.shape[1]
    mask = problem.categorical
    fit = _score(args, problem, X, n_sources, mask)
    kept = None
    if support.all():
        kept = fit.oob_score
    elif support.any():
        sub = None if mask is None else mask[support]
        kept = _score(args, problem, X[:, support], n_kept, sub).oob_score
    return Quality(fit, "all", n_trees, kept, n_kept)


def select_meta(args: Any, selector: Any, problem: Problem, rows: list[dict[str, Any]],
                quality: Quality | None, warnings: list[str]) -> dict[str, Any]:  # fmt: skip
    """The JSON's fields besides the columns: what ran, on what, how well, and any warning."""
    meta: dict[str, Any] = {
        "file": args.file,
        "target": args.target,
        "method": args.method,
        "measure": selector.get_params()["importance"],
        "task": problem.task,
        "task_reason": problem.reason,
        "n_rows": len(problem.y),
        "n_features": len(rows),
        "n_encoded": selector.n_features_in_,
        "encoding": problem.encoding,
        "categorical_columns": problem.text,
        "n_kept": sum(r["status"] in KEPT for r in rows),
        "n_tentative": sum(r["status"] == "tentative" for r in rows),
        "iterations": iterations(selector),
    }
    if args.method == "threshold":
        meta["threshold"] = float(selector.threshold_)
    if args.method == "boruta":
        meta["max_iter"] = int(selector.max_iter)
    meta.update(quality.as_json() if quality is not None else {"oob_score": None})
    meta["warnings"] = warnings
    return meta


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
    quality = assess_quality(args, problem, selector)
    chance = quality.warning() if quality is not None else None
    warnings = [w for w in [chance] if w] + selection_warnings(args, selector, rows, problem)
    for line in warnings:
        print(line, file=sys.stderr)
    head = summary(args, selector, problem, rows, quality)
    meta = select_meta(args, selector, problem, rows, quality, warnings)
    text = render(args.output, args, head, rows, meta)
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
        ax = selector.plot() if problem.groups is None else selector.plot(groups=problem.groups)
        ax.figure.tight_layout()
        ax.figure.savefig(args.plot, dpi=120)
        print(f"plot written to {args.plot}", file=info)
    return 0

"""The ``forestimp`` command: ``select`` (the columns of a CSV or Parquet file that matter,
``forestimp._select``), ``rank`` (ranked by importance, ``forestimp._rank``) and ``demo``
(LED, estimated vs exact importances). Tables are read by ``forestimp._cli_table`` (text and
category columns split natively as categories, or one-hot encoded with ``--one-hot``),
forests judged by ``forestimp._cli_quality``."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from typing import NoReturn

import numpy as np


def _demo(args: argparse.Namespace) -> int:
    from .datasets import make_led
    from .ensemble import TotallyRandomizedTreesClassifier
    from .theory import asymptotic_importances

    X, y = make_led()
    t0 = time.perf_counter()
    est = TotallyRandomizedTreesClassifier(
        n_estimators=args.n_estimators, random_state=args.random_state, n_jobs=args.n_jobs
    ).fit(X, y)
    elapsed = time.perf_counter() - t0
    exact = asymptotic_importances(X, y)
    got = est.mdi_importances_
    sem = est.tree_importances().std(axis=0) / np.sqrt(args.n_estimators)
    print("Totally randomized trees (K = 1, entropy) on the 7-segment LED digits:")
    print(f"{args.n_estimators} trees fitted in {elapsed:.2f} s.\n")
    print("segment   estimated MDI (bits) ± s.e.   exact (Thm 1)   difference")
    for m in range(X.shape[1]):
        print(f"X{m + 1:<8} {got[m]:8.4f} ± {sem[m]:.4f}          {exact.importances[m]:8.4f}"
              f"        {got[m] - exact.importances[m]:+.4f}")  # fmt: skip
    print(f"{'sum':<9} {got.sum():8.4f}                   {exact.importances.sum():8.4f}"
          f"   = I(X; Y) = log2(10) = {exact.mutual_information:.4f}")  # fmt: skip
    if args.plot:
        from .plotting import plot_importances

        names = [f"X{m + 1}" for m in range(X.shape[1])]
        title = f"LED, {args.n_estimators} totally randomized trees"
        plot_importances(names, got, sem, reference=exact.importances, title=title,
                         xlabel="raw MDI (bits)", path=args.plot)  # fmt: skip
        print(f"plot written to {args.plot}")
    return 0


DESCRIPTION = """\
Forests on a CSV or Parquet table: which columns matter for a target.

  forestimp select data.csv --target label   keep the columns that matter (Boruta, RFE,
                                             a threshold, or SRS for wide files)
  forestimp rank data.csv --target label     rank the columns by importance
  forestimp demo                             LED digits: estimated vs exact importances

Both select and rank print the out-of-bag score of a forest on the table first, and a
warning when it is at chance level. forestimp <command> --help says more.
"""

RANK_HELP = """\
Fit a forest on a CSV or Parquet file, print its out-of-bag score, and rank the columns by
importance. Trees are always grown on bootstrap samples (also et, trt and patches, whose
estimators default to no bootstrap), so that every tree has out-of-bag rows.

The out-of-bag (OOB) score says whether the forest learned anything: OOB accuracy (and the
majority-class rate it must beat) or OOB R² (which must be above 0). At chance level a warning
is printed: the importances of a forest that predicts nothing describe noise. A milder one
when the OOB accuracy beats the majority-class rate p by less than 2 sqrt(p(1-p)/n).

Measures (--measure):
  permutation  (default) OOB permutation importance, Breiman's mean decrease of accuracy:
               how much each tree's error on the rows it did not see grows when the column
               is permuted (0/1 loss, or squared error). Noise a tree memorised does not help
               it on unseen rows, so pure noise scores about 0 whatever its number of
               distinct values, and the unit (the trees' error rate, or squared target units)
               reads directly. Correlated columns share it. No extra fit.
  air          actual impurity reduction (ranger's impurity_corrected): MDI minus the MDI of
               a permuted shadow copy of each column; also unbiased, costs a second fit.
  mdi_oob      MDI-oob (Li et al. 2019): impurity decreases re-scored on OOB rows.
  mdi          scikit-learn's normalized feature_importances_. Biased: a continuous noise
               column can outrank an informative binary one (docs/importances.md). Use it
               to see what the trees split on, not what the target depends on.

Text and category columns are categorical: the trees split each natively, sending a set of
its categories to each side (missing values go to the side learned for them, as for
numbers), and it reports one row, n_columns 1. With --one-hot, text columns are one-hot
encoded and each reports one row, the sum over its encoded columns. air, mdi_oob and mdi are
sums over the splits of the trees, so the sum is exactly the importance of the group.
permutation is not additive: the sum of the per-column importances (each dummy permuted
alone) approximates, but is not, the importance of permuting the original column, which is
what a categorical column's permutation importance is. std and s.e. are always computed
from the per-tree values (summed over the group): std over trees (ddof 0, as every
forestimp measure) and s.e. = std / sqrt(n_trees), the Monte-Carlo error of the forest
average (more trees shrink it); neither includes the sampling variability of the data.

permutation is out of bag: its draws are the trees, so std and s.e. are spreads over the
trees and mean something with the default --n-repeats 1; more repeats only lower the noise
of each tree's permutation. (A held-out permutation with one repeat has one draw and no
spread: forestimp rank does not compute one.)

Task (--task auto): classification for a non-numeric target or at most 20 distinct integer
values; regression otherwise (non-integer numbers, or more than 20 distinct integers).
For classification the balanced accuracy (mean recall over the classes; chance: 1 / number
of classes) is printed too; with --class-weight the chance test reads it instead of the
accuracy, which balanced weights trade for the rarer classes.
"""
TABLE_HELP = """\
Tables: --sep for a CSV separator (default: tab for .tsv, else comma); text and category
columns are categorical, split natively (refused when a column mixes numbers and text), or
with --one-hot one 0/1 column per level; missing feature values, numbers or text, are kept
(the trees route them, see docs/missing-values.md); a missing target value is refused
unless --drop-missing-target drops its row. --drop takes column names, several at once or
comma-separated (--drop id,name or --drop id --drop name); end it with another option or
put FILE first (a FILE that --drop took is given back to FILE when it names an existing
file).
"""


def _separator(text: str) -> str:
    """``--sep``: a CSV separator; ``tab`` or ``\\t`` for a tab."""
    if text in ("tab", "\\t"):
        return "\t"
    if not text:
        raise argparse.ArgumentTypeError("must not be empty (tab: --sep tab)")
    return text


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _step(text: str) -> float | int:
    """RFE's step: a count when written as an integer, else a fraction."""
    return int(text) if text.strip().isdigit() else float(text)


def _integer(text: str, low: int, high: int) -> int:
    """``text`` as an integer in ``[low, high]``: refused while parsing, before a file is
    read, rather than by the estimator (or as an OverflowError) once it is."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be in [{low}, {high}], got {value}")
    return value


def _trees(text: str) -> int:
    """``--n-estimators``: the engine's tree count is a u32 with one value reserved."""
    return _integer(text, 1, 2**32 - 2)


def _jobs(text: str) -> int:
    """``--n-jobs``: -1 all cores, -2 all but one...; 0 would run nothing."""
    value = _integer(text, -(2**31), 2**31)
    if value == 0:
        raise argparse.ArgumentTypeError("must be non-zero (-1: all cores), got 0")
    return value


def _seed(text: str) -> int:
    """``--random-state``: numpy's and scikit-learn's seeds are in [0, 2**32 - 1]."""
    return _integer(text, 0, 2**32 - 1)


def _number(text: str) -> float:
    """A finite float: nan compares false with everything, and a rule with it (or with inf)
    keeps every column or none without saying why."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _alpha(text: str) -> float:
    """``--alpha``: a level or a count of standard errors, finite and not negative."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {text!r}")
    return value


def _threshold(text: str) -> str:
    """``--threshold``: its number (``1.5`` or the K of ``K*mean``) must be finite; the names
    are the selector's to check."""
    scale, star, _ = text.rpartition("*")
    try:
        value = float(scale if star else text)
    except ValueError:
        return text
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"its number must be finite, got {text!r}")
    return text


def _output(text: str) -> str:
    """``--out`` / ``--plot``: a file in an existing folder, checked before the forests are
    grown, not when their result is written."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"no directory {folder!r} to write {text!r} in")
    return text


# The matplotlib that the plots need (pyproject's ``plot`` extra): Boruta's boxes are drawn
# with ``boxplot(orientation=...)``, new in 3.10.
PLOT_MATPLOTLIB = (3, 10)


def _plot_file(text: str) -> str:
    """``--plot``: a file ``--out`` would accept, in an image format matplotlib writes, and a
    matplotlib that can draw it, all checked while parsing: without them the forests would
    be grown for nothing and the command would end in a traceback once they were."""
    path = _output(text)
    try:
        import matplotlib
        import matplotlib.pyplot  # noqa: F401  (the figures)
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise argparse.ArgumentTypeError(
            "drawing needs matplotlib: pip install 'forestimp[plot]'"
        ) from None
    except (ValueError, RuntimeError) as exc:  # e.g. an unknown MPLBACKEND
        raise argparse.ArgumentTypeError(f"matplotlib cannot be loaded: {_one_line(exc)}") from None
    version = getattr(matplotlib, "__version__", "0")
    have = tuple(int(part) for part in re.findall(r"\d+", version)[:2])
    if have < PLOT_MATPLOTLIB:
        need = ".".join(map(str, PLOT_MATPLOTLIB))
        raise argparse.ArgumentTypeError(
            f"drawing needs matplotlib >= {need}, found {version}: pip install 'forestimp[plot]'"
        )
    suffix = os.path.splitext(path)[1][1:].lower()  # none: matplotlib writes a PNG
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        raise argparse.ArgumentTypeError(
            f"matplotlib writes no .{suffix} images; name a .png file (or {', '.join(formats)})"
        )
    return path


def _add_table_options(parser: argparse.ArgumentParser, task_help: str) -> None:
    """What ``rank`` and ``select`` read from a table besides the target."""
    parser.add_argument("--drop", nargs="+", action="extend", default=[], metavar="COL",
                        help="columns to leave out (identifiers, leaks): --drop a b, "
                        "--drop a,b or --drop a --drop b")  # fmt: skip
    parser.add_argument("--sep", type=_separator, metavar="SEP",
                        help="CSV separator (default: tab for .tsv, else comma; tab: --sep "
                        "tab)")  # fmt: skip
    parser.add_argument("--drop-missing-target", action="store_true",
                        help="leave out the rows whose target is missing (default: refuse "
                        "them)")  # fmt: skip
    parser.add_argument("--task", choices=["auto", "classification", "regression"],
                        default="auto", help=task_help)  # fmt: skip
    parser.add_argument("--one-hot", action="store_true",
                        help="one-hot encode text and category columns (one 0/1 column per "
                        "level, importances summed per column) instead of splitting them "
                        "as categories")  # fmt: skip
    parser.add_argument("--class-weight", choices=["balanced", "balanced_subsample"],
                        help="classification: weigh the classes inversely to their "
                        "frequency (scikit-learn's class_weight); the chance test then reads "
                        "the balanced accuracy")  # fmt: skip


def _add_run_options(parser: argparse.ArgumentParser, seeds: str) -> None:
    """Seed, threads and output file, as ``rank`` and ``select`` take them."""
    parser.add_argument("--random-state", type=_seed, default=0, help=f"seeds {seeds}")
    parser.add_argument("--n-jobs", type=_jobs, default=-1, help="threads (default -1: all cores)")
    parser.add_argument("--out", type=_output, metavar="PATH",
                        help="write the output there instead of stdout")  # fmt: skip


def _add_rank(sub: argparse._SubParsersAction) -> None:
    from ._rank import MEASURES, run

    rank = sub.add_parser(
        "rank",
        help="rank the columns of a CSV or Parquet file by importance",
        description=RANK_HELP + "\n" + TABLE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rank.add_argument("file", nargs="?", help="CSV (.tsv: tab-separated) or Parquet "
                      "(.parquet, .pq) file; required")  # fmt: skip
    rank.add_argument("--target", required=True, help="the column to predict")
    _add_table_options(rank, task_help="default: auto (see above)")
    rank.add_argument(
        "--measure",
        choices=list(MEASURES),
        default="permutation",
        help="importance measure (default: permutation, out-of-bag; see above)",
    )
    rank.add_argument(
        "--n-repeats",
        type=_positive,
        default=1,
        help="permutations per tree and column (permutation only; default 1: std and s.e. "
        "are over trees, see above)",
    )
    rank.add_argument(
        "--model",
        choices=["rf", "hist", "et", "trt", "patches"],
        default="rf",
        help="rf: Random Forest (default), hist: on histograms (large files), "
        "et: Extra-Trees, trt: totally randomized trees, patches: Random Patches",
    )
    rank.add_argument("--n-estimators", type=_trees, default=500, help="default 500")
    _add_run_options(rank, seeds="the trees and permutations")
    rank.add_argument("--top", type=_positive, default=None, help="show only the first TOP rows")
    rank.add_argument(
        "--output",
        choices=["table", "csv", "json"],
        default="table",
        help="table (default, for people) or csv/json with columns rank, feature, "
        "importance, std, standard_error, n_columns (json: with the OOB score, the chance "
        "test and any warning)",
    )
    rank.add_argument("--plot", type=_plot_file, metavar="PNG",
                      help="also draw the ranking as a bar chart")  # fmt: skip
    rank.set_defaults(run=run)


SELECT_HELP = """\
Select the columns of a CSV or Parquet file that matter for a target, with one of the
selectors of forestimp.selection, and print the kept columns with their scores. With no FILE,
run on built-in MADELON-like data (2000 rows, 100 columns: 5 informative in an XOR-like
cluster structure, 5 redundant combinations of them, 90 noise) and say how close the
selection came to the known answer.

Methods (--method):
  boruta     (default) all-relevant: each iteration grows a forest on the columns and on a
             permuted copy (shadow) of each; a column scores a hit when its importance beats
             the best shadow's, and binomial tests over the iterations confirm or reject it
             (R Boruta's rule: Bonferroni, alpha 0.01). Importance: out-of-bag permutation
             z-scores. Score: median importance over the iterations; hit_rate: the share of
             iterations it beat the shadows. Columns still tentative at --max-iter are
             warned about: raise --max-iter to decide them. Needs complete features (no
             missing value): impute them, or use another method.
  rfe        recursive feature elimination: refit on the remaining columns, drop the least
             important fifth (--step), keep the fewest columns whose out-of-bag score is
             within --alpha (default 1) standard errors of the best. Score: importance at the
             last fit the column took part in. --scoring NAME scores each step by 5-fold
             cross-validation with a scikit-learn scorer instead (balanced_accuracy for
             unbalanced classes).
  threshold  one forest; keep the columns whose importance reaches --threshold: mean
             (default), median, 1.5*mean, a number, or probe (beat the best of as many
             permuted noise columns as there are columns).
  srs        Sequential Random Subspace (Sutera 2019, ch. 7): forests on q columns at a time
             (--memory-features, default min(100, p)), half of each subspace drawn from the
             columns already found; a column is found when it beats the random probes.
             A Parquet FILE is read out of core, q columns at a time, when its features are
             all numeric and no column or row is dropped (else it is read whole and encoded
             as a CSV file is). Score: importance summed over its draws, over the
             iterations; n_draws: iterations it was in. A warning when columns were never
             drawn or still being found near the end: raise --iterations.

Importance (--importance): permutation (out of bag, as forestimp rank) for boruta (as
z-scores) and threshold; mdi (normalized MDI, biased towards many-valued columns) for rfe
and srs, the selectors' own. Every report names the measure it used.

Model quality: a forest on all the columns (--model, default rf; --n-estimators, default
100; --class-weight) is scored out of bag as in forestimp rank, and again on the kept
columns. A warning (stderr and the JSON's "warnings") when the first is at chance level:
the columns a selector keeps from a forest that predicts nothing are noise. SRS reading a
Parquet file out of core scores the found columns only.

Text and category columns are categorical (as in forestimp rank), split natively by every
method, one column each. With --one-hot they are one-hot encoded instead, and a text column is
kept when any of its levels is, with its best level's score. Every count (table, summary, plot
titles, JSON) is of source columns, a text column once; the encoded levels are counted in
parentheses where they differ. --output csv|json lists every column with its status; the table
lists the kept (and tentative) ones, --all every one.
"""


def _add_select(sub: argparse._SubParsersAction) -> None:
    from ._select import run
    from ._select_report import METHODS
    from .selection import IMPORTANCES

    sel = sub.add_parser(
        "select",
        help="select the columns of a CSV or Parquet file that matter for a target",
        description=SELECT_HELP + "\n" + TABLE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sel.add_argument("file", nargs="?", help="CSV or Parquet file (none: the built-in data)")
    sel.add_argument("--target", help="the column to predict (required with a FILE)")
    sel.add_argument("--method", choices=list(METHODS), default="boruta", help="default boruta")
    _add_table_options(sel, task_help="default: auto (see forestimp rank --help)")
    sel.add_argument("--importance", choices=list(IMPORTANCES),
                     help="default: permutation for boruta and threshold, mdi for rfe and "
                     "srs (see above)")  # fmt: skip
    sel.add_argument("--alpha", type=_alpha, help="boruta: test level (0.01); rfe: standard "
                     "errors (1); srs: share of q drawn from the found columns (0.5)")  # fmt: skip
    sel.add_argument("--max-iter", type=_positive, help="boruta: most iterations (100)")
    sel.add_argument("--step", type=_step, help="rfe: fraction (0.2) or count dropped per step")
    sel.add_argument("--scoring", metavar="NAME",
                     help="rfe: a scikit-learn scorer (balanced_accuracy, f1, r2...) scoring "
                     "each step by 5-fold cross-validation (default: out-of-bag accuracy or "
                     "R²)")  # fmt: skip
    sel.add_argument("--threshold", type=_threshold,
                     help="threshold: mean, median, K*mean, a number or probe")  # fmt: skip
    sel.add_argument("--memory-features", type=_positive, metavar="Q",
                     help="srs: columns in memory at once (q)")  # fmt: skip
    sel.add_argument("--iterations", type=_positive, help="srs: iterations (5 p / q)")
    sel.add_argument("--batch-size", type=_positive, metavar="B",
                     help="srs: subspaces per round, all drawn from the columns found before "
                     "it (default: one at a time, Algorithm 1)")  # fmt: skip
    sel.add_argument("--scheduler", metavar="ADDRESS",
                     help="srs with --batch-size: fit each round's subspaces on the Dask "
                     "cluster at ADDRESS (the same selection as in one process)")  # fmt: skip
    sel.add_argument("--model", choices=["rf", "hist", "et"],
                     help="the forest (default: the method's own)")  # fmt: skip
    sel.add_argument("--n-estimators", type=_trees,
                     help="trees per forest (default: the method's own, 100; srs 50)")  # fmt: skip
    _add_run_options(sel, seeds="the selection")
    sel.add_argument("--output", choices=["table", "csv", "json"], default="table",
                     help="table (default, for people) or csv/json: every column with rank, "
                     "status, score, n_columns (json: with the method, measure, task, OOB "
                     "scores, iterations and warnings)")  # fmt: skip
    sel.add_argument("--all", action="store_true", help="table: list the dropped columns too")
    sel.add_argument("--plot", type=_plot_file, metavar="PNG",
                     help="draw the selection (pip install '.[plot]')")  # fmt: skip
    sel.add_argument("--no-progress", action="store_true", help="no progress bar")
    sel.set_defaults(run=run)


class _Parser(argparse.ArgumentParser):
    """argparse's parser with its errors on one line, as the command's others: no usage
    block, so that the last line of stderr is the one that says what went wrong."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _expected_errors() -> tuple[type[BaseException], ...]:
    """The errors that mean the input, the arguments or the machine refused, not a bug of
    forestimp: said in one line. Evaluated only when an error reaches ``main``."""
    import pandas as pd

    from .exceptions import DataError, InvalidParameterError, ModelFormatError

    return (
        DataError,
        InvalidParameterError,
        ModelFormatError,
        OSError,  # files: unreadable, unwritable, a directory...
        MemoryError,  # also pyarrow's, for a file claiming more rows than memory holds
        pd.errors.EmptyDataError,
        pd.errors.ParserError,
    )


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (pyarrow's and some of numpy's span several)."""
    text = " ".join(str(exc).split())
    if isinstance(exc, MemoryError):
        return f"out of memory{': ' + text if text else ''}"
    return text or type(exc).__name__


def _file_from_drop(args: argparse.Namespace) -> None:
    """``--drop a b FILE --target y``: ``--drop`` takes every word up to the next option, the
    FILE too. When no FILE was given and the last word ``--drop`` took names an existing
    file, it is the FILE; ``rank`` without a FILE is then refused as argparse refuses it."""
    drop = getattr(args, "drop", None)
    if getattr(args, "file", "") is None and drop and os.path.isfile(drop[-1]):
        args.file, args.drop = drop[-1], drop[:-1]
    if args.command == "rank" and args.file is None:
        print("forestimp rank: error: the following arguments are required: file",
              file=sys.stderr)  # fmt: skip
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``forestimp`` console command.

    Every refusal ends as argparse ends its own: ``forestimp <command>: error: <message>``
    on one line of stderr and exit status 2 (``SystemExit``); any other exception is a bug
    and keeps its traceback.
    """
    from . import __version__
    from ._rank import UsageError

    parser = _Parser(prog="forestimp", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--version", action="version", version=f"forestimp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="LED digits: estimated vs exact importances")
    demo.add_argument("--n-estimators", type=_trees, default=10000)
    demo.add_argument("--random-state", type=_seed, default=0)
    demo.add_argument("--n-jobs", type=_jobs, default=-1)
    demo.add_argument("--plot", type=_plot_file, metavar="PNG",
                      help="also draw the table as a bar chart")  # fmt: skip
    demo.set_defaults(run=_demo)
    _add_select(sub)
    _add_rank(sub)
    args = parser.parse_args(argv)
    _file_from_drop(args)
    try:
        return args.run(args)
    except UsageError as exc:
        message = _one_line(exc)
    except _expected_errors() as exc:
        message = _one_line(exc)
    print(f"forestimp {args.command}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


if __name__ == "__main__":
    sys.exit(main())

"""The ``forestimp`` command: ``demo`` (LED, estimated vs exact importances) and ``rank``
(features of a CSV file ranked by importance)."""

from __future__ import annotations

import argparse
import sys
import time

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


def _load_csv(path: str, target: str):
    import pandas as pd

    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"forestimp rank: cannot read {path}: {exc}") from None
    if target not in df.columns:
        cols = ", ".join(map(str, df.columns[:20]))
        print(f"forestimp rank: no column {target!r} in {path} (columns: {cols})", file=sys.stderr)
        raise SystemExit(2)
    y = df.pop(target)
    text = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    if text:
        print(f"one-hot encoding non-numeric columns: {', '.join(map(str, text))}", file=sys.stderr)
        df = pd.get_dummies(df, columns=text, dtype=float)
    if df.isna().any().any():
        print("forestimp rank: the features contain missing values; impute them first",
              file=sys.stderr)  # fmt: skip
        raise SystemExit(2)
    return df, y


def _rank(args: argparse.Namespace) -> int:
    import pandas as pd

    from . import ensemble as E

    X, y = _load_csv(args.file, args.target)
    task = args.task
    if task == "auto":
        numeric = pd.api.types.is_float_dtype(y)
        task = "regression" if numeric and y.nunique() > 20 else "classification"
    models = {
        "rf": (E.RandomForestClassifier, E.RandomForestRegressor),
        "et": (E.ExtraTreesClassifier, E.ExtraTreesRegressor),
        "trt": (E.TotallyRandomizedTreesClassifier, E.TotallyRandomizedTreesRegressor),
        "patches": (E.RandomPatchesClassifier, E.RandomPatchesRegressor),
    }
    # "hist": a Random Forest on histograms, for large files (no sort per node).
    models["hist"] = models["rf"]
    extra = {"splitter": "hist"} if args.model == "hist" else {}
    cls = models[args.model][task == "regression"]
    est = cls(
        n_estimators=args.n_estimators,
        random_state=args.random_state,
        n_jobs=args.n_jobs,
        **extra,
    )
    est.fit(X, y)
    imp = est.feature_importances_
    per_tree = est.tree_importances(normalize=True)
    std = per_tree.std(axis=0)
    raw = est.mdi_importances_
    order = np.argsort(-imp, kind="stable")[: args.top]
    print(f"{cls.__name__}, {args.n_estimators} trees, {task}, {X.shape[0]} rows")
    width = max(len(str(c)) for c in X.columns)
    print(f"{'rank':>4}  {'feature':<{width}}  {'importance':>10}  {'std':>8}  {'raw MDI':>9}")
    for r, j in enumerate(order, 1):
        print(f"{r:>4}  {X.columns[j]!s:<{width}}  {imp[j]:10.4f}  {std[j]:8.4f}  {raw[j]:9.4f}")
    if args.plot:
        from .plotting import plot_importances

        sem = std / np.sqrt(args.n_estimators)
        plot_importances([str(c) for c in X.columns[order]], imp[order], sem[order],
                         title=f"{cls.__name__} on {args.file}", path=args.plot)  # fmt: skip
        print(f"plot written to {args.plot}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``forestimp`` console command."""
    parser = argparse.ArgumentParser(prog="forestimp", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="LED digits: estimated vs exact importances")
    demo.add_argument("--n-estimators", type=int, default=10000)
    demo.add_argument("--random-state", type=int, default=0)
    demo.add_argument("--n-jobs", type=int, default=-1)
    demo.add_argument("--plot", metavar="PNG", help="also draw the table as a bar chart")
    demo.set_defaults(run=_demo)
    rank = sub.add_parser("rank", help="rank the columns of a CSV file by importance")
    rank.add_argument("file")
    rank.add_argument("--target", required=True)
    rank.add_argument("--task", choices=["auto", "classification", "regression"], default="auto")
    rank.add_argument("--model", choices=["rf", "hist", "et", "trt", "patches"], default="rf")
    rank.add_argument("--n-estimators", type=int, default=500)
    rank.add_argument("--random-state", type=int, default=0)
    rank.add_argument("--n-jobs", type=int, default=-1)
    rank.add_argument("--top", type=int, default=None)
    rank.add_argument("--plot", metavar="PNG", help="also draw the ranking as a bar chart")
    rank.set_defaults(run=_rank)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())

"""Permutation importance: forestimp against scikit-learn and R's ranger (same data).

Data: ``make_classification(n_samples, n_features, n_informative, random_state=0)``; the
first ``n_samples - n_test`` rows train every forest, the last ``n_test`` rows are the
held-out set. Measured (wall clock, median of ``--repeats`` unless noted):

* forestimp: Breiman's out-of-bag permutation importance of every feature
  (``forestimp.importance.permutation(est, X, y, oob=True)``, one permutation per tree and
  feature), and the
  held-out version with ``n_repeats=5`` on the held-out rows;
* scikit-learn: ``sklearn.inspection.permutation_importance(n_repeats=5)`` of the equivalent
  ``RandomForestClassifier`` on the held-out rows (run once: it is slow);
* ranger (optional, through ``Rscript``): the extra time of ``importance="permutation"`` over a
  plain fit, both timed inside R with ``system.time`` (``num.trees``, ``num.threads`` as here);
  the data reach R through a CSV written before any timing;
* ``forestimp.importance.local_mdi`` on 10 000 rows x 100 trees, when that function exists.

Prints a table and the ratios. Not a test: run it by hand, e.g.
``python benches/bench_importance.py`` (defaults: 20000 x 40, 10 informative, 50 trees,
2 threads) or ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall-clock seconds of ``repeats`` calls, and the last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


RANGER_SCRIPT = r"""
suppressMessages(library(ranger))
args <- commandArgs(trailingOnly = TRUE)
train <- read.csv(args[1]); train$y <- factor(train$y)
trees <- as.integer(args[2]); threads <- as.integer(args[3]); reps <- as.integer(args[4])
run <- function(imp) system.time(ranger(y ~ ., data = train, num.trees = trees,
    num.threads = threads, seed = 0, importance = imp, write.forest = FALSE))[["elapsed"]]
plain <- median(sapply(seq_len(reps), function(i) run("none")))
perm <- median(sapply(seq_len(reps), function(i) run("permutation")))
cat(sprintf("%f %f\n", plain, perm))
"""


def ranger_times(X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> tuple[float, float]:
    """(plain fit, fit with permutation importance) seconds inside R, or NaNs if absent."""
    nan = (float("nan"), float("nan"))
    if shutil.which("Rscript") is None:
        print("[skip] Rscript not found: ranger skipped", file=sys.stderr)
        return nan
    probe = ["Rscript", "-e", "quit(status = !requireNamespace('ranger', quietly=TRUE))"]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        print("[skip] R package ranger not installed: skipped", file=sys.stderr)
        return nan
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.csv")
        header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["y"])
        np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="")
        script = os.path.join(tmp, "ranger.R")
        with open(script, "w") as f:
            f.write(RANGER_SCRIPT)
        cmd = ["Rscript", script, path, str(args.n_estimators), str(args.n_jobs)]
        proc = subprocess.run(
            [*cmd, str(args.repeats)], capture_output=True, text=True, check=False
        )
    if proc.returncode != 0:
        print(f"[skip] ranger failed: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return nan
    plain, perm = map(float, proc.stdout.split())
    return plain, perm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-samples", type=int, default=20000)
    ap.add_argument("--n-features", type=int, default=40)
    ap.add_argument("--n-informative", type=int, default=10)
    ap.add_argument("--n-test", type=int, default=5000)
    ap.add_argument("--n-estimators", type=int, default=50)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--no-ranger", action="store_true")
    ap.add_argument("--quick", action="store_true", help="2000 x 20, 10 trees, 1 repeat")
    args = ap.parse_args()
    if args.quick:
        args.n_samples, args.n_features, args.n_test = 2000, 20, 500
        args.n_estimators, args.repeats = 10, 1

    from sklearn.datasets import make_classification
    from sklearn.ensemble import RandomForestClassifier as SkRF
    from sklearn.inspection import permutation_importance

    import forestimp
    from forestimp.importance import local_permutation, permutation

    X, y = make_classification(
        args.n_samples, args.n_features, n_informative=args.n_informative, random_state=0
    )
    n_train = args.n_samples - args.n_test
    Xtr, ytr, Xte, yte = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    common = dict(n_estimators=args.n_estimators, n_jobs=args.n_jobs, random_state=0)
    est = forestimp.RandomForestClassifier(**common).fit(Xtr, ytr)

    rows: list[tuple[str, float]] = []
    t_oob, res = timed(
        lambda: permutation(est, Xtr, ytr, oob=True, n_jobs=args.n_jobs, random_state=0),
        args.repeats,
    )
    rows.append(("forestimp OOB permutation (all features, 1 perm/tree)", t_oob))
    top = res.ranking_[: args.n_informative]
    t_ho, _ = timed(
        lambda: permutation(est, Xte, yte, n_repeats=5, n_jobs=args.n_jobs, random_state=0),
        args.repeats,
    )
    rows.append((f"forestimp held-out permutation, n_repeats=5, {args.n_test} rows", t_ho))
    t_loc, _ = timed(
        lambda: local_permutation(est, Xtr, ytr, oob=True, n_jobs=args.n_jobs, random_state=0), 1
    )
    rows.append(("forestimp casewise OOB permutation (n x p)", t_loc))

    t_sk = float("nan")
    if not args.no_sklearn:
        sk = SkRF(**common).fit(Xtr, ytr)
        t_sk, _ = timed(
            lambda: permutation_importance(
                sk, Xte, yte, n_repeats=5, n_jobs=args.n_jobs, random_state=0
            ),
            1,
        )
        rows.append((f"sklearn permutation_importance, n_repeats=5, {args.n_test} rows", t_sk))

    plain = perm = float("nan")
    if not args.no_ranger:
        plain, perm = ranger_times(Xtr, ytr, args)
        rows.append(("ranger fit, importance='none' (in R)", plain))
        rows.append(("ranger fit, importance='permutation' (in R)", perm))
    extra = perm - plain

    local_mdi = getattr(forestimp.importance, "local_mdi", None)
    t_lmdi = float("nan")
    if local_mdi is None:
        print("[skip] forestimp.importance.local_mdi not available", file=sys.stderr)
    else:
        Xl, yl = make_classification(10000, args.n_features, n_informative=10, random_state=0)
        big = forestimp.RandomForestClassifier(
            n_estimators=100, n_jobs=args.n_jobs, random_state=0
        ).fit(Xl, yl)
        try:
            t_lmdi, _ = timed(lambda: local_mdi(big, Xl, n_jobs=args.n_jobs), args.repeats)
            rows.append(("forestimp local_mdi, 10000 rows x 100 trees", t_lmdi))
        except TypeError as exc:  # another signature than local_mdi(est, X, n_jobs=)
            print(f"[skip] local_mdi(est, X, n_jobs=) failed: {exc}", file=sys.stderr)

    print(
        f"\n{args.n_samples} x {args.n_features} ({args.n_informative} informative), train "
        f"{n_train}, held-out {args.n_test}, {args.n_estimators} trees, n_jobs={args.n_jobs}\n"
    )
    print("| measurement | seconds |\n|---|---:|")
    for name, t in rows:
        print(f"| {name} | {t:.3f} |")
    print("\n| ratio | value | target |\n|---|---:|---|")
    print(f"| forestimp OOB / sklearn permutation_importance | {t_oob / t_sk:.4f} | <= 0.02 |")
    print(f"| forestimp held-out (5 repeats) / sklearn | {t_ho / t_sk:.4f} | |")
    print(f"| ranger extra time for importance (s) | {extra:.3f} | |")
    print(f"| forestimp OOB / ranger extra time | {t_oob / extra:.4f} | < 1 |")
    print(f"\nOOB top-{args.n_informative} features: {sorted(top.tolist())}")


if __name__ == "__main__":
    main()

"""forestimp against scikit-learn (and optional peers) on one synthetic classification task.

For each model (Random Forest, Extra-Trees) both libraries get identical parameters and
data (``make_classification(random_state=0)``, 80/20 split). Measured per library:

* fit and ``predict_proba`` wall-clock time (median of ``--repeats``),
* model size ``len(pickle.dumps(model))``,
* test accuracy,
* peak resident memory of the fit, measured in a fresh child process per library and
  model (so peaks never mix): the child generates the data, resets its high-water mark
  (``/proc/self/clear_refs``), fits, and reports ``VmHWM - VmRSS before the fit``.

Prints a Markdown table with the forestimp / scikit-learn ratios. Not a test: run it by hand,
e.g. ``python benches/bench_vs_sklearn.py --quick`` for a smoke run.

Optional peers, skipped with a message when unavailable: LightGBM in random-forest mode
(``--peers lightgbm``) and R's ranger through ``Rscript`` (``--peers ranger``).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

MODELS = {"rf": "Random Forest", "et": "Extra-Trees"}
LIBRARIES = ("forestimp", "sklearn")


# ------------------------------------------------------------------------------ data
def make_data(args: argparse.Namespace):
    from sklearn.datasets import make_classification
    from sklearn.model_selection import train_test_split

    X, y = make_classification(
        n_samples=args.n_samples,
        n_features=args.n_features,
        n_informative=args.n_informative,
        n_redundant=min(5, args.n_features - args.n_informative),
        random_state=0,
    )
    X = X.astype(np.float64)
    return train_test_split(X, y, test_size=0.2, random_state=0)


def make_model(library: str, model: str, args: argparse.Namespace):
    params = dict(n_estimators=args.n_estimators, n_jobs=args.n_jobs, random_state=0)
    if library == "forestimp":
        import forestimp

        cls = {"rf": forestimp.RandomForestClassifier, "et": forestimp.ExtraTreesClassifier}
        return cls[model](**params)
    if library == "sklearn":
        from sklearn import ensemble

        cls = {"rf": ensemble.RandomForestClassifier, "et": ensemble.ExtraTreesClassifier}
        return cls[model](**params)
    if library == "lightgbm":
        import lightgbm

        if model != "rf":
            raise ValueError("LightGBM has no Extra-Trees forest mode")
        return lightgbm.LGBMClassifier(
            boosting_type="rf",
            n_estimators=args.n_estimators,
            bagging_fraction=0.632,
            bagging_freq=1,
            feature_fraction=max(1, int(np.sqrt(args.n_features))) / args.n_features,
            num_leaves=2**15 - 1,
            min_child_samples=1,
            min_split_gain=0.0,
            n_jobs=args.n_jobs,
            random_state=0,
            verbose=-1,
        )
    raise ValueError(library)


# ------------------------------------------------------------------------- memory
def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def child_main(spec: str, args: argparse.Namespace) -> None:
    """Runs in a fresh interpreter: fit one model once, print its memory use as JSON."""
    import resource

    library, model = spec.split(":")
    X_train, _, y_train, _ = make_data(args)
    est = make_model(library, model, args)
    before = _status_kib("VmRSS")
    reset = _reset_peak()
    if not reset:  # fall back to the whole-process peak
        before = 0
    est.fit(X_train, y_train)
    peak = _status_kib("VmHWM")
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        before = 0
    print(json.dumps({"peak_fit_kib": peak - (before or 0), "exact": reset}))


def measure_peak(library: str, model: str, argv: list[str]) -> dict[str, Any]:
    cmd = [sys.executable, os.path.abspath(__file__), *argv, "--child", f"{library}:{model}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"peak_fit_kib": float("nan"), "error": proc.stderr.strip()[-500:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- measuring
def _timed(fn, repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def measure(library: str, model: str, data, args, argv) -> dict[str, Any]:
    X_train, X_test, y_train, y_test = data
    est = make_model(library, model, args)
    fit_s, _ = _timed(lambda: est.fit(X_train, y_train), args.repeats)
    predict_s, proba = _timed(lambda: est.predict_proba(X_test), args.repeats)
    accuracy = float(np.mean(est.classes_[np.argmax(proba, axis=1)] == y_test))
    row = {
        "library": library,
        "model": model,
        "fit_s": fit_s,
        "predict_s": predict_s,
        "model_bytes": len(pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL)),
        "accuracy": accuracy,
    }
    if not args.no_memory:
        mem = measure_peak(library, model, argv)
        row["peak_fit_mib"] = mem["peak_fit_kib"] / 1024
        if "error" in mem:
            print(f"[memory] {library}/{model} failed: {mem['error']}", file=sys.stderr)
    else:
        row["peak_fit_mib"] = float("nan")
    return row


RANGER_SCRIPT = r"""
suppressMessages(library(ranger))
args <- commandArgs(trailingOnly = TRUE)
train <- read.csv(args[1]); test <- read.csv(args[2])
train$y <- factor(train$y); test$y <- factor(test$y, levels = levels(train$y))
extra <- args[5] == "et"
t0 <- Sys.time()
fit <- ranger(y ~ ., data = train, num.trees = as.integer(args[3]),
              num.threads = as.integer(args[4]), seed = 0, probability = TRUE,
              splitrule = if (extra) "extratrees" else "gini", replace = !extra,
              sample.fraction = 1)
t1 <- Sys.time()
p <- predict(fit, test, num.threads = as.integer(args[4]))$predictions
t2 <- Sys.time()
f <- tempfile(); saveRDS(fit, f)
acc <- mean(colnames(p)[max.col(p, ties.method = "first")] == as.character(test$y))
cat(sprintf('{"fit_s": %f, "predict_s": %f, "model_bytes": %d, "accuracy": %f}\n',
    as.numeric(t1 - t0, units = "secs"), as.numeric(t2 - t1, units = "secs"),
    file.size(f), acc))
"""


def measure_ranger(model: str, data, args) -> dict[str, Any] | None:
    X_train, X_test, y_train, y_test = data
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, X, y in (("train", X_train, y_train), ("test", X_test, y_test)):
            path = os.path.join(tmp, f"{name}.csv")
            header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["y"])
            np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=header, comments="")
            paths.append(path)
        script = os.path.join(tmp, "ranger.R")
        with open(script, "w") as f:
            f.write(RANGER_SCRIPT)
        cmd = ["Rscript", script, *paths, str(args.n_estimators), str(args.n_jobs), model]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"[peer] ranger failed: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row.update(library="ranger", model=model, peak_fit_mib=float("nan"))
    return row


def available_peers(requested: list[str]) -> list[str]:
    peers = []
    for peer in requested:
        if peer == "lightgbm":
            try:
                import lightgbm  # noqa: F401
            except ImportError:
                print("[peer] lightgbm not importable: skipped", file=sys.stderr)
                continue
        elif peer == "ranger":
            if shutil.which("Rscript") is None:
                print("[peer] Rscript not found: ranger skipped", file=sys.stderr)
                continue
            ok = subprocess.run(
                ["Rscript", "-e", "quit(status = !requireNamespace('ranger', quietly=TRUE))"],
                capture_output=True,
                check=False,
            )
            if ok.returncode != 0:
                print("[peer] R package ranger not installed: skipped", file=sys.stderr)
                continue
        elif peer:
            print(f"[peer] unknown peer {peer!r}: skipped", file=sys.stderr)
            continue
        peers.append(peer)
    return peers


# ------------------------------------------------------------------------- report
def _fmt(v: float, spec: str) -> str:
    return "n/a" if v is None or (isinstance(v, float) and np.isnan(v)) else format(v, spec)


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [
        f"n_samples={args.n_samples} (80/20 split), n_features={args.n_features}, "
        f"n_informative={args.n_informative}, n_estimators={args.n_estimators}, "
        f"n_jobs={args.n_jobs}, repeats={args.repeats} (median); "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "",
        "| model | library | fit s | predict_proba s | peak fit RSS MiB | pickle MiB | accuracy |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {MODELS[r['model']]} | {r['library']} | {_fmt(r['fit_s'], '.3f')} | "
            f"{_fmt(r['predict_s'], '.3f')} | {_fmt(r['peak_fit_mib'], '.1f')} | "
            f"{_fmt(r['model_bytes'] / 2**20, '.2f')} | {_fmt(r['accuracy'], '.4f')} |"
        )
    lines += [
        "",
        "Ratios forestimp / scikit-learn (< 1 means forestimp is faster / smaller):",
        "",
        "| model | fit time | predict time | peak fit RSS | pickle bytes | accuracy diff |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    by = {(r["library"], r["model"]): r for r in rows}
    for model in MODELS:
        ours, theirs = by.get(("forestimp", model)), by.get(("sklearn", model))
        if ours is None or theirs is None:
            continue

        def ratio(key, a=ours, b=theirs):
            return a[key] / b[key] if b[key] else float("nan")

        lines.append(
            f"| {MODELS[model]} | {_fmt(ratio('fit_s'), '.2f')} | "
            f"{_fmt(ratio('predict_s'), '.2f')} | {_fmt(ratio('peak_fit_mib'), '.2f')} | "
            f"{_fmt(ratio('model_bytes'), '.2f')} | "
            f"{ours['accuracy'] - theirs['accuracy']:+.4f} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-samples", type=int, default=100_000)
    ap.add_argument("--n-features", type=int, default=50)
    ap.add_argument("--n-informative", type=int, default=10)
    ap.add_argument("--n-estimators", type=int, default=100)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--models", default="rf,et", help="comma list of: rf, et")
    ap.add_argument("--peers", default="", help="comma list of optional peers: lightgbm, ranger")
    ap.add_argument("--no-memory", action="store_true", help="skip the child-process peaks")
    ap.add_argument(
        "--quick", action="store_true", help="smoke run: 5000 x 20, 20 trees (overrides sizes)"
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.quick:
        args.n_samples, args.n_features, args.n_informative, args.n_estimators = 5000, 20, 5, 20
    args.models = [m for m in args.models.split(",") if m]
    unknown = set(args.models) - set(MODELS)
    if unknown:
        ap.error(f"unknown model(s): {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.child:
        child_main(args.child, args)
        return 0
    # The child re-derives the data from the same options.
    child_argv = list(argv)
    data = make_data(args)
    peers = available_peers([p for p in args.peers.split(",") if p])
    rows = []
    for model in args.models:
        for library in (*LIBRARIES, *[p for p in peers if p == "lightgbm"]):
            if library == "lightgbm" and model != "rf":
                continue
            print(f"[run] {library} {model} ...", file=sys.stderr, flush=True)
            rows.append(measure(library, model, data, args, child_argv))
        if "ranger" in peers:
            print(f"[run] ranger {model} ...", file=sys.stderr, flush=True)
            row = measure_ranger(model, data, args)
            if row is not None:
                rows.append(row)
    print(report(rows, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

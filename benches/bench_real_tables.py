"""Fit and predict on tables that look like real data (ties, few distinct values per column),
forestimp against scikit-learn and R's ranger in the same run (issue #20, "Fast on real
tables").

Targets of the issue, checked on every workload: forestimp RF (exact, ``splitter="best"``)
fit <= 0.33 x scikit-learn and <= 0.5 x ranger; ET fit <= 0.33 x scikit-learn; predict
<= 0.33 x scikit-learn (every forestimp model against its scikit-learn peer).

Workloads (``--workloads``), nothing downloaded; every table is cast to float32 C-order and
split 80/20 (``train_test_split(random_state=0)``). "Quantized" means: each column is cut at
its own quantiles into k equal-frequency levels, k drawn uniformly in 2..20 by
``numpy.random.default_rng(1)``, and replaced by the level code 0..k-1 (integer-coded, as
real tables are).

* ``digits``: scikit-learn ``load_digits`` (1797 x 64, <= 17 values per column, many constant
  zeros), classification, 10 classes;
* ``quantized``: ``make_classification(6000, 80, n_informative=20, n_redundant=10,
  random_state=0)``, every column quantized, classification;
* ``quantized-reg``: ``make_regression(8000, 12, n_informative=8, noise=1.0, random_state=0)``,
  every column quantized, regression with ``max_features=0.5`` (K = 6, ranger ``mtry=6``);
* ``mixed``: the ``quantized`` data with 60 of the 80 columns (drawn by the same generator)
  quantized and 20 left continuous, classification;
* ``randhie``: statsmodels' RAND Health Insurance Experiment table (``load_pandas()``, shipped
  with the package), 20 190 x 9, regression of ``mdvis`` (outpatient visits) on its 9 columns;
  7 of them have 2..31 distinct values, ``lpi`` 619 and ``fmde`` 345. The largest table
  statsmodels ships, and mostly integer-coded;
* ``fair``: statsmodels' ``fair`` affairs survey, 6366 x 8, every column 4..7 distinct
  values, classification ``affairs > 0`` (the usual binary reading of it);
* ``gaussian``: control, the ``quantized`` data unquantized (continuous, no ties).

Models (``--models``) and their peers, each with the workload's K = ``max_features``
(scikit-learn's default, ``"sqrt"`` for classification and all features for regression,
unless stated above), fully grown trees, ``n_jobs`` = ranger's ``num.threads`` = ``--threads``:

* ``rf``: forestimp ``RandomForest*(splitter="best")`` vs scikit-learn ``RandomForest*``
  (bootstrap) and ranger ``splitrule="gini"|"variance"`` (``replace=TRUE,
  sample.fraction=1``);
* ``hist``: forestimp ``RandomForest*(splitter="hist")`` vs the same ``rf`` peers (no target
  for its fit; columns with at most 255 values split exactly as ``best``);
* ``et``: forestimp ``ExtraTrees*`` vs scikit-learn ``ExtraTrees*`` (no bootstrap) and ranger
  ``splitrule="extratrees", replace=FALSE, sample.fraction=1`` (``num.random.splits=1``, its
  default: one random threshold per candidate, as Geurts et al.).

ranger (``benches/_peers_ranger.R``): ``mtry`` = the same K, ``min.node.size=1`` for both
tasks, ``probability=TRUE`` for classification (soft votes, as ``predict_proba``).
``--lightgbm`` adds LightGBM ``boosting_type="rf"`` as an extra ``rf`` peer (raw times only;
parameters in ``_peerlib.make_model``).

Timing, inside each library: fit = best (min) of ``--repeats`` fits; predict =
``predict_proba`` (classification) or ``predict`` on the held-out 20% (360 rows for digits,
the smallest), after one untimed call, best of ``max(repeats, 5)`` calls. ranger: the same
in R, ``Sys.time()`` around ``ranger()``/``predict()``, data read from raw binaries first.
Next to every time: held-out accuracy (argmax of the probabilities) or R^2, so that equal
models can be checked to score alike.

Prints Markdown tables: the workloads, raw times, and forestimp / peer ratios (< 1: forestimp
faster) with each target marked met (✓) or missed (✗). ``--json PATH`` dumps the rows.
``--quick``: every workload cut to 1500 rows, 10 trees, 1 repeat (smoke run, < 1 minute).

    python benches/bench_real_tables.py                      # default: 300 trees, 2 threads
    python benches/bench_real_tables.py --quick
    python benches/bench_real_tables.py --workloads digits,randhie --models rf --no-ranger
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import _peerlib as L
import numpy as np

MODELS = {"rf": "RF exact", "hist": "RF hist", "et": "ET"}
PEER_MODEL = {"rf": "rf", "hist": "rf", "et": "et"}  # the peers' model for each of ours
# (forestimp model, op, peer) -> the bound on forestimp time / peer time
TARGETS = {
    ("rf", "fit", "sklearn"): 0.33,
    ("rf", "fit", "ranger"): 0.5,
    ("et", "fit", "sklearn"): 0.33,
    ("rf", "predict", "sklearn"): 0.33,
    ("hist", "predict", "sklearn"): 0.33,
    ("et", "predict", "sklearn"): 0.33,
}


# ------------------------------------------------------------------------- workloads
def quantize(X: np.ndarray, columns, rng: np.random.Generator) -> np.ndarray:
    """Each of ``columns`` replaced by its equal-frequency level code 0..k-1, k in 2..20."""
    X = X.copy()
    for j in columns:
        k = int(rng.integers(2, 21))
        cuts = np.quantile(X[:, j], np.linspace(0, 1, k + 1)[1:-1])
        X[:, j] = np.searchsorted(cuts, X[:, j], side="right")
    return X


def _classification_80() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_classification

    return make_classification(
        n_samples=6000, n_features=80, n_informative=20, n_redundant=10, random_state=0
    )


def _digits():
    from sklearn.datasets import load_digits

    return load_digits(return_X_y=True)


def _quantized():
    X, y = _classification_80()
    return quantize(X, range(X.shape[1]), np.random.default_rng(1)), y


def _quantized_reg():
    from sklearn.datasets import make_regression

    X, y = make_regression(
        n_samples=8000, n_features=12, n_informative=8, noise=1.0, random_state=0
    )
    return quantize(X, range(X.shape[1]), np.random.default_rng(1)), y


def _mixed():
    X, y = _classification_80()
    rng = np.random.default_rng(1)
    columns = rng.choice(X.shape[1], size=3 * X.shape[1] // 4, replace=False)
    return quantize(X, columns, rng), y


def _randhie():
    from statsmodels.datasets import randhie

    ds = randhie.load_pandas()
    return ds.exog.to_numpy(), ds.endog.to_numpy()


def _fair():
    from statsmodels.datasets import fair

    ds = fair.load_pandas()
    return ds.exog.to_numpy(), (ds.endog.to_numpy() > 0).astype(np.int64)


# name -> (task, max_features (None: scikit-learn's default), builder of the whole (X, y))
WORKLOADS: dict[str, tuple[str, Any, Callable[[], tuple[np.ndarray, np.ndarray]]]] = {
    "digits": ("classification", None, _digits),
    "quantized": ("classification", None, _quantized),
    "quantized-reg": ("regression", 0.5, _quantized_reg),
    "mixed": ("classification", None, _mixed),
    "randhie": ("regression", None, _randhie),
    "fair": ("classification", None, _fair),
    "gaussian": ("classification", None, lambda: _classification_80()),
}


def load_workload(name: str, max_rows: int | None) -> tuple[np.ndarray, ...]:
    """``(X_train, X_test, y_train, y_test)`` of ``name``, X float32 C-order; ``max_rows``
    (``--quick``) keeps a seeded random subset of the rows."""
    from sklearn.model_selection import train_test_split

    X, y = WORKLOADS[name][2]()
    if max_rows is not None and X.shape[0] > max_rows:
        keep = np.random.default_rng(0).choice(X.shape[0], size=max_rows, replace=False)
        X, y = X[keep], y[keep]
    X = np.asarray(X, dtype=np.float32)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0)
    return np.ascontiguousarray(X_tr), np.ascontiguousarray(X_te), y_tr, y_te


# --------------------------------------------------------------------------- running
def measure_python(spec: dict[str, Any], data, repeats: int) -> dict[str, Any]:
    """Best-of-``repeats`` fit and predict of one Python library, and its held-out score."""
    X_tr, X_te, y_tr, y_te = data
    est = L.make_model(spec)
    fit_s, _ = L.timed(lambda: est.fit(X_tr, y_tr), repeats, stat=min)
    predict = est.predict_proba if spec["task"] == "classification" else est.predict
    # one untimed call first: thread start-up and page faults are not what is compared
    predict_s, pred = L.timed(lambda: predict(X_te), max(repeats, 5), warm_up=True, stat=min)
    return dict(
        spec, fit_s=fit_s, predict_s=predict_s, score=L.score(spec["task"], est, pred, y_te)
    )


def run_workload(name: str, args, libraries: list[str], rows: dict) -> dict[str, Any]:
    """Every model and peer on one workload; rows keyed by ``(workload, library, model)``.
    Returns the workload's description for the report."""
    task, max_features, _ = WORKLOADS[name]
    data = load_workload(name, 1500 if args.quick else None)
    X_tr = data[0]
    p = X_tr.shape[1]
    k = L.n_node_features(task, p, max_features)
    distinct = [len(np.unique(X_tr[:, j])) for j in range(p)]
    info = dict(
        workload=name,
        task=task,
        n_train=X_tr.shape[0],
        n_test=data[1].shape[0],
        p=p,
        k=k,
        distinct_min=min(distinct),
        distinct_median=float(np.median(distinct)),
        distinct_max=max(distinct),
    )
    rdata = L.RangerData(data) if "ranger" in libraries else None
    try:
        for model in args.models:
            jobs = [("forestimp", model)] + [(lib, PEER_MODEL[model]) for lib in libraries]
            for lib, own in jobs:
                if (name, lib, own) in rows or (lib == "lightgbm" and own != "rf"):
                    continue  # a peer shared by rf and hist; LightGBM has no Extra-Trees
                spec = dict(
                    task=task,
                    n=X_tr.shape[0] + data[1].shape[0],
                    p=p,
                    n_estimators=args.trees,
                    threads=args.threads,
                    library=lib,
                    model=own,
                    max_features=max_features,
                )
                print(f"[run] {name} {lib} {own}", file=sys.stderr, flush=True)
                t0 = time.perf_counter()
                if lib == "ranger":
                    row = L.measure_ranger(
                        spec, rdata, ["fit", "predict"], args.repeats, stat="min", mtry=k
                    )
                else:
                    row = measure_python(spec, data, args.repeats)
                print(f"[run] ... {time.perf_counter() - t0:.1f} s", file=sys.stderr)
                if row is not None:
                    rows[(name, lib, own)] = row
    finally:
        if rdata is not None:
            rdata.close()
    return info


# --------------------------------------------------------------------------- report
def _f(v: Any, fmt: str = ".3f") -> str:
    return "n/a" if v is None or v != v else format(v, fmt)


def table_workloads(infos: list[dict]) -> list[str]:
    out = [
        "| workload | task | n train | n test | p | K | distinct values per column "
        "(min / median / max) |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for w in infos:
        out.append(
            f"| {w['workload']} | {w['task'][:5]} | {w['n_train']} | {w['n_test']} | {w['p']} "
            f"| {w['k']} | {w['distinct_min']} / {w['distinct_median']:g} / {w['distinct_max']} |"
        )
    return out


def table_raw(rows: dict) -> list[str]:
    out = [
        "| workload | model | library | fit s | predict s | score |",
        "|---|---|---|---:|---:|---:|",
    ]
    for (name, lib, model), r in rows.items():
        label = MODELS[model] if lib == "forestimp" else {"rf": "RF", "et": "ET"}[model]
        out.append(
            f"| {name} | {label} | {lib} | {_f(r['fit_s'])} | {_f(r['predict_s'], '.4f')} "
            f"| {_f(r['score'], '.4f')} |"
        )
    return out


def table_ratios(rows: dict, peers: list[str]) -> tuple[list[str], list[str]]:
    """Ratio table and the list of missed targets."""
    ops = [(op, q) for op in ("fit", "predict") for q in peers]
    out = [
        "| workload | model | " + " | ".join(f"{op} / {q}" for op, q in ops) + " | score: "
        "forestimp / " + " / ".join(peers) + " |",
        "|---|---|" + "---:|" * len(ops) + "---|",
    ]
    missed, met = [], 0
    for (name, lib, model), ours in rows.items():
        if lib != "forestimp":
            continue
        cells, scores = [], [_f(ours["score"], ".4f")]
        for op, q in ops:
            theirs = rows.get((name, q, PEER_MODEL[model]))
            if theirs is None or not theirs.get(f"{op}_s"):
                cells.append("n/a")
                continue
            ratio = ours[f"{op}_s"] / theirs[f"{op}_s"]
            bound = TARGETS.get((model, op, q))
            mark = "" if bound is None else (" ✓" if ratio <= bound else " ✗")
            if bound is not None and ratio <= bound:
                met += 1
            elif bound is not None:
                missed.append(f"{name} {MODELS[model]} {op} / {q}: {ratio:.3f} > {bound}")
            cells.append(f"{ratio:.2f}{mark}")
        for q in peers:
            theirs = rows.get((name, q, PEER_MODEL[model]))
            scores.append(_f(theirs["score"], ".4f") if theirs else "n/a")
        out.append(
            f"| {name} | {MODELS[model]} | " + " | ".join(cells) + f" | {' / '.join(scores)} |"
        )
    summary = [f"Targets met: {met} of {met + len(missed)}."]
    summary += ["Missed:", *(f"- {m}" for m in missed)] if missed else []
    return out, summary


def report(rows: dict, infos: list[dict], args, peers: list[str]) -> str:
    ratio_lines, summary = table_ratios(rows, peers)
    bounds = ", ".join(f"{MODELS[m]} {op} / {q} <= {b}" for (m, op, q), b in TARGETS.items())
    return "\n".join(
        [
            f"X float32 C-order, 80/20 split; {args.trees} trees, {args.threads} threads, best of "
            f"{args.repeats} (predict: of {max(args.repeats, 5)}); libraries: forestimp, "
            f"{', '.join(peers)}; {platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}; 1-min load average {args.load_before:.2f} "
            f"before, {args.load_after:.2f} after",
            "",
            *table_workloads(infos),
            "",
            "Raw times (seconds) and held-out score (accuracy or R^2):",
            "",
            *table_raw(rows),
            "",
            f"forestimp / peer time (< 1: forestimp faster); ✓ / ✗: target ({bounds}) met or "
            "missed; no mark: no target.",
            "",
            *ratio_lines,
            "",
            *summary,
        ]
    )


# ----------------------------------------------------------------------------- main
def _list(text: str, allowed) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in values if v not in allowed]
    if bad:
        raise SystemExit(f"unknown {', '.join(bad)}; choose among {', '.join(allowed)}")
    return values


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trees", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2, help="n_jobs and ranger num.threads")
    ap.add_argument("--repeats", type=int, default=3, help="times are the best of these")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list")
    ap.add_argument("--models", default=",".join(MODELS), help="comma list of forestimp models")
    ap.add_argument("--no-ranger", action="store_true", help="leave R's ranger out")
    ap.add_argument("--lightgbm", action="store_true", help="add LightGBM rf as an RF peer")
    ap.add_argument("--json", metavar="PATH", help="dump workloads and raw rows as JSON")
    ap.add_argument("--quick", action="store_true", help="smoke run: 1500 rows, 10 trees, 1 rep")
    args = ap.parse_args(argv)
    if args.quick:
        args.trees, args.repeats = 10, 1
    args.workloads = _list(args.workloads, WORKLOADS)
    args.models = _list(args.models, MODELS)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    peers = ["sklearn"]
    for peer, wanted, why in (
        ("ranger", not args.no_ranger, L.ranger_available),
        ("lightgbm", args.lightgbm, L.lightgbm_available),
    ):
        reason = why() if wanted else None
        if reason:
            print(f"[peer] {reason}", file=sys.stderr)
        elif wanted:
            peers.append(peer)
    rows: dict = {}
    # other work on the machine skews every time: the 1-minute load average is printed
    args.load_before = os.getloadavg()[0]
    infos = [run_workload(name, args, peers, rows) for name in args.workloads]
    args.load_after = os.getloadavg()[0]
    # LightGBM has no target: its times are in the raw table only
    print(report(rows, infos, args, [q for q in peers if q != "lightgbm"]))
    if args.json:
        meta = {k: v for k, v in vars(args).items() if k != "json"}
        meta.update(machine=platform.machine(), cpus=os.cpu_count(), peers=peers)
        with open(args.json, "w") as f:
            dump = [{k: (None if v != v else v) for k, v in r.items()} for r in rows.values()]
            json.dump({"meta": meta, "workloads": infos, "rows": dump}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

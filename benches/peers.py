"""forestimp against its peers: scikit-learn, R's ranger and LightGBM, same data, same run.

Issue #4's harness. Data: ``make_classification(n, p, n_informative=min(10, p),
n_redundant=min(5, p - n_informative), random_state=0)`` or ``make_regression(n, p,
n_informative=min(10, p), noise=1.0, random_state=0)``, cast to float32 C-order, 80/20
split (``random_state=0``); every library gets the same arrays.

Models (``--models``) and their peers, default parameters, ``n_estimators`` as given,
``n_jobs``/``num.threads`` = the thread count:

* ``rf``: forestimp ``RandomForest*`` vs sklearn ``RandomForest*``, ranger
  (``splitrule="gini"``/``"variance"``), LightGBM ``boosting_type="rf"``;
* ``et``: ``ExtraTrees*`` vs sklearn ``ExtraTrees*``, ranger ``splitrule="extratrees"``
  (``replace=FALSE, sample.fraction=1``: the whole learning set, as Geurts et al.);
* ``patches``: ``RandomPatches*(max_samples=0.5, max_features=0.5, bootstrap=False,
  splitter="best", max_features_node="sqrt" | None)`` vs sklearn ``Bagging*`` of
  ``DecisionTree*(max_features="sqrt" | None)`` with the same sampling (ranger has none);
* ``hist``: ``RandomForest*(splitter="hist")`` vs the ``rf`` peers (skipped with a message
  while forestimp has no such splitter).

ranger gets ``mtry = floor(sqrt(p))`` (classification) or ``p`` (regression) and
``min.node.size = 1``, i.e. scikit-learn's defaults, so all grow the same fully developed
trees; classification uses ``probability = TRUE`` (soft votes, as ``predict_proba``).
LightGBM: ``bagging_fraction=0.632, bagging_freq=1``, ``feature_fraction_bynode`` sqrt(p)/p
(classification) or 1 (per node, as a random forest; per tree it loses accuracy),
``num_leaves=min(32767, n_train)`` (a cap: deeper trees than that are cut),
``histogram_pool_size=1024`` (MB), ``min_child_samples=1``.

Operations (``--ops``), all timed *inside* each library, median of ``--repeats``:

* ``fit``; ``predict``: ``predict_proba`` (classification) or ``predict`` on the test split,
  after one untimed call and over at least 5 calls (a prediction on 2 000 rows takes
  milliseconds, and a first call pays for thread start-up and page faults); the held-out
  accuracy or R² is printed next to every time;
* ``oob``: extra cost of the out-of-bag score, ``fit(oob_score=True) - fit()`` (ranger:
  ``oob.error=TRUE`` minus ``FALSE``; note that ranger's *default* fit computes it, so its
  default fit time is fit + OOB). n/a where the model has no OOB rows (Extra-Trees, sklearn
  Bagging without bootstrap) and for LightGBM;
* ``permutation``: forestimp ``importance.permutation(est, X_train, y_train, oob=True)``
  (out-of-bag, Breiman's) and ``permutation(est, X_test, y_test, n_repeats=1)`` (held-out); sklearn
  ``inspection.permutation_importance(est, X_test, y_test, n_repeats=1)`` (run once);
  ranger: extra fit time of ``importance="permutation"`` (out-of-bag).

ranger runs in ``Rscript`` (``benches/_peers_ranger.R``); the data reach it as raw binaries
read before any timing, and ``Sys.time()`` brackets ``ranger()``/``predict()`` only.

Memory, per library at the largest thread count: the peak RSS increase of one fit over the
RSS just before it, ``VmHWM - VmRSS`` after resetting the high-water mark through
``/proc/self/clear_refs``, with the data loaded and after a warm-up fit on 200 rows (so code
pages, lazy imports and thread pools are not counted). Python libraries: one fresh child
process per dataset builds the data once and forks a grandchild per fit (it never fits
itself, so no thread pool is forked; agrees with a fresh process per fit within 0.3 MiB).
sklearn ``Bagging*`` with ``n_jobs > 1`` fits in joblib worker processes that this does not
count. ranger: in the R process, first fit. Model bytes: pickle (Python),
``saveRDS(compress=FALSE)`` (ranger), ``booster_.model_to_string()`` (LightGBM). forestimp's
peak is compared with the issue's budget ``1.2 x bytes(X_train float32) + model bytes``,
taking its peak as ``bytes(X_train) + increase``.

Prints Markdown tables (raw rows, forestimp/peer ratios, 1 -> N thread scaling, memory);
``--json PATH`` dumps every raw row. ``--quick``: 5000 x 20, 10 trees, 1 repeat.
Not a test: run it by hand, e.g. ``python benches/peers.py --quick``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import warnings
from typing import Any

import _peerlib as L

MODELS = {"rf": "RF", "et": "ET", "patches": "Patches", "hist": "RF hist"}
# The peer's own model compared with each forestimp model (absent: no equivalent).
PEER_MODEL = {
    "sklearn": {"rf": "rf", "et": "et", "patches": "patches", "hist": "rf"},
    "ranger": {"rf": "rf", "et": "et", "hist": "rf"},
    "lightgbm": {"rf": "rf", "hist": "rf"},
}
OPS = ("fit", "predict", "oob", "permutation")
TASKS = ("classification", "regression")
SPEC_FIELDS = ("task", "n", "p", "n_estimators", "threads", "library", "model")


def _list(text: str, cast=str) -> list:
    return [cast(v) for v in text.split(",") if v.strip()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--task", default="classification,regression", help="comma list")
    ap.add_argument("--n", default="10000,100000,1000000", help="comma list of n_samples")
    ap.add_argument("--p", default="10,100,1000", help="comma list of n_features")
    ap.add_argument("--models", default="rf,et,patches,hist", help="comma list")
    ap.add_argument("--ops", default=",".join(OPS), help="comma list of " + ", ".join(OPS))
    ap.add_argument("--threads", default="1,2", help="comma list of thread counts")
    ap.add_argument("--n-estimators", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=3, help="timings are medians of these")
    ap.add_argument("--peers", default="lightgbm,ranger", help="optional peers (sklearn runs)")
    ap.add_argument("--no-sklearn", action="store_true", help="leave scikit-learn out")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-RSS child fits")
    ap.add_argument("--json", metavar="PATH", help="dump all raw rows as JSON")
    ap.add_argument("--quick", action="store_true", help="smoke run: n=5000, p=20, 10 trees, 1 rep")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.p, args.n_estimators, args.repeats = "5000", "20", 10, 1
    args.task, args.models, args.ops = _list(args.task), _list(args.models), _list(args.ops)
    args.n, args.p, args.threads = _list(args.n, int), _list(args.p, int), _list(args.threads, int)
    for name, allowed in (("task", TASKS), ("models", MODELS), ("ops", OPS)):
        bad = set(getattr(args, name)) - set(allowed)
        if bad:
            ap.error(f"--{name}: unknown {', '.join(sorted(bad))}")
    return args


def available_peers(args: argparse.Namespace) -> list[str]:
    peers = [] if args.no_sklearn else ["sklearn"]
    for peer in _list(args.peers):
        why = {"lightgbm": L.lightgbm_available, "ranger": L.ranger_available}.get(peer)
        reason = why() if why else f"unknown peer {peer!r}: skipped"
        if reason:
            print(f"[peer] {reason}", file=sys.stderr)
        elif peer not in peers:
            peers.append(peer)
    return peers


# --------------------------------------------------------------------------- running
def run_workload(task, n, p, args, peers, rows: dict) -> None:
    """Every model, library and thread count on one dataset; rows keyed by
    ``(library, model, task, n, p, threads)``."""
    data = L.make_data(task, n, p)
    rdata = L.RangerData(data) if "ranger" in peers else None
    top = max(args.threads)
    try:
        for threads in args.threads:
            for model in args.models:
                jobs = [("forestimp", model)]
                jobs += [(lib, PEER_MODEL[lib][model]) for lib in peers if model in PEER_MODEL[lib]]
                for lib, own in jobs:
                    key = (lib, own, task, n, p, threads)
                    if key in rows:
                        continue  # a peer shared by rf and hist
                    spec = dict(
                        task=task,
                        n=n,
                        p=p,
                        n_estimators=args.n_estimators,
                        threads=threads,
                        library=lib,
                        model=own,
                    )
                    print(
                        f"[run] {task} n={n} p={p} threads={threads} {lib} {own}",
                        file=sys.stderr,
                        flush=True,
                    )
                    t0 = time.perf_counter()
                    row = measure(spec, data, rdata, args, threads == top)
                    print(
                        f"[run] ... {lib} {own}: {time.perf_counter() - t0:.1f} s", file=sys.stderr
                    )
                    if row is not None:
                        rows[key] = row
    finally:
        if rdata is not None:
            rdata.close()
    if not args.no_memory:  # Python libraries, largest thread count, one child per workload
        keys = [k for k in rows if k[2:] == (task, n, p, top) and k[0] != "ranger"]
        specs = [{f: rows[k][f] for f in SPEC_FIELDS} for k in keys]
        print(f"[memory] {task} n={n} p={p}: {len(specs)} fits", file=sys.stderr, flush=True)
        peaks = L.measure_peaks(specs) if specs else {}
        for k in keys:
            rows[k]["peak_fit_mib"] = peaks.get(k[:2], L.NAN)


def measure(spec, data, rdata, args, with_memory: bool) -> dict[str, Any] | None:
    if spec["library"] == "ranger":
        row = L.measure_ranger(spec, rdata, args.ops, args.repeats)
        if row is not None and not with_memory:
            row["peak_fit_mib"] = L.NAN  # reported at the largest thread count only
        return row
    try:
        row = L.measure_python(spec, data, args.ops, args.repeats)
    except (L.Unavailable, TypeError, ValueError) as exc:
        if spec["model"] == "hist":
            print("[skip] hist splitter not available: skipped", file=sys.stderr)
        else:
            print(f"[skip] {spec['library']} {spec['model']}: {exc}", file=sys.stderr)
        return None
    row["peak_fit_mib"] = L.NAN  # filled by run_workload at the largest thread count
    row["x_train_bytes"] = data[0].nbytes
    return row


# --------------------------------------------------------------------------- report
def _f(v: Any, spec: str = ".3f") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return format(v, spec)


def _perm(row: dict) -> float:
    """A peer's permutation-importance time: out-of-bag (ranger) or held-out (sklearn)."""
    v = row.get("perm_oob_s", L.NAN)
    return row.get("perm_s", L.NAN) if v is None or math.isnan(v) else v


def _op_time(row: dict, op: str) -> float:
    return {
        "fit": row.get("fit_s"),
        "predict": row.get("predict_s"),
        "oob": row.get("oob_s"),
        "perm OOB": row.get("perm_oob_s"),
        "perm held-out": row.get("perm_s"),
    }.get(op, L.NAN)


def table_rows(rows: dict) -> list[str]:
    out = [
        "| task | n | p | thr | model | library | fit s | predict s | OOB +s | perm OOB s "
        "| perm held-out s | score | OOB score | peak fit +MiB | model MiB |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows.values():
        out.append(
            f"| {r['task'][:5]} | {r['n']} | {r['p']} | {r['threads']} | {MODELS[r['model']]} "
            f"| {r['library']} | {_f(r['fit_s'])} | {_f(r['predict_s'])} "
            f"| {_f(r.get('oob_s'))} | {_f(r.get('perm_oob_s'))} | {_f(r.get('perm_s'))} "
            f"| {_f(r['score'], '.4f')} | {_f(r.get('oob_score'), '.4f')} "
            f"| {_f(r.get('peak_fit_mib'), '.1f')} | {_f(r['model_bytes'] / 2**20, '.2f')} |"
        )
    return out


def table_ratios(rows: dict, peers: list[str]) -> list[str]:
    out = [
        "Ratios forestimp / peer (< 1: forestimp faster); (score) = held-out accuracy or R^2 "
        "(OOB score for the oob row) of that library.",
        "",
        "| task | n | p | thr | model | op | forestimp s (score) | "
        + " | ".join(f"/ {p}" for p in peers)
        + " | / fastest peer | score - fastest |",
        "|---|---:|---:|---:|---|---|---:|" + "---:|" * (len(peers) + 2),
    ]
    for (lib, model, task, n, p, thr), ours in rows.items():
        if lib != "forestimp":
            continue
        theirs = {q: rows.get((q, PEER_MODEL[q].get(model), task, n, p, thr)) for q in peers}
        for op in ("fit", "predict", "oob", "perm OOB", "perm held-out"):
            t = _op_time(ours, op)
            if t is None or math.isnan(t):
                continue
            if t <= 0:  # an extra cost below the timing noise: no meaningful ratio
                t = L.NAN
            sk = "oob_score" if op == "oob" else "score"
            cells, best = [], None
            for q in peers:
                r = theirs[q]
                tq = (_perm(r) if op.startswith("perm") else _op_time(r, op)) if r else None
                if tq is None or math.isnan(tq) or tq <= 0:
                    cells.append("n/a")
                    continue
                cells.append(f"{_f(t / tq, '.2f')} ({_f(r.get(sk), '.4f')})")
                if best is None or tq < best[1]:
                    best = (q, tq, r.get(sk, L.NAN))
            fastest = f"{_f(t / best[1], '.2f')} vs {best[0]}" if best else "n/a"
            diff = ours.get(sk, L.NAN) - best[2] if best and best[2] is not None else L.NAN
            out.append(
                f"| {task[:5]} | {n} | {p} | {thr} | {MODELS[model]} | {op} "
                f"| {_f(t)} ({_f(ours.get(sk), '.4f')}) | "
                + " | ".join(cells)
                + f" | {fastest} | {_f(diff, '+.4f')} |"
            )
    return out


def table_scaling(rows: dict, threads: list[int]) -> list[str]:
    lo, hi = min(threads), max(threads)
    out = [
        f"| task | n | p | model | library | fit s, {lo} thr | fit s, {hi} thr | speedup |",
        "|---|---:|---:|---|---|---:|---:|---:|",
    ]
    for (lib, model, task, n, p, thr), r in rows.items():
        other = rows.get((lib, model, task, n, p, hi))
        if thr != lo or other is None:
            continue
        out.append(
            f"| {task[:5]} | {n} | {p} | {MODELS[model]} | {lib} | {_f(r['fit_s'])} "
            f"| {_f(other['fit_s'])} | {_f(r['fit_s'] / other['fit_s'], '.2f')} |"
        )
    return out


def table_memory(rows: dict, top: int) -> list[str]:
    out = [
        f"forestimp at {top} threads: peak = bytes(X_train f32) + measured increase; budget = "
        "1.2 x bytes(X_train) + model bytes (issue #4); model / sklearn pickle target <= 0.3.",
        "",
        "| task | n | p | model | X_train MiB | increase MiB | peak MiB | budget MiB "
        "| within | model / sklearn |",
        "|---|---:|---:|---|---:|---:|---:|---:|---|---:|",
    ]
    for (lib, model, task, n, p, thr), r in rows.items():
        if lib != "forestimp" or thr != top:
            continue
        x, model_mib = r["x_train_bytes"] / 2**20, r["model_bytes"] / 2**20
        peak, budget = x + r["peak_fit_mib"], 1.2 * x + model_mib
        sk = rows.get(("sklearn", PEER_MODEL["sklearn"][model], task, n, p, thr))
        rel = r["model_bytes"] / sk["model_bytes"] if sk else L.NAN
        within = "n/a" if math.isnan(peak) else ("yes" if peak <= budget else "no")
        out.append(
            f"| {task[:5]} | {n} | {p} | {MODELS[model]} | {x:.1f} "
            f"| {_f(r['peak_fit_mib'], '.1f')} | {_f(peak, '.1f')} | {budget:.1f} | {within} "
            f"| {_f(rel, '.2f')} |"
        )
    return out


def report(rows: dict, args: argparse.Namespace, peers: list[str]) -> str:
    lines = [
        f"X float32 C-order, 80/20 split; n_estimators={args.n_estimators}, "
        f"repeats={args.repeats} (median); peers: {', '.join(peers) or 'none'}; "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "",
        *table_rows(rows),
        "",
        *table_ratios(rows, peers),
    ]
    if len(args.threads) > 1:
        lo, hi = min(args.threads), max(args.threads)
        lines += ["", f"Fit speedup {lo} -> {hi} threads (target >= 1.8 at 1 -> 2):", ""]
        lines += table_scaling(rows, args.threads)
    if not args.no_memory:
        lines += ["", *table_memory(rows, max(args.threads))]
    return "\n".join(lines)


def _clean(v: Any) -> Any:
    return None if isinstance(v, float) and math.isnan(v) else v


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # few trees (--quick) leave some rows without an out-of-bag vote: expected, not news
    warnings.filterwarnings("ignore", message="Some inputs do not have OOB scores")
    peers = available_peers(args)
    rows: dict = {}
    for task in args.task:
        for n in args.n:
            for p in args.p:
                run_workload(task, n, p, args, peers, rows)
    print(report(rows, args, peers))
    if args.json:
        meta = {k: v for k, v in vars(args).items() if k != "json"}
        meta.update(machine=platform.machine(), cpus=os.cpu_count(), peers=peers)
        dump = [{k: _clean(v) for k, v in r.items()} for r in rows.values()]
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": dump}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fit time of forestimp against N on a log-log plot, with Louppe's complexity curves.

Louppe (2014), Table 5.1, average case for M fully grown trees over K candidate features:
Random Forest Θ(M K Ñ log² Ñ) with Ñ = 0.632 N (bootstrap), Extra-Trees Θ(M K N log N)
(whole learning set, no sort: a node costs Θ(K n) instead of Θ(K n log n)). The histogram
splitter also costs Θ(K n) per node once the features are binned, so its reference is
N log N too (our expectation, not Louppe's).

Data: ``make_classification(N, p, n_informative=min(10, p), n_redundant=min(5, p -
n_informative), random_state=0)`` as float32 C-order, for N = 1000 · 2^k up to ``--n-max``.
Each fit is timed ``--repeats`` times (median). A reference ``c · f(N)`` is drawn through
the measured points (``c`` = geometric mean of ``time / f(N)``, a least-squares fit in log
space), and the script prints the fitted log-log slope of the times next to the slope of
``f`` over the same N (``N log² N`` has local slope ``1 + 2 / ln N``, above 1), and the
normalised ratios ``time / f(N)``, which stay flat when the complexity matches.

Run by hand, e.g. ``python benches/complexity.py --n-max 32000`` (seconds) or the default
(up to 256000, about a minute on one core). Writes ``--out`` (PNG).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

import _peerlib as L
import numpy as np

MODELS = {"rf": "Random Forest", "et": "Extra-Trees", "hist": "RF, hist splitter"}


def reference(model: str, n: np.ndarray) -> tuple[np.ndarray, str]:
    """``f(N)`` of Table 5.1 for ``model`` and its label."""
    if model == "rf":
        nt = 0.632 * n
        return nt * np.log(nt) ** 2, "Ñ log² Ñ, Ñ = 0.632 N"
    return n * np.log(n), "N log N"


def slope(n: np.ndarray, t: np.ndarray) -> float:
    """Least-squares slope of log t against log N."""
    return float(np.polyfit(np.log(n), np.log(t), 1)[0])


def measure(args: argparse.Namespace) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {}
    for n_total in args.sizes:
        # N is the training size: make_data keeps 80 %, so ask for N / 0.8 rows.
        X, _, y, _ = L.make_data("classification", int(round(n_total / 0.8)), args.p)
        X, y = X[:n_total], y[:n_total]
        for model in args.models:
            spec = dict(
                task="classification",
                n=n_total,
                p=args.p,
                library="forestimp",
                model=model,
                n_estimators=args.n_estimators,
                threads=args.threads,
            )
            try:
                est = L.make_model(spec)
                est.fit(X[:500], y[:500])  # warm-up: thread pool, code pages, lazy imports
                t, _ = L.timed(lambda est=est, X=X, y=y: est.fit(X, y), args.repeats)
            except (L.Unavailable, TypeError, ValueError) as exc:
                print(f"[skip] {model}: {exc}", file=sys.stderr)
                args.models = [m for m in args.models if m != model]
                continue
            times.setdefault(model, []).append(t)
            print(f"[fit] {model} N={n_total}: {t:.4f} s", file=sys.stderr, flush=True)
    return times


def report(args: argparse.Namespace, times: dict[str, list[float]]) -> None:
    n = np.asarray(args.sizes, dtype=float)
    print(
        f"p={args.p}, {args.n_estimators} trees, {args.threads} thread(s), median of "
        f"{args.repeats}; N = training rows\n"
    )
    print(
        "Slopes of log time vs log N over all N and over the upper half of the N (where the "
        "fixed per-fit cost no longer dominates), next to the slope of f over the same N.\n"
    )
    print(
        "| model | reference f(N) | slope of time | slope of f | slope of time, upper half "
        "| slope of f, upper half | time / f(N), first = 1 |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for model, t in times.items():
        t = np.asarray(t)
        nn = n[: len(t)]
        f, label = reference(model, nn)
        ratio = (t / f) / (t[0] / f[0])
        h = len(t) // 2
        print(
            f"| {MODELS[model]} | {label} | {slope(nn, t):.3f} | {slope(nn, f):.3f} "
            f"| {slope(nn[h:], t[h:]):.3f} | {slope(nn[h:], f[h:]):.3f} "
            f"| {' '.join(f'{r:.2f}' for r in ratio)} |"
        )
    print("\n| N | " + " | ".join(f"{m} s" for m in times) + " |")
    print("|---:|" + "---:|" * len(times))
    for i, size in enumerate(args.sizes):
        cells = [f"{t[i]:.4f}" if i < len(t) else "n/a" for t in times.values()]
        print(f"| {size} | " + " | ".join(cells) + " |")


def plot(args: argparse.Namespace, times: dict[str, list[float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = np.asarray(args.sizes, dtype=float)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    for i, (model, t) in enumerate(times.items()):
        color = f"C{i}"
        t = np.asarray(t)
        nn = n[: len(t)]
        f, label = reference(model, nn)
        c = math.exp(float(np.mean(np.log(t / f))))
        ax.loglog(nn, t, "o", color=color, label=f"{MODELS[model]} (slope {slope(nn, t):.2f})")
        ax.loglog(nn, c * f, "--", color=color, label=f"c · {label}")
    ax.set_xlabel("N (training rows)")
    ax.set_ylabel("fit time (s)")
    ax.set_title(
        f"forestimp fit time, p={args.p}, {args.n_estimators} trees, {args.threads} thread(s)"
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"\nplot: {args.out}", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-max", type=int, default=256_000, help="largest N (N = 1000 * 2^k)")
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--n-estimators", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--models", default="rf,et,hist", help="comma list of rf, et, hist")
    ap.add_argument("--out", default=os.path.join("benches", "complexity.png"))
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    bad = set(args.models) - set(MODELS)
    if bad:
        ap.error(f"unknown model(s): {', '.join(sorted(bad))}")
    args.sizes = [1000 * 2**k for k in range(64) if 1000 * 2**k <= args.n_max]
    if len(args.sizes) < 2:
        ap.error("--n-max must be at least 2000 (two sizes)")
    times = measure(args)
    report(args, times)
    plot(args, times)
    return 0


if __name__ == "__main__":
    sys.exit(main())

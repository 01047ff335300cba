"""forestimp.dask against one machine and scikit-learn under joblib's Dask backend (issue #24).

Fits the same forest (``RandomForestClassifier``, ``--trees`` trees, K = sqrt(p)) on
``make_classification(--rows, --cols, n_informative=10, random_state=0)`` float32:

* forestimp on one machine, ``n_jobs`` = 1 and = ``--workers`` max;
* ``forestimp.dask.fit`` on a ``LocalCluster`` of 1, 2, ... ``--workers`` worker processes
  with one thread each (the data scattered to every worker; the cluster started before the
  clock);
* scikit-learn's ``RandomForestClassifier(n_jobs=-1)`` under ``joblib.parallel_backend("dask")``
  on the same clusters.

``--patches``: instead, held-out accuracy of ``forestimp.dask.fit_patches`` (Random Patches
grown block by block) against one machine's forest on the same training rows (80 %), for
2/4/8 row blocks and 100 %/50 % of the columns per patch, ET and RF, on 2 workers.

``--memory``: peak RSS of the workers against the patch size. ``fit_patches`` of 8 trees
(``max_depth=12``) from a ``.npy`` file of ``--rows`` x ``--cols`` float32 (Gaussian columns,
``y = x0 + x1 x2 > 0``) written to a temporary folder, 1/2/4/8 row blocks, all columns,
2 workers, each layout on a fresh cluster; the workers' peak RSS is read before and after
the fit (``VmHWM``; the "before" includes the imports).

Prints, per worker count: the best of ``--repeats`` wall times, the parallel efficiency
``t(1 worker) / (k · t(k workers))``, forestimp's time over scikit-learn's (< 1: faster), and
checks that every distributed model has the bytes of the one-machine model.

    python benches/bench_dask.py                   # 20 000 x 40, 200 trees, 1-2 workers
    python benches/bench_dask.py --workers 8       # on a machine with 8 cores or more
    python benches/bench_dask.py --patches         # accuracy of fit_patches
    python benches/bench_dask.py --memory --rows 1000000   # worker RSS against patch size
"""

from __future__ import annotations

import argparse
import time

import joblib
import numpy as np
from distributed import Client, LocalCluster
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier as SkRF

import forestimp as fi
from forestimp import dask as fdask


def best(repeats: int, work) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--cols", type=int, default=40)
    ap.add_argument("--trees", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--patches", action="store_true")
    ap.add_argument("--memory", action="store_true")
    args = ap.parse_args()
    if args.memory:
        memory(args.rows, args.cols)
        return
    X, y = make_classification(args.rows, args.cols, n_informative=10, random_state=0)
    X = X.astype(np.float32)
    if args.patches:
        patches(X, y, args.trees)
        return

    def ours(n_jobs=None):
        return fi.RandomForestClassifier(n_estimators=args.trees, random_state=0, n_jobs=n_jobs)

    print(f"make_classification({args.rows}, {args.cols}), {args.trees} trees, best of "
          f"{args.repeats}")  # fmt: skip
    reference = ours(1).fit(X, y).forest_.to_bytes()
    for jobs in sorted({1, args.workers}):
        t, _ = best(args.repeats, lambda j=jobs: ours(j).fit(X, y))
        print(f"one machine, n_jobs={jobs}: {t:.2f} s")
    print("\n| workers | forestimp.dask s | efficiency | sklearn + joblib-dask s | ratio | same |")
    print("|---:|---:|---:|---:|---:|---|")
    base = None
    for k in range(1, args.workers + 1):
        with (
            LocalCluster(
                n_workers=k, threads_per_worker=1, dashboard_address=None, silence_logs=40
            ) as cluster,
            Client(cluster) as client,
        ):
            t_ours, est = best(args.repeats, lambda c=client: fdask.fit(ours(), X, y, client=c))
            with joblib.parallel_backend("dask"):
                sk = SkRF(n_estimators=args.trees, random_state=0, n_jobs=-1)
                t_sk, _ = best(args.repeats, lambda s=sk: s.fit(X, y))
        base = base or t_ours
        same = est.forest_.to_bytes() == reference
        print(f"| {k} | {t_ours:.2f} | {base / (k * t_ours):.2f} | {t_sk:.2f} | "
              f"{t_ours / t_sk:.2f} | {same} |")  # fmt: skip


def _peak_rss_mb() -> float:
    """This process's peak RSS (``VmHWM``: unlike ``ru_maxrss``, not inherited from the
    process that started it)."""
    with open("/proc/self/status") as status:
        line = next(s for s in status if s.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def memory(rows: int, cols: int) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        # Written by blocks straight to disk, so that this process never holds the data and
        # the workers (forked from it) do not start with its peak RSS.
        rng = np.random.default_rng(0)
        X = np.lib.format.open_memmap(Path(tmp) / "X.npy", "w+", np.float32, (rows, cols))
        y = np.lib.format.open_memmap(Path(tmp) / "y.npy", "w+", np.int64, (rows,))
        for a in range(0, rows, 100_000):
            block = rng.standard_normal((min(100_000, rows - a), cols), dtype=np.float32)
            X[a : a + len(block)] = block
            y[a : a + len(block)] = block[:, 0] + block[:, 1] * block[:, 2] > 0
        X.flush(), y.flush()
        nbytes = rows * cols * 4
        del X, y
        print(f"data {nbytes / 1e6:.0f} MB, 2 workers")

        print("| row blocks | patch MB | worker peak RSS before, MB | after, MB | fit s |")
        print("|---:|---:|---:|---:|---:|")
        for blocks in (1, 2, 4, 8):
            with (
                LocalCluster(
                    n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=40
                ) as cluster,
                Client(cluster) as client,
            ):
                before = max(client.run(_peak_rss_mb).values())
                est = fi.RandomForestClassifier(n_estimators=8, max_depth=12, random_state=0)
                start = time.perf_counter()
                fdask.fit_patches(
                    est, str(Path(tmp) / "X.npy"), Path(tmp) / "y.npy", n_row_blocks=blocks,
                    client=client,
                )  # fmt: skip
                elapsed = time.perf_counter() - start
                after = max(client.run(_peak_rss_mb).values())
                print(f"| {blocks} | {nbytes / blocks / 1e6:.0f} | {before:.0f} | {after:.0f} "
                      f"| {elapsed:.1f} |")  # fmt: skip


def patches(X: np.ndarray, y: np.ndarray, trees: int) -> None:
    cut = int(0.8 * len(y))
    layouts = [(2, 1.0), (4, 1.0), (8, 1.0), (4, 0.5), (8, 0.5)]
    print(
        "| model | one machine | "
        + " | ".join(f"{b} blocks, {f:.0%} cols" for b, f in layouts)
        + " |"
    )
    print("|---|---:|" + "---:|" * len(layouts))
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=40
        ) as cluster,
        Client(cluster) as client,
    ):
        for name, kind in (("ET", fi.ExtraTreesClassifier), ("RF", fi.RandomForestClassifier)):
            make = lambda k=kind: k(n_estimators=trees, random_state=0)  # noqa: E731
            row = [make().fit(X[:cut], y[:cut]).score(X[cut:], y[cut:])]
            for blocks, share in layouts:
                est = fdask.fit_patches(
                    make(), X[:cut], y[:cut], n_row_blocks=blocks, max_features=share,
                    client=client,
                )  # fmt: skip
                row.append(est.score(X[cut:], y[cut:]))
            print(f"| {name} | " + " | ".join(f"{a:.4f}" for a in row) + " |")


if __name__ == "__main__":
    main()

"""Batched Sequential Random Subspace on a Dask cluster against one process (issue #24, item 4).

Writes the planted ±1 matrix of ``bench_srs.py`` (10 pairs ``(a, b)``, ``b`` relevant only
next to its ``a``) as a Fortran ``.npy`` file of ``--n`` x ``--p`` float32, then runs
``SequentialRandomSubspace(q=--q, batch_size=--batch, n_iterations=--iterations)``:

* in this process (the fits of a round one after the other, ``n_jobs=1``);
* with ``forestimp.dask.srs`` on a ``LocalCluster`` of 1, 2, ... ``--workers`` worker
  processes with one thread each (started before the clock), every worker reading its
  subspaces' columns from the file.

Prints the wall times, the parallel efficiency ``t(1 worker) / (k · t(k workers))``, and
checks that every run selected the same columns with the same importances.

    python benches/bench_dask_srs.py                        # 5 000 x 2 000, q = 100, B = 4
    python benches/bench_dask_srs.py --workers 8 --batch 8  # on a machine with 8 cores or more
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
from bench_srs import write_planted
from distributed import Client, LocalCluster

from forestimp import dask as fdask
from forestimp.selection import SequentialRandomSubspace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5_000)
    ap.add_argument("--p", type=int, default=2_000)
    ap.add_argument("--q", type=int, default=100)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--iterations", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    path = os.path.join(args.dir, f"dask_srs_{args.n}x{args.p}.npy")
    truth = write_planted(path, args.n, args.p)
    y = np.load(path + ".y.npy")
    srs = SequentialRandomSubspace(
        q=args.q, n_iterations=args.iterations, batch_size=args.batch, random_state=0, n_jobs=1
    )
    start = time.perf_counter()
    ref = srs.fit(path, y, true_support=truth)
    t_local = time.perf_counter() - start
    print(f"{args.n} x {args.p}, q = {args.q}, B = {args.batch}, {args.iterations} fits")
    print(f"one process:  {t_local:7.2f} s   F1 = {ref.history_[-1].f1:.3f}")
    times = {}
    for k in range(1, args.workers + 1):
        with (
            LocalCluster(
                n_workers=k, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            start = time.perf_counter()
            got = fdask.srs(srs, path, y, true_support=truth, client=client)
            times[k] = time.perf_counter() - start
        same = np.array_equal(got.support_, ref.support_) and np.array_equal(
            got.importances_, ref.importances_
        )
        eff = times[1] / (k * times[k])
        print(f"{k} worker(s):  {times[k]:7.2f} s   efficiency {eff:.2f}   same selection: {same}")
    os.remove(path)
    os.remove(path + ".y.npy")


if __name__ == "__main__":
    main()

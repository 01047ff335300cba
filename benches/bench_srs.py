"""Sequential Random Subspace out of core (issue #21): a matrix on disk much wider than what is
read at once, and SRS against plain Random Subspace on a chaining structure.

Out of core (default): a 10 000 x 100 000 float32 ``.npy`` file in Fortran order (4 GB,
written in column blocks, never held in memory) with a planted structure: 10 pairs ``(a, b)``
of ±1 columns, ``y = 1[sum_i a_i (1 + b_i) + 0.5 noise > 0]``. Each ``a`` is marginally
relevant; each ``b`` is relevant only next to its ``a`` (independent of y alone), the
chaining case of the thesis with degree 1. The other columns are ±1 noise. The file's pages
are dropped from the page cache before the run (``posix_fadvise``), so the reads go to the
disk. SRS (q = 500, alpha = 0.5, default model and probes) runs in a fresh child process,
which reports its whole-process peak RSS (``VmHWM``), the wall time, the iterations, the
iteration at which every planted column was found, the bytes read, precision and recall.
``--c-order`` also writes the matrix in C order and times one read of 500 columns from it
(each read scans the whole file).

Comparison (``--compare``): in memory, 10 000 x 400 bits, q = 50, a chain of three columns
where ``x0`` is marginally relevant, ``x1`` only given ``x0``, ``x2`` only given both
(``P(y = 1 | x0 x1 x2) = 1, .75, .5, .75, 0, .25, .5, .25`` for ``000 .. 111``). The count of
forests (iterations) to reach F1 = 1, for SRS (alpha = 0.5) and Random Subspace (alpha = 0),
next to the thesis's expectations (Thms 7.7 and 7.8, K = 1 idealised trees): RS
``prod_{i<3} (p - i) / (q - i)``, SRS ``sum_{i<3} (p - i) / (q - i) - 2``.

    python benches/bench_srs.py                   # 4 GB file in /tmp, q = 500
    python benches/bench_srs.py --quick           # 10 000 x 5 000 (200 MB) and --compare
    python benches/bench_srs.py --c-order         # + one C-order read of the same shape
    python benches/bench_srs.py --compare --seeds 5
    python benches/bench_srs.py --p 20000 --iterations 30 --order C --no-prefetch  # overlap
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

N_PAIRS = 10
CHAIN = np.array([1.0, 0.75, 0.5, 0.75, 0.0, 0.25, 0.5, 0.25])


def vm_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return math.nan


def drop_from_page_cache(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def write_planted(path: str, n: int, p: int, *, fortran: bool = True, seed: int = 0) -> np.ndarray:
    """Write the planted ±1 matrix to ``path`` and ``y`` next to it; return the planted
    columns (a_0..a_9, b_0..b_9). Holds one slab of about 20 MB at a time: column blocks in
    Fortran order, row blocks in C order."""
    rng = np.random.default_rng(seed)
    planted = rng.choice(p, 2 * N_PAIRS, replace=False)
    values = np.empty((n, 2 * N_PAIRS), dtype=np.float32)
    step = max(1, (20 << 20) // (4 * (n if fortran else p)))
    with open(path, "wb") as fh:
        header = {"descr": "<f4", "fortran_order": fortran, "shape": (n, p)}
        np.lib.format.write_array_header_1_0(fh, header)
        for s0 in range(0, p if fortran else n, step):
            s1 = min(p if fortran else n, s0 + step)
            # Fortran: rows of the slab are columns s0..s1; C: rows s0..s1 of X.
            shape = (s1 - s0, n) if fortran else (s1 - s0, p)
            slab = rng.integers(0, 2, size=shape, dtype=np.int8).astype(np.float32)
            slab *= 2
            slab -= 1
            if fortran:
                inside = (planted >= s0) & (planted < s1)
                values[:, inside] = slab[planted[inside] - s0].T
            else:
                values[s0:s1] = slab[:, planted]
            fh.write(slab.tobytes())
    a, b = values[:, :N_PAIRS], values[:, N_PAIRS:]
    s = (a * (1 + b)).sum(axis=1) + 0.5 * rng.standard_normal(n)
    np.save(path + ".y.npy", (s > 0).astype(np.int8))
    return planted


def child(args: argparse.Namespace) -> None:
    """One SRS run in this fresh process; prints a JSON line."""
    from forestimp.selection import SequentialRandomSubspace

    rss_start = vm_mib("VmHWM")
    truth = np.array(json.loads(args.truth))
    y = np.load(args.path + ".y.npy")
    all_found_at: list[int] = []

    def callback(step):
        if not all_found_at and np.isin(truth, step.kept).all():
            all_found_at.append(step.step + 1)
        return args.stop_when_found and bool(all_found_at)

    srs = SequentialRandomSubspace(
        q=args.q, alpha=args.alpha, n_iterations=args.iterations, random_state=0,
        n_jobs=args.n_jobs, callback=callback, prefetch=not args.no_prefetch,
    )  # fmt: skip
    t0 = time.perf_counter()
    srs.fit(args.path, y, true_support=truth)
    wall = time.perf_counter() - t0
    found = np.flatnonzero(srs.support_)
    hits = int(np.isin(found, truth).sum())
    print(
        json.dumps(
            dict(
                wall_s=wall,
                iterations=srs.n_iterations_,
                all_found_at=all_found_at[0] if all_found_at else None,
                n_found=len(found),
                precision=hits / max(1, len(found)),
                recall=hits / len(truth),
                bytes_read=srs.bytes_read_,
                peak_rss_mib=vm_mib("VmHWM"),
                rss_after_import_mib=rss_start,
            )
        )
    )


def out_of_core(args: argparse.Namespace) -> None:
    n, p = args.n, args.p
    size = n * p * 4
    free = shutil.disk_usage(args.dir).free
    if free < 1.25 * size * (2 if args.c_order else 1):
        p = max(args.q, int(free / 1.25 / (2 if args.c_order else 1) / (4 * n)))
        print(f"only {free / 1e9:.1f} GB free in {args.dir}: scaled down to p = {p}")
        size = n * p * 4
    path = os.path.join(args.dir, f"srs_bench_{n}x{p}.npy")
    try:
        t0 = time.perf_counter()
        truth = write_planted(path, n, p, fortran=args.order == "F")
        print(f"wrote {path}: {n} x {p} float32, {args.order} order, {size / 1e9:.2f} GB, "
              f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
        drop_from_page_cache(path)
        cmd = [
            sys.executable, __file__, "--child", "--path", path, "--q", str(args.q),
            "--alpha", str(args.alpha), "--iterations", str(args.iterations),
            "--n-jobs", str(args.n_jobs), "--truth", json.dumps(truth.tolist()),
        ]  # fmt: skip
        cmd += ["--stop-when-found"] if args.stop_when_found else []
        cmd += ["--no-prefetch"] if args.no_prefetch else []
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        per_it = r["bytes_read"] / r["iterations"]
        print(f"\n### SRS out of core: {n} x {p} float32 ({args.order} order), q = {args.q}, "
              f"alpha = {args.alpha}, 20 planted columns, "
              f"prefetch {not args.no_prefetch}\n")  # fmt: skip
        block_mb = args.q * n * 4 / 1e6
        print("| wall | iterations | all planted found at | found | precision | recall | "
              f"bytes read | per iteration (q n 4 = {block_mb:.0f} MB) | peak RSS | "
              "RSS after import |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|")
        print(f"| {r['wall_s']:.0f} s ({r['wall_s'] / r['iterations']:.2f} s/it) | "
              f"{r['iterations']} | {r['all_found_at']} | {r['n_found']} | "
              f"{r['precision']:.2f} | {r['recall']:.2f} | {r['bytes_read'] / 1e9:.1f} GB | "
              f"{per_it / 1e6:.1f} MB | {r['peak_rss_mib']:.0f} MiB | "
              f"{r['rss_after_import_mib']:.0f} MiB |")  # fmt: skip
        if args.c_order:
            c_order_read(args, n, p, path)
    finally:
        for f in (path, path + ".y.npy"):
            if os.path.exists(f):
                os.remove(f)


def c_order_read(args: argparse.Namespace, n: int, p: int, f_path: str) -> None:
    from forestimp.selection._columns import open_source

    c_path = f_path.replace(".npy", ".C.npy")
    try:
        write_planted(c_path, n, p, fortran=False, seed=1)
        cols = np.sort(np.random.default_rng(2).choice(p, args.q, replace=False))
        print("\n| layout | one read of q columns | bytes read | (dropped from the page cache) |")
        print("|---|---|---|---|")
        for name, path in (("Fortran", f_path), ("C", c_path)):
            drop_from_page_cache(path)
            source, _ = open_source(path)
            with source:
                t0 = time.perf_counter()
                source.read(cols)
                dt = time.perf_counter() - t0
            print(f"| {name} | {dt:.2f} s | {source.bytes_read / 1e9:.3f} GB | |")
    finally:
        for f in (c_path, c_path + ".y.npy"):
            if os.path.exists(f):
                os.remove(f)


def chain_data(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p)).astype(np.float32)
    chain = rng.choice(p, 3, replace=False)
    cell = (X[:, chain] @ np.array([4, 2, 1])).astype(int)
    y = (rng.random(n) < CHAIN[cell]).astype(int)
    return np.asfortranarray(X), y, chain


def compare(args: argparse.Namespace) -> None:
    from forestimp.selection import SequentialRandomSubspace

    n, p, q = 10_000, 400, 50
    expect_rs = math.prod((p - i) / (q - i) for i in range(3))
    expect_srs = sum((p - i) / (q - i) for i in range(3)) - 2
    print(f"\n### Forests to reach F1 = 1 on a 3-chain: {n} x {p} bits, q = {q}, "
          f"budget {args.budget} iterations\n")  # fmt: skip
    print("| seed | SRS (alpha = 0.5) | RS (alpha = 0) | RS / SRS |")
    print("|---|---|---|---|")
    counts: dict[float, list[float]] = {0.5: [], 0.0: []}
    for seed in range(args.seeds):
        X, y, chain = chain_data(n, p, seed)
        row = []
        for alpha in (0.5, 0.0):
            srs = SequentialRandomSubspace(
                q=q, alpha=alpha, n_iterations=args.budget, random_state=seed, n_jobs=args.n_jobs,
                callback=lambda s: s.f1 == 1.0,
            )  # fmt: skip
            srs.fit(X, y, true_support=chain)
            reached = srs.history_[-1].f1 == 1.0
            counts[alpha].append(srs.n_iterations_ if reached else math.inf)
            row.append(f"{srs.n_iterations_}" if reached else f"> {args.budget}")
        ratio = counts[0.0][-1] / counts[0.5][-1]
        print(f"| {seed} | {row[0]} | {row[1]} | {ratio:.0f} |")
    med = {a: float(np.median(c)) for a, c in counts.items()}
    print(f"| median | {med[0.5]:.0f} | {med[0.0]:.0f} | {med[0.0] / med[0.5]:.0f} |")
    print(f"| thesis (K = 1 model) | {expect_srs:.0f} | {expect_rs:.0f} | "
          f"{expect_rs / expect_srs:.0f} |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10 000 x 5 000 and --compare")
    ap.add_argument("--compare", action="store_true", help="only the SRS vs RS comparison")
    ap.add_argument("--c-order", action="store_true", help="also time one C-order read")
    ap.add_argument("--order", default="F", choices=["F", "C"], help="layout of the SRS file")
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--p", type=int, default=100_000)
    ap.add_argument("--q", type=int, default=500)
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--iterations", default="auto")
    ap.add_argument("--stop-when-found", action="store_true")
    ap.add_argument("--no-prefetch", action="store_true", help="read each block after the fit")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=3000)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    ap.add_argument("--truth", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.iterations != "auto":
        args.iterations = int(args.iterations)
    if args.child:
        child(args)
        return
    if args.quick:
        args.p = 5000
    if not args.compare:
        out_of_core(args)
    if args.compare or args.quick:
        compare(args)


if __name__ == "__main__":
    main()

"""Sparse X: fit time and whole-process peak RSS of an Extra-Trees forest on a CSC matrix
(issue #22: 20 000 x 50 000 at 0.1 % density, 4 GB dense in float32), forestimp or
scikit-learn, one library per process so that each peak RSS is its own.

X has 1 000 000 stored float32 values (uniform in (0, 1]) at uniformly random positions;
y = 1[x_0 + x_1 + x_2 + x_3 + x_4 > 0] with labels flipped for 10 % of the rows (so the
classes are learnable and trees grow deep). Both libraries fit the same CSC matrix.
Reported: fit time (wall and process CPU), peak RSS of the process (VmHWM: interpreter,
X, fit, prediction), RSS before the fit, nodes, training accuracy and the time to predict
every row (from the CSC matrix).

    /usr/bin/time -f "%M KiB %e s" python benches/bench_sparse.py --lib forestimp
    /usr/bin/time -f "%M KiB %e s" python benches/bench_sparse.py --lib sklearn
    python benches/bench_sparse.py --both        # both, each in its own process
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp


def status_mib(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def make_data(n: int, p: int, density: float) -> tuple[sp.csc_matrix, np.ndarray]:
    """The benchmark's matrix and labels (seed 0)."""
    rng = np.random.default_rng(0)
    nnz = int(round(n * p * density))
    flat = rng.choice(n * p, size=nnz, replace=False)
    rows, cols = np.divmod(flat, p)
    values = rng.uniform(1e-3, 1.0, size=nnz).astype(np.float32)
    X = sp.csc_matrix((values, (rows, cols)), shape=(n, p), dtype=np.float32)
    X.sum_duplicates()
    signal = np.asarray(X[:, :5].sum(axis=1)).ravel()
    y = (signal > 0).astype(np.int64)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    return X, y


def run_one(args: argparse.Namespace) -> None:
    X, y = make_data(args.n, args.p, args.density)
    common = dict(n_estimators=args.trees, n_jobs=args.n_jobs, random_state=0)
    if args.lib == "forestimp":
        import forestimp

        est = forestimp.ExtraTreesClassifier(**common)
    else:
        from sklearn.ensemble import ExtraTreesClassifier

        est = ExtraTreesClassifier(**common)
    before = status_mib("VmRSS")
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(X, y)
    fit_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    if args.lib == "forestimp":
        nodes = int(est.forest_.node_counts().sum())
    else:
        nodes = sum(t.tree_.node_count for t in est.estimators_)
    t0 = time.perf_counter()
    acc = float((est.predict(X) == y).mean())
    predict_s = time.perf_counter() - t0
    dense_mb = args.n * args.p * 4 / 2**20
    print(
        f"{args.lib:9s} n={args.n} p={args.p} nnz={X.nnz} trees={args.trees} "
        f"fit {fit_s:.1f} s (cpu {cpu_s:.1f} s)  peak RSS {status_mib('VmHWM'):.0f} MiB "
        f"(before fit {before:.0f} MiB; dense X would be {dense_mb:.0f} MiB)  "
        f"nodes {nodes}  train acc {acc:.3f}  predict (all rows) {predict_s:.2f} s",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--p", type=int, default=50_000)
    ap.add_argument("--density", type=float, default=0.001)
    ap.add_argument("--trees", type=int, default=10)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--lib", default="forestimp", choices=["forestimp", "sklearn"])
    ap.add_argument("--both", action="store_true", help="forestimp, then scikit-learn")
    args = ap.parse_args()
    if not args.both:
        run_one(args)
        return
    rest = [a for a in sys.argv[1:] if a != "--both"]
    for lib in ("forestimp", "sklearn"):
        cmd = ["/usr/bin/time", "-f", "  /usr/bin/time: %M KiB peak RSS, %e s wall, %U s user"]
        subprocess.run([*cmd, sys.executable, __file__, *rest, "--lib", lib], check=True)


if __name__ == "__main__":
    main()

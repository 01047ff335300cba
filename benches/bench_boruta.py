"""forestimp's Boruta against BorutaPy on the same data, in the same run.

Each run is a fresh subprocess, so its peak RSS (``VmHWM``) is its own; the table prints
wall time, peak RSS over the size of X, the confirmed set and the ratios. Problems:
``make_classification(n, p, n_informative=8, shuffle=False, random_state=0)`` (features
0-7 informative, 8-9 redundant combinations of them, the rest noise).

BorutaPy runs as its README shows it: ``RandomForestClassifier(max_depth=5, n_jobs=2)``,
``n_estimators="auto"``, MDI with the two-step FDR at 0.05. forestimp runs the same rule
(``rule="fdr", importance="mdi", alpha=0.05``) with a depth-5 forest, and R's rule
(``importance="permutation"``, Bonferroni at 0.01) with its default forest.

    python benches/bench_boruta.py                  # 2000 x 100 and 5000 x 200
    python benches/bench_boruta.py --sizes 20000x500
    python benches/bench_boruta.py --skip-borutapy --rebin   # X binned per iteration
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

RUNNER = r"""
import json, sys, time
import numpy as np
from sklearn.datasets import make_classification

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
n, p, who, trees = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
if sys.argv[5] == "rebin":  # bin each iteration's view again instead of X's codes made once
    import forestimp.selection._boruta
    forestimp.selection._boruta.histogram_bins = lambda est, X: None
X, y = make_classification(n, p, n_informative=8, shuffle=False, random_state=0)
import forestimp, sklearn.ensemble  # imported before the baseline RSS is read
base = hwm()
t = time.perf_counter()
if who == "borutapy":
    from boruta import BorutaPy
    sel = BorutaPy(sklearn.ensemble.RandomForestClassifier(max_depth=5, n_jobs=2),
                   n_estimators="auto", random_state=0).fit(X, y)
    iters = None
else:
    from forestimp.selection import Boruta
    splitter = "hist" if who.endswith("hist") else "best"
    if who.startswith("fdr"):
        est = forestimp.RandomForestClassifier(trees, max_depth=5, splitter=splitter)
        sel = Boruta(est, importance="mdi", rule="fdr", alpha=0.05, random_state=0, n_jobs=2)
    else:
        est = forestimp.RandomForestClassifier(trees, splitter=splitter)
        sel = Boruta(est, random_state=0, n_jobs=2)
    sel.fit(X, y)
    iters = sel.n_iter_
wall = time.perf_counter() - t
print(json.dumps(dict(wall=wall, extra_rss=hwm() - base, x_bytes=X.nbytes, iters=iters,
                      confirmed=np.flatnonzero(sel.support_).tolist())))
"""

RUNS = [
    ("borutapy", 0),
    ("fdr-mdi-depth5", 100),
    ("fdr-mdi-depth5-hist", 100),
    ("r-rule-permutation-hist", 100),
]


def run(n: int, p: int, who: str, trees: int, bins: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", RUNNER, str(n), str(p), who, str(trees), bins],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000x100,5000x200")
    ap.add_argument("--skip-borutapy", action="store_true")
    ap.add_argument("--rebin", action="store_true",
                    help="histogram forests bin every iteration's view again")  # fmt: skip
    args = ap.parse_args()
    for size in args.sizes.split(","):
        n, p = map(int, size.split("x"))
        print(f"\nmake_classification({n}, {p}, n_informative=8), 2 threads")
        print(f"{'run':<26}{'wall s':>8}{'iters':>7}{'RSS/X':>7}{'vs BorutaPy':>13}  confirmed")
        ref = None
        for who, trees in RUNS:
            if who == "borutapy" and args.skip_borutapy:
                continue
            r = run(n, p, who, trees, "rebin" if args.rebin else "once")
            if who == "borutapy":
                ref = r
            ratio = f"{ref['wall'] / r['wall']:.1f}x" if ref else "-"
            same = "" if ref is None or r["confirmed"] == ref["confirmed"] else " (differs)"
            iters = r["iters"] if r["iters"] is not None else "-"
            print(f"{who:<26}{r['wall']:8.2f}{iters:>7}{r['extra_rss'] / r['x_bytes']:7.2f}"
                  f"{ratio:>13}  {r['confirmed']}{same}")  # fmt: skip


if __name__ == "__main__":
    main()

"""Instructions executed inside forestimp's engine for one small fit per split route, two
builds paired (callgrind): a measure of a refactor's cost that the machine's load does not
move.

    python benches/callgrind_routes.py --a /path/to/build_a --b /path/to/build_b [CASE ...]

Each build is a directory that holds a ``forestimp`` package with its compiled ``_core``
(``PYTHONPATH`` for that build). Every case runs once per build under
``valgrind --tool=callgrind``; the instructions counted are those of functions in the
``forestimp/_core`` shared object (the Python interpreter, numpy and scikit-learn left out).
Needs valgrind (``apt-get install valgrind``). A run takes about a minute (Python's imports
under valgrind dominate).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Each case: (what it exercises, the fit). `X` is 20 000 x 12 float32 normals, `Xq` the same
# rounded to halves (coded columns), `Xn` with 10 % NaN; quantized is bench_real_tables's.
CASES = {
    "rf": ("RF, exact search of values", "RF(n_estimators=4).fit(X, y)"),
    "et": ("Extra-Trees, random thresholds", "ET(n_estimators=4).fit(X, y)"),
    "coded": (
        "RF regression, K = p, few levels",
        "RFR(n_estimators=4, max_features=1.0).fit(Xq, yr)",
    ),
    "hist": (
        "hist RF, K = p: node bins, lists",
        "RF(n_estimators=4, splitter='hist', max_features=1.0).fit(X, y)",
    ),
    "nan": ("RF with 10 % NaN: the NaN passes", "RF(n_estimators=4).fit(Xn, y)"),
    "gb": (
        "hist booster, best-first",
        "GB(n_estimators=10, splitter='hist', max_leaf_nodes=31).fit(X, y)",
    ),
    "quant": ("quantized table, RF: codes by bitmap", "RF(n_estimators=10).fit(Xw, yw)"),
    "quantkp": (
        "quantized table, RF K = p: kept bins",
        "RF(n_estimators=5, max_features=1.0).fit(Xw, yw)",
    ),
}

SETUP = """
import sys
import numpy as np
import forestimp as fi
sys.path.insert(0, {benches!r})
from functools import partial
RF = partial(fi.RandomForestClassifier, random_state=0, n_jobs=1)
RFR = partial(fi.RandomForestRegressor, random_state=0, n_jobs=1)
ET = partial(fi.ExtraTreesClassifier, random_state=0, n_jobs=1)
GB = partial(fi.GradientBoostingClassifier, random_state=0)
rng = np.random.default_rng(0)
X = rng.normal(size=(20000, 12)).astype(np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
Xq = np.round(X * 2) / 2
Xn = X.copy()
Xn[rng.random(X.shape) < 0.1] = np.nan
yr = X[:, 0] + rng.normal(size=20000)
if {quantized}:
    from bench_real_tables import load_workload
    Xw, _, yw, _ = load_workload("quantized", None)
"""


def engine_instructions(build: str, case: str) -> int:
    """Instructions inside ``forestimp/_core`` of one run of ``case`` with ``build``."""
    code = SETUP.format(
        benches=str(Path(__file__).resolve().parent), quantized=case.startswith("quant")
    )
    code += CASES[case][1] + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = dict(os.environ, PYTHONPATH=build)
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable,
             "-c", code],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        report = subprocess.run(
            ["callgrind_annotate", "--threshold=100", out],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
    total = 0
    for line in report.splitlines():
        if "forestimp/_core" in line:
            total += int(re.match(r"\s*([\d,]+)", line).group(1).replace(",", ""))
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="PYTHONPATH of build A (the baseline)")
    ap.add_argument("--b", required=True, help="PYTHONPATH of build B")
    # (argparse checks a `nargs="*"` default against `choices` as one value: checked here.)
    ap.add_argument("cases", nargs="*", help=f"cases to run (all by default): {', '.join(CASES)}")
    args = ap.parse_args()
    unknown = sorted(set(args.cases) - set(CASES))
    if unknown:
        ap.error(f"unknown cases {unknown}; choose from {list(CASES)}")
    args.cases = args.cases or list(CASES)
    if shutil.which("valgrind") is None:
        sys.exit("needs valgrind: apt-get install valgrind")
    print(f"{'case':8} {'A':>15} {'B':>15}  B/A     what")
    for case in args.cases:
        a, b = engine_instructions(args.a, case), engine_instructions(args.b, case)
        print(f"{case:8} {a:15,} {b:15,}  {b / a:.4f}  {CASES[case][0]}")


if __name__ == "__main__":
    main()

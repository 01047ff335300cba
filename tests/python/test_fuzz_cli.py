"""Seeded fuzzing of the ``forestimp`` command's arguments and input tables.

Each case is a command (``rank``, ``select``, ``demo``) with options drawn from valid,
out-of-range and malformed values, on one of a few small tables with pathologies (one row,
a header only, infinite or huge values, a text column, a missing target). The command must
run (exit 0) or refuse on one line (``forestimp <command>: error: ...``, exit 2): any other
exception is a bug. The cases run in a child process that prints each before running it,
so a crash names its case. Counts that are valid but huge (``--max-iter 10**12``) are not
drawn: they are honest requests for long work.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import run_fuzz_child

SECONDS = 25.0

CHILD = r"""
import contextlib, io, random, sys, time, warnings
warnings.simplefilter("ignore")
from forestimp.cli import main

folder, seed, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rng = random.Random(seed)
TABLES = ["ok", "one_row", "header", "inf", "huge", "text", "nan_target"]
NUMBERS = ["0", "1", "2", "-1", "-5", "2.5", "nan", "inf", "-inf", "1e308", "1e999",
           "99999999999999999999", "-99999999999999999999", "x", "", "0x10", "4294967295"]
OPTIONS = {
    "rank": ["--n-estimators", "--random-state", "--n-jobs", "--top", "--measure", "--task",
             "--model", "--output"],
    "select": ["--n-estimators", "--random-state", "--n-jobs", "--method", "--alpha",
               "--threshold", "--step", "--task", "--importance", "--output"],
    "demo": ["--n-estimators", "--random-state", "--n-jobs"],
}
CHOICES = {
    "--measure": ["permutation", "mdi", "air", "mdi_oob", "bogus"],
    "--task": ["auto", "classification", "regression", "bogus"],
    "--model": ["rf", "et", "hist", "trt", "patches", "bogus"],
    "--method": ["threshold", "rfe", "boruta", "bogus"],
    "--importance": ["mdi", "permutation", "bogus"],
    "--output": ["table", "csv", "json", "bogus"],
    "--threshold": ["mean", "median", "1.5*mean", "nan*mean", "probe", "0.01", "-1"],
}
start, done = time.time(), 0
while time.time() - start < seconds:
    command = rng.choice(list(OPTIONS))
    argv = [command]
    if command != "demo":
        argv += [f"{folder}/{rng.choice(TABLES)}.csv", "--target", rng.choice(["y", "y", "nope"])]
    argv += ["--n-estimators", "3"]
    for option in rng.sample(OPTIONS[command], rng.randrange(0, 4)):
        pool = CHOICES.get(option, NUMBERS)
        if option in ("--n-estimators", "--top") and rng.random() < 0.7:
            pool = ["1", "2", "3", "0", "-1", "x", "99999999999999999999"]
        argv += [option, rng.choice(pool)]
    print(done, argv, flush=True)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit:
            code = exit.code
    lines = err.getvalue().strip().splitlines()
    if code not in (0, 2) or "Traceback" in err.getvalue():
        print("BAD", code, err.getvalue()[-2000:], flush=True)
        sys.exit(1)
    if code == 2 and not lines[-1].startswith(f"forestimp {command}: error: "):
        print("BAD", code, err.getvalue()[-2000:], flush=True)
        sys.exit(1)
    done += 1
print("DONE", done, flush=True)
"""


def _tables(folder) -> None:
    rng = np.random.default_rng(0)
    ok = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    ok["y"] = (ok["a"] > 0).astype(int)
    variants = {
        "ok": ok,
        "one_row": ok.head(1),
        "header": ok.head(0),
        "inf": ok.assign(b=np.where(np.arange(60) == 3, np.inf, ok["b"])),
        "huge": ok.assign(a=ok["a"] * 1e307),
        "text": ok.assign(c=np.where(ok["a"] > 1, "u", "v")),
        "nan_target": ok.assign(y=np.where(np.arange(60) == 5, np.nan, ok["y"])),
    }
    for name, table in variants.items():
        table.to_csv(folder / f"{name}.csv", index=False)


@pytest.mark.parametrize("seed", [0])
def test_cli_arguments_run_or_are_refused_on_one_line(tmp_path, seed):
    _tables(tmp_path)
    done = run_fuzz_child(
        CHILD, [str(tmp_path), str(seed), str(SECONDS)], SECONDS, MPLBACKEND="Agg"
    )
    assert done >= 20, done

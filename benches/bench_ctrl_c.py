"""How long a held-out permutation importance takes to stop after Ctrl-C (SIGINT).

    python benches/bench_ctrl_c.py

Fits ``RandomForestRegressor(200)`` on 20 000 x 8 in a child process, starts
``permutation(est, X, y, n_repeats=200)``, sends SIGINT two seconds in and prints the
seconds until the child has exited (with ``KeyboardInterrupt``).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

CHILD = """
import numpy as np, forestimp
from forestimp.importance import permutation
rng = np.random.RandomState(0); X = rng.rand(20000, 8); y = X[:, 0] + rng.rand(20000)
est = forestimp.RandomForestRegressor(200, random_state=0, n_jobs=2).fit(X, y)
print("fitted", flush=True)
permutation(est, X, y, n_repeats=200, n_jobs=2)
"""


def main() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.readline()
    time.sleep(2.0)
    start = time.perf_counter()
    child.send_signal(signal.SIGINT)
    child.wait()
    last = child.stderr.read().strip().splitlines()[-1:]
    seconds = time.perf_counter() - start
    print(f"stopped {seconds:.2f} s after SIGINT (exit {child.returncode}, {last})")


if __name__ == "__main__":
    main()

"""How long long work takes to stop after Ctrl-C (SIGINT).

    python benches/bench_ctrl_c.py

Each case runs in a child process, which prints "ready" once its set-up is done; SIGINT
comes two seconds later, and the seconds until the child has exited (with
``KeyboardInterrupt``) are printed:

* ``permutation``: ``permutation(est, X, y, n_repeats=200)`` of a
  ``RandomForestRegressor(200)`` on 20 000 x 8 (held out);
* ``boosting round``: the one round of ``GradientBoostingRegressor(n_estimators=1,
  max_depth=None)`` on 1 000 000 x 8 (several seconds of growth in one tree).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

CASES = {
    "permutation": """
import numpy as np, forestimp
from forestimp.importance import permutation
rng = np.random.RandomState(0); X = rng.rand(20000, 8); y = X[:, 0] + rng.rand(20000)
est = forestimp.RandomForestRegressor(200, random_state=0, n_jobs=2).fit(X, y)
print("ready", flush=True)
permutation(est, X, y, n_repeats=200, n_jobs=2)
""",
    "boosting round": """
import numpy as np, forestimp
rng = np.random.RandomState(0); X = rng.rand(1000000, 8); y = X[:, 0] + rng.rand(1000000)
print("ready", flush=True)
forestimp.GradientBoostingRegressor(n_estimators=1, max_depth=None).fit(X, y)
""",
}


def main() -> None:
    for name, code in CASES.items():
        print(f"{name}: {stop_after_sigint(code)}")


def stop_after_sigint(code: str) -> str:
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.readline()
    time.sleep(2.0)
    start = time.perf_counter()
    child.send_signal(signal.SIGINT)
    child.wait()
    last = child.stderr.read().strip().splitlines()[-1:]
    seconds = time.perf_counter() - start
    return f"stopped {seconds:.2f} s after SIGINT (exit {child.returncode}, {last})"


if __name__ == "__main__":
    main()

"""CPU seconds (one thread, best of 2) of RF and ET fits, 60 trees, on three workloads of
``bench_real_tables.py`` (quantized, randhie, gaussian), for a paired A/B of two builds on a
shared machine. Alternate the builds:

    for i in 1 2 3; do
      PYTHONPATH=/path/to/build_a python benches/bench_real_ab.py
      PYTHONPATH=/path/to/build_b python benches/bench_real_ab.py
    done
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real_tables import load_workload  # noqa: E402

import forestimp as fi  # noqa: E402

MODELS = {
    ("RF", False): fi.RandomForestClassifier,
    ("ET", False): fi.ExtraTreesClassifier,
    ("RF", True): fi.RandomForestRegressor,
    ("ET", True): fi.ExtraTreesRegressor,
}


def main() -> None:
    out = []
    for name in ("quantized", "randhie", "gaussian"):
        X, _, y, _ = load_workload(name, None)
        for model in ("RF", "ET"):
            cls = MODELS[(model, name == "randhie")]
            best = float("inf")
            for _ in range(2):
                start = time.process_time()
                cls(n_estimators=60, random_state=0, n_jobs=1).fit(X, y)
                best = min(best, time.process_time() - start)
            out.append(f"{name}-{model} {best:.3f}")
    print(" | ".join(out))


if __name__ == "__main__":
    main()

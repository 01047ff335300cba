"""Dumps a workload of ``bench_real_tables.py`` (training part) for ``benches/engine_fit.rs``:
``python benches/engine_fit_dump.py WORKLOAD DIR`` writes X.f32 (C-order), y.f64, meta.txt."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_real_tables import WORKLOADS, load_workload  # noqa: E402


def main() -> None:
    name, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    X, _, y, _ = load_workload(name, None)
    task = "regression" if WORKLOADS[name][0] == "regression" else "classification"
    np.ascontiguousarray(X, dtype=np.float32).tofile(out / "X.f32")
    np.asarray(y, dtype=np.float64).tofile(out / "y.f64")
    (out / "meta.txt").write_text(f"{X.shape[0]} {X.shape[1]} {task}\n")


if __name__ == "__main__":
    main()

"""CPU seconds of fit and predict_proba (RF, ET, hist RF) on complete data, for a paired A/B
of two builds on a shared machine (CPU time, one thread, so other load does not count).

make_classification(20000, 30, n_informative=10), float32, 16 000 rows to fit and 4 000 to
predict, ``--trees`` trees. Alternate the builds and compare the minima:

    for i in 1 2 3; do
      PYTHONPATH=/path/to/build_a python benches/bench_cpu_ab.py
      PYTHONPATH=/path/to/build_b python benches/bench_cpu_ab.py
    done
"""

import argparse
import time

import numpy as np
from sklearn.datasets import make_classification

import forestimp as fi

MODELS = {
    "RF": (fi.RandomForestClassifier, {}),
    "ET": (fi.ExtraTreesClassifier, {}),
    "hist": (fi.RandomForestClassifier, {"splitter": "hist"}),
}
# With --hist-paths: the histogram splitter's other candidate sources (K = p: node bins and
# code lists; the booster's best-first trees, n_jobs=1).
HIST_PATHS = {
    "hist K=p": (fi.RandomForestClassifier, {"splitter": "hist", "max_features": 1.0}),
    "hist GB": (fi.GradientBoostingClassifier, {"splitter": "hist", "max_leaf_nodes": 31}),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--hist-paths", action="store_true", help="time HIST_PATHS instead")
    ap.add_argument(
        "--multiway", action="store_true", help="time multiway trees on make_led(5000) instead"
    )
    args = ap.parse_args()
    if args.multiway:
        return multiway(args.trees, args.repeats)
    models = HIST_PATHS if args.hist_paths else MODELS
    X, y = make_classification(20000, 30, n_informative=10, random_state=0)
    X = X.astype(np.float32)
    X_fit, y_fit, X_test = X[:16000], y[:16000], np.ascontiguousarray(X[16000:])
    out = []
    for name, (cls, kw) in models.items():
        fits, preds = [], []
        for _ in range(args.repeats):
            model = cls(n_estimators=args.trees, random_state=0, **kw)
            if "n_jobs" in model.get_params():
                model.set_params(n_jobs=1)
            start = time.process_time()
            model.fit(X_fit, y_fit)
            fits.append(time.process_time() - start)
            start = time.process_time()
            for _ in range(5):
                model.predict_proba(X_test)
            preds.append((time.process_time() - start) / 5)
        out.append(f"{name} fit {min(fits):.3f} predict {min(preds):.4f}")
    print(" | ".join(out))


def multiway(trees: int, repeats: int) -> None:
    """Totally randomized multiway trees on the LED digits (integer codes), fit CPU time."""
    from forestimp.datasets import make_led

    X, y = make_led(n_samples=5000, random_state=0)
    X = np.asarray(X, dtype=np.float64)
    fits = []
    for _ in range(repeats):
        est = fi.TotallyRandomizedTreesClassifier(
            n_estimators=trees, multiway=True, n_jobs=1, random_state=0
        )
        start = time.process_time()
        est.fit(X, y)
        fits.append(time.process_time() - start)
    print(f"multiway TRT fit {min(fits):.3f}")


if __name__ == "__main__":
    main()

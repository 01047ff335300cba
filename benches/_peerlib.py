"""Helpers of ``benches/peers.py``: data, model construction, in-process timings, the
child-process memory probe and the R/ranger runners (``_peers_ranger.R``; ``quantreg``
forests for ``bench_quantiles.py`` and ``bench_intervals.py``, ``_quantiles_ranger.R``).
Imported as a sibling module; run as a script only as the memory child
(``python benches/_peerlib.py SPEC_JSON``).

A *spec* is a dict ``{task, n, p, n_estimators, threads, library, model}`` where ``model``
is the library's own model (``rf``, ``et``, ``patches`` or ``hist``), and optionally
``max_features`` (K for ``rf``/``et``/``hist`` and LightGBM; absent or None: the defaults).
Also used by ``benches/bench_real_tables.py``, ``benches/complexity.py``,
``benches/bench_quantiles.py`` and ``benches/bench_intervals.py``.
"""

from __future__ import annotations

import gc
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

NAN = float("nan")


# ------------------------------------------------------------------------------ data
def make_data(task: str, n: int, p: int) -> tuple[np.ndarray, ...]:
    """``(X_train, X_test, y_train, y_test)``: 80/20 split, X float32 C-order.

    Classification: ``make_classification(n, p, n_informative=min(10, p),
    n_redundant=min(5, p - n_informative), random_state=0)``; regression:
    ``make_regression(n, p, n_informative=min(10, p), noise=1.0, random_state=0)``.
    """
    from sklearn.datasets import make_classification, make_regression
    from sklearn.model_selection import train_test_split

    inf = min(10, p)
    if task == "classification":
        X, y = make_classification(
            n_samples=n,
            n_features=p,
            n_informative=inf,
            n_redundant=min(5, p - inf),
            random_state=0,
        )
    else:
        X, y = make_regression(
            n_samples=n, n_features=p, n_informative=inf, noise=1.0, random_state=0
        )
    X = X.astype(np.float32)
    gc.collect()
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=0)
    del X
    return np.ascontiguousarray(X_tr), np.ascontiguousarray(X_te), y_tr, y_te


# ---------------------------------------------------------------------------- models
class Unavailable(Exception):
    """The model cannot be built here (e.g. the hist splitter does not exist yet)."""


def make_model(spec: dict[str, Any], **extra: Any) -> Any:
    """The estimator of ``spec`` with default parameters, ``n_jobs=threads``,
    ``random_state=0`` and ``extra`` (e.g. ``oob_score=True``)."""
    lib, model, cls_task = spec["library"], spec["model"], spec["task"] == "classification"
    common = dict(n_estimators=spec["n_estimators"], n_jobs=spec["threads"], random_state=0)
    common.update(extra)
    # K per node (RF, ET, hist); Random Patches keep their own per-tree / per-node pair
    max_features = spec.get("max_features")
    if max_features is not None and model != "patches" and lib != "lightgbm":
        common["max_features"] = max_features
    if lib == "forestimp":
        import forestimp as fi

        if model == "patches":
            # Same trees as the sklearn peer: best split over K = sqrt(q) (classification) or
            # all q (regression) of the tree's q = p/2 features, on half the rows.
            cls = fi.RandomPatchesClassifier if cls_task else fi.RandomPatchesRegressor
            return cls(
                max_samples=0.5,
                max_features=0.5,
                bootstrap=False,
                splitter="best",
                max_features_node="sqrt" if cls_task else None,
                **common,
            )
        if model == "et":
            return (fi.ExtraTreesClassifier if cls_task else fi.ExtraTreesRegressor)(**common)
        cls = fi.RandomForestClassifier if cls_task else fi.RandomForestRegressor
        if model == "hist":
            try:
                return cls(splitter="hist", **common)
            except (TypeError, ValueError) as exc:
                raise Unavailable(f"hist splitter not available: skipped ({exc})") from exc
        return cls(**common)
    if lib == "sklearn":
        from sklearn import ensemble, tree

        if model == "patches":
            base = (
                tree.DecisionTreeClassifier(max_features="sqrt")
                if cls_task
                else tree.DecisionTreeRegressor()
            )
            cls = ensemble.BaggingClassifier if cls_task else ensemble.BaggingRegressor
            return cls(base, max_samples=0.5, max_features=0.5, bootstrap=False, **common)
        if model == "et":
            return (ensemble.ExtraTreesClassifier if cls_task else ensemble.ExtraTreesRegressor)(
                **common
            )
        cls = ensemble.RandomForestClassifier if cls_task else ensemble.RandomForestRegressor
        return cls(**common)
    if lib == "lightgbm":
        import lightgbm

        if extra:
            raise Unavailable("LightGBM has no out-of-bag score")
        p, n_train = spec["p"], int(0.8 * spec["n"])
        cls = lightgbm.LGBMClassifier if cls_task else lightgbm.LGBMRegressor
        return cls(
            boosting_type="rf",
            n_estimators=spec["n_estimators"],
            bagging_fraction=0.632,
            bagging_freq=1,
            # K candidate features drawn at each node, as RF: sqrt(p) (classification) or all
            # (regression). A per-tree feature_fraction would give each tree only sqrt(p)
            # features (held-out accuracy 0.76 instead of 0.92 on the --quick data).
            feature_fraction_bynode=n_node_features(spec["task"], p, spec.get("max_features")) / p,
            # A fully grown tree has at most n_train leaves; 32767 caps deeper trees. LightGBM
            # sizes its histogram cache by num_leaves (2.6 GB and 5 s per 10 trees at n=5000
            # with 32767): min(., n_train) and a 1 GiB pool keep that finite.
            num_leaves=min(2**15 - 1, n_train),
            histogram_pool_size=1024,
            min_child_samples=1,
            min_split_gain=0.0,
            n_jobs=spec["threads"],
            random_state=0,
            verbose=-1,
        )
    raise ValueError(lib)


def n_node_features(task: str, p: int, max_features: Any = None) -> int:
    """K, the features drawn at each node, by scikit-learn's rule (None: its default,
    ``"sqrt"`` for classification and all for regression); ranger's ``mtry`` is set to it."""
    if max_features is None:
        max_features = "sqrt" if task == "classification" else 1.0
    if max_features == "sqrt":
        return max(1, int(np.sqrt(p)))
    if max_features == "log2":
        return max(1, int(np.log2(p)))
    if isinstance(max_features, float):
        return max(1, int(max_features * p))
    return int(max_features)


def model_bytes(est: Any) -> int:
    if hasattr(est, "booster_"):
        return len(est.booster_.model_to_string())
    return len(pickle.dumps(est, protocol=pickle.HIGHEST_PROTOCOL))


def score(task: str, est: Any, pred: np.ndarray, y: np.ndarray) -> float:
    """Held-out accuracy (argmax of ``predict_proba``) or R²."""
    if task == "classification":
        return float(np.mean(est.classes_[np.argmax(pred, axis=1)] == y))
    from sklearn.metrics import r2_score

    return float(r2_score(y, pred))


def timed(
    fn: Callable[[], Any],
    repeats: int,
    warm_up: bool = False,
    stat: Callable[[list[float]], float] = statistics.median,
) -> tuple[float, Any]:
    """``stat`` (median; ``min`` for best-of) of the wall-clock seconds of ``repeats`` calls
    (after an untimed one if ``warm_up``), and the last result."""
    times, out = [], None
    if warm_up:
        fn()
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return stat(times), out


# ------------------------------------------------------------------ python libraries
def measure_python(spec: dict[str, Any], data, ops: list[str], repeats: int) -> dict[str, Any]:
    """Times of the requested ``ops`` for one Python library, in this process."""
    X_tr, X_te, y_tr, y_te = data
    task, lib, threads = spec["task"], spec["library"], spec["threads"]
    est = make_model(spec)
    row: dict[str, Any] = dict(spec)
    row["fit_s"], _ = timed(lambda: est.fit(X_tr, y_tr), repeats)
    pred_fn = est.predict_proba if task == "classification" else est.predict
    row["predict_s"], pred = timed(lambda: pred_fn(X_te), max(repeats, 5), warm_up=True)
    row["score"] = score(task, est, pred, y_te)
    if "oob" in ops:
        try:
            oob_est = make_model(spec, oob_score=True)
            t, _ = timed(lambda: oob_est.fit(X_tr, y_tr), repeats)
            row["oob_s"], row["oob_score"] = t - row["fit_s"], float(oob_est.oob_score_)
        except Exception as exc:  # no OOB for this model (no bootstrap, or none in library)
            row["oob_note"] = str(exc).splitlines()[0][:80]
    if "permutation" in ops:
        if lib == "forestimp":
            from forestimp.importance import permutation

            try:  # Breiman's OOB permutation, one permutation per tree and feature
                row["perm_oob_s"], _ = timed(
                    lambda: permutation(est, X_tr, y_tr, oob=True, n_jobs=threads, random_state=0),
                    repeats,
                )
            except Exception as exc:  # no out-of-bag rows (Extra-Trees without bootstrap)
                row["perm_note"] = str(exc).splitlines()[0][:80]
            row["perm_s"], _ = timed(
                lambda: permutation(est, X_te, y_te, n_repeats=1, n_jobs=threads, random_state=0),
                repeats,
            )
        elif lib == "sklearn":
            from sklearn.inspection import permutation_importance

            # run once: it re-predicts the test split p times
            row["perm_s"], _ = timed(
                lambda: permutation_importance(
                    est, X_te, y_te, n_repeats=1, n_jobs=threads, random_state=0
                ),
                1,
            )
    # Last: pickling a forestimp estimator drops the training data OOB permutation needs.
    row["model_bytes"] = model_bytes(est)
    return row


# ---------------------------------------------------------------------------- memory
def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _fit_peak_kib(spec: dict[str, Any], X_tr: np.ndarray, y_tr: np.ndarray) -> dict[str, Any]:
    # Warm-up fit on 200 rows: library code pages, lazy imports and thread pools are then
    # resident before the reset, so the increase is what the data size costs.
    make_model(spec).fit(X_tr[:200], y_tr[:200])
    est = make_model(spec)
    gc.collect()
    before = _status_kib("VmRSS") or 0
    exact = _reset_peak()
    est.fit(X_tr, y_tr)
    peak = _status_kib("VmHWM")
    if peak is None or not exact:  # whole-process peak, data included
        import resource

        peak, before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, 0
    return {"library": spec["library"], "model": spec["model"], "peak_fit_kib": peak - before}


def _stop_loky() -> None:
    """Shut down joblib's reusable process pool (sklearn Bagging with n_jobs > 1), whose
    workers would otherwise outlive ``os._exit`` and keep the parent's pipes open."""
    mod = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(mod, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)


def child_main(specs: list[dict[str, Any]]) -> None:
    """In a fresh interpreter: build the data of ``specs`` (one workload) once, then fit each
    spec in a forked grandchild that resets its high-water mark first, and print one JSON
    line per spec with ``VmHWM - VmRSS before the fit`` in KiB.

    Forking is safe here: this process never fits, so no library thread pool exists yet.
    The grandchild's RSS at the fork already counts the shared data pages, and copy-on-write
    does not change RSS, so the increase is the fit's own allocations.
    """
    s0 = specs[0]
    X_tr, X_te, y_tr, _ = make_data(s0["task"], s0["n"], s0["p"])
    del X_te
    gc.collect()
    for spec in specs:
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # grandchild
            os.close(read_fd)
            code = 1
            try:
                os.write(write_fd, json.dumps(_fit_peak_kib(spec, X_tr, y_tr)).encode())
                code = 0
            finally:
                _stop_loky()
                os._exit(code)
        os.close(write_fd)
        with os.fdopen(read_fd) as f:
            out = f.read()
        _, status = os.waitpid(pid, 0)
        if status == 0 and out:
            print(out, flush=True)
        else:
            print(f"{spec['library']}/{spec['model']}: exit status {status}", file=sys.stderr)


def measure_peaks(specs: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """Peak RSS increase of one fit in MiB per ``(library, model)`` of one workload, measured
    in a fresh child process (see :func:`child_main`); missing on failure."""
    cmd = [sys.executable, os.path.abspath(__file__), json.dumps(specs)]
    # Files, not pipes: a stray worker process holding a pipe open cannot block the wait.
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        code = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, check=False
        ).returncode
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    peaks = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            peaks[(r["library"], r["model"])] = r["peak_fit_kib"] / 1024
    if code != 0 or len(peaks) < len(specs):
        print(f"[memory] failed: {stderr.strip()[-400:]}", file=sys.stderr)
    return peaks


# ---------------------------------------------------------------------------- ranger
def ranger_available() -> str | None:
    """None when Rscript and the R package ranger are usable, else why not."""
    if shutil.which("Rscript") is None:
        return "Rscript not found (install e.g. `apt-get install r-cran-ranger`): ranger skipped"
    probe = ["Rscript", "-e", "quit(status = !requireNamespace('ranger', quietly=TRUE))"]
    if subprocess.run(probe, capture_output=True, check=False).returncode != 0:
        return "R package ranger not installed (`apt-get install r-cran-ranger`): skipped"
    return None


def lightgbm_available() -> str | None:
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        return "lightgbm not importable (`pip install lightgbm`): skipped"
    return None


RANGER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_peers_ranger.R")


class RangerData:
    """The split written once as raw column-major binaries (X float32, y float64) that the R
    script reads with ``readBin`` before any timing."""

    def __init__(self, data) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="peers-ranger-")
        X_tr, X_te, y_tr, y_te = data
        for name, arr, dtype in (
            ("xtr", X_tr.T, np.float32),
            ("xte", X_te.T, np.float32),
            ("ytr", y_tr, np.float64),
            ("yte", y_te, np.float64),
        ):
            np.ascontiguousarray(arr, dtype=dtype).tofile(os.path.join(self.tmp.name, name))
        self.n_train, self.n_test, self.p = X_tr.shape[0], X_te.shape[0], X_tr.shape[1]

    def close(self) -> None:
        self.tmp.cleanup()


def measure_ranger(
    spec: dict[str, Any],
    rdata: RangerData,
    ops: list[str],
    repeats: int,
    stat: str = "median",
    mtry: int | None = None,
):
    """One Rscript run: all timings inside R (``Sys.time`` around ``ranger()``/``predict``),
    reduced by ``stat`` (``"median"`` or ``"min"``); ``mtry`` None: floor(sqrt(p)) or p.

    Returns the row, or None (message on stderr) when R fails.
    """
    cmd = [
        "Rscript",
        RANGER_SCRIPT,
        rdata.tmp.name,
        str(rdata.n_train),
        str(rdata.n_test),
        str(rdata.p),
        spec["task"],
        spec["model"],
        str(spec["n_estimators"]),
        str(spec["threads"]),
        str(repeats),
        ",".join(ops),
        stat,
        str(mtry or 0),  # 0: the script's default
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"[peer] ranger failed: {proc.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    row: dict[str, Any] = dict(spec)
    row.update({k: (NAN if v is None else v) for k, v in out.items()})
    return row


RANGER_QUANTILES_SCRIPT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "_quantiles_ranger.R"
)


def measure_ranger_quantiles(
    splits: list[RangerData],
    quantiles: list[float],
    trees: int,
    threads: int,
    min_node_size: int,
    repeats: int = 1,
    timed: list[float] | None = None,
) -> list[dict[str, Any]] | None:
    """ranger's ``quantreg = TRUE`` forest (``mtry`` = every feature) fitted on each split
    in one Rscript run (``benches/_quantiles_ranger.R``, which says what ranger computes):
    ``predict(type = "quantiles")`` of the ``timed`` quantiles (default: ``quantiles``)
    timed inside R, min of ``repeats``, and the ``quantiles`` of the test rows.

    Returns per split ``{"fit_s", "predict_s", "quantiles": (n_test, len(quantiles))}``, or
    None (message on stderr) when R fails.
    """
    cmd = [
        "Rscript",
        RANGER_QUANTILES_SCRIPT,
        str(trees),
        str(threads),
        str(min_node_size),
        str(repeats),
        ",".join(repr(float(q)) for q in (quantiles if timed is None else timed)),
        ",".join(repr(float(q)) for q in quantiles),
        *(split.tmp.name for split in splits),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"[peer] ranger quantreg failed: {proc.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    rows = [json.loads(line) for line in proc.stdout.strip().splitlines()[-len(splits) :]]
    for row, split in zip(rows, splits, strict=True):
        values = np.fromfile(os.path.join(split.tmp.name, "quantiles"), dtype=np.float64)
        row["quantiles"] = values.reshape(len(quantiles), split.n_test).T
    return rows


if __name__ == "__main__":
    child_main(json.loads(sys.argv[1]))

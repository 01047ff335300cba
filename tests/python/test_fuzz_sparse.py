"""Seeded fuzzing of sparse X: no generated matrix, valid or malformed, may kill the process.

Every case is a small ``scipy.sparse`` matrix or array of a random format (CSR, CSC, COO,
BSR, DIA, LIL, DOK), dtype and shape (empty ones included), either valid (unsorted or
repeated indices, 64-bit or mixed index dtypes, explicit zeros, read-only or strided index
arrays, a huge but consistent shape) or with one random corruption of its ``indptr``,
``indices``, ``data``, coordinates, offsets, lists, keys or shape. It is fed to ``fit`` of
an estimator class of ``forestimp.ensemble`` / ``forestimp.boosting``, or to ``predict``
of a fitted one. A malformed matrix must raise ``DataError``; a valid one must fit/predict
or raise ``DataError`` / ``ValueError`` / ``TypeError`` with a message.

The cases run in a child process (``python test_fuzz_sparse.py --child SEED START``) that
prints one line per case, so a crash fails the test with its seed and case named, and the
fuzzing stops at a wall-clock budget. Reproduce one case with
``PYTHONPATH=python python tests/python/test_fuzz_sparse.py --case SEED INDEX``.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

SEED = 20240611
# Seconds of fuzzing (the child stops starting cases after this), and the least number of
# cases the run must reach so that a slow machine cannot pass by running none.
BUDGET_S = float(os.environ.get("FORESTIMP_FUZZ_SECONDS", "40"))
MIN_CASES = 1000
MAX_CASES = 12000
FORMATS = ("csr", "csc", "coo", "bsr", "dia", "lil", "dok")
DTYPES = (np.float64, np.float32, np.int32, np.int64, np.bool_, np.complex128)
N_FEATURES = 4  # columns of the fitted models that predict sees


# ----------------------------------------------------------------------------- generation
def _container(fmt: str, array: bool):
    return getattr(sp, f"{fmt}_{'array' if array else 'matrix'}")


def _dense(rng: np.random.Generator, n: int, p: int) -> np.ndarray:
    density = rng.choice([0.0, 0.2, 0.5, 1.0])
    X = rng.normal(size=(n, p)) * (rng.random((n, p)) < density)
    dtype = DTYPES[rng.integers(len(DTYPES))]
    return (X * 3).astype(dtype) if dtype not in (np.float64, np.float32) else X.astype(dtype)


def _build(rng: np.random.Generator, fmt: str, D: np.ndarray, array: bool):
    if fmt == "bsr":
        n, p = D.shape
        r = int(rng.choice([d for d in (1, 2, 3) if n % d == 0] or [1]))
        c = int(rng.choice([d for d in (1, 2) if p % d == 0] or [1]))
        return _container("bsr", array)(D, blocksize=(r, c))
    return _container(fmt, array)(D)


def _pick(rng: np.random.Generator, a) -> int:
    return int(rng.integers(len(a)))


def _valid_edit(rng: np.random.Generator, X, fmt: str) -> str:
    """A change that keeps ``X`` a consistent matrix (or nothing); its name."""
    kind = rng.choice(["none", "unsorted", "duplicates", "int64", "mixed", "zeros", "views"])
    if fmt in ("csr", "csc", "bsr"):
        if kind == "unsorted" and X.nnz > 1:
            _ = X.has_sorted_indices  # the cached flag goes stale
            ptr = X.indptr
            order = np.concatenate(
                [np.arange(ptr[k], ptr[k + 1])[::-1] for k in range(len(ptr) - 1)]
            ).astype(np.intp)
            X.indices, X.data = X.indices[order], X.data[order]
            return "unsorted"
        if kind == "duplicates" and fmt != "bsr" and X.nnz > 0:
            major = len(X.indptr) - 1
            counts = np.diff(X.indptr)
            repeat = np.where(counts > 0, 2, 1)  # the first entry of a slice, twice
            idx, dat = [], []
            for k in range(major):
                a, b = X.indptr[k], X.indptr[k + 1]
                if b > a:
                    idx += [X.indices[a], *X.indices[a:b]]
                    dat += [X.data[a], *X.data[a:b]]
            X.indptr = np.concatenate([[0], np.cumsum(counts + (repeat - 1))]).astype(np.int32)
            X.indices = np.asarray(idx, dtype=np.int32)
            X.data = np.asarray(dat, dtype=X.data.dtype)
            return "duplicates"
        if kind == "int64":
            X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
            return "int64"
        if kind == "mixed":
            X.indptr = X.indptr.astype(np.int64)
            return "mixed-index-dtypes"
        if kind == "views":
            X.indices = np.repeat(X.indices, 2)[::2]
            X.indptr.flags.writeable = False
            return "strided-readonly"
    if fmt == "coo":
        if kind == "duplicates" and X.nnz > 0:
            X.coords = tuple(np.concatenate([c, c[:1]]) for c in X.coords)
            X.data = np.concatenate([X.data, X.data[:1]])
            X.has_canonical_format = False
            return "duplicates"
        if kind == "unsorted" and X.nnz > 1:
            order = rng.permutation(X.nnz)
            X.coords = tuple(c[order] for c in X.coords)
            X.data = X.data[order]
            return "unsorted"
        if kind == "int64":
            X.coords = tuple(c.astype(np.int64) for c in X.coords)
            return "int64"
    if fmt in ("csr", "csc", "coo") and kind == "zeros" and X.nnz > 0:
        X.data = X.data.copy()
        X.data[: max(1, X.nnz // 2)] = 0
        return "explicit-zeros"
    return "plain"


def _huge_valid(rng: np.random.Generator, fmt: str, D: np.ndarray, array: bool):
    """A consistent matrix whose minor axis (columns, CSC: rows) is 2**62 long."""
    n, p = D.shape
    big = 2**62
    if fmt == "csc":
        X = _container("csc", array)(D)
        X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
        X._shape = (big, p)
    else:
        X = _container("csr", array)(D)
        X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
        X._shape = (n, big)
    return X, f"huge-consistent-shape {X._shape}"


def _corrupt_compressed(rng, X, fmt):
    major_len = len(X.indptr) - 1
    n, p = X.shape
    minor = (p if fmt == "csr" else n) if fmt != "bsr" else p // X.blocksize[1]
    nnz = len(X.indices)
    options = [
        "indptr-end",
        "indptr-start",
        "indptr-short",
        "indptr-long",
        "indptr-float",
        "indices-float",
        "indices-2d",
        "indices-int16",
        "indices-uint32",
        "indices-swapped",
        "indices-list",
        "data-2d" if fmt != "bsr" else "data-2d-bsr",
        "shape-major",
        "shape-negative",
        "shape-huge-major",
        "shape-float",
        "shape-3d",
    ]
    if nnz:
        options += ["index-high", "index-negative", "index-huge", "data-short", "data-long"]
        options += ["shape-minor-shrink"] if fmt != "bsr" else []
    if major_len >= 2:
        options.append("indptr-decreasing")
    kind = options[_pick(rng, options)]
    if kind == "indptr-end":
        X.indptr = X.indptr.copy()
        X.indptr[-1] += int(rng.integers(1, 10**6))
    elif kind == "indptr-start":
        X.indptr = X.indptr.copy()
        X.indptr[0] = int(rng.integers(1, 5))
    elif kind == "indptr-short":
        X.indptr = X.indptr[:-1].copy()
    elif kind == "indptr-long":
        X.indptr = np.append(X.indptr, X.indptr[-1]).astype(X.indptr.dtype)
    elif kind == "indptr-float":
        X.indptr = X.indptr.astype(np.float64)
    elif kind == "indices-float":
        X.indices = X.indices.astype(np.float64) + 0.5
    elif kind == "indices-2d":
        X.indices = X.indices.reshape(-1, 1)
    elif kind == "indices-int16":
        X.indices = X.indices.astype(np.int16)
    elif kind == "indices-uint32":
        X.indices = X.indices.astype(np.uint32)
    elif kind == "indices-swapped":
        X.indices = X.indices.astype(X.indices.dtype.newbyteorder())
    elif kind == "indices-list":
        X.indices = X.indices.tolist()
    elif kind == "data-2d":
        X.data = X.data.reshape(-1, 1)
    elif kind == "data-2d-bsr":
        X.data = X.data.reshape(X.data.shape[0], X.data.shape[1] * X.data.shape[2])
    elif kind == "shape-major":
        X._shape = (n + 1, p) if fmt != "csc" else (n, p + 1)
        if fmt == "bsr":
            X._shape = (n + X.blocksize[0], p)
    elif kind == "shape-negative":
        X._shape = (-int(rng.integers(1, 5)), p) if rng.random() < 0.5 else (n, -1)
    elif kind == "shape-huge-major":
        X._shape = (2**40, p) if fmt != "csc" else (n, 2**40)
    elif kind == "shape-float":
        X._shape = (float(n), p)
    elif kind == "shape-3d":
        X._shape = (n, p, 1)
    elif kind == "indptr-decreasing":
        X.indptr = X.indptr.copy()
        X.indptr[int(rng.integers(1, major_len))] = -1
    elif kind == "index-high":
        X.indices = X.indices.copy()
        X.indices[_pick(rng, X.indices)] = minor + int(rng.integers(0, 10**6))
    elif kind == "index-negative":
        X.indices = X.indices.copy()
        X.indices[_pick(rng, X.indices)] = -int(rng.integers(1, 10**6))
    elif kind == "index-huge":
        X.indices = X.indices.astype(np.int64)
        X.indices[_pick(rng, X.indices)] = 2**40 + int(rng.integers(0, 2**20))
    elif kind == "data-short":
        X.data = X.data[:-1].copy()
    elif kind == "data-long":
        X.data = np.concatenate([X.data, X.data[:1]])
    elif kind == "shape-minor-shrink":
        top = int(X.indices.max())
        X._shape = (n, top) if fmt == "csr" else (top, p)
    return kind


def _corrupt_coo(rng, X):
    n, p = X.shape
    nnz = len(X.data)
    options = ["coords-float", "coords-three", "data-2d", "shape-negative", "shape-3d"]
    if nnz:
        options += ["row-high", "col-negative", "col-huge", "row-short", "shape-shrink"]
    kind = options[_pick(rng, options)]
    row, col = X.coords
    if kind == "coords-float":
        X.coords = (row.astype(np.float64), col)
    elif kind == "coords-three":
        X.coords = (row, col, col)
    elif kind == "data-2d":
        X.data = X.data.reshape(-1, 1)
    elif kind == "shape-negative":
        X._shape = (n, -int(rng.integers(1, 5)))
    elif kind == "shape-3d":
        X._shape = (n, p, 1)
    elif kind == "row-high":
        row = row.copy()
        row[_pick(rng, row)] = n + int(rng.integers(0, 100))
        X.coords = (row, col)
    elif kind == "col-negative":
        col = col.copy()
        col[_pick(rng, col)] = -1
        X.coords = (row, col)
    elif kind == "col-huge":
        col = col.astype(np.int64)
        col[_pick(rng, col)] = 2**40
        X.coords = (row, col)
    elif kind == "row-short":
        X.coords = (row[:-1].copy(), col)
    elif kind == "shape-shrink":
        X._shape = (int(row.max()), p) if rng.random() < 0.5 else (n, int(col.max()))
    return kind


def _corrupt_dia(rng, X):
    n, p = X.shape
    options = ["offsets-long", "offset-high", "offset-low", "offsets-float", "data-1d"]
    options += ["offset-huge", "shape-negative"]
    if len(X.offsets) >= 1:
        options.append("offsets-repeat")
    kind = options[_pick(rng, options)]
    offsets = X.offsets.copy()
    if kind == "offsets-long":
        X.offsets = np.append(offsets, max(offsets, default=0) + 1).astype(offsets.dtype)
    elif kind in ("offset-high", "offset-low", "offset-huge"):
        value = {"offset-high": p + 3, "offset-low": -(n + 3), "offset-huge": 2**40}[kind]
        if len(offsets) == 0:
            X.offsets = np.array([value], dtype=np.int64)
            X.data = np.zeros((1, p), dtype=X.data.dtype)
        else:
            X.offsets = offsets.astype(np.int64)
            X.offsets[-1] = value
    elif kind == "offsets-float":
        X.offsets = offsets.astype(np.float64)
    elif kind == "data-1d":
        X.data = X.data.ravel()
    elif kind == "shape-negative":
        X._shape = (-1, p)
    elif kind == "offsets-repeat":
        X.offsets = np.append(offsets, offsets[:1]).astype(offsets.dtype)
        X.data = np.concatenate([X.data, X.data[:1]])
    return kind


def _corrupt_lil(rng, X):
    n, p = X.shape
    full = [k for k in range(n) if X.rows[k]]
    options = ["rows-short", "shape-3d"] if n else ["shape-3d", "col-out-empty"]
    if n:
        options += ["row-longer", "data-longer", "row-tuple", "col-out-empty"]
    if full:
        options += ["col-high", "col-negative", "col-float", "col-huge"]
    kind = options[_pick(rng, options)]
    if kind == "rows-short":
        X.rows = X.rows[:-1]
    elif kind == "shape-3d":
        X._shape = (n, p, 1)
    elif kind == "col-out-empty":
        # A column index p (out of range), with its value: the lists stay aligned.
        if n:
            k = _pick(rng, X.rows)
            X.rows[k].append(p)
            X.data[k].append(1.0)
        else:
            X.rows = np.array([[p]] + [None], dtype=object)[:1]
            X.data = np.array([[1.0]] + [None], dtype=object)[:1]
    elif kind == "row-longer":
        X.rows[_pick(rng, X.rows)].append(0)
    elif kind == "data-longer":
        X.data[_pick(rng, X.data)].extend([1.0, 2.0])
    elif kind == "row-tuple":
        k = _pick(rng, X.rows)
        X.rows[k] = tuple(X.rows[k])
    else:
        k = full[_pick(rng, full)]
        X.rows[k][-1] = {"col-high": p, "col-negative": -1, "col-float": 0.5, "col-huge": 2**70}[
            kind
        ]
    return kind


def _corrupt_dok(rng, X):
    n, p = X.shape
    key = [(n, 0), (-1, 0), (0, p), (0, -2), (0.5, 0), (0, 0, 0), 7, (2**70, 0), ("a", 0)]
    k = key[_pick(rng, key)]
    dict.__setitem__(X._dict, k, 1.0)
    return f"key {k!r}"


def make_case(seed: int, index: int):
    """``(X, description, malformed)`` of case ``index`` of run ``seed`` (deterministic)."""
    rng = np.random.default_rng([seed, index])
    fmt = FORMATS[_pick(rng, FORMATS)]
    array = bool(rng.integers(2))
    n = int(rng.integers(0, 13))
    p = N_FEATURES if rng.random() < 0.6 else int(rng.integers(0, 7))
    D = _dense(rng, n, p)
    what = f"{fmt}_{'array' if array else 'matrix'} {D.shape} {D.dtype}"
    if rng.random() < 0.45:  # valid
        if fmt in ("csr", "csc") and rng.random() < 0.05:
            X, edit = _huge_valid(rng, fmt, D, array)
        else:
            X = _build(rng, fmt, D, array)
            edit = _valid_edit(rng, X, fmt)
        return X, f"{what} valid:{edit}", False
    X = _build(rng, fmt, D, array)
    if fmt in ("csr", "csc", "bsr"):
        kind = _corrupt_compressed(rng, X, fmt)
    elif fmt == "coo":
        kind = _corrupt_coo(rng, X)
    elif fmt == "dia":
        kind = _corrupt_dia(rng, X)
    elif fmt == "lil":
        kind = _corrupt_lil(rng, X)
    else:
        kind = _corrupt_dok(rng, X)
    return X, f"{what} malformed:{kind}", True


# ----------------------------------------------------------------------------- the child
def _estimators() -> list[type]:
    from sklearn.base import BaseEstimator

    import forestimp.boosting
    import forestimp.ensemble

    found = {}
    for module in (forestimp.ensemble, forestimp.boosting):
        for name, obj in vars(module).items():
            if not inspect.isclass(obj) or name.startswith("_"):
                continue
            if obj.__module__ == module.__name__ and issubclass(obj, BaseEstimator):
                found[name] = obj
    return [found[k] for k in sorted(found)]


def _new(cls):
    return cls(n_estimators=2, random_state=0)


def _target(cls, n: int, rng: np.random.Generator) -> np.ndarray:
    from sklearn.base import is_classifier

    if is_classifier(cls()):
        return rng.integers(0, 2, size=n)
    return rng.normal(size=n)


def _run_case(seed: int, index: int, classes: list[type], fitted: dict) -> str:
    """The outcome of case ``index``: ``ok``, or ``<exception type>:<message>``."""
    from forestimp.exceptions import DataError

    X, _, _ = make_case(seed, index)
    rng = np.random.default_rng([seed, index, 1])
    cls = classes[_pick(rng, classes)]
    try:
        if rng.random() < 0.5:
            n = X._shape[0] if isinstance(X._shape, tuple) and X._shape else 0
            n = n if isinstance(n, int) and 0 <= n <= 20 else 12
            _new(cls).fit(X, _target(cls, n, rng))
        else:
            if cls not in fitted:
                Xf = np.random.default_rng(0).normal(size=(30, N_FEATURES))
                fitted[cls] = _new(cls).fit(Xf, _target(cls, 30, np.random.default_rng(1)))
            fitted[cls].predict(X)
    except DataError as e:
        return f"DataError:{e}"
    except (ValueError, TypeError) as e:
        return f"{type(e).__name__}:{e}"
    except Exception as e:  # noqa: BLE001 - reported to the parent, which fails on it
        return f"UNEXPECTED {type(e).__name__}:{e}"
    return "ok"


def _child(seed: int, start: int, budget_s: float) -> None:
    import warnings

    warnings.simplefilter("ignore")
    classes = _estimators()
    print("CLASSES " + " ".join(c.__name__ for c in classes), flush=True)
    fitted: dict = {}
    t0 = time.monotonic()
    for index in range(start, MAX_CASES):
        if time.monotonic() - t0 > budget_s:
            break
        print(f"START {index}", flush=True)
        outcome = _run_case(seed, index, classes, fitted).replace("\n", " ")
        print(f"DONE {index} {outcome[:300]}", flush=True)


# ----------------------------------------------------------------------------- the test
def _judge(seed: int, index: int, outcome: str) -> str | None:
    """Why the outcome of a case is wrong, or None."""
    _, what, malformed = make_case(seed, index)
    if malformed and not outcome.startswith("DataError:"):
        return f"malformed input did not raise DataError: {what} -> {outcome}"
    if not malformed:
        kind, _, message = outcome.partition(":")
        if outcome != "ok" and (
            kind not in ("DataError", "ValueError", "TypeError") or not message
        ):
            return f"valid input raised an untyped or empty error: {what} -> {outcome}"
    return None


def test_fuzz_sparse_never_crashes():
    import forestimp

    here = Path(__file__).resolve()
    root = here.parents[2]
    package = Path(forestimp.__file__).resolve().parents[1]  # the forestimp under test
    env = dict(os.environ, PYTHONPATH=str(package), RAYON_NUM_THREADS="1")
    cmd = [sys.executable, str(here), "--child", str(SEED), "0", str(BUDGET_S)]
    proc = subprocess.run(
        cmd, env=env, cwd=root, capture_output=True, text=True, timeout=BUDGET_S + 120
    )
    started, done, failures = None, {}, []
    classes = ""
    for line in proc.stdout.splitlines():
        if line.startswith("CLASSES "):
            classes = line[8:]
        elif line.startswith("START "):
            started = int(line.split()[1])
        elif line.startswith("DONE "):
            _, index, outcome = line.split(" ", 2)
            done[int(index)] = outcome
    repro = "PYTHONPATH=python python tests/python/test_fuzz_sparse.py --case {} {}"
    if proc.returncode != 0:
        what = make_case(SEED, started)[1] if started is not None else "(before any case)"
        raise AssertionError(
            f"the fuzzing process died (exit code {proc.returncode}) in case {started} of seed "
            f"{SEED}: {what}\nreproduce: {repro.format(SEED, started)}\n"
            f"stderr tail: {proc.stderr[-2000:]}"
        )
    assert len(classes.split()) >= 10, f"estimator classes found: {classes!r}"
    for index, outcome in done.items():
        why = _judge(SEED, index, outcome)
        if why:
            failures.append(f"case {index} (seed {SEED}): {why}\n  {repro.format(SEED, index)}")
    assert not failures, f"{len(failures)} failing cases:\n" + "\n".join(failures[:20])
    assert len(done) >= MIN_CASES, f"only {len(done)} cases ran in {BUDGET_S} s"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
    elif sys.argv[1:2] == ["--case"]:
        seed, index = int(sys.argv[2]), int(sys.argv[3])
        print(make_case(seed, index)[1], flush=True)
        outcome = _run_case(seed, index, _estimators(), {})
        print(outcome)
        print(_judge(seed, index, outcome) or "as expected")
    else:
        sys.exit("usage: test_fuzz_sparse.py --child SEED START SECONDS | --case SEED INDEX")

"""A malformed sparse matrix raises ``DataError`` at every public entry, never a crash.

scipy's format conversions (``toarray``, ``tocsr``, ``tocsc``, ``asformat``), fancy
indexing and the engine do not bounds-check a sparse index: an ``indptr`` or an index out
of range makes them read and write out of bounds (SIGSEGV, "double free or corruption").
Every entry that takes a data argument (``X``, ``X2``, a sparse ``y`` where one is
accepted) checks its structure first (``forestimp._sparse.checked``).

Each malformation runs every entry in one child process (``python test_hostile_sparse.py
KIND START``) that prints a line per entry: a crash is a failure naming the entry, and the
parent goes on with the next entries in a new child.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

N, P = 40, 4
RNG = np.random.default_rng(0)
XD = RNG.normal(size=(N, P))
XD[XD < 0] = 0.0
YC = np.arange(N) % 2
YR = RNG.normal(size=N)


# --------------------------------------------------------------------------- malformations
def _csc_indptr_end(n, p):
    X = sp.csc_matrix(XD[:n, :p] if p <= P else np.ones((n, p)))
    X.indptr = X.indptr.copy()
    X.indptr[-1] += 100
    return X


def _from(fmt, n, p, array=False):
    D = np.zeros((n, p))
    D[: min(n, P), : min(p, P)] = XD[: min(n, P), : min(p, P)] + 1.0
    D[n - 1, p - 1] = 1.0
    return getattr(sp, f"{fmt}_{'array' if array else 'matrix'}")(D)


def _csr_negative_index(n, p):
    X = _from("csr", n, p)
    X.indices = X.indices.copy()
    X.indices[0] = -1
    return X


def _csr_array_huge_index(n, p):
    X = _from("csr", n, p, array=True)
    X.indices = X.indices.astype(np.int64)
    X.indices[-1] = 2**40
    return X


def _coo_row_out_of_range(n, p):
    X = _from("coo", n, p)
    X.coords = (np.where(np.arange(X.nnz) == 0, n + 5, X.coords[0]), X.coords[1])
    return X


def _bsr_indptr_short(n, p):
    X = _from("bsr", n, p)
    X.indptr = X.indptr[:-1].copy()
    return X


def _lil_unaligned(n, p):
    X = _from("lil", n, p)
    X.rows[0].append(p + 7)  # a column out of range, and no value for it
    return X


def _dok_key_out_of_range(n, p):
    X = _from("dok", n, p, array=True)
    dict.__setitem__(X._dict, (n, 0), 1.0)
    return X


def _dia_offsets_unaligned(n, p):
    X = _from("dia", n, p)
    X.offsets = np.append(X.offsets, 10**6).astype(np.int64)
    return X


def _csc_shape_disagrees(n, p):
    X = _from("csc", n, p, array=True)
    X._shape = (n, p + 3)  # indptr has p + 1 entries
    return X


def _csr_float_indices(n, p):
    X = _from("csr", n, p)
    X.indices = X.indices.astype(np.float64)
    return X


KINDS = {
    f.__name__[1:]: f
    for f in (
        _csc_indptr_end,
        _csr_negative_index,
        _csr_array_huge_index,
        _coo_row_out_of_range,
        _bsr_indptr_short,
        _lil_unaligned,
        _dok_key_out_of_range,
        _dia_offsets_unaligned,
        _csc_shape_disagrees,
        _csr_float_indices,
    )
}


# --------------------------------------------------------------------------- the entries
@functools.lru_cache(maxsize=1)
def _fitted() -> dict:
    """The fitted estimators and selectors the entries use (fitted once per process)."""
    from sklearn.base import clone

    import forestimp as fi
    from forestimp import selection as sel

    small = dict(n_estimators=3, random_state=0)
    fx = {
        "rf": fi.RandomForestClassifier(bootstrap=True, **small).fit(XD, YC),
        "rfr": fi.ExtraTreesRegressor(bootstrap=True, **small).fit(XD, YR),
        "trt": fi.TotallyRandomizedTreesClassifier(bootstrap=False, **small).fit(XD, YC),
        "gb": fi.GradientBoostingClassifier(subsample=0.7, **small).fit(XD, YC),
        "gbr": fi.GradientBoostingRegressor(**small).fit(XD, YR),
    }
    selectors = {
        "SelectFromImportance": sel.SelectFromImportance(
            estimator=fi.RandomForestClassifier(**small), max_features=2
        ),
        "RFE": sel.RFE(estimator=fi.RandomForestClassifier(bootstrap=True, **small)),
        "Boruta": sel.Boruta(
            estimator=fi.RandomForestClassifier(bootstrap=True, **small), max_iter=2
        ),
        "SequentialRandomSubspace": sel.SequentialRandomSubspace(
            estimator=fi.RandomForestClassifier(**small),
            q=2,
            n_iterations=2,
            n_probes=5,
            random_state=0,
        ),
    }
    fx["selectors"] = selectors
    fx["fitted"] = {name: clone(s).fit(XD, YC) for name, s in selectors.items()}
    return fx


def _entries(bad):
    """``[(name, thunk)]``: every public entry that takes data, fed ``bad(n, p)`` (a fresh
    malformed matrix) where it takes X (or X2, y)."""
    import forestimp as fi
    from forestimp import importance as imp
    from forestimp import proximity as prox

    B = lambda p=P: bad(N, p)  # noqa: E731
    small = dict(n_estimators=3, random_state=0)
    fx = _fitted()
    rf, rfr, trt, gb, gbr = (fx[k] for k in ("rf", "rfr", "trt", "gb", "gbr"))
    selectors, fitted = fx["selectors"], fx["fitted"]
    ctx = (XD[:, 0] > 0).astype(int)

    entries = [
        # forests (forestimp._base): fit, a sparse y (accepted as multi-output), predictions
        ("forest.fit", lambda: fi.RandomForestClassifier(**small).fit(B(), YC)),
        ("forest.fit.regressor", lambda: fi.ExtraTreesRegressor(**small).fit(B(), YR)),
        ("forest.fit.sparse_y", lambda: fi.RandomForestRegressor(**small).fit(XD, B(2))),
        ("forest.predict", lambda: rf.predict(B())),
        ("forest.predict_proba", lambda: rf.predict_proba(B())),
        ("forest.predict_log_proba", lambda: rf.predict_log_proba(B())),
        ("forest.apply", lambda: rf.apply(B())),
        ("forest.decision_path", lambda: rf.decision_path(B())),
        ("forest.score", lambda: rf.score(B(), YC)),
        ("forest.score.sparse_y", lambda: rf.score(XD, B(1))),
        ("forest.regressor.predict", lambda: rfr.predict(B())),
        ("forest.regressor.score", lambda: rfr.score(B(), YR)),
        # gradient boosting (forestimp._boosting_base, forestimp.boosting)
        ("boosting.fit", lambda: fi.GradientBoostingClassifier(**small).fit(B(), YC)),
        ("boosting.fit.regressor", lambda: fi.GradientBoostingRegressor(**small).fit(B(), YR)),
        ("boosting.predict", lambda: gb.predict(B())),
        ("boosting.predict_proba", lambda: gb.predict_proba(B())),
        ("boosting.predict_log_proba", lambda: gb.predict_log_proba(B())),
        ("boosting.decision_function", lambda: gb.decision_function(B())),
        ("boosting.staged_predict", lambda: list(gb.staged_predict(B()))),
        ("boosting.staged_predict_proba", lambda: list(gb.staged_predict_proba(B()))),
        ("boosting.staged_decision_function", lambda: list(gb.staged_decision_function(B()))),
        ("boosting.apply", lambda: gb.apply(B())),
        ("boosting.score", lambda: gb.score(B(), YC)),
        ("boosting.score.sparse_y", lambda: gb.score(XD, B(1))),
        ("boosting.regressor.predict", lambda: gbr.predict(B())),
        ("boosting.regressor.staged_predict", lambda: list(gbr.staged_predict(B()))),
        ("boosting.regressor.apply", lambda: gbr.apply(B())),
        ("boosting.regressor.score", lambda: gbr.score(B(), YR)),
        # forestimp.importance
        ("importance.permutation", lambda: imp.permutation(rf, B(), YC)),
        ("importance.permutation.oob", lambda: imp.permutation(rf, B(), YC, oob=True)),
        ("importance.permutation.sparse_y", lambda: imp.permutation(rf, XD, B(1))),
        ("importance.permutation.boosting", lambda: imp.permutation(gb, B(), YC)),
        (
            "importance.permutation.boosting.oob",
            lambda: imp.permutation(gb, B(), YC, oob=True),
        ),
        ("importance.local_permutation", lambda: imp.local_permutation(rf, B(), YC)),
        (
            "importance.local_permutation.oob",
            lambda: imp.local_permutation(rf, B(), YC, oob=True),
        ),
        (
            "importance.local_permutation.forest",
            lambda: imp.local_permutation(rf, B(), YC, level="forest"),
        ),
        ("importance.local_mdi", lambda: imp.local_mdi(rf, B())),
        ("importance.local_mdi.boosting", lambda: imp.local_mdi(gb, B())),
        ("importance.shap_values", lambda: imp.shap_values(rf, B())),
        ("importance.shap_values.boosting", lambda: imp.shap_values(gb, B())),
        ("importance.context", lambda: imp.context(trt, B(), YC, ctx)),
        ("importance.context.sparse_context", lambda: imp.context(trt, XD, YC, B(1))),
        ("importance.unbiased.air", lambda: imp.unbiased(rf, B(), YC)),
        ("importance.unbiased.mdi_oob", lambda: imp.unbiased(rf, B(), YC, method="mdi_oob")),
        (
            "importance.significance",
            lambda: imp.significance(rf, B(), YC, method="janitza", importance="mdi_oob"),
        ),
        # forestimp.proximity
        ("proximity.proximity", lambda: prox.proximity(rf, B())),
        ("proximity.proximity.X2", lambda: prox.proximity(rf, XD, B())),
        ("proximity.proximity.k", lambda: prox.proximity(rf, B(), k=3)),
        ("proximity.leaf_embedding", lambda: prox.leaf_embedding(rf, B())),
    ]
    # forestimp.selection: fit, fit_transform, and the fitted selector's transforms
    for name, s in selectors.items():
        entries += [
            (f"selection.{name}.fit", lambda s=s: s.fit(B(), YC)),
            (f"selection.{name}.fit_transform", lambda s=s: s.fit_transform(B(), YC)),
            (f"selection.{name}.transform", lambda f=fitted[name]: f.transform(B())),
            (
                f"selection.{name}.inverse_transform",
                lambda f=fitted[name]: f.inverse_transform(B(max(1, int(f.support_.sum())))),
            ),
        ]
    try:
        import forestimp.dask as fdask
    except ImportError:
        return entries
    # forestimp.dask: refused on the client, before a client is even looked up
    srs = selectors["SequentialRandomSubspace"].set_params(batch_size=2)
    entries += [
        ("dask.fit", lambda: fdask.fit(fi.RandomForestClassifier(**small), B(), YC)),
        (
            "dask.fit_patches",
            lambda: fdask.fit_patches(fi.RandomForestClassifier(**small), B(), YC),
        ),
        ("dask.permutation", lambda: fdask.permutation(rf, B(), YC)),
        ("dask.permutation.oob", lambda: fdask.permutation(rf, B(), YC, oob=True)),
        ("dask.srs", lambda: fdask.srs(srs, B(), YC)),
        ("dask.shap_values", lambda: fdask.shap_values(rf, B())),
        ("dask.predict", lambda: fdask.predict(rf, B())),
        ("dask.predict_proba", lambda: fdask.predict_proba(rf, B())),
    ]
    return entries


def _all_entries():
    """Every (malformation, entry) pair, named ``kind:entry``."""
    return [
        (f"{kind}:{name}", thunk) for kind, make in KINDS.items() for name, thunk in _entries(make)
    ]


def _child(start: int) -> None:
    warnings.simplefilter("ignore")
    from forestimp.exceptions import DataError

    entries = _all_entries()
    print(f"COUNT {len(entries)}", flush=True)
    for name, thunk in entries[start:]:
        print(f"START {name}", flush=True)
        try:
            thunk()
            result = "no exception"
        except DataError as e:
            result = f"DataError {e}"
        except Exception as e:  # noqa: BLE001 - reported to the parent
            result = f"{type(e).__name__} {e}"
        print(f"RESULT {name} {result}".replace("\n", " ")[:400], flush=True)


# --------------------------------------------------------------------------- the test
@pytest.fixture(scope="module")
def outcomes() -> tuple[dict[str, str], list[str]]:
    """``({kind:entry: result}, [crashes])`` of every entry: one child runs them all, and a
    new one goes on after the entry that killed the last."""
    import forestimp

    here = Path(__file__).resolve()
    env = dict(os.environ, PYTHONPATH=str(Path(forestimp.__file__).resolve().parents[1]))
    results: dict[str, str] = {}
    crashed: list[str] = []
    start, count = 0, None
    while count is None or start < count:
        proc = subprocess.run(
            [sys.executable, str(here), str(start)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        last = None
        for line in proc.stdout.splitlines():
            word, _, rest = line.partition(" ")
            if word == "COUNT":
                count = int(rest)
            elif word == "START":
                last = rest
                start += 1
            elif word == "RESULT":
                name, _, result = rest.partition(" ")
                results[name] = result
        if proc.returncode == 0:
            break
        if last is None:
            raise AssertionError(
                f"the child died (exit code {proc.returncode}) before its first entry:\n"
                f"{proc.stderr[-3000:]}"
            )
        when = "after it returned (heap corruption found later)" if last in results else ""
        results.pop(last, None)
        crashed.append(f"{last} {when}(exit code {proc.returncode}: {proc.stderr[-200:]!r})")
    return results, crashed


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_entry_refuses_a_malformed_sparse_matrix(outcomes, kind):
    results, crashed = outcomes
    mine = {k.partition(":")[2]: r for k, r in results.items() if k.startswith(kind + ":")}
    wrong = [f"{name}: {r}" for name, r in mine.items() if not r.startswith("DataError ")]
    problems = [f"CRASHED {c}" for c in crashed if c.startswith(kind + ":")]
    problems += [f"no DataError: {w}" for w in wrong]
    assert not problems, f"{kind}:\n" + "\n".join(problems)
    assert len(mine) >= 60, sorted(mine)


def test_the_check_reads_no_index_it_cannot_trust():
    # The check itself, on hostile structures scipy's own check_format would cast, prune or
    # index with: each is a DataError, and the matrix is left as it was.
    from forestimp._sparse import check_structure
    from forestimp.exceptions import DataError

    for kind, make in KINDS.items():
        X = make(5, 3)
        before = {a: getattr(X, a, None) for a in ("indptr", "indices", "data", "offsets")}
        with pytest.raises(DataError, match="malformed"):
            check_structure(X)
        for a, v in before.items():
            assert getattr(X, a, None) is v, (kind, a)
    ok = sp.random(6, 5, density=0.5, random_state=0, format="csr")
    for fmt in ("csr", "csc", "coo", "bsr", "dia", "lil", "dok"):
        for array in (False, True):
            X = getattr(sp, f"{fmt}_{'array' if array else 'matrix'}")(ok)
            check_structure(X)  # every valid format passes
    with pytest.raises(DataError, match="2-D"):
        check_structure(sp.coo_array(np.ones(3)))
    X = ok.copy()
    X.indices = X.indices.astype(np.float64)  # scipy's check_format would cast it silently
    with pytest.raises(DataError, match="dtype"):
        check_structure(X)


def test_consistent_but_unusual_index_arrays_read_as_toarray():
    # Valid matrices the check must pass and the engine must read: a strided (non-contiguous)
    # read-only index and mixed index dtypes are copied into the engine's CSC.
    import forestimp as fi

    X = sp.csc_matrix(XD)
    X.indices = np.repeat(X.indices, 2)[::2]
    X.indptr = X.indptr.astype(np.int64)
    X.indptr.flags.writeable = False
    assert not X.indices.flags.c_contiguous
    sparse = fi.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, YC)
    dense = fi.RandomForestClassifier(n_estimators=3, random_state=0).fit(XD, YC)
    assert sparse.forest_.to_bytes() == dense.forest_.to_bytes()
    np.testing.assert_array_equal(sparse.predict_proba(X), dense.predict_proba(XD))
    boost = fi.GradientBoostingClassifier(n_estimators=3, random_state=0)
    np.testing.assert_array_equal(boost.fit(X, YC).predict(X), boost.fit(XD, YC).predict(XD))


if __name__ == "__main__":
    _child(int(sys.argv[1]))

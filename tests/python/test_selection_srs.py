"""Sequential Random Subspace (Sutera, PhD ch. 7) and its out-of-core column source."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import Pipeline

from forestimp.ensemble import ExtraTreesClassifier, TotallyRandomizedTreesClassifier
from forestimp.exceptions import DataError, InvalidParameterError
from forestimp.selection import SequentialRandomSubspace
from forestimp.selection._columns import open_source
from forestimp.selection._probes import ProbeImportances

RELEVANT = [5, 1, 6]  # where the three relevant bits of `exhaustive` are put


def exhaustive(p=8, repeat=4):
    """Every row of p uniform bits, ``repeat`` times; ``y = 2 x_a + (x_b XOR x_c)``.

    ``x_a`` is marginally relevant; ``x_b`` and ``x_c`` form a clique (each is relevant only
    with the other); the p - 3 other bits are irrelevant. On the whole support, totally
    randomized trees give the irrelevant bits an importance of exactly 0 (thesis Thm 5.5);
    repeating it keeps the distribution exact and makes the probes' spurious scores small."""
    bits = np.array(list(itertools.product([0, 1], repeat=p)) * repeat, dtype=np.float64)
    order = RELEVANT + [j for j in range(p) if j not in RELEVANT]
    X = np.empty_like(bits)
    X[:, order] = bits
    y = 2 * bits[:, 0] + (bits[:, 1] != bits[:, 2])
    return X, y.astype(int)


def planted(n=400, p=60, seed=0):
    """Binary ±1 noise with two pairs ``(a, b)``: ``a`` is marginally relevant, ``b`` only
    given ``a`` (``y = sign(sum a (1 + b) + noise)``)."""
    rng = np.random.RandomState(seed)
    X = np.where(rng.rand(n, p) < 0.5, -1.0, 1.0)
    a, b = [3, 40], [17, 45]
    s = sum(X[:, i] * (1 + X[:, j]) for i, j in zip(a, b, strict=True))
    return X, (s + 0.3 * rng.randn(n) > 0).astype(int), sorted(a + b)


def fingerprint(srs):
    """Everything a fit decides, for exact comparisons."""
    steps = [(s.features.tolist(), s.reused.tolist(), s.new.tolist()) for s in srs.history_]
    return (
        srs.support_.tolist(),
        srs.importances_.tolist(),
        [s.threshold for s in srs.history_],
        steps,
    )


# --------------------------------------------------------------------------- soundness
@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("n_probes", [0, 30])
def test_totally_randomized_trees_find_exactly_the_relevant_set(alpha, n_probes):
    # Prop. 7.1: K = 1 and r <= q  =>  F = the relevant variables. With n_probes = 0 the test
    # is the asymptotic "importance > 0"; irrelevant bits score exactly 0 on the full support.
    X, y = exhaustive()
    srs = SequentialRandomSubspace(
        TotallyRandomizedTreesClassifier(n_estimators=20),
        q=4, alpha=alpha, n_iterations=40, n_probes=n_probes, random_state=0,
    )  # fmt: skip
    srs.fit(X, y, true_support=RELEVANT)
    assert np.flatnonzero(srs.support_).tolist() == sorted(RELEVANT)
    assert srs.history_[-1].f1 == 1.0
    assert set(np.flatnonzero(srs.ranking_ <= 3)) == set(RELEVANT)


def test_any_k_finds_the_strongly_relevant_set():
    # Thm 7.2: every strongly relevant variable is found for any K (here K = 3 of 4), with
    # the asymptotic test "importance > 0" (no probes, which would be most of the K drawn).
    X, y = exhaustive()
    est = ExtraTreesClassifier(n_estimators=20, max_features=3)
    srs = SequentialRandomSubspace(est, q=4, n_iterations=40, n_probes=0, random_state=1)
    assert np.flatnonzero(srs.fit(X, y).support_).tolist() == sorted(RELEVANT)


def test_srs_recovers_planted_pairs_that_random_subspace_misses():
    X, y, truth = planted()
    kw = dict(q=10, n_iterations=40, n_probes=40, random_state=0)
    srs = SequentialRandomSubspace(alpha=0.5, **kw).fit(X, y, true_support=truth)
    rs = SequentialRandomSubspace(alpha=0.0, **kw).fit(X, y, true_support=truth)
    assert np.flatnonzero(srs.support_).tolist() == truth
    assert rs.history_[-1].f1 < 1.0  # b is found only next to its a: (q/p)^2 per iteration


# ------------------------------------------------------------------------------ draws
def test_alpha_zero_is_plain_random_subspace():
    X, y, _ = planted()
    fits = [
        SequentialRandomSubspace(q=12, alpha=0.0, n_iterations=8, n_probes=n, random_state=3).fit(
            X, y
        )
        for n in (10, 40)
    ]
    for srs in fits:
        assert all(len(s.reused) == 0 and len(s.features) == 12 for s in srs.history_)
    # The subspaces do not depend on what was found (different probes, same draws).
    assert [s.features.tolist() for s in fits[0].history_] == [
        s.features.tolist() for s in fits[1].history_
    ]


def test_subspace_mixes_found_and_new_columns_as_algorithm_1():
    X, y, _ = planted()
    srs = SequentialRandomSubspace(q=10, alpha=0.3, n_iterations=30, n_probes=40, random_state=0)
    srs.fit(X, y)
    found = np.array([], dtype=int)
    for s in srs.history_:
        assert len(s.features) == 10 == len(np.unique(s.features))
        assert len(s.reused) == min(3, len(found))  # floor(alpha q) from F
        assert set(s.reused) <= set(found)
        assert set(s.new).isdisjoint(found) and set(s.new) <= set(s.features)
        found = s.kept
    assert np.array_equal(np.flatnonzero(srs.support_), found)
    assert srs.n_draws_.sum() == 10 * 30


def test_callback_stops_and_trace_records_f1():
    X, y, truth = planted()
    srs = SequentialRandomSubspace(
        q=10, n_iterations=50, n_probes=40, random_state=0, callback=lambda s: s.f1 == 1.0
    )
    srs.fit(X, y, true_support=truth)
    assert srs.n_iterations_ == len(srs.history_) < 50
    trace = srs.trace_
    assert trace["f1"].iloc[-1] == 1.0 and (trace["f1"].iloc[:-1] < 1.0).all()
    assert trace["n_found"].is_monotonic_increasing


def test_regression_target_and_pipeline():
    X, _, truth = planted()
    rng = np.random.RandomState(0)
    y = X[:, 3] * (1 + X[:, 17]) + X[:, 40] * (1 + X[:, 45]) + 0.3 * rng.randn(len(X))
    srs = SequentialRandomSubspace(q=10, n_iterations=40, n_probes=40, random_state=1)
    assert np.flatnonzero(srs.fit(X, y).support_).tolist() == truth
    pipe = Pipeline([("srs", clone(srs)), ("lr", LinearRegression())]).fit(X, y)
    assert pipe[-1].coef_.shape == (4,)
    # probe_risk=0.05 is meant as the chance of any false discovery in the run; on this
    # small regression (400 rows, 40 probes) about 21% of runs add a noise column (35 of
    # seeds 0-159, the same with real or virtual probes): the probes' tail is estimated
    # from 40 values (ProbeImportances.threshold_at). Over 5 seeds, at most 3 runs add
    # any (probability 0.99 at that rate), none adds more than 2, none misses a planted one.
    extra = []
    for seed in range(5):
        found = clone(srs).set_params(random_state=seed).fit(X, y).support_
        assert found[truth].all()
        extra.append(int(found.sum()) - len(truth))
    assert max(extra) <= 2 and sum(e > 0 for e in extra) <= 3


# ----------------------------------------------------------------- same result anywhere
@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """The `planted` data in memory, as .npy in both orders, and as Parquet (float32)."""
    X, y, truth = planted(n=300, p=50, seed=2)
    X = X.astype(np.float32)
    d = tmp_path_factory.mktemp("srs")
    np.save(d / "c.npy", np.ascontiguousarray(X))
    np.save(d / "f.npy", np.asfortranarray(X))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    paths = {"c": str(d / "c.npy"), "f": str(d / "f.npy"), "array": X, "frame": frame}
    try:
        import pyarrow  # noqa: F401

        frame.assign(target=y).to_parquet(d / "x.parquet", row_group_size=128)
        paths["parquet"] = str(d / "x.parquet")
    except ImportError:
        pass
    return paths, y, truth


@pytest.mark.parametrize("kind", ["c", "f", "frame", "parquet"])
def test_out_of_core_equals_in_memory(stored, kind):
    paths, y, truth = stored
    if kind not in paths:
        pytest.skip("pyarrow is not installed")
    kw = dict(q=8, alpha=0.5, n_iterations=25, n_probes=20, random_state=7)
    ref = SequentialRandomSubspace(**kw).fit(paths["array"], y, true_support=truth)
    target = "target" if kind == "parquet" else y
    got = SequentialRandomSubspace(**kw).fit(paths[kind], target, true_support=truth)
    assert fingerprint(got) == fingerprint(ref)
    assert ref.support_.sum() >= 2  # the comparison saw found columns (R drawn from F)


@pytest.mark.parametrize("prefetch, n_jobs", [(False, 1), (True, 2), (False, None)])
def test_same_result_with_or_without_prefetch_and_any_n_jobs(stored, prefetch, n_jobs):
    paths, y, _ = stored
    kw = dict(q=8, alpha=0.5, n_iterations=25, n_probes=20, random_state=7)
    ref = SequentialRandomSubspace(**kw).fit(paths["f"], y)
    got = SequentialRandomSubspace(prefetch=prefetch, n_jobs=n_jobs, **kw).fit(paths["f"], y)
    assert fingerprint(got) == fingerprint(ref)
    assert got.bytes_read_ == ref.bytes_read_


def test_names_from_parquet_reach_the_selector(stored):
    paths, y, truth = stored
    if "parquet" not in paths:
        pytest.skip("pyarrow is not installed")
    srs = SequentialRandomSubspace(q=8, n_iterations=25, n_probes=20, random_state=7)
    srs.fit(paths["parquet"], "target", true_support=[f"x{j}" for j in truth])
    assert srs.n_features_in_ == 50
    assert list(srs.get_feature_names_out()) == [f"x{j}" for j in np.flatnonzero(srs.support_)]
    assert srs.history_[-1].f1 == 1.0
    assert srs.transform(paths["frame"]).shape == (300, srs.support_.sum())


# ------------------------------------------------------------------------ column source
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fortran_npy_reads_exactly_the_requested_columns(tmp_path, dtype):
    X = np.random.RandomState(0).rand(123, 40).astype(dtype)
    np.save(tmp_path / "f.npy", np.asfortranarray(X))
    np.save(tmp_path / "c.npy", X)
    cols = [7, 8, 9, 0, 39, 12]
    with open_source(str(tmp_path / "f.npy"))[0] as f, open_source(str(tmp_path / "c.npy"))[0] as c:
        for src in (f, c):
            got = src.read(cols)
            assert got.dtype == dtype and got.flags.f_contiguous
            assert np.array_equal(got, X[:, cols])
        size = np.dtype(dtype).itemsize
        assert f.bytes_read == 123 * len(cols) * size  # 4 n q or 8 n q, nothing else
        assert c.bytes_read == 123 * 40 * size  # C order: the whole file per read
        assert f.read([]).shape == c.read([]).shape == (123, 0)
        assert c.bytes_read == 123 * 40 * size  # reading nothing costs nothing


def test_c_order_file_is_scanned_once_per_iteration(stored):
    paths, y, _ = stored
    srs = SequentialRandomSubspace(q=8, alpha=0.5, n_iterations=10, n_probes=10, random_state=0)
    srs.fit(paths["c"], y)
    assert srs.support_.any()  # R is drawn from F, from columns kept in memory
    assert srs.bytes_read_ == 10 * 300 * 50 * 4


def test_random_subspace_reads_q_columns_per_iteration(stored):
    paths, y, _ = stored
    srs = SequentialRandomSubspace(q=8, alpha=0.0, n_iterations=10, n_probes=10, random_state=0)
    srs.fit(paths["f"], y)
    assert srs.bytes_read_ == 10 * 8 * 300 * 4
    assert [s.bytes_read for s in srs.history_] == [(t + 1) * 8 * 300 * 4 for t in range(10)]


def test_parquet_projection_reads_only_the_requested_chunks(stored, tmp_path):
    paths, _, _ = stored
    if "parquet" not in paths:
        pytest.skip("pyarrow is not installed")
    source, y = open_source(paths["parquet"], target="target")
    with source:
        assert source.n_columns == 50 and source.dtype == np.float32
        assert np.array_equal(source.read([4, 2]), paths["array"][:, [4, 2]])
        assert 0 < source.bytes_read < os.path.getsize(paths["parquet"]) / 10
    # A pandas index stored as a column is not a feature; labels may be strings.
    frame = paths["frame"].iloc[:, :3].set_index(np.arange(300) * 2).assign(label="a")
    frame.to_parquet(tmp_path / "i.parquet")
    source, y = open_source(str(tmp_path / "i.parquet"), target="label")
    with source:
        assert source.names == ["x0", "x1", "x2"] and list(y[:2]) == ["a", "a"]


def test_reading_a_large_file_keeps_the_peak_rss_small(tmp_path):
    # 200 MB on disk in each order; every column is read once in batches of 100. Pages of a
    # memory map would stay resident (+200 MB); positional reads into a buffer do not.
    n, p = 5000, 10000
    block = np.arange(n * 500, dtype=np.float32)
    for order, fortran in (("f", True), ("c", False)):
        with open(tmp_path / f"{order}.npy", "wb") as fh:
            header = {"descr": "<f4", "fortran_order": fortran, "shape": (n, p)}
            np.lib.format.write_array_header_1_0(fh, header)
            for _ in range(p // 500):
                fh.write(block.tobytes())
    script = textwrap.dedent(
        f"""
        import numpy as np
        from forestimp.selection._columns import open_source
        def hwm():
            line = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0]
            return int(line.split()[1]) * 1024
        for order, batches in (("f", range(0, {p}, 100)), ("c", [0])):
            source, _ = open_source(r"{tmp_path}/" + order + ".npy")
            before = hwm()
            for j in batches:
                block = source.read(np.arange(j, j + 100))
            print(order, hwm() - before, source.bytes_read)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    grow = {out[0]: int(out[1]), out[3]: int(out[4])}
    assert int(out[2]) == int(out[5]) == n * p * 4  # each file read once, whole
    assert grow["f"] < 20e6 and grow["c"] < 40e6  # vs 200 MB of file


def test_probe_tail_threshold_matches_an_exponential_law():
    # Probes from Exp(1): P(X > t) = e^-t, so the 1e-6 quantile is ln(1e6) = 13.8, beyond
    # the best of the 20 000 probes (about ln 20 000 = 9.9).
    probes = np.random.RandomState(0).exponential(size=20_000)
    res = ProbeImportances(importances=np.zeros(1), probes=probes, sources=probes, estimator=None)
    assert res.threshold_at(1e-4, 100) == pytest.approx(np.log(1e6), rel=0.03)
    assert res.threshold_at(0.5, 1) == res.threshold  # never below the best probe


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "params, match",
    [
        (dict(q=51), "'q'"),
        (dict(q=0), "'q'"),
        (dict(alpha=1.5), "'alpha'"),
        (dict(alpha=-0.1), "'alpha'"),
        (dict(n_iterations=0), "'n_iterations'"),
        (dict(probe_risk=1.0), "'probe_risk'"),
        (dict(importance="gain"), "'importance'"),
    ],
)
def test_bad_parameters(stored, params, match):
    paths, y, _ = stored
    with pytest.raises(InvalidParameterError, match=match):
        SequentialRandomSubspace(**{"q": 5, **params}).fit(paths["array"], y)


def test_bad_data(stored, tmp_path):
    paths, y, _ = stored
    srs = SequentialRandomSubspace(q=5, n_iterations=2)
    with pytest.raises(FileNotFoundError):
        srs.fit(str(tmp_path / "missing.npy"), y)
    with pytest.raises(InvalidParameterError, match="array"):
        srs.fit(paths["f"], "target")  # a column name needs a DataFrame or Parquet file
    with pytest.raises(InvalidParameterError, match=".npy or .parquet"):
        srs.fit(str(tmp_path / "x.csv"), y)
    with pytest.raises(DataError, match="y must have shape"):
        srs.fit(paths["f"], y[:-1])
    with pytest.raises(DataError, match="'nope'"):
        srs.fit(paths["frame"], "nope")
    np.save(tmp_path / "s.npy", np.array([["a", "b"]]))
    with pytest.raises(DataError, match="numbers"):
        srs.fit(str(tmp_path / "s.npy"), [0])
    if "parquet" in paths:
        with pytest.raises(DataError, match="'nope'"):
            srs.fit(paths["parquet"], "nope")

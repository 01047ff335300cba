"""Hostile model files, pickles and parameters: a typed error, never a crash, a hang or an
abort on an allocation (docs/model-files.md states the guarantees tested here).

Cases that crashed, hung or aborted before their fix run in a child process with a time
limit, so that a regression fails the test instead of killing or stalling the runner.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import forestimp
from forestimp._core import Forest
from forestimp.exceptions import DataError, InvalidParameterError, ModelFormatError

from conftest import ALL_ESTIMATORS, CLASSIFIERS, REGRESSORS
from model_forge import file_sections, read_param, seal_file, with_param

BOOSTERS = [forestimp.GradientBoostingClassifier, forestimp.GradientBoostingRegressor]
EVERY = ALL_ESTIMATORS + BOOSTERS
HERE = Path(__file__).parent


def isolated(code: str, timeout: float = 120) -> str:
    """Runs ``code`` in a fresh interpreter (this file's folder importable) and returns its
    output; a crash, an abort or a timeout fails the calling test."""
    prelude = f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
    try:
        done = subprocess.run(
            [sys.executable, "-c", prelude + textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "RUST_BACKTRACE": "0"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hung for more than {timeout} s:\n{code}")
    if done.returncode != 0:
        pytest.fail(f"exit code {done.returncode}:\n{code}\n{done.stdout}\n{done.stderr[-3000:]}")
    return done.stdout


def _data(cls, n=60, p=3):
    rng = np.random.RandomState(0)
    X = rng.rand(n, p)
    y = (X[:, 0] > 0.5).astype(int) if cls._is_classifier else X[:, 0] + rng.rand(n)
    return X, y


# ------------------------------------------------------------------------ parameters
@pytest.mark.parametrize("cls", EVERY, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    "param, value",
    [
        ("n_estimators", 2**63),
        ("n_estimators", 2**64),
        ("n_estimators", 2**32 - 1),
        ("max_depth", 2**64),
        ("max_leaf_nodes", 2**64),
        ("min_samples_split", 2**64),
    ],
)
def test_huge_integers_are_parameter_errors(cls, param, value):
    X, y = _data(cls)
    with pytest.raises(InvalidParameterError, match=param):
        cls(**{param: value}).fit(X, y)


def test_more_trees_than_memory_holds_is_a_memory_error():
    """2**32 - 2 trees pass the bound on tree indices, but their records alone outgrow any
    machine: refused before the fit starts (it hung, or aborted on the allocation)."""
    out = isolated(
        """
        import numpy as np, forestimp
        X = np.random.rand(30, 3); y = np.arange(30) % 2
        for cls in (forestimp.RandomForestClassifier, forestimp.ExtraTreesRegressor,
                    forestimp.GradientBoostingClassifier):
            try:
                cls(n_estimators=2**32 - 2).fit(X, y)
            except MemoryError as e:
                print("MemoryError", e)
        """
    )
    assert out.count("MemoryError") == 3, out


# ----------------------------------------------------------------------- sample weights
@pytest.mark.parametrize("cls", EVERY, ids=lambda c: c.__name__)
def test_weights_summing_past_float64_are_refused(cls):
    """Each weight is finite, their sum is not: every prediction was NaN, silently (and
    weights of 1e300, whose squared sums overflow, grew wrong trees)."""
    X, y = _data(cls)
    with pytest.raises(DataError, match="past the largest float64"):
        cls(n_estimators=3, random_state=0).fit(X, y, sample_weight=np.full(len(y), 1e308))
    with pytest.raises(DataError, match="past the largest float64"):
        cls(n_estimators=3, random_state=0).fit(X, y, sample_weight=np.full(len(y), 1e300))


@pytest.mark.parametrize("cls", REGRESSORS + BOOSTERS[1:], ids=lambda c: c.__name__)
def test_targets_whose_squares_overflow_are_refused(cls):
    """y of 1e200: the variance proxies overflowed, every tree was one leaf, silently."""
    X, y = _data(cls)
    with pytest.raises(DataError, match="divide y"):
        cls(n_estimators=3, random_state=0).fit(X, y * 1e200)


@pytest.mark.parametrize("cls", CLASSIFIERS, ids=lambda c: c.__name__)
def test_class_weights_summing_past_float64_are_refused(cls):
    X, y = _data(cls)
    est = cls(n_estimators=3, class_weight={0: 1e308, 1: 1e308}, random_state=0)
    with pytest.raises(DataError, match="past the largest float64"):
        est.fit(X, y)


@pytest.mark.parametrize("cls", REGRESSORS[:1] + CLASSIFIERS[:1], ids=lambda c: c.__name__)
def test_large_weights_whose_sums_stay_finite_still_fit(cls):
    """Weights of 2**200 (a power of two: every sum scales exactly) grow the same trees."""
    X, y = _data(cls)
    est = cls(n_estimators=3, random_state=0).fit(X, y, sample_weight=np.full(len(y), 2.0**200))
    same = cls(n_estimators=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(est.predict(X), same.predict(X))


# ------------------------------------------------------------------- forged models
_FORGE = """
import numpy as np, forestimp
from model_forge import with_param
X = np.random.RandomState(0).rand(60, 3); y = (X[:, 0] > .5).astype(int)
est = forestimp.RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)

def forged(n_features=None, **params):
    '''The pickled state of est with model parameters changed, every checksum right.'''
    state = est.__getstate__()
    fitted = dict(state["fitted"])
    model = fitted["model"]
    for name, value in params.items():
        model = with_param(model, name, value)
    if n_features is not None:
        model = with_param(model, "n_features", n_features)
        model = with_param(model, "tree_features", n_features)
        fitted["n_features_in_"] = n_features
        n, _, crc = fitted["_training_fingerprint"]
        fitted["_training_fingerprint"] = (n, n_features, crc)
    fitted["model"] = model
    state = {**state, "fitted": fitted}
    state.pop("fitted_crc32")  # a forger recomputes it, or leaves it out
    copy = forestimp.RandomForestClassifier.__new__(forestimp.RandomForestClassifier)
    copy.__setstate__(state)
    return copy
"""


@pytest.mark.parametrize(
    "what", ["e.feature_importances_", "e.tree_importances()", "importance.mdi(e, by_depth=True)"]
)
def test_a_model_claiming_more_features_than_memory_raises_memory_error(what):
    """A 2**32 - 1 feature claim loads (nothing in a model bounds it below what a fit can
    take), but what would be sized from it is refused with MemoryError: it aborted."""
    out = isolated(
        _FORGE
        + f"""
e = forged(n_features=2**32 - 1)
try:
    from forestimp import importance
    print({what})
except MemoryError as err:
    print("MemoryError", err)
"""
    )
    assert out.startswith("MemoryError"), out


def test_a_model_claiming_more_draws_than_its_rows_allow_is_refused_at_load(tmp_path):
    """2**31 bootstrap draws a tree from 60 rows: every out-of-bag pass replayed them for
    minutes. The bound is the fit's (1024 draws a row); file and pickle alike."""
    X, y = _data(forestimp.RandomForestClassifier)
    est = forestimp.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    model = est.forest_.to_bytes()
    assert read_param(model, "n_draws") == 60
    ok = with_param(model, "n_draws", 60 * 1024)
    assert Forest.from_bytes(ok).n_estimators == 3
    for n_draws in (60 * 1024 + 1, 2**31, 2**32):
        lying = with_param(model, "n_draws", n_draws)
        with pytest.raises(ModelFormatError, match="inconsistent model parameters"):
            Forest.from_bytes(lying)
        sections = file_sections(forestimp.persistence.dumps(est))
        sections[-1] = (b"MODL", lying)
        with pytest.raises(ModelFormatError):
            forestimp.persistence.loads(seal_file(sections))


def test_fitting_more_draws_than_the_bound_is_a_parameter_error():
    X, y = _data(forestimp.RandomForestRegressor)
    est = forestimp.RandomForestRegressor(n_estimators=2, max_samples=60 * 1024 + 1)
    with pytest.raises(InvalidParameterError, match="max_samples"):
        est.fit(X, y)
    forestimp.RandomForestRegressor(n_estimators=2, max_samples=60 * 1024).fit(X, y)


# ---------------------------------------------------------------- what checksums cover
def _flip_first(data: bytes, needle: bytes) -> bytes:
    at = data.find(needle)
    assert at >= 0 and data.find(needle, at + 1) < 0, "the needle must occur once"
    out = bytearray(data)
    out[at] ^= 0x01
    return bytes(out)


@pytest.mark.parametrize(
    "cls", [forestimp.RandomForestClassifier, forestimp.GradientBoostingClassifier]
)
def test_a_flipped_byte_in_pickled_classes_is_refused(cls):
    """``classes_`` sits beside the checksummed model bytes: a flip there changed the
    predicted labels silently. The pickle now carries a CRC-32 of the fitted data."""
    X, y = _data(cls)
    labels = np.array([1234567, 7654321])[y]
    est = cls(n_estimators=3, random_state=0).fit(X, labels)
    data = pickle.dumps(est)
    assert (pickle.loads(data).predict(X) == est.predict(X)).all()
    damaged = _flip_first(data, np.int64(7654321).tobytes())
    with pytest.raises(ModelFormatError, match="checksum"):
        pickle.loads(damaged)


@pytest.mark.parametrize(
    "cls", [forestimp.ExtraTreesClassifier, forestimp.GradientBoostingClassifier]
)
def test_every_byte_of_a_saved_file_is_covered(cls):
    """A flip of any one byte of a file (header, section headers, metadata, arrays or
    model) is refused: nothing a file restores lies outside a checksum or a check."""
    X, y = _data(cls, n=30, p=2)
    names = np.array(["a", "b"])
    est = cls(n_estimators=2, max_depth=2, random_state=0)
    est.fit(__import__("pandas").DataFrame(X, columns=names), names[y])
    data = forestimp.persistence.dumps(est)
    assert len(data) < 6000
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0x10
        with pytest.raises(ModelFormatError):
            forestimp.persistence.loads(bytes(damaged))


# ------------------------------------------------------------------- memory of a load
def test_loading_allocates_at_most_32_times_the_file():
    """docs/model-files.md's bound, on the densest files known: single-leaf trees (about
    33 bytes of file for a tree record of several hundred bytes) and boosted stumps. The
    peak resident memory of the load, measured by the kernel, must stay under 32 times
    the file's size plus 16 MiB; a META section over its cap is refused unread."""
    out = isolated(
        """
        import numpy as np, forestimp
        from forestimp import persistence
        from forestimp.exceptions import ModelFormatError
        from model_forge import file_sections, seal_file

        def peak_of_load(data):
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets the peak resident size
            now = lambda key: next(
                int(line.split()[1]) * 1024
                for line in open("/proc/self/status") if line.startswith(key)
            )
            base = now("VmRSS")
            persistence.loads(data)
            return now("VmHWM") - base

        X = np.random.RandomState(0).rand(200, 3); y = (X[:, 0] > .5).astype(int)
        leaves = forestimp.RandomForestClassifier(20000, min_samples_split=1000).fit(X, y)
        stumps = forestimp.GradientBoostingRegressor(n_estimators=10000, max_depth=1)
        for est in (leaves, stumps.fit(X, X[:, 0])):
            data = persistence.dumps(est)
            print("ratio", (peak_of_load(data) - (16 << 20)) / len(data))
        sections = file_sections(persistence.dumps(leaves))
        sections[0] = (b"META", b"[" + b"[]," * (2 << 20) + b"[]]")
        try:
            persistence.loads(seal_file(sections))
        except ModelFormatError as e:
            print("refused", e)
        """,
        timeout=300,
    )
    ratios = [float(line.split()[1]) for line in out.splitlines() if line.startswith("ratio")]
    assert len(ratios) == 2 and max(ratios) <= 32, out
    assert "refused The META section is" in out, out


def test_repeat_counts_beyond_memory_are_memory_errors():
    """Out-of-bag permutation (forest, booster) and context importances allocate per
    repeat: 2**40 repeats aborted the process on the allocation."""
    out = isolated(
        """
        import numpy as np, forestimp
        from forestimp.importance import context, permutation
        X = np.random.RandomState(0).rand(60, 3); y = (X[:, 0] > .5).astype(int)
        forest = forestimp.RandomForestClassifier(3, random_state=0).fit(X, y)
        booster = forestimp.GradientBoostingClassifier(n_estimators=3, subsample=0.5).fit(X, y)
        calls = [
            lambda: permutation(forest, X, y, oob=True, n_repeats=2**40),
            lambda: permutation(booster, X, y, oob=True, n_repeats=2**40),
            lambda: permutation(forest, X, y, n_repeats=2**40),
            lambda: context(forest, X, y, context=(X[:, 1] > .5).astype(int),
                            n_permutations=2**40),
        ]
        for call in calls:
            try:
                call()
            except MemoryError:
                print("MemoryError")
        """
    )
    assert out.count("MemoryError") == 4, out

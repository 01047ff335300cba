"""``est.save`` / ``forestimp.load``: round trips, refusals, and a fuzz battery on the loader.

The container layout is in ``forestimp.persistence``'s docstring: magic b"FIMPSAVE", u16
version, u16 flags, u32 section count, then sections (4-byte tag, u64 length, u32 CRC-32,
body): META (JSON), ARRY (one per array), MODL (``Forest.to_bytes()``).
"""

from __future__ import annotations

import builtins
import json
import pickle
import struct
import subprocess
import sys
import textwrap
import warnings
import zlib

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification

import forestimp as fi
from forestimp import _core, persistence
from forestimp.exceptions import (
    DataError,
    InvalidParameterError,
    ModelFormatError,
    NotFittedError,
)
from forestimp.importance import permutation

from conftest import ALL_ESTIMATORS, CLASSIFIERS
from model_forge import file_sections

HEADER = struct.Struct("<8sHHI")
SECTION = struct.Struct("<4sQI")


def _data(classifier: bool, n: int = 120, p: int = 6):
    X, y = make_classification(
        n_samples=n, n_features=p, n_informative=3, n_redundant=0, n_classes=3, random_state=0
    )
    return X, (y if classifier else X[:, 0] + 2 * X[:, 1] ** 2)


def _seal(sections, version: int = 1, flags: int = 0, count: int | None = None) -> bytes:
    """A file around ``sections`` with correct lengths and checksums."""
    n = len(sections) if count is None else count
    parts = [HEADER.pack(b"FIMPSAVE", version, flags, n)]
    for tag, body in sections:
        parts += [SECTION.pack(tag, len(body), zlib.crc32(body)), body]
    return b"".join(parts)


def _with_meta(data: bytes, edit) -> bytes:
    """``data`` with its META JSON passed through ``edit`` (which changes it in place)."""
    sections = file_sections(data)
    meta = json.loads(sections[0][1])
    edit(meta)
    return _seal([(b"META", json.dumps(meta).encode()), *sections[1:]])


def _fitted_twins(est, X, y):
    """``est`` fitted, and its copy through a saved file."""
    est.fit(X, y)
    return est, persistence.loads(persistence.dumps(est))


def _assert_same_model(a, b, X):
    assert type(a) is type(b)
    assert a.get_params() == b.get_params()
    assert b.forest_.to_bytes() == a.forest_.to_bytes()
    assert persistence.dumps(b) == persistence.dumps(a)
    assert np.array_equal(a.predict(X), b.predict(X))
    if hasattr(a, "predict_proba"):
        assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
        assert np.array_equal(a.classes_, b.classes_)
        assert a.classes_.dtype == b.classes_.dtype
    assert np.array_equal(a.apply(X), b.apply(X))
    assert np.array_equal(a.feature_importances_, b.feature_importances_)
    assert np.array_equal(a.tree_importances(), b.tree_importances())
    for name in ("n_features_in_", "n_outputs_", "_training_fingerprint", "oob_score_"):
        assert getattr(a, name, None) == getattr(b, name, None), name


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_round_trip_every_estimator(cls, tmp_path):
    X, y = _data(cls in CLASSIFIERS)
    est = cls(n_estimators=6, random_state=3).fit(X, y)
    est.save(tmp_path / "model.fimp")
    back = fi.load(tmp_path / "model.fimp")
    _assert_same_model(est, back, X)
    assert not hasattr(back, "feature_names_in_")


VARIANTS = {
    "rf-hist": (fi.RandomForestClassifier, dict(splitter="hist", max_bins=16)),
    "rf-reg-hist": (fi.RandomForestRegressor, dict(splitter="hist", max_bins=32)),
    "patches-hist": (fi.RandomPatchesRegressor, dict(splitter="hist", max_features=0.5)),
    "patches-best": (fi.RandomPatchesClassifier, dict(splitter="best", max_features_node=2)),
    "et-entropy": (fi.ExtraTreesClassifier, dict(criterion="log_loss", max_depth=4)),
    "oob-clf": (fi.RandomForestClassifier, dict(oob_score=True, class_weight="balanced")),
    "oob-reg": (fi.RandomForestRegressor, dict(oob_score=True, max_samples=0.7)),
    "weights": (fi.RandomForestClassifier, dict(class_weight={"a": 2.0, "c": 0.5})),
    "non-finite": (fi.ExtraTreesRegressor, dict(min_impurity_decrease=0.0, max_features=1.0)),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_round_trip_variants_with_feature_names_and_string_labels(variant):
    cls, params = VARIANTS[variant]
    X, y = _data(cls in CLASSIFIERS)
    X = pd.DataFrame(X, columns=[f"x{j}é" for j in range(X.shape[1])])
    if cls in CLASSIFIERS:
        y = np.array(["a", "b", "c"], dtype=object)[y]  # pandas-style object labels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # too few trees for every OOB row
        est, back = _fitted_twins(cls(n_estimators=8, random_state=1, **params), X, y)
    _assert_same_model(est, back, X)
    assert list(back.feature_names_in_) == list(X.columns)
    assert back.feature_names_in_.dtype == object
    if cls in CLASSIFIERS:
        assert back.classes_.dtype == object and list(back.classes_) == ["a", "b", "c"]
    for name in ("oob_decision_function_", "oob_prediction_"):
        if hasattr(est, name):
            assert np.array_equal(getattr(back, name), getattr(est, name), equal_nan=True)


def test_tagged_parameter_values_round_trip():
    X, y = _data(True)
    est = fi.RandomForestClassifier(
        n_estimators=3, random_state=np.int64(5), class_weight={0: 1.5, 1: 2, 2: 1.0}
    )
    est, back = _fitted_twins(est, X, y)
    assert back.class_weight == {0: 1.5, 1: 2, 2: 1.0}
    assert [type(k) for k in back.class_weight] == [int, int, int]
    assert type(back.random_state) is int
    meta = json.loads(file_sections(persistence.dumps(est))[0][1])
    assert meta["params"]["class_weight"] == {"dict": [[0, 1.5], [1, 2], [2, 1.0]]}
    # A non-finite float is a tagged value, so META stays standard JSON.
    est.set_params(min_impurity_decrease=float("inf"))
    meta = json.loads(file_sections(persistence.dumps(est))[0][1])
    assert meta["params"]["min_impurity_decrease"] == {"float": "inf"}
    assert persistence.loads(persistence.dumps(est)).min_impurity_decrease == float("inf")


def test_oob_measures_work_after_load_with_the_training_data():
    X, y = _data(True)
    est, back = _fitted_twins(fi.RandomForestClassifier(n_estimators=10, random_state=0), X, y)
    a = permutation(est, X, y, oob=True, random_state=0)
    b = permutation(back, X, y, oob=True, random_state=0)
    assert np.array_equal(a.importances, b.importances)
    with pytest.raises(DataError, match="training data"):
        permutation(back, X[::-1], y[::-1], oob=True)


def test_pickle_and_save_share_the_fitted_state():
    X, y = _data(False)
    est = fi.ExtraTreesRegressor(n_estimators=4, random_state=0).fit(X, y)
    state = est.__getstate__()
    assert state["fitted"]["model"] == est.forest_.to_bytes()
    assert "forest_" not in state["attributes"]
    assert persistence.dumps(pickle.loads(pickle.dumps(est))) == persistence.dumps(est)
    # Pickles from before this state (the plain __dict__) still load.
    legacy = fi.ExtraTreesRegressor.__new__(fi.ExtraTreesRegressor)
    legacy.__setstate__(dict(est.__dict__))
    assert np.array_equal(legacy.predict(X), est.predict(X))
    # An unfitted estimator pickles as its parameters.
    twin = pickle.loads(pickle.dumps(fi.ExtraTreesRegressor(n_estimators=7)))
    assert twin.n_estimators == 7 and not hasattr(twin, "forest_")


def test_pickle_keeps_forests_grown_on_a_view_and_save_refuses_them():
    X, y = _data(True)
    est = fi.RandomForestClassifier(n_estimators=3, random_state=0)
    est._fit(X, y, None, shadows=True)  # as forestimp.importance.unbiased does
    assert est.forest_.n_features == 2 * X.shape[1]
    twin = pickle.loads(pickle.dumps(est))
    assert twin.forest_.to_bytes() == est.forest_.to_bytes()
    with pytest.raises(DataError, match="view"):
        persistence.dumps(est)


def test_loading_runs_no_code(monkeypatch, tmp_path):
    X, y = _data(True)
    est = fi.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    est.save(tmp_path / "m.fimp")
    imported = set(sys.modules)

    def forbidden(*args, **kwargs):
        raise AssertionError("load used pickle or eval")

    for module, name in [(pickle, "loads"), (pickle, "load"), (pickle, "Unpickler")]:
        monkeypatch.setattr(module, name, forbidden)
    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    back = fi.load(tmp_path / "m.fimp")
    assert set(sys.modules) == imported
    assert np.array_equal(back.predict(X), est.predict(X))


# ----------------------------------------------------------------------- save refusals
@pytest.mark.parametrize(
    "params, name",
    [
        (dict(random_state=np.random.RandomState(0)), "random_state"),
        (dict(oob_score=lambda y, p: 1.0), "oob_score"),
        (dict(class_weight={(0, 1): 1.0}), "class_weight"),
    ],
    ids=["RandomState", "callable", "tuple-key"],
)
def test_save_refuses_parameters_that_are_not_data(params, name):
    X, y = _data(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = fi.RandomForestClassifier(n_estimators=3, **params)
        try:
            est.fit(X, y)
        except Exception:
            est = fi.RandomForestClassifier(n_estimators=3).fit(X, y).set_params(**params)
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter"):
        persistence.dumps(est)


def test_save_refuses_unfitted_and_foreign_estimators():
    with pytest.raises(NotFittedError):
        persistence.dumps(fi.ExtraTreesClassifier())

    class Mine(fi.ExtraTreesClassifier):
        pass

    X, y = _data(True)
    with pytest.raises(InvalidParameterError, match="Mine"):
        persistence.dumps(Mine(n_estimators=2).fit(X, y))


# ------------------------------------------------------------------ hostile / damaged files
@pytest.fixture(scope="module")
def small_file():
    """A small file with every kind of section: labels, feature names, OOB arrays."""
    X, y = _data(True, n=40, p=3)
    X = pd.DataFrame(X, columns=["a", "b", "c"])
    y = np.array(["no", "yes", "maybe"])[y]
    est = fi.RandomForestClassifier(n_estimators=12, max_depth=2, oob_score=True, random_state=0)
    return persistence.dumps(est.fit(X, y)), X


def _meta_edits():
    def setter(*path, value):
        def edit(meta):
            for key in path[:-1]:
                meta = meta[key]
            meta[path[-1]] = value

        return edit

    def array_record(which, **changes):
        def edit(meta):
            (record,) = [r for r in meta["arrays"] if r["name"] == which]
            record.update(changes)

        return edit

    def as_regressor(meta):
        meta["class"] = "RandomForestRegressor"
        del meta["params"]["class_weight"]

    return {
        "class-not-allowed": (setter("class", value="os.system"), "not a forestimp estimator"),
        "class-base": (setter("class", value="BaseForest"), "not a forestimp estimator"),
        "class-not-str": (setter("class", value=["RandomForestClassifier"]), "not a forestimp"),
        "regressor-class": (as_regressor, "a regressor with a classification model"),
        "unknown-param": (setter("params", "evil", value=1), "does not accept.*evil"),
        "params-not-object": (setter("params", value=[1]), "params"),
        "bad-tag": (setter("params", "max_depth", value={"call": "os.system"}), "tagged"),
        "two-tags": (setter("params", "max_depth", value={"list": [], "dict": []}), "tagged"),
        "format": (setter("format", value="pickle"), "record"),
        "extra-key": (setter("code", value="print(1)"), "keys"),
        "n-features-type": (setter("fitted", "n_features_in_", value="3"), "must be an int"),
        "n-features-mismatch": (setter("fitted", "n_features_in_", value=2), "features"),
        "n-features-huge": (setter("fitted", "n_features_in_", value=2**60), "outside"),
        "n-classes": (setter("fitted", "n_classes_", value=2), "n_classes_"),
        "fingerprint": (
            setter("fitted", "_training_fingerprint", value={"tuple": [1, 2]}),
            "fingerprint",
        ),
        "fingerprint-p": (
            setter("fitted", "_training_fingerprint", value={"tuple": [40, 4, 1]}),
            "outside",
        ),
        "oob-score-str": (setter("fitted", "oob_score_", value="high"), "oob_score_"),
        "unknown-fitted": (setter("fitted", "forest_", value=1), "Unknown fitted"),
        "outputs": (setter("fitted", "n_outputs_", value=2), "n_outputs_"),
        "classes-length": (array_record("classes_", shape=[5], dtype="<U3"), "expected"),
        "dtype-object": (array_record("classes_", dtype="|O"), "dtype"),
        "dtype-complex": (array_record("oob_decision_function_", dtype="<c16"), "dtype"),
        "dtype-big-endian": (array_record("oob_decision_function_", dtype=">f8"), "dtype"),
        "dtype-wrong-kind": (array_record("oob_decision_function_", dtype="<i8"), "kind"),
        "shape-1d": (array_record("oob_decision_function_", shape=[120]), "expected"),
        "shape-3d": (array_record("oob_decision_function_", shape=[40, 3, 1]), "shape"),
        "shape-negative": (array_record("oob_decision_function_", shape=[-40, -3]), "shape"),
        "shape-float": (array_record("oob_decision_function_", shape=[40.0, 3]), "shape"),
        "shape-huge": (array_record("oob_decision_function_", shape=[2**60, 2**60]), "bytes"),
        "object-float": (array_record("oob_decision_function_", object=True), "object"),
        "unknown-array": (array_record("classes_", name="__class__"), "Unknown fitted array"),
        "duplicate-array": (array_record("feature_names_in_", name="classes_"), "twice"),
    }


META_EDITS = _meta_edits()


@pytest.mark.parametrize("case", META_EDITS)
def test_hostile_metadata_is_refused(small_file, case):
    data, _ = small_file
    edit, message = META_EDITS[case]
    with pytest.raises(ModelFormatError, match=message):
        persistence.loads(_with_meta(data, edit))


@pytest.mark.parametrize(
    "est, p, n_classes, message",
    [
        (fi.ExtraTreesRegressor(n_estimators=2), 3, 3, "classification model"),
        (fi.ExtraTreesClassifier(n_estimators=2), 6, 3, "model has 6 features"),
        (fi.RandomForestClassifier(n_estimators=2), 3, 2, "classes_ has shape"),
    ],
    ids=["regression", "n_features", "n_classes"],
)
def test_model_bytes_inconsistent_with_metadata(small_file, est, p, n_classes, message):
    """The small file's META (3 features, 3 classes) in front of another model."""
    data, _ = small_file
    X, y = _data(True, p=p)
    model = est.fit(X, y % n_classes if est._is_classifier else X[:, 0]).forest_.to_bytes()
    with pytest.raises(ModelFormatError, match=message):
        persistence.loads(_seal([*file_sections(data)[:-1], (b"MODL", model)]))


def test_hostile_container_is_refused(small_file):
    data, _ = small_file
    sections = file_sections(data)
    meta = sections[0][1]
    cases = {
        b"XIMPSAVE" + data[8:]: "magic",
        data[:8]: "magic",
        _seal(sections, version=2): "version 2.*upgrade",
        _seal(sections, version=0): "does not exist",
        _seal(sections, flags=4): "flags",
        _seal(sections, count=len(sections) + 1): "Truncated",
        _seal(sections, count=2**32 - 1): "Truncated",
        _seal(sections[:-1]): "MODL",
        _seal(sections[1:]): "META",
        _seal([sections[0], (b"EXEC", b""), *sections[1:]]): "sections",
        _seal([(b"META", meta), *sections]): "sections",
        data + b"\x00": "follow",
        _seal([(b"META", b"\xff\xfe"), *sections[1:]]): "JSON",
        _seal([(b"META", b"[" * 200_000 + b"]" * 200_000), *sections[1:]]): "JSON",
        _seal([(b"META", b'{"a": NaN}'), *sections[1:]]): "JSON",
        _seal([(b"META", b'{"a": 1, "a": 2}'), *sections[1:]]): "JSON",
        _seal([(b"META", b"1" * 5000), *sections[1:]]): "JSON|keys",
        _seal([(b"META", b"[]"), *sections[1:]]): "keys",
        _seal([*sections[:-1], (b"MODL", b"FIMP")]): "magic|header",
        _seal([*sections[:-1], (b"MODL", sections[-1][1][:-1])]): "payload",
    }
    for damaged, message in cases.items():
        with pytest.raises(ModelFormatError, match=message):
            persistence.loads(damaged)
    # A text array whose UTF-32 code units are not characters.
    (index,) = [i for i, (tag, body) in enumerate(sections) if body.startswith(b"m\x00\x00\x00")]
    bad = list(sections)
    bad[index] = (b"ARRY", b"\xff\xff\xff\xff" + sections[index][1][4:])
    with pytest.raises(ModelFormatError, match="Unicode"):
        persistence.loads(_seal(bad))
    with pytest.raises(TypeError):
        persistence.loads(bytearray(data))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ fuzzing
def _must_refuse(blob: bytes) -> None:
    with pytest.raises(ModelFormatError):
        persistence.loads(blob)


def test_fuzz_random_bytes():
    rng = np.random.default_rng(0)
    for i in range(600):
        junk = rng.integers(0, 256, size=int(rng.integers(0, 400)), dtype=np.uint8).tobytes()
        if i % 3 == 1:
            junk = b"FIMPSAVE" + junk  # past the magic
        elif i % 3 == 2:  # past the header, into the section parser
            junk = HEADER.pack(b"FIMPSAVE", 1, 0, int(rng.integers(0, 6))) + junk
        _must_refuse(junk)


def test_fuzz_every_truncation(small_file):
    data, _ = small_file
    assert len(data) < 4500  # keeps this loop short (the META of 30 parameters)
    for keep in range(len(data)):
        _must_refuse(data[:keep])


def test_fuzz_every_single_bit_flip(small_file):
    """Every bit of the file is covered by the header checks or a section's CRC-32."""
    data, _ = small_file
    for bit in range(8 * len(data)):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        _must_refuse(bytes(flipped))


def test_fuzz_resealed_metadata_mutations(small_file):
    """Damage behind valid checksums reaches the JSON and field checks: the file is
    refused, or it loads into an estimator that predicts or refuses with a typed error."""
    data, X = small_file
    sections = file_sections(data)
    meta = sections[0][1]
    rng = np.random.default_rng(1)
    loaded = 0
    for _ in range(1500):
        mutated = bytearray(meta)
        for pos in rng.integers(0, len(meta), size=int(rng.integers(1, 3))):
            mutated[pos] = int(rng.integers(32, 127))
        try:
            est = persistence.loads(_seal([(b"META", bytes(mutated)), *sections[1:]]))
        except ModelFormatError:
            continue
        loaded += 1
        try:
            est.predict(X)
        except (InvalidParameterError, DataError):
            pass  # e.g. a mutated n_jobs or feature name: refused where it is used
    assert loaded > 0  # e.g. a digit of n_estimators or of a feature name


def _model_envelope(payload: bytes) -> bytes:
    """The model format's own header (``src/persist.rs``) around ``payload``."""
    version = _core.SINGLE_OUTPUT_FORMAT_VERSION
    header = struct.pack("<4sHHQ", b"FIMP", version, 0, len(payload))
    return header + struct.pack("<I", zlib.crc32(payload)) + payload


ABSURD_SIZES = """
import resource, struct, sys, time, zlib
import forestimp
from forestimp import persistence
from forestimp.exceptions import ModelFormatError

blobs = [bytes.fromhex(line) for line in sys.stdin.read().split()]
persistence.loads(blobs[0])  # the valid file: warm every code path first
with open("/proc/self/status") as f:
    size = [int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize")][0]
# 1 GiB more address space than now: an allocation sized from a claim would fail here.
resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), size + (1 << 30)))
for i, blob in enumerate(blobs[1:]):
    start = time.perf_counter()
    try:
        persistence.loads(blob)
        print("loaded", i)
    except ModelFormatError:
        pass
    assert time.perf_counter() - start < 1.0, i
print("ok")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, /proc")
def test_absurd_sizes_fail_fast_in_bounded_memory(small_file):
    data, _ = small_file
    sections = file_sections(data)
    model = sections[-1][1]
    lying = []
    for length in (2**31, 2**60, 2**64 - 1):
        head = bytearray(data)
        struct.pack_into("<Q", head, HEADER.size + 4, length)  # META length
        lying.append(bytes(head))
        forest = bytearray(model)
        struct.pack_into("<Q", forest, 8, length)  # the model's own payload length
        lying.append(_seal([*sections[:-1], (b"MODL", bytes(forest))]))
    lying += [
        _seal(sections, count=2**32 - 1),
        _with_meta(data, lambda m: m["arrays"][0].update(shape=[2**60])),
        _with_meta(data, lambda m: m["arrays"][2].update(shape=[2**40, 2**40])),
        _with_meta(data, lambda m: m["arrays"][0].update(dtype="<U9999999")),
        _with_meta(data, lambda m: m["fitted"].update(n_features_in_=2**62)),
        _with_meta(data, lambda m: m["params"].update(n_estimators=2**62)),
        # A postcard length prefix (varint) claiming a 2^60-byte string, behind a valid
        # model header: the decoder reaches it and must not reserve the claim.
        _seal([*sections[:-1], (b"MODL", _model_envelope(b"\x80" * 8 + b"\x10"))]),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(ABSURD_SIZES)],
        input="\n".join(b.hex() for b in [data, *lying]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # n_estimators is a parameter, not read at load: that file loads; all others fail.
    assert proc.stdout.split() == ["loaded", str(len(lying) - 2), "ok"], proc.stdout

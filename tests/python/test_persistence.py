"""Pickle / model bytes: round trips, and damaged bytes always give ModelFormatError.

Header layout (src/persist.rs): magic b"FIMP", u16 format version, u16 flags, u64 payload
length, u32 CRC-32 of the payload (all little-endian), then the payload.
"""

from __future__ import annotations

import pickle
import struct
import zlib

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

import forestimp as fi
from forestimp import _core
from forestimp.exceptions import DataError, ModelFormatError

from conftest import ALL_ESTIMATORS, CLASSIFIERS

HEADER = struct.Struct("<4sHHQI")
assert HEADER.size == 20


def _data(cls):
    X, y = make_classification(
        n_samples=120, n_features=6, n_informative=3, n_classes=3, random_state=0
    )
    if cls not in CLASSIFIERS:
        y = X[:, 0] + 2 * X[:, 1] ** 2
    return X, y


def _fit(cls, n_estimators=8, random_state=0):
    X, y = _data(cls)
    return cls(n_estimators=n_estimators, random_state=random_state).fit(X, y), X


def _seal(
    payload: bytes, version: int = _core.SINGLE_OUTPUT_FORMAT_VERSION, flags: int = 0
) -> bytes:
    """A header with a correct length and checksum in front of ``payload``."""
    return HEADER.pack(b"FIMP", version, flags, len(payload), zlib.crc32(payload)) + payload


@pytest.fixture(scope="module")
def blob():
    est, X = _fit(fi.RandomForestClassifier, n_estimators=3)
    return est.forest_.to_bytes(), X


# ------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_pickle_round_trip(cls):
    est, X = _fit(cls)
    restored = pickle.loads(pickle.dumps(est))
    assert type(restored) is cls
    assert restored.get_params() == est.get_params()
    assert restored.forest_.to_bytes() == est.forest_.to_bytes()
    assert np.array_equal(restored.predict(X), est.predict(X))
    if hasattr(est, "predict_proba"):
        assert np.array_equal(restored.predict_proba(X), est.predict_proba(X))
        assert np.array_equal(restored.classes_, est.classes_)
    assert np.array_equal(restored.apply(X), est.apply(X))
    assert np.array_equal(restored.mdi_importances_, est.mdi_importances_)
    assert np.array_equal(restored.tree_importances(), est.tree_importances())
    assert restored.n_features_in_ == est.n_features_in_ == X.shape[1]
    # The forest travels as its model bytes, once: no second copy in the pickle.
    size = len(pickle.dumps(est))
    assert size < len(est.forest_.to_bytes()) + 4096
    # No training data is kept, only its fingerprint: the reloaded model accepts the same
    # training data for out-of-bag measures and refuses other rows.
    y = _data(cls)[1]
    restored._training_input(X, y)
    with pytest.raises(DataError, match="training data"):
        restored._training_input(X[::-1], y[::-1])


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_clone_is_unfitted_and_refits_identically(cls):
    est, X = _fit(cls)
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    assert not hasattr(twin, "forest_")
    y = est.predict(X)  # any valid target of the right kind
    a = clone(est).fit(X, y).forest_.to_bytes()
    b = clone(est).fit(X, y).forest_.to_bytes()
    assert a == b


def test_forest_pickles_as_its_bytes(blob):
    data, X = blob
    forest = _core.Forest.from_bytes(data)
    assert forest.to_bytes() == data
    again = pickle.loads(pickle.dumps(forest))
    assert isinstance(again, _core.Forest)
    assert again.to_bytes() == data
    assert np.array_equal(again.predict(X), forest.predict(X))
    assert (again.n_estimators, again.n_features, again.n_classes) == (3, 6, 3)
    assert again.criterion == "gini"


def test_header_layout(blob):
    data, _ = blob
    magic, version, flags, length, crc = HEADER.unpack_from(data)
    assert magic == b"FIMP"
    # Single-output models keep the version (and bytes) they had before multi-output ones.
    assert version == _core.SINGLE_OUTPUT_FORMAT_VERSION <= _core.FORMAT_VERSION
    assert flags == 0
    assert length == len(data) - HEADER.size
    assert crc == zlib.crc32(data[HEADER.size :])
    # Re-sealing the same payload reproduces the bytes exactly.
    assert _seal(data[HEADER.size :]) == data


# ---------------------------------------------------------------------- damaged bytes
def test_empty_bytes():
    with pytest.raises(ModelFormatError, match="magic|header"):
        _core.Forest.from_bytes(b"")


@pytest.mark.parametrize("keep", [1, 3, 4, 6, 19, 20, 21, 100, -100, -1])
def test_truncated(blob, keep):
    data, _ = blob
    with pytest.raises(ModelFormatError):
        _core.Forest.from_bytes(data[:keep])


def test_trailing_garbage(blob):
    data, _ = blob
    with pytest.raises(ModelFormatError, match="payload"):
        _core.Forest.from_bytes(data + b"\x00")


@pytest.mark.parametrize("where", [HEADER.size, HEADER.size + 7, -1])
def test_flipped_payload_byte_fails_the_checksum(blob, where):
    data = bytearray(blob[0])
    data[where] ^= 0x10
    with pytest.raises(ModelFormatError, match="checksum"):
        _core.Forest.from_bytes(bytes(data))


def test_wrong_checksum_field(blob):
    data = bytearray(blob[0])
    data[16] ^= 0x01
    with pytest.raises(ModelFormatError, match="checksum"):
        _core.Forest.from_bytes(bytes(data))


def test_wrong_magic(blob):
    data = blob[0]
    for magic in (b"FIMQ", b"fimp", b"\x00\x00\x00\x00", b"PK\x03\x04"):
        with pytest.raises(ModelFormatError, match="magic"):
            _core.Forest.from_bytes(magic + data[4:])


def test_newer_format_version_is_refused_by_name(blob):
    data = blob[0]
    newer = _core.FORMAT_VERSION + 1
    bumped = _seal(data[HEADER.size :], version=newer)
    with pytest.raises(ModelFormatError, match=rf"version {newer}\b") as info:
        _core.Forest.from_bytes(bumped)
    assert str(_core.FORMAT_VERSION) in str(info.value)
    with pytest.raises(ModelFormatError, match="65535"):
        _core.Forest.from_bytes(_seal(data[HEADER.size :], version=0xFFFF))


def test_unknown_header_flags_are_refused(blob):
    data, _ = blob
    payload = data[HEADER.size :]
    with pytest.raises(ModelFormatError, match="flags"):
        _core.Forest.from_bytes(_seal(payload, flags=1))


def test_format_version_zero_does_not_exist(blob):
    with pytest.raises(ModelFormatError):
        _core.Forest.from_bytes(_seal(blob[0][HEADER.size :], version=0))


def test_payload_length_field_lies(blob):
    data = bytearray(blob[0])
    for length in (0, len(data), 2**63, 2**64 - 1):
        struct.pack_into("<Q", data, 8, length)
        with pytest.raises(ModelFormatError):
            _core.Forest.from_bytes(bytes(data))


def test_sealed_empty_and_tiny_payloads():
    for payload in (b"", b"\x00", b"\xff" * 8, b"\x05hello"):
        with pytest.raises(ModelFormatError):
            _core.Forest.from_bytes(_seal(payload))


def test_from_bytes_rejects_non_bytes():
    with pytest.raises(TypeError):
        _core.Forest.from_bytes("FIMP")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _core.Forest.from_bytes(None)  # type: ignore[arg-type]


def test_unpickling_damaged_estimator_raises_model_format_error():
    est, _ = _fit(fi.ExtraTreesRegressor, n_estimators=2)
    raw = pickle.dumps(est)
    model = est.forest_.to_bytes()
    start = raw.index(model)
    damaged = bytearray(raw)
    damaged[start + HEADER.size + 5] ^= 0xFF
    with pytest.raises(ModelFormatError):
        pickle.loads(bytes(damaged))


# -------------------------------------------------------------------------------- fuzz
def _exercise(forest, X):
    """Use a model that loaded from damaged bytes: it must behave, not crash."""
    try:
        forest.predict(X)
        forest.apply(X)
        forest.decision_path(X)
        forest.oob_predict(X)
    except DataError:
        pass  # e.g. the damage changed n_features: a clean refusal
    forest.importances(True)
    forest.importances(False)
    forest.tree_importances()
    forest.node_counts()
    forest.depths()
    for t in range(forest.n_estimators):
        forest.tree_arrays(t)
    assert _core.Forest.from_bytes(forest.to_bytes()).to_bytes() == forest.to_bytes()


def test_fuzz_random_blobs(blob):
    rng = np.random.default_rng(0)
    _, X = blob
    for i in range(400):
        size = int(rng.integers(0, 3000))
        junk = rng.integers(0, 256, size=size, dtype=np.uint8).tobytes()
        if i % 2:
            junk = b"FIMP" + junk  # get past the magic more often
        with pytest.raises(ModelFormatError):
            _core.Forest.from_bytes(junk)
        # The same junk behind a valid header reaches the payload decoder.
        try:
            forest = _core.Forest.from_bytes(_seal(junk))
        except ModelFormatError:
            continue
        _exercise(forest, X)


def test_fuzz_single_byte_mutations(blob):
    data, X = blob
    rng = np.random.default_rng(1)
    loaded = 0
    for _ in range(3000):
        mutated = bytearray(data)
        pos = int(rng.integers(0, len(data)))
        mutated[pos] = (mutated[pos] + int(rng.integers(1, 256))) % 256
        # Unsealed: the header checks or the checksum catch every single-byte change.
        with pytest.raises(ModelFormatError):
            _core.Forest.from_bytes(bytes(mutated))
        # Re-sealed: the payload decoder and validation see the damage.
        if pos >= HEADER.size:
            try:
                forest = _core.Forest.from_bytes(_seal(bytes(mutated[HEADER.size :])))
            except ModelFormatError:
                continue
            loaded += 1
            _exercise(forest, X)
    # Thresholds and leaf statistics are free floats, so some mutations load cleanly.
    assert loaded > 0


def test_fuzz_truncations_and_splices(blob):
    data, X = blob
    payload = data[HEADER.size :]
    rng = np.random.default_rng(2)
    for _ in range(500):
        a, b = sorted(int(v) for v in rng.integers(0, len(payload), size=2))
        for damaged in (payload[:a], payload[:a] + payload[b:], payload[:b] + payload[a:]):
            if damaged == payload:
                continue
            try:
                forest = _core.Forest.from_bytes(_seal(damaged))
            except ModelFormatError:
                continue
            _exercise(forest, X)

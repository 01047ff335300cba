"""Forge forest model bytes (``Forest.to_bytes()``) as a hostile file would: change one
declared parameter and re-seal the envelope (length and CRC-32), so only the loader's
validation stands between the lie and the engine.

The payload starts with postcard's encoding of ``ForestRepr`` (``src/persist.rs``): the crate
version (a varint length, then UTF-8), then ``Resolved`` (``src/params.rs``) field by field.
Only models of ``splitter="best"`` or ``"random"`` are handled (a unit variant each).
"""

from __future__ import annotations

import struct
import zlib

_HEADER = 20
# Resolved's fields before seed, in order, with their postcard kind.
_FIELDS = (
    ("criterion", "varint"),
    ("splitter", "varint"),
    ("n_estimators", "varint"),
    ("max_features", "varint"),
    ("max_depth", "varint"),
    ("min_samples_split", "varint"),
    ("min_samples_leaf", "varint"),
    ("min_weight_fraction_leaf", "f64"),
    ("min_impurity_decrease", "f64"),
    ("max_leaf_nodes", "option"),
    ("bootstrap", "bool"),
    ("n_draws", "varint"),
    ("n_samples", "varint"),
    ("n_features", "varint"),
    ("tree_features", "varint"),
)


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        b = buf[at]
        value |= (b & 0x7F) << shift
        at += 1
        if b < 0x80:
            return value, at
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field_spans(payload: bytes) -> dict[str, tuple[int, int]]:
    """``name -> (start, end)`` of each field of ``_FIELDS`` in ``payload``."""
    length, at = _varint(payload, 0)
    at += length  # crate version
    spans = {}
    for name, kind in _FIELDS:
        start = at
        if kind == "varint":
            _, at = _varint(payload, at)
        elif kind == "f64":
            at += 8
        elif kind == "bool":
            at += 1
        else:  # option
            at = at + 1 if payload[at] == 0 else _varint(payload, at + 1)[1]
        spans[name] = (start, at)
    return spans


def seal(version: int, payload: bytes) -> bytes:
    """The envelope of ``src/persist.rs`` around ``payload``."""
    head = b"FIMP" + struct.pack("<HHQI", version, 0, len(payload), zlib.crc32(payload))
    return head + payload


def read_param(model: bytes, name: str) -> int:
    payload = model[_HEADER:]
    start, _ = _field_spans(payload)[name]
    return _varint(payload, start)[0]


def with_param(model: bytes, name: str, value: int) -> bytes:
    """``model`` with the varint parameter ``name`` set to ``value``, re-sealed."""
    version = struct.unpack_from("<H", model, 4)[0]
    payload = model[_HEADER:]
    start, end = _field_spans(payload)[name]
    return seal(version, payload[:start] + _encode_varint(value) + payload[end:])


# ------------------------------------------------------------ estimator files (persistence)
_FILE_HEADER = struct.Struct("<8sHHI")
_SECTION = struct.Struct("<4sQI")


def file_sections(data: bytes) -> list[tuple[bytes, bytes]]:
    """The ``(tag, body)`` sections of a ``forestimp.save`` file (checks nothing)."""
    count = _FILE_HEADER.unpack_from(data)[3]
    out, pos = [], _FILE_HEADER.size
    for _ in range(count):
        tag, length, _crc = _SECTION.unpack_from(data, pos)
        pos += _SECTION.size
        out.append((tag, data[pos : pos + length]))
        pos += length
    return out


def seal_file(sections: list[tuple[bytes, bytes]]) -> bytes:
    """A ``forestimp.save`` file of these sections, every checksum right."""
    out = [_FILE_HEADER.pack(b"FIMPSAVE", 1, 0, len(sections))]
    for tag, body in sections:
        out += [_SECTION.pack(tag, len(body), zlib.crc32(body)), body]
    return b"".join(out)

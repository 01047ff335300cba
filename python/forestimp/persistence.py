"""Estimator files that hold data only: ``est.save(path)`` and ``forestimp.load(path)``.

A pickle runs code when it is loaded, so a pickled model from someone else is a risk. A
forestimp file holds the estimator's parameters, its fitted attributes and the model bytes
as *data*; loading it imports nothing named by the file, evaluates nothing, and checks every
field, so a damaged or hostile file raises :class:`~forestimp.exceptions.ModelFormatError`.

File layout (every integer little-endian)::

    offset  size  field
    0       8     magic b"FIMPSAVE"
    8       2     container version (1)
    10      2     flags (0)
    12      4     number of sections S
    16      ...   S sections, each: 4-byte ASCII tag, u64 body length L, u32 CRC-32 of
                  the body, then the L bytes of the body; nothing follows the last one.

The sections come in this order:

* ``META``, once: UTF-8 JSON object ``{"format": "forestimp-estimator", "class": name,
  "forestimp_version": str, "params": {...}, "fitted": {...}, "arrays": [...]}``.
  ``class`` is one of the eight estimator classes of :mod:`forestimp.ensemble` or the two
  of :mod:`forestimp.boosting`.
  ``params`` are ``get_params(deep=False)``: JSON null, booleans, integers, strings and
  finite floats stand for themselves; a JSON object is a tagged value with one key:
  ``{"float": "nan" | "inf" | "-inf"}``, ``{"list": [...]}``, ``{"tuple": [...]}`` or
  ``{"dict": [[key, value], ...]}`` (keys are scalars, so ``class_weight={0: 2.0}`` keeps
  its int keys). Any other value (a callable ``oob_score``, a ``RandomState``) is refused by
  ``save`` with :class:`~forestimp.exceptions.InvalidParameterError`; pickle such estimators.
  ``fitted`` holds the scalar fitted attributes (``n_features_in_``, ``n_classes_``,
  ``n_outputs_``, ``oob_score_``, ``_training_fingerprint``, ``_float32_ties``), ``arrays``
  one record ``{"name", "dtype", "shape", "object"}`` per array section.
* ``ARRY``, one per record of ``arrays``, in that order: the C-order bytes of the array.
  ``dtype`` is a little-endian NumPy type string among ``|b1``, ``|i1 <i2 <i4 <i8``,
  ``|u1 <u2 <u4 <u8``, ``<f4 <f8`` and ``<U<n>`` (UTF-32 text, n >= 1); ``"object": true``
  turns a text array back into an array of ``str`` objects (``feature_names_in_``, labels
  from pandas).
* ``MODL``, once: the model bytes of ``Forest.to_bytes()`` (``src/persist.rs``), which carry
  their own version and checksum. Pickles hold the same bytes (``forestimp._state``). For
  ``GradientBoostingClassifier`` / ``GradientBoostingRegressor`` (:mod:`forestimp.boosting`)
  the bytes of ``Booster.to_bytes()`` (``src/boosting/bytes.rs``, magic ``FIMB``), with the
  fitted scalars ``n_features_in_``, ``n_classes_``, ``_seed_`` and the arrays ``classes_``,
  ``feature_names_in_`` (``forestimp._boosting_state``).

Both families store categorical features (``forestimp._categorical``) as the array
``is_categorical_`` (one boolean per feature) and one array ``categories_[j]`` per
categorical feature ``j``, its categories in code order; an estimator without them has
neither.

A reader refuses a newer container version by name. Readers of version 1 ignore no field:
unknown tags, keys, classes or parameters are errors.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
import zlib
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _boosting_state, _model_kinds, _outputs, _state
from . import _params as P
from ._core import DataError, InvalidParameterError, ModelFormatError
from ._core import __version__ as _version
from ._files import open_regular

MAGIC = b"FIMPSAVE"
CONTAINER_VERSION = 1
_HEADER = struct.Struct("<8sHHI")
# The largest META section read: parameters and array records (a monotonic_cst of two
# million features fits); arrays and the model have sections of their own.
META_MAX_BYTES = 4 << 20
_SECTION = struct.Struct("<4sQI")
_FORMAT = "forestimp-estimator"
# Deepest nesting of tagged parameter values (lists in dicts in ...), bounding recursion.
_MAX_DEPTH = 8
_NUMERIC_DTYPES = frozenset(
    ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8"]
)
_TEXT_DTYPE = re.compile(r"<U([1-9][0-9]{0,6})")
# Every dimension of an array record is below this, and its non-zero dimensions times the
# itemsize at most P.INT_MAX (NumPy's index range, checked even when another dimension is 0).
_MAX_DIM = 2**62


# The allow-list: the only classes a file can name. Looked up by name among the classes
# forestimp.ensemble and forestimp.boosting register (forestimp._model_kinds), never imported
# from a name the file gives.
_CLASS_NAMES = (
    "RandomForestClassifier",
    "RandomForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "RandomPatchesClassifier",
    "RandomPatchesRegressor",
    "TotallyRandomizedTreesClassifier",
    "TotallyRandomizedTreesRegressor",
)


# Gradient boosting (forestimp.boosting): the model section holds Booster.to_bytes().
_BOOSTING_NAMES = ("GradientBoostingClassifier", "GradientBoostingRegressor")


def _kind(name: Any) -> _model_kinds.ModelKind | None:
    """The allow-listed kind named ``name``; None for any other name or value."""
    if not isinstance(name, str) or name not in (*_CLASS_NAMES, *_BOOSTING_NAMES):
        return None
    return _model_kinds.kind_named(name)


# ------------------------------------------------------------------------------ writing
def save(est: BaseEstimator, path: str | os.PathLike[str]) -> None:
    """Write the fitted forestimp estimator ``est`` to ``path`` (module docstring format).

    Raises :class:`~forestimp.exceptions.InvalidParameterError` when a parameter is not
    plain data, and ``NotFittedError`` when ``est`` is not fitted.
    """
    data = dumps(est)
    with open(path, "wb") as f:
        f.write(data)


def dumps(est: BaseEstimator) -> bytes:
    """The bytes :func:`save` writes."""
    name = type(est).__name__
    kind = _kind(name)
    if kind is None or kind.cls is not type(est):
        raise InvalidParameterError(f"Only forestimp's estimators can be saved, not {name}.")
    family = kind.state
    check_is_fitted(est, kind.fitted)
    state = family.fitted_state(est)
    assert state is not None  # fitted, checked above
    if family is _state and est.forest_.n_features != est.n_features_in_:
        raise DataError(
            "This forest was grown on a view of X (selection or unbiased importances); "
            "only estimators fitted with fit() can be saved."
        )
    params = {k: _encode(v, k, 0) for k, v in est.get_params(deep=False).items()}
    fitted: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    bodies: list[bytes] = []
    for key in family.SCALARS:
        if key in state:
            fitted[key] = _encode(state[key], key, 0)
    extra = [key for key in state if _state.is_file_array(key)]
    for key in (*family.ARRAYS, *extra):
        if key in state:
            # A multi-output classifier's classes_ is a list: stored concatenated.
            n_outputs = est.forest_.n_outputs if family is _state else 1
            value = _outputs.state_of(key, state[key], n_outputs)
            record, body = _encode_array(key, value)
            records.append(record)
            bodies.append(body)
    meta = {
        "format": _FORMAT,
        "class": name,
        "forestimp_version": _version,
        "params": params,
        "fitted": fitted,
        "arrays": records,
    }
    text = json.dumps(meta, allow_nan=False, separators=(",", ":")).encode()
    sections = [(b"META", text), *((b"ARRY", b) for b in bodies), (b"MODL", state["model"])]
    out = [_HEADER.pack(MAGIC, CONTAINER_VERSION, 0, len(sections))]
    for tag, body in sections:
        out.append(_SECTION.pack(tag, len(body), zlib.crc32(body)))
        out.append(body)
    return b"".join(out)


def _encode(value: Any, name: str, depth: int) -> Any:
    """A parameter value as JSON (module docstring); anything else is refused."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else {"float": repr(v)}
    if depth < _MAX_DEPTH and isinstance(value, (list, tuple)):
        tag = "list" if isinstance(value, list) else "tuple"
        return {tag: [_encode(v, name, depth + 1) for v in value]}
    if depth < _MAX_DEPTH and isinstance(value, dict):
        items = [[_encode_key(k, name), _encode(v, name, depth + 1)] for k, v in value.items()]
        return {"dict": items}
    raise InvalidParameterError(
        f"The '{name}' parameter is a {type(value).__name__}, which a forestimp file cannot "
        "hold: files store None, bool, int, float, str and lists, tuples and dicts of them "
        "(e.g. an int random_state, not a RandomState). Pickle the estimator instead, or "
        "set plain values with set_params before saving."
    )


def _encode_key(key: Any, name: str) -> Any:
    if isinstance(key, (list, tuple, dict)):
        raise InvalidParameterError(f"The '{name}' parameter has a key {key!r} that is not plain.")
    return _encode(key, name, _MAX_DEPTH)


def _encode_array(name: str, value: Any) -> tuple[dict[str, Any], bytes]:
    """A fitted array as a record and its little-endian C-order bytes."""
    arr = np.asarray(value)
    is_object = arr.dtype.kind == "O"
    if is_object:
        if not _state.text_objects(arr):
            raise DataError(f"{name} holds objects other than str: not plain data.")
        arr = arr.astype(str) if arr.size else arr.astype("<U1")
    arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    dtype = arr.dtype.str
    if dtype not in _NUMERIC_DTYPES and not _TEXT_DTYPE.fullmatch(dtype):
        raise DataError(f"{name} has dtype {arr.dtype}, which a forestimp file cannot hold.")
    record = {"name": name, "dtype": dtype, "shape": list(arr.shape), "object": is_object}
    return record, arr.tobytes()


# ------------------------------------------------------------------------------ reading
def load(path: str | os.PathLike[str]) -> Any:
    """The estimator :func:`save` wrote to ``path``, fitted, with the same predictions,
    importances and model bytes. Runs no code from the file; a damaged or hostile file
    raises :class:`~forestimp.exceptions.ModelFormatError`, as does a path that is not a
    regular file (a device or a FIFO, which have no end or no writer)."""
    if not isinstance(path, (str, bytes, os.PathLike)):
        # open() would take an int as a file descriptor, and read (then close) it.
        raise TypeError(
            f"load expects a path (str or os.PathLike), got {type(path).__name__}; "
            "forestimp.persistence.loads reads the bytes of dumps."
        )
    with open(open_regular(os.fsdecode(path), ModelFormatError), "rb") as f:
        data = f.read()
    return loads(data)


def loads(data: bytes) -> Any:
    """The estimator held by ``data``, bytes from :func:`dumps` (see :func:`load`)."""
    if not isinstance(data, bytes):
        raise TypeError(f"loads expects bytes, got {type(data).__name__}.")
    sections = _split(data)
    tags = [tag for tag, _ in sections]
    if len(tags) < 2 or tags[0] != b"META" or tags[-1] != b"MODL":
        raise ModelFormatError(f"Sections must be META, ARRY..., MODL; found {tags}.")
    if any(tag != b"ARRY" for tag in tags[1:-1]):
        raise ModelFormatError(f"Unknown or misplaced sections in {tags}.")
    meta = _parse_meta(sections[0][1])
    kind = _kind(meta["class"])
    if kind is None:
        shown = str(meta["class"])[:80]
        raise ModelFormatError(f"{shown!r} is not a forestimp estimator class.")
    cls, family = kind.cls, kind.state
    params = _field(meta, "params", dict)
    accepted = set(cls._get_param_names())
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise ModelFormatError(f"{cls.__name__} does not accept the parameters {unknown}.")
    est = cls(**{name: _decode(value, 0) for name, value in params.items()})
    _check_params(est, family)
    fitted = _field(meta, "fitted", dict)
    unknown = sorted(set(fitted) - set(family.SCALARS))
    if unknown:
        raise ModelFormatError(f"Unknown fitted attributes {unknown}.")
    state: dict[str, Any] = {name: _decode(value, 0) for name, value in fitted.items()}
    records = _field(meta, "arrays", list)
    bodies = [body for _, body in sections[1:-1]]
    if len(records) != len(bodies):
        raise ModelFormatError(f"{len(records)} array records for {len(bodies)} ARRY sections.")
    for record, body in zip(records, bodies, strict=True):
        name, array = _decode_array(record, body, family.ARRAYS)
        if name in state:
            raise ModelFormatError(f"The array {name} is stored twice.")
        state[name] = array
    state["model"] = sections[-1][1]
    family.restore_fitted_state(est, state)
    return est


def _check_params(est: Any, family: Any) -> None:
    """The file's parameters checked as ``fit`` checks them before it reads the data, so a
    file that lies about them is refused here, not at a later prediction or refit: a
    booster's own checks (``_check_params``); for both families every int within 64 bits,
    ``n_jobs`` and ``random_state`` (``_params.check_stored_params``). A forest's other
    checks need the training data's size and run at a refit."""
    try:
        P.check_stored_params(est.get_params(deep=False))
        if family is _boosting_state:
            est._check_params()
    except InvalidParameterError as exc:
        raise ModelFormatError(f"The file holds an invalid parameter: {exc}") from None


def _split(data: bytes) -> list[tuple[bytes, bytes]]:
    """The ``(tag, body)`` sections of a file, each checked against its length and CRC."""
    if len(data) < _HEADER.size or data[: len(MAGIC)] != MAGIC:
        raise ModelFormatError(
            "Not a forestimp estimator file (bad magic or shorter than the 16-byte header)."
        )
    _, version, flags, count = _HEADER.unpack_from(data)
    if version > CONTAINER_VERSION:
        raise ModelFormatError(
            f"Estimator file of container version {version}; this forestimp reads version "
            f"{CONTAINER_VERSION} and older: upgrade forestimp to read it."
        )
    if version == 0 or flags != 0:
        raise ModelFormatError(f"Container version {version} with flags {flags} does not exist.")
    sections = []
    pos = _HEADER.size
    # Each pass consumes a section header or stops: an absurd count costs nothing.
    for index in range(count):
        if len(data) - pos < _SECTION.size:
            raise ModelFormatError(f"Truncated file: section {index} of {count} is missing.")
        tag, length, crc = _SECTION.unpack_from(data, pos)
        pos += _SECTION.size
        if length > len(data) - pos:
            raise ModelFormatError(
                f"Truncated file: section {index} ({tag!r}) claims {length} bytes, "
                f"{len(data) - pos} remain."
            )
        body = data[pos : pos + length]
        pos += length
        if zlib.crc32(body) != crc:
            raise ModelFormatError(f"Checksum mismatch in section {index} ({tag!r}).")
        sections.append((tag, body))
    if pos != len(data):
        raise ModelFormatError(f"{len(data) - pos} bytes follow the last section.")
    return sections


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate keys in a JSON object")
    return out


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_meta(body: bytes) -> dict[str, Any]:
    if len(body) > META_MAX_BYTES:
        # Parsed JSON takes up to ~26 times its text (an empty list is 3 bytes of text and
        # 64 of memory): the cap bounds what the metadata can make a load allocate.
        raise ModelFormatError(
            f"The META section is {len(body)} bytes; at most {META_MAX_BYTES} are read."
        )
    try:
        meta = json.loads(
            body.decode("utf-8"),
            object_pairs_hook=_unique_keys,
            parse_constant=_refuse_constant,
        )
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ModelFormatError(f"The META section is not valid JSON: {exc}") from None
    keys = {"format", "class", "forestimp_version", "params", "fitted", "arrays"}
    if not isinstance(meta, dict) or set(meta) != keys:
        raise ModelFormatError(f"The META section must be an object with the keys {sorted(keys)}.")
    if meta["format"] != _FORMAT or not isinstance(meta["forestimp_version"], str):
        raise ModelFormatError(f"The META section is not a {_FORMAT!r} record.")
    return meta


def _field(meta: dict[str, Any], key: str, kind: type) -> Any:
    value = meta[key]
    if not isinstance(value, kind):
        raise ModelFormatError(f"META {key!r} must be a JSON {kind.__name__}.")
    return value


def _decode(value: Any, depth: int) -> Any:
    """Inverse of :func:`_encode`: only the tags of the module docstring are read."""
    if isinstance(value, float) and not math.isfinite(value):
        # JSON reads 1e999 as infinity; files spell non-finite floats as tagged values.
        raise ModelFormatError(f"A plain number that is not finite: {value}.")
    if not isinstance(value, (dict, list)):
        return value  # None, bool, int, float or str, as JSON gave them
    if not isinstance(value, dict) or len(value) != 1:
        raise ModelFormatError(f"Not a tagged parameter value: {str(value)[:80]}.")
    ((tag, inner),) = value.items()
    if tag == "float" and inner in ("nan", "inf", "-inf"):
        return float(inner)
    if depth >= _MAX_DEPTH:
        raise ModelFormatError(f"Tagged values nested deeper than {_MAX_DEPTH} (or a dict key).")
    if tag in ("list", "tuple") and isinstance(inner, list):
        items = [_decode(v, depth + 1) for v in inner]
        return items if tag == "list" else tuple(items)
    if tag == "dict" and isinstance(inner, list):
        if not all(isinstance(kv, list) and len(kv) == 2 for kv in inner):
            raise ModelFormatError("A tagged dict must be a list of [key, value] pairs.")
        keys = [_decode(k, _MAX_DEPTH) for k, _ in inner]
        return dict(zip(keys, (_decode(v, depth + 1) for _, v in inner), strict=True))
    raise ModelFormatError(f"Unknown tagged value {tag!r}.")


def _decode_array(record: Any, body: bytes, names: tuple[str, ...]) -> tuple[str, np.ndarray]:
    """One ARRY section as the array its record describes (its name among ``names``)."""
    keys = {"name", "dtype", "shape", "object"}
    if not isinstance(record, dict) or set(record) != keys:
        raise ModelFormatError(f"An array record must have the keys {sorted(keys)}.")
    name, dtype, shape, is_object = (record[k] for k in ("name", "dtype", "shape", "object"))
    if not isinstance(name, str) or not (name in names or _state.is_file_array(name)):
        raise ModelFormatError(f"Unknown fitted array {str(name)[:80]!r}.")
    text = isinstance(dtype, str) and _TEXT_DTYPE.fullmatch(dtype) is not None
    if not (text or dtype in _NUMERIC_DTYPES) or not isinstance(is_object, bool):
        raise ModelFormatError(f"{name}: dtype {dtype!r} is not one a file may hold.")
    if is_object and not text:
        raise ModelFormatError(f"{name}: only text arrays can be object arrays.")
    good_shape = isinstance(shape, list) and 1 <= len(shape) <= 2
    if not good_shape or not all(type(s) is int and 0 <= s < _MAX_DIM for s in shape):
        raise ModelFormatError(
            f"{name}: shape {str(shape)[:80]} is not a 1-D or 2-D shape of dimensions below "
            f"{_MAX_DIM}."
        )
    itemsize = np.dtype(dtype).itemsize
    # Python ints: neither product overflows.
    if math.prod(s for s in shape if s) * itemsize > P.INT_MAX:
        raise ModelFormatError(
            f"{name}: shape {shape} of {dtype} claims more bytes than NumPy can index."
        )
    if math.prod(shape) * itemsize != len(body):
        raise ModelFormatError(f"{name}: {len(body)} bytes for shape {shape} of {dtype}.")
    # NumPy trusts UTF-32 code units: beyond U+10FFFF, reading them as str is a SystemError.
    if text and np.any(np.frombuffer(body, dtype="<u4") > 0x10FFFF):
        raise ModelFormatError(f"{name}: text that is not Unicode.")
    try:
        array = np.frombuffer(body, dtype=dtype).reshape(shape).copy()
    except ValueError as exc:  # a shape NumPy cannot build, were the bounds above not enough
        raise ModelFormatError(f"{name}: shape {shape} of {dtype}: {exc}") from None
    if is_object:
        values = array.tolist()
        array = np.empty(array.shape, dtype=object)
        array[...] = values
    return name, array

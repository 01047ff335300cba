"""The fitted state of an estimator as plain data, and its validation on the way back.

One representation serves both ways of storing an estimator: pickling
(``BaseForest.__getstate__``) and :mod:`forestimp.persistence` files. It holds the model
bytes (``Forest.to_bytes()``), never the ``Forest`` object, and only the fitted attributes
prediction and the importances read; caches and other private attributes are not part of it.

Restoring checks every value's type, dtype and shape, and that the model bytes agree with
the Python-side attributes (``n_features_in_``, ``classes_``), so a restored estimator is
either consistent or refused with :class:`~forestimp.exceptions.ModelFormatError`.
"""

from __future__ import annotations

import math
import zlib
from numbers import Integral, Real
from typing import Any

import numpy as np

from . import _categorical, _outputs, _quantiles
from ._core import Forest, ModelFormatError
from ._params import INT_MAX, INT_MIN

# Fitted attributes, in the order they are written. ``_training_fingerprint`` is
# ``(n_samples, n_features, crc32)`` of the training data (``_base._fingerprint``).
# ``_float32_*``: the exported thresholds moved at fit (:mod:`forestimp._float32_routing`).
SCALARS = (
    "n_features_in_",
    "n_classes_",
    "n_outputs_",
    "oob_score_",
    "_training_fingerprint",
    "_float32_ties",
)
ARRAYS = (
    "classes_",
    "feature_names_in_",
    "oob_decision_function_",
    "oob_prediction_",
    "_float32_nodes",
    "_float32_cuts",
)
MODEL = "forest_"


def fitted_state(est: Any) -> dict[str, Any] | None:
    """The fitted attributes of ``est`` as plain values, the forest as ``"model"`` bytes;
    None when ``est`` is not fitted."""
    forest = est.__dict__.get("forest_")
    if forest is None:
        return None
    state: dict[str, Any] = {"model": forest.to_bytes()}
    for name in (*SCALARS, *ARRAYS):
        if name in est.__dict__:
            state[name] = est.__dict__[name]
    state.update(_categorical.file_state(est))
    state.update(_quantiles.file_state(est))
    if forest.n_outputs > 1 and "oob_decision_function_" in state:
        # (n, C, m) kept 2-D, as files hold arrays (forestimp._outputs.restore).
        state["oob_decision_function_"] = _outputs.state_of(
            "oob_decision_function_", state["oob_decision_function_"], forest.n_outputs
        )
    return state


# Marks the state of ``__getstate__`` (older pickles hold the plain ``__dict__``).
PICKLE_KEY = "__forestimp_state__"


def pickled(est: Any, family: Any) -> dict[str, Any]:
    """``est.__getstate__()`` of a forest (``family`` this module) or a booster
    (:mod:`forestimp._boosting_state`): parameters and other attributes as they are, the
    fitted ones as plain data (``family.fitted_state``), and the CRC-32 of the fitted data.

    Why the CRC: the model bytes carry their own checksum, but ``classes_`` and the other
    fitted arrays sit beside them, where a damaged byte would silently change the labels
    predicted. The parameters and other attributes are not covered: they are pickled
    objects of any kind, and a damaged one changes a later refit, not this model.
    """
    fitted = family.fitted_state(est)
    # (The leaf values travel as the arrays of the fitted state.)
    names = {family.MODEL, *family.SCALARS, *family.ARRAYS, "_leaf_values"}
    attributes = {k: v for k, v in est.__dict__.items() if k not in names}
    state = {PICKLE_KEY: 1, "attributes": attributes, "fitted": fitted}
    if fitted is not None:
        state["fitted_crc32"] = fitted_crc32(fitted)
    return state


def unpickled(est: Any, state: dict[str, Any], family: Any, **restore: Any) -> None:
    """``est.__setstate__(state)`` for a state from :func:`pickled` (or, without its key,
    an older pickle's plain ``__dict__``); the fitted data is checked against its CRC-32
    (when the pickle has one) and then by ``family.restore_fitted_state``."""
    if PICKLE_KEY not in state:
        est.__dict__.update(state)
        return
    fitted = state["fitted"]
    if fitted is not None and "fitted_crc32" in state:
        if not isinstance(fitted, dict) or fitted_crc32(fitted) != state["fitted_crc32"]:
            raise ModelFormatError(
                "The pickled estimator is damaged: its fitted attributes do not match their "
                "checksum (CRC-32)."
            )
    est.__dict__.update(state["attributes"])
    if fitted is not None:
        family.restore_fitted_state(est, fitted, **restore)


def fitted_crc32(fitted: dict[str, Any]) -> int:
    """CRC-32 of a fitted state but its model bytes (which carry their own), each value in
    a canonical byte form: its name, then its type and value (arrays: dtype, shape, bytes;
    text: UTF-8), so equal states give equal sums whatever their dict order."""
    crc = 0
    for name in sorted(k for k in fitted if k != "model"):
        crc = zlib.crc32(_canonical(name) + _canonical(fitted[name]), crc)
    return crc


def _canonical(value: Any) -> bytes:
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            return b"O%r" % (value.shape,) + b"".join(_canonical(v) for v in value.flat)
        head = f"A{value.dtype.str}{value.shape}".encode()
        return head + np.ascontiguousarray(value).tobytes()
    if isinstance(value, (list, tuple)):
        return b"L%d" % len(value) + b"".join(_canonical(v) for v in value)
    if isinstance(value, str):
        return b"S%d:" % len(value.encode()) + value.encode()
    if isinstance(value, (bool, np.bool_)):
        return b"B%d" % bool(value)
    if isinstance(value, Integral):
        return b"I%d" % int(value)
    if isinstance(value, Real):
        return b"F" + float(value).hex().encode()
    return b"R" + repr(value).encode()


def is_file_array(name: str) -> bool:
    """Whether ``name`` is one of the arrays a fitted state holds beside ``ARRAYS``: the
    categories (:mod:`forestimp._categorical`) and the leaf values
    (:mod:`forestimp._quantiles`)."""
    return _categorical.is_file_array(name) or _quantiles.is_file_array(name)


def text_objects(values: np.ndarray) -> bool:
    """Whether an object array holds only ``str`` (feature names, labels from pandas)."""
    return all(isinstance(v, str) for v in values.flat)


def _fail(what: str) -> ModelFormatError:
    return ModelFormatError(f"Inconsistent fitted state: {what}.")


def _int(state: dict[str, Any], name: str, low: int, high: int) -> int:
    value = state[name]
    if not isinstance(value, Integral) or isinstance(value, (bool, np.bool_)):
        raise _fail(f"{name} must be an int, got {type(value).__name__}")
    if not low <= int(value) <= high:
        raise _fail(f"{name} = {int(value)} is outside [{low}, {high}]")
    return int(value)


def _array(state: dict[str, Any], name: str, kinds: str, shape: tuple[int, ...]) -> np.ndarray:
    """``state[name]`` as an array of a dtype kind in ``kinds`` and this shape (-1: any)."""
    value = state[name]
    if not isinstance(value, np.ndarray) or value.dtype.kind not in kinds:
        raise _fail(f"{name} must be an array of kind {kinds!r}")
    same_ndim = value.ndim == len(shape)
    if not same_ndim or any(w not in (-1, s) for w, s in zip(shape, value.shape, strict=True)):
        raise _fail(f"{name} has shape {value.shape}, expected {shape}")
    if value.dtype.kind == "O" and not text_objects(value):
        raise _fail(f"{name} may hold only str objects")
    return value


def _strictly_increasing(values: np.ndarray) -> bool:
    """np.unique's order, which label encoding (``searchsorted``) relies on."""
    try:
        return bool(np.all(values[1:] > values[:-1]))
    except TypeError:
        return False


def restore_fitted_state(est: Any, state: dict[str, Any], *, view_ok: bool = False) -> None:
    """Check ``state`` (from :func:`fitted_state`) against ``est``'s kind and set it.

    ``view_ok`` accepts a forest grown on a view of X (``BaseForest._fit`` with ``columns``
    or ``shadows``: an engine feature count other than ``n_features_in_``), which pickles
    carry; files never do.
    """
    unknown = set(state) - {"model", *SCALARS, *ARRAYS}
    unknown = {name for name in unknown if not is_file_array(name)}
    if unknown:
        raise _fail(f"unknown attributes {sorted(unknown)}")
    model = state.get("model")
    if not isinstance(model, bytes):
        raise _fail("the model must be bytes")
    forest = Forest.from_bytes(model)
    attrs: dict[str, Any] = {"forest_": forest}
    if "n_features_in_" not in state:
        raise _fail("n_features_in_ is missing")
    p = attrs["n_features_in_"] = _int(state, "n_features_in_", 1, 2**32 - 1)
    if p != forest.n_features and not view_ok:
        raise _fail(f"n_features_in_ = {p} but the model has {forest.n_features} features")
    m = forest.n_outputs
    if "n_outputs_" in state or m > 1:
        if "n_outputs_" not in state:
            raise _fail("n_outputs_ is missing for a multi-output model")
        attrs["n_outputs_"] = _int(state, "n_outputs_", m, m)
    if "feature_names_in_" in state:
        names = _array(state, "feature_names_in_", "OU", (p,))
        attrs["feature_names_in_"] = names.astype(object)
    n_rows = _restore_fingerprint(state, attrs, p)
    attrs.update(_categorical.restored(state, p))
    attrs.update(_quantiles.restored(state, forest))
    if est._is_classifier and m > 1:
        _restore_output_classes(state, attrs, list(forest.outputs), n_rows)
    elif est._is_classifier:
        _restore_classes(state, attrs, forest.n_classes, n_rows)
    else:
        if forest.n_classes != 0 or "classes_" in state or "n_classes_" in state:
            raise _fail("a regressor with a classification model or classes_")
        if "oob_prediction_" in state:
            shape = (n_rows,) if m == 1 else (n_rows, m)
            attrs["oob_prediction_"] = _array(state, "oob_prediction_", "f", shape)
    if "oob_score_" in state:
        score = state["oob_score_"]
        if not isinstance(score, Real) or isinstance(score, (bool, np.bool_)):
            raise _fail("oob_score_ must be a real number")
        # A score (accuracy, R², a callable's) is finite, or NaN without out-of-bag rows;
        # an int one is a 64-bit int, as every int a file holds.
        huge = isinstance(score, Integral) and not INT_MIN <= int(score) <= INT_MAX
        if huge or math.isinf(float(score)):
            raise _fail(f"oob_score_ = {str(score)[:40]} is neither finite nor NaN")
        attrs["oob_score_"] = score
    _restore_float32_cuts(state, attrs, forest)
    for name, value in attrs.items():
        setattr(est, name, value)


def _restore_float32_cuts(state: dict[str, Any], attrs: dict[str, Any], model: Any) -> None:
    """The moved exported thresholds: nodes of the model's trees (a ``Forest``'s or a
    ``Booster``'s), finite thresholds."""
    names = ("_float32_nodes", "_float32_cuts", "_float32_ties")
    if not any(name in state for name in names):
        return  # an older model: exported thresholds are float32_cut's
    if "_float32_ties" not in state:
        raise _fail("_float32_ties is missing")
    attrs["_float32_ties"] = _int(state, "_float32_ties", 0, INT_MAX)
    if "_float32_nodes" not in state and "_float32_cuts" not in state:
        return  # nothing moved
    if "_float32_nodes" not in state or "_float32_cuts" not in state:
        raise _fail("_float32_nodes and _float32_cuts go together")
    nodes = _array(state, "_float32_nodes", "iu", (-1, 2)).astype(np.int64)
    cuts = _array(state, "_float32_cuts", "f", (len(nodes),)).astype(np.float64)
    counts = model.node_counts()
    tree, node = nodes[:, 0], nodes[:, 1]
    if np.any(tree < 0) or np.any(tree >= len(counts)):
        raise _fail("_float32_nodes names a tree the model does not have")
    if np.any(node < 0) or np.any(node >= counts[tree]):
        raise _fail("_float32_nodes names a node its tree does not have")
    if not np.all(np.isfinite(cuts)):
        raise _fail("_float32_cuts must be finite")
    attrs["_float32_nodes"], attrs["_float32_cuts"] = nodes, cuts


def _restore_fingerprint(state: dict[str, Any], attrs: dict[str, Any], p: int) -> int:
    """Checks ``_training_fingerprint``; returns its row count (-1: none stored)."""
    if "_training_fingerprint" not in state:
        return -1
    fp = state["_training_fingerprint"]
    if not isinstance(fp, (tuple, list)) or len(fp) != 3:
        raise _fail("_training_fingerprint must be (n_samples, n_features, crc32)")
    parts = dict(zip(("n", "p", "crc"), fp, strict=True))
    n = _int(parts, "n", 1, 2**32 - 2)
    _int(parts, "p", p, p)
    crc = _int(parts, "crc", 0, 2**32 - 1)
    attrs["_training_fingerprint"] = (n, p, crc)
    return n


def _restore_classes(
    state: dict[str, Any], attrs: dict[str, Any], n_classes: int, n_rows: int
) -> None:
    if "classes_" not in state or n_classes == 0:
        raise _fail("a classifier needs classes_ and a classification model")
    classes = _array(state, "classes_", "biufUO", (n_classes,))
    if not _strictly_increasing(classes):
        raise _fail("classes_ must be sorted and unique")
    attrs["classes_"] = classes
    attrs["n_classes_"] = n_classes
    if "n_classes_" in state:
        _int(state, "n_classes_", n_classes, n_classes)
    if "oob_decision_function_" in state:
        shape = (n_rows, n_classes)
        attrs["oob_decision_function_"] = _array(state, "oob_decision_function_", "f", shape)


def _restore_output_classes(
    state: dict[str, Any], attrs: dict[str, Any], widths: list[int], n_rows: int
) -> None:
    """``classes_`` (a list per output, or their concatenation from a file), ``n_classes_``
    and ``oob_decision_function_`` of a multi-output classifier."""
    if "classes_" not in state or not widths or 0 in widths:
        raise _fail("a classifier needs classes_ and a classification model")
    value = state["classes_"]
    if isinstance(value, list):
        if len(value) != len(widths):
            raise _fail(f"classes_ has {len(value)} outputs, the model {len(widths)}")
        classes = [
            _array({"classes_": c}, "classes_", "biufUO", (w,))
            for c, w in zip(value, widths, strict=True)
        ]
    else:
        flat = _array(state, "classes_", "biufUO", (sum(widths),))
        classes = _outputs.restore("classes_", flat, widths)
    if not all(_strictly_increasing(c) for c in classes):
        raise _fail("classes_ must be sorted and unique")
    attrs["classes_"] = classes
    attrs["n_classes_"] = list(widths)
    if "n_classes_" in state and state["n_classes_"] != list(widths):
        raise _fail("n_classes_ differs from the model's classes")
    if "oob_decision_function_" in state:
        shape = (n_rows, max(widths) * len(widths))
        flat = _array(state, "oob_decision_function_", "f", shape)
        attrs["oob_decision_function_"] = _outputs.restore("oob_decision_function_", flat, widths)

"""The fitted state of a gradient-boosting estimator as plain data, and its validation on
the way back: the booster side of :mod:`forestimp._state`, for :mod:`forestimp.persistence`.

The state is the model bytes (``Booster.to_bytes()``, which carry the trees, the leaf values,
the initial raw prediction and the training and out-of-bag scores) and the few attributes
the estimator adds (``n_features_in_``, ``feature_names_in_``, ``classes_``, the engine seed
``_seed_`` that a warm start reuses). Everything else (``train_score_``, ``oob_scores_``...)
is read back from the booster.
"""

from __future__ import annotations

from typing import Any

from . import _categorical
from ._core import Booster, InvalidParameterError
from ._state import _array, _fail, _int, _restore_float32_cuts, _strictly_increasing

# ``_float32_*``: the exported thresholds moved at fit (:mod:`forestimp._float32_routing`).
SCALARS = ("n_features_in_", "n_classes_", "_seed_", "_float32_ties")
ARRAYS = ("classes_", "feature_names_in_", "_float32_nodes", "_float32_cuts")
MODEL = "booster_"


def fitted_state(est: Any) -> dict[str, Any] | None:
    """The fitted attributes of ``est`` as plain values, the booster as ``"model"`` bytes;
    None when ``est`` is not fitted."""
    booster = est.__dict__.get(MODEL)
    if booster is None:
        return None
    state: dict[str, Any] = {"model": booster.to_bytes()}
    for name in (*SCALARS, *ARRAYS):
        if name in est.__dict__:
            state[name] = est.__dict__[name]
    state.update(_categorical.file_state(est))
    return state


def restore_fitted_state(est: Any, state: dict[str, Any]) -> None:
    """Check ``state`` (from :func:`fitted_state`) against ``est``'s kind and set it."""
    unknown = set(state) - {"model", *SCALARS, *ARRAYS}
    unknown = {name for name in unknown if not _categorical.is_file_array(name)}
    if unknown:
        raise _fail(f"unknown attributes {sorted(unknown)}")
    model = state.get("model")
    if not isinstance(model, bytes):
        raise _fail("the model must be bytes")
    booster = Booster.from_bytes(model)
    if "n_features_in_" not in state or "_seed_" not in state:
        raise _fail("n_features_in_ and _seed_ are needed")
    p = _int(state, "n_features_in_", booster.n_features, booster.n_features)
    seed = _int(state, "_seed_", 0, 2**63 - 1)
    if booster.loss not in est._losses:
        raise _fail(f"a {type(est).__name__} cannot hold a {booster.loss} model")
    attrs: dict[str, Any] = {"n_features_in_": p, "_seed_": seed}
    attrs.update(_categorical.restored(state, p))
    if "feature_names_in_" in state:
        attrs["feature_names_in_"] = _array(state, "feature_names_in_", "OU", (p,)).astype(object)
    n_classes = booster.n_classes
    if est._is_classifier:
        if "classes_" not in state:
            raise _fail("a classifier needs classes_")
        classes = _array(state, "classes_", "biufUO", (n_classes,))
        if not _strictly_increasing(classes):
            raise _fail("classes_ must be sorted and unique")
        attrs["classes_"] = classes
        attrs["n_classes_"] = n_classes
        if "n_classes_" in state:
            _int(state, "n_classes_", n_classes, n_classes)
    elif n_classes != 0 or "classes_" in state or "n_classes_" in state:
        raise _fail("a regressor with a classification model or classes_")
    try:
        k = est._node_features(p)  # max_features, read against the model's features
    except InvalidParameterError as exc:
        raise _fail(f"max_features does not fit the model: {exc}") from None
    _restore_float32_cuts(state, attrs, booster)
    for name, value in attrs.items():
        setattr(est, name, value)
    est._set_fitted(booster, k)

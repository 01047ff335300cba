"""Targets as the engine reads them (class codes of one column), and multi-output targets
(a 2-D ``y``) with scikit-learn's conventions.

The engine grows one tree for all outputs (the impurity is the mean over outputs,
``docs/multi-output.md``) and predicts one row of ``Σ_k C_k`` class frequencies (or ``m``
means) per sample. This module owns the Python side of that layout: the per-output class
codes of ``fit``, the split of a prediction row into outputs, and scikit-learn's shapes of
``predict``, ``predict_proba``, ``oob_decision_function_`` and ``oob_prediction_``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.multiclass import type_of_target

from . import _oob
from ._core import DataError


def single_or_columns(y: np.ndarray) -> np.ndarray:
    """``y`` as fit reads it: 1-D, or 2-D with at least two columns. A column vector warns
    and becomes 1-D, as in scikit-learn's forests; a y of more dimensions is refused."""
    y = np.atleast_1d(y)
    if y.ndim > 2:
        raise DataError(f"y must be 1-D or 2-D, got an array of shape {y.shape}.")
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=4,
        )
        return y[:, 0]
    if y.ndim == 2 and y.shape[1] == 0:
        raise DataError("y has no output (0 columns).")
    return y


def label_codes(classes: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, unknown)``: each label's position in the sorted ``classes`` and where it is
    none of them. numpy cannot sort text among numbers (a TypeError from searchsorted): such
    labels are then matched one by one, so a wrong y is a DataError at every caller."""
    try:
        codes = np.clip(np.searchsorted(classes, y), 0, len(classes) - 1)
        return codes, np.asarray(classes[codes] != y, dtype=bool)
    except TypeError:
        known = set(classes.tolist())
        unknown = np.array([v not in known for v in np.asarray(y, dtype=object)], dtype=bool)
        return np.zeros(len(unknown), dtype=np.intp), unknown


def column_codes(y: np.ndarray, classes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, codes of y)`` of one column of labels: its labels (``np.unique``), or
    ``classes``."""
    if classes is None:
        return np.unique(y, return_inverse=True)
    codes, unknown = label_codes(classes, y)
    if unknown.any():
        raise DataError("y holds labels outside the classes given.")
    return classes, codes


def class_codes(y: np.ndarray, classes: Any) -> tuple[list[np.ndarray], np.ndarray]:
    """``(classes per output, (n, m) uint32 codes, C-ordered)`` of a 2-D label array."""
    if classes is not None:
        raise DataError(
            "Classes given ahead of the data (forestimp.dask) are for one output; a 2-D y "
            "is fitted whole."
        )
    per_output = [np.unique(y[:, k], return_inverse=True) for k in range(y.shape[1])]
    codes = np.stack([c.reshape(-1) for _, c in per_output], axis=1)
    return [u for u, _ in per_output], np.ascontiguousarray(codes, dtype=np.uint32)


def check_oob_target(codes: np.ndarray) -> None:
    """scikit-learn's refusal: out-of-bag estimates of a multi-output classifier need
    binary outputs (its class codes ``multilabel-indicator``)."""
    y = codes
    y_type = type_of_target(y)
    if y_type == "multiclass-multioutput" or y_type == "unknown":
        raise DataError(
            "The type of target cannot be used to compute OOB estimates. Got "
            f"{y_type} while only the following are supported: continuous, "
            "continuous-multioutput, binary, multiclass, multilabel-indicator."
        )


def engine_targets(est: Any, y: np.ndarray, n_samples: int, output: int | None) -> np.ndarray:
    """A multi-output y as the engine read it at fit, ``(n, m)`` float64 (class codes or
    values), for a measure of one ``output`` (None: refused, the measure reads one column)."""
    if output is None:
        raise one_column_only(est.n_outputs_)
    check_targets(est, y, n_samples)
    if not est._is_classifier:
        return np.ascontiguousarray(y, dtype=np.float64)
    codes = [np.searchsorted(c, y[:, k]) for k, c in enumerate(est.classes_)]
    return np.ascontiguousarray(np.stack(codes, axis=1), dtype=np.float64)


def one_column_only(n_outputs: int) -> DataError:
    """The refusal of the measures that read one target column (out-of-bag measures,
    ``local_permutation``, ``unbiased``, ``significance``, ``context``)."""
    return DataError(
        "This measure reads one target column: it does not support multi-output forests "
        f"yet (this one has {n_outputs} outputs; see docs/multi-output.md)."
    )


def same_classes(a: Any, b: Any) -> bool:
    """Whether two ``classes_`` (an array, or a list of arrays per output) are equal."""
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return False
        return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


def split(values: np.ndarray, widths: list[int]) -> list[np.ndarray]:
    """The columns of each output of a prediction block ``(n, Σ widths)``."""
    ends = np.cumsum(widths)
    return [values[:, end - w : end] for w, end in zip(widths, ends, strict=True)]


def labels_of(proba: list[np.ndarray], classes: list[np.ndarray]) -> np.ndarray:
    """``(n, m)`` labels: each output's class of largest probability (first on ties), in
    the dtype of the first output's classes, as scikit-learn's ``predict``."""
    out = np.empty((proba[0].shape[0], len(proba)), dtype=classes[0].dtype)
    for k, (p, c) in enumerate(zip(proba, classes, strict=True)):
        out[:, k] = c.take(np.argmax(p, axis=1), axis=0)
    return out


def set_oob_attributes(
    est: Any, values: np.ndarray, seen: np.ndarray, y: np.ndarray, scorer: Any
) -> None:
    """scikit-learn's out-of-bag attributes of a multi-output forest, from the engine's
    ``(n, width)`` out-of-bag means (NaN rows: no out-of-bag tree, left out of the score).

    Classifier: ``oob_decision_function_`` of shape ``(n, max_k C_k, m)`` (zeros beyond an
    output's classes) and ``oob_score_`` the scorer (default: subset accuracy) of the
    per-output argmax codes against the codes of ``y``. Regressor: ``oob_prediction_`` of
    shape ``(n, m)`` and ``oob_score_`` the R² averaged over outputs.
    """
    if not est._is_classifier:
        est.oob_prediction_ = values
        est.oob_score_ = _oob.score(
            scorer or r2_score, y, lambda rows: values[rows], seen, stacklevel=5
        )
        return
    parts = split(values, est.n_classes_)
    width = max(est.n_classes_)
    decision = np.zeros((values.shape[0], width, len(parts)))
    for k, p in enumerate(parts):
        decision[:, : p.shape[1], k] = p
    est.oob_decision_function_ = decision
    codes = np.stack([np.searchsorted(c, y[:, k]) for k, c in enumerate(est.classes_)], axis=1)
    est.oob_score_ = _oob.score(
        scorer or accuracy_score, codes,
        lambda rows: np.argmax(np.nan_to_num(decision[rows]), axis=1), seen, stacklevel=5,
    )  # fmt: skip


def check_targets(est: Any, y: np.ndarray, n_samples: int) -> None:
    """Held-out targets of a multi-output forest: shape ``(n_samples, n_outputs_)``, each
    column's labels among the classes fitted (classifier) or finite values (regressor)."""
    m = est.n_outputs_
    if y.shape != (n_samples, m):
        raise DataError(f"y must have shape ({n_samples}, {m}), got {y.shape}.")
    if not est._is_classifier:
        if not np.all(np.isfinite(y.astype(np.float64))):
            raise DataError("y contains NaN or infinite values.")
        return
    for k, classes in enumerate(est.classes_):
        if label_codes(classes, y[:, k])[1].any():
            raise DataError(f"y[:, {k}] contains labels the classifier was not fitted on.")


# ------------------------------------------------------------------- fitted state
def state_of(name: str, value: Any, n_outputs: int) -> Any:
    """A fitted attribute of a multi-output estimator as ``forestimp._state`` stores it
    (1-D or 2-D arrays): ``classes_`` concatenated, ``oob_decision_function_`` as
    ``(n, C·m)``. The outputs' classes must share a dtype (the file stores one array)."""
    if n_outputs <= 1:
        return value
    if name == "classes_":
        dtypes = {c.dtype for c in value}
        if len(dtypes) != 1:
            raise DataError(
                "The outputs' classes have different dtypes "
                f"({sorted(str(d) for d in dtypes)}): only pickle can store them."
            )
        return np.concatenate(value)
    if name == "oob_decision_function_":
        return value.reshape(value.shape[0], -1)
    return value


def restore(name: str, value: Any, widths: list[int]) -> Any:
    """Inverse of :func:`state_of` for a forest whose outputs have ``widths`` values."""
    if name == "classes_":
        if isinstance(value, list):
            return value
        ends = np.cumsum(widths)
        return [value[end - w : end] for w, end in zip(widths, ends, strict=True)]
    if name == "oob_decision_function_":
        return value.reshape(value.shape[0], max(widths), len(widths))
    return value

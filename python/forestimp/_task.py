"""Classification or regression, read from the target alone: the one rule of
``forestimp rank --task auto``, ``forestimp select`` and the selectors' default model
(``estimator=None`` in :mod:`forestimp.selection`).

The rule: a non-numeric (or boolean) target is a class label; a numeric one is a class label
when every value is an integer and there are at most :data:`MAX_CLASSES` distinct values, a
regression target otherwise. scikit-learn's ``type_of_target`` calls every integer-valued
target "multiclass", so a count with 585 distinct values would become a 585-class problem;
:func:`warn_if_unlike_sklearn` says so where the two rules part.

Only numpy is imported here (pandas lazily, for a Series): the CLI imports this module
before it knows which model it needs.
"""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType
from typing import Any

import numpy as np

# Integer targets with more distinct values than this are treated as regression.
MAX_CLASSES = 20
# Integer-valued floats beyond this are not class labels (2**53: the last integer float64
# counts exactly; scikit-learn casts labels to int and calls larger ones "continuous").
MAX_LABEL = 2.0**53


class TaskGuessWarning(UserWarning):
    """The default model was chosen by :func:`infer_task` where scikit-learn's
    ``type_of_target`` would have chosen the other task: an integer target with more than
    :data:`MAX_CLASSES` distinct values is modelled by a regression forest."""


def _numeric_values(y: Any) -> np.ndarray | None:
    """``y`` as float64 values, or None when ``y`` is not numeric (text, categories,
    booleans): pandas' dtypes for a Series, numpy's for anything else."""
    if type(y).__module__.startswith("pandas"):
        import pandas as pd

        if pd.api.types.is_bool_dtype(y) or not pd.api.types.is_numeric_dtype(y):
            return None
        return np.asarray(y.to_numpy(dtype=np.float64))
    values = np.asarray(y)
    if values.dtype.kind not in "iuf":
        return None
    return values.astype(np.float64, copy=False).ravel()


def infer_task(y: Any) -> tuple[str, str]:
    """``(task, reason)``: "classification" or "regression" for the target ``y`` (a pandas
    Series or an array), and why, in words.

    Regression for non-integer numbers or more than :data:`MAX_CLASSES` distinct integers;
    classification for text, categories, booleans and up to :data:`MAX_CLASSES` integers.
    """
    values = _numeric_values(y)
    if values is None:
        return "classification", "non-numeric target"
    if not np.all(np.abs(values) <= MAX_LABEL) or np.any(values != np.round(values)):
        return "regression", "non-integer numeric target"
    levels = len(np.unique(values))
    if levels > MAX_CLASSES:
        return "regression", f"{levels} distinct integer values (> {MAX_CLASSES})"
    return "classification", f"{levels} distinct integer values (<= {MAX_CLASSES})"


def sklearn_task(y: Any) -> str:
    """The task scikit-learn's ``type_of_target`` reads in ``y`` (every integer-valued
    target is "multiclass" there, so classification)."""
    from sklearn.utils.multiclass import type_of_target

    continuous = type_of_target(y) in ("continuous", "continuous-multioutput")
    return "regression" if continuous else "classification"


def silent_default_task(y: Any) -> str | None:
    """The task a selector's default model takes for ``y`` without a warning: that of
    :func:`infer_task` where :func:`sklearn_task` agrees, None where they part (the CLI
    then builds the model itself; its user has no estimator to pass)."""
    task = infer_task(y)[0]
    return task if sklearn_task(y) == task else None


def warn_if_unlike_sklearn(y: Any, task: str, reason: str) -> None:
    """Warn (:class:`TaskGuessWarning`) when ``task``, chosen by :func:`infer_task` for a
    default model, is not the task scikit-learn's ``type_of_target`` reads in ``y``; the
    warning points at the first caller outside forestimp (the user's ``fit``)."""
    sklearn = sklearn_task(y)
    if sklearn == task:
        return
    chosen, other = (
        ("Regressor", "Classifier") if task == "regression" else ("Classifier", "Regressor")
    )
    warnings.warn(
        f"The target has {reason}, so the default model (estimator=None) is a {task} "
        f"forest, by the rule of `forestimp rank --task auto` (class labels: text, booleans "
        f"or at most {MAX_CLASSES} distinct integers); scikit-learn's type_of_target would "
        f"have read it as {sklearn}. Pass estimator=forestimp.RandomForest{other}() "
        f"for {sklearn}, or estimator=forestimp.RandomForest{chosen}() to keep "
        f"{task} without this warning.",
        TaskGuessWarning,
        stacklevel=_outside_stacklevel(),
    )


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of the innermost frame outside this package, for a
    ``warnings.warn`` in the function that calls this one (Python 3.12's
    ``skip_file_prefixes``, which 3.10 lacks)."""
    root = os.path.dirname(os.path.abspath(__file__))
    frame: FrameType | None = sys._getframe(1)  # the caller of warnings.warn: stacklevel 1
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(root):
        frame, level = frame.f_back, level + 1
    return level

"""Validation and resolution of hyper-parameters (scikit-learn's semantics).

Every check raises :class:`forestimp.exceptions.InvalidParameterError` (a ``ValueError``)
naming the parameter, and runs in ``fit``, never in ``__init__`` (scikit-learn's contract).
"""

from __future__ import annotations

import math
import os
import warnings
from numbers import Integral, Real
from typing import Any, Literal, TypeGuard, overload

import numpy as np
from sklearn.utils import check_random_state as _sklearn_check_random_state

from ._core import InvalidParameterError

# The largest integer a parameter may take without a stated bound: the engine reads sizes
# as 64-bit integers, so a larger one is refused here rather than overflowing there.
INT_MAX = 2**63 - 1
INT_MIN = -(2**63)
# The most trees a forest or booster may have (the engine's ``MAX_TREES``: tree indices are
# 32-bit in model files); beyond memory the fit raises ``MemoryError`` before it starts.
MAX_TREES = 2**32 - 2
# The largest |n_jobs|: the engine starts at most 4 threads per core whatever is asked, so
# this bound refuses only values that are not numbers of jobs (and would not fit its i64).
N_JOBS_MAX = 2**31


def _is_int(v: object) -> TypeGuard[int | np.integer[Any]]:
    return isinstance(v, (Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: object) -> TypeGuard[float | np.floating[Any]]:
    return isinstance(v, (Real, np.floating)) and not isinstance(v, (bool, np.bool_))


@overload
def check_int(
    name: str, value: object, low: int, high: int | None = None, *, none_ok: Literal[False] = ...
) -> int: ...
@overload
def check_int(
    name: str, value: object, low: int, high: int | None = None, *, none_ok: bool
) -> int | None: ...
def check_int(
    name: str, value: object, low: int, high: int | None = None, *, none_ok: bool = False
) -> int | None:
    """An integer in ``[low, high]`` (``high`` None: up to :data:`INT_MAX`), or None when
    allowed."""
    if value is None and none_ok:
        return None
    if not (_is_int(value) and low <= int(value) <= (INT_MAX if high is None else high)):
        upper = f" and <= {high}" if high is not None else ""
        allowed = f"an int >= {low}{upper}" + (" or None" if none_ok else "")
        raise InvalidParameterError(f"The '{name}' parameter must be {allowed}, got {value!r}.")
    return int(value)


def check_real(name: str, value: object, low: float, high: float) -> float:
    """A finite real in ``[low, high]``."""
    if not _is_real(value) or not (low <= float(value) <= high):
        raise InvalidParameterError(
            f"The '{name}' parameter must be a float in [{low}, {high}], got {value!r}."
        )
    return float(value)


def resolve_min_samples(name: str, value: object, n_samples: int, low: int) -> int:
    """``min_samples_split`` / ``min_samples_leaf``: an int ``>= low`` or a fraction of n."""
    if _is_int(value):
        return check_int(name, value, low)
    if _is_real(value) and 0.0 < float(value) <= 1.0:
        return max(low, math.ceil(float(value) * n_samples))
    raise InvalidParameterError(
        f"The '{name}' parameter must be an int >= {low} or a float in (0, 1], got {value!r}."
    )


def resolve_features(name: str, value: object, n_features: int) -> int:
    """A number of features: int, float fraction, ``"sqrt"``, ``"log2"`` or None (all)."""
    if value is None:
        return n_features
    if isinstance(value, str):
        if value == "sqrt":
            return max(1, int(math.sqrt(n_features)))
        if value == "log2":
            return max(1, int(math.log2(n_features)))
    elif _is_int(value):
        if 1 <= int(value) <= n_features:
            return int(value)
    elif _is_real(value) and 0.0 < float(value) <= 1.0:
        return max(1, int(float(value) * n_features))
    raise InvalidParameterError(
        f"The '{name}' parameter must be an int in [1, {n_features}], a float in (0, 1], "
        f"'sqrt', 'log2' or None, got {value!r}."
    )


def resolve_max_samples(value: object, n_samples: int, bootstrap: bool) -> int | None:
    """Rows drawn per tree: None (n), an int, or a fraction in (0, 1]."""
    if value is None:
        return None
    if _is_int(value):
        m = int(value)
        if 1 <= m <= INT_MAX and (bootstrap or m <= n_samples):
            return m
    elif _is_real(value) and 0.0 < float(value) <= 1.0:
        return max(1, round(float(value) * n_samples))
    raise InvalidParameterError(
        f"The 'max_samples' parameter must be None, an int in [1, {n_samples}] or a float "
        f"in (0, 1], got {value!r}."
    )


def check_bool(owner: str, name: str, value: object) -> bool:
    """A bool or ``numpy.bool_``, as scikit-learn's ``"boolean"`` constraint."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(
            f"The '{name}' parameter of {owner} must be an instance of 'bool' or an instance "
            f"of 'numpy.bool'. Got {value!r} instead."
        )
    return bool(value)


def resolve_forest_max_samples(
    owner: str, value: object, bootstrap: bool, n_samples: int, sample_weight: np.ndarray | None
) -> int | None:
    """Rows drawn per tree by scikit-learn 1.9's forests (``BaseForest.fit``).

    ``max_samples`` is None, an int >= 1 or a float > 0 (above 1 too: draws with replacement),
    and may only be set with ``bootstrap=True``. A float is relative to the sum of the sample
    weights (class weights included) when there are weights, else to ``n_samples``, and is
    rounded down (at least 1 row), with scikit-learn's warning when that leaves few rows.
    """
    # Bounded so that the count of rows drawn fits the engine's 64-bit sizes.
    if not (
        value is None
        or (_is_int(value) and 1 <= int(value) <= INT_MAX)
        or (_is_real(value) and not _is_int(value) and 0 < float(value) < math.inf)
    ):
        raise InvalidParameterError(
            f"The 'max_samples' parameter of {owner} must be None, a float in the range "
            f"(0.0, inf) or an int in the range [1, inf). Got {value!r} instead."
        )
    if not bootstrap and value is not None:
        raise InvalidParameterError(
            "`max_samples` cannot be set if `bootstrap=False`. Either switch to "
            "`bootstrap=True` or set `max_samples=None`."
        )
    if value is None:
        return None
    if _is_int(value):
        return int(value)
    weighted = n_samples if sample_weight is None else float(sample_weight.sum())
    rows = float(value) * weighted
    if not rows <= INT_MAX:  # NaN too (infinite weights are refused before)
        raise InvalidParameterError(
            f"The 'max_samples' parameter of {owner} is a fraction of {weighted} that asks "
            f"for {rows} rows per tree, more than the engine can count. Got {value!r}."
        )
    m = max(int(rows), 1)
    if m < max(10, n_samples ** (1 / 3)):
        what = (
            f"the number of samples is {weighted} "
            if sample_weight is None
            else f"the total sum of sample weights is {weighted} "
        )
        warnings.warn(
            f"Using the fractional value max_samples={value!r} when {what}results in a low "
            f"number ({m}) of bootstrap samples. We recommend passing `max_samples` as an "
            "integer instead.",
            UserWarning,
            stacklevel=4,
        )
    return m


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InvalidParameterError(
            f"The '{name}' parameter must be one of {', '.join(map(repr, choices))}, got {value!r}."
        )
    return value


def check_random_state(random_state: object) -> np.random.RandomState:
    """scikit-learn's ``check_random_state`` (None, an int in [0, 2**32 - 1], a
    ``RandomState``), with its refusals as :class:`InvalidParameterError`."""
    try:
        return _sklearn_check_random_state(random_state)
    except ValueError as exc:
        raise InvalidParameterError(f"The 'random_state' parameter is invalid: {exc}") from exc


def generator_from(random_state: object) -> np.random.Generator:
    """``numpy.random.default_rng(random_state)``, an int seed in [0, :data:`INT_MAX`], with
    its refusals as :class:`InvalidParameterError`."""
    if _is_int(random_state):
        check_int("random_state", random_state, 0)
    try:
        return np.random.default_rng(random_state)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"The 'random_state' parameter is invalid: {exc}") from exc


def seed_from(random_state: object) -> int:
    """A 63-bit engine seed from None / int / RandomState, drawn as scikit-learn does."""
    rng = check_random_state(random_state)
    return int(rng.randint(np.iinfo(np.int32).max)) << 31 | int(rng.randint(np.iinfo(np.int32).max))


def check_n_jobs(n_jobs: object) -> int | None:
    """None, or a non-zero int of magnitude at most :data:`N_JOBS_MAX` (-1: every core)."""
    if n_jobs is None:
        return None
    if not _is_int(n_jobs) or int(n_jobs) == 0 or abs(int(n_jobs)) > N_JOBS_MAX:
        raise InvalidParameterError(
            f"The 'n_jobs' parameter must be None or a non-zero int in [-{N_JOBS_MAX}, "
            f"{N_JOBS_MAX}], got {n_jobs!r}."
        )
    return int(n_jobs)


def thread_count(n_jobs: int | None) -> int:
    """The threads ``n_jobs`` (checked) asks for, as the engine counts them: None is 1, -1
    every core the process may run on, -2 all but one, ..."""
    if n_jobs is None:
        return 1
    if n_jobs > 0:
        return n_jobs
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cores or 1) + 1 + n_jobs)


def check_verbose(value: object) -> int:
    """``verbose``: a bool or an int >= 0 (scikit-learn's ``"verbose"`` constraint)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    return check_int("verbose", value, 0)


def check_cv_folds(cv: object) -> Any:
    """``cv`` as ``sklearn.model_selection.check_cv`` reads it: an int is a number of folds,
    >= 2 (more than the samples: scikit-learn's error at the split); an iterable of
    ``(train, test)`` splits is read into a list that must hold one (scikit-learn meets an
    empty one with an IndexError deep in cross_val_score); anything else (None, a splitter)
    is returned as is."""
    if _is_int(cv):
        return check_int("cv", cv, 2)
    if cv is None or hasattr(cv, "split") or isinstance(cv, (str, bytes)):
        return cv
    try:
        splits = list(cv)  # type: ignore[call-overload]
    except TypeError:
        return cv  # not iterable: check_cv's own error
    if not splits:
        raise InvalidParameterError(
            "The 'cv' parameter is an iterable of no (train, test) split: pass an int of "
            "folds >= 2, a CV splitter, or at least one split."
        )
    return splits


def check_stored_params(params: dict[str, Any]) -> None:
    """The checks of fit that read no data, for parameters read back from a model file
    (:mod:`forestimp.persistence`), which are otherwise first read by a refit, or for
    ``n_jobs`` by a prediction: every int in them (nested in lists, tuples and dicts too)
    within 64 bits, ``n_jobs`` and ``random_state`` as fit reads them."""
    for name, value in params.items():
        _check_nested_ints(name, value)
    if "n_jobs" in params:
        check_n_jobs(params["n_jobs"])
    if "random_state" in params:
        check_random_state(params["random_state"])


def _check_nested_ints(name: str, value: object) -> None:
    # Dict keys are class labels (class_weight), which may be uint64 values.
    if isinstance(value, dict):
        for key, item in value.items():
            if _is_int(key) and not INT_MIN <= int(key) < 2**64:
                raise InvalidParameterError(
                    f"The '{name}' parameter has a key {key!r} beyond 64 bits."
                )
            _check_nested_ints(name, item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_nested_ints(name, item)
    elif _is_int(value) and not INT_MIN <= int(value) <= INT_MAX:
        raise InvalidParameterError(
            f"The '{name}' parameter holds {value!r}, outside the 64-bit integers "
            f"[{INT_MIN}, {INT_MAX}]."
        )


def resolve_monotonic_cst(
    value: object, n_features: int, n_outputs: int, n_classes: int | None
) -> list[int] | None:
    """``monotonic_cst`` checked as scikit-learn 1.9's trees check it (the same order and
    messages): None, or one of -1, 0, 1 per feature, for single-output regression
    (``n_classes`` None) or classification with at most two classes. The signs are the
    user's (on the probability of the second class for a classifier); the engine flips
    them for classifiers as scikit-learn does."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or np.ndim(value) != 1:  # type: ignore[arg-type]
        raise InvalidParameterError(
            f"The 'monotonic_cst' parameter must be an array-like of shape (n_features,) "
            f"or None. Got {value!r} instead."
        )
    if n_outputs > 1:
        raise InvalidParameterError(
            "Monotonicity constraints are not supported with multiple outputs."
        )
    cst = np.asarray(value)
    if cst.shape[0] != n_features:
        raise InvalidParameterError(
            f"monotonic_cst has shape {cst.shape[0]} but the input data X has "
            f"{n_features} features."
        )
    if not np.all(np.isin(cst, (-1, 0, 1))):
        raise InvalidParameterError(
            f"monotonic_cst must be None or an array-like of -1, 0 or 1, but got {np.unique(cst)}"
        )
    if n_classes is not None and n_classes > 2:
        raise InvalidParameterError(
            "Monotonicity constraints are not supported with multiclass classification"
        )
    return [int(s) for s in cst.astype(np.int8)]


def monotonic_cst_of_view(cst: list[int] | None, columns: Any, shadows: Any) -> list[int] | None:
    """The signs of X's columns read through the view a forest is grown on
    (``Forest.fit``): the selected ``columns`` in their order, then free (0) shadows, one
    per column seen (``shadows=True``) or per source (an array)."""
    if cst is None:
        return None
    if columns is not None:
        cst = [cst[int(c)] if 0 <= int(c) < len(cst) else 0 for c in columns]
    if shadows is True:
        cst = cst + [0] * len(cst)
    elif isinstance(shadows, np.ndarray):
        cst = cst + [0] * len(shadows)
    return cst

"""The forests' ``class_weight``: scikit-learn's presets and dicts as sample weights.

``"balanced_subsample"`` is left to the engine (``Forest.fit(balanced_subsample=True)``,
``reweigh_balanced`` in ``src/forest/fit.rs``), which knows each tree's draws: scikit-learn's
``compute_sample_weight("balanced", y, indices=drawn)``, tree ``t`` weighing a row of class
``c`` of output ``k`` by ``m / (n_k · m_kc)`` (``m`` rows drawn, ``m_kc`` of them of class
``c``, ``n_k`` classes of output ``k`` drawn at all), the product over the outputs of a 2-D y.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.utils.class_weight import compute_sample_weight

from ._core import InvalidParameterError


def sample_weight_of(est: Any, y: np.ndarray, sw: np.ndarray | None) -> np.ndarray | None:
    """``sw`` times the weights of ``est.class_weight`` (``"balanced_subsample"`` is left to
    the engine: see the module docstring), checked as scikit-learn checks them; with
    ``warm_start``, a preset warns as in scikit-learn."""
    cw = est.class_weight
    if cw is None:
        return sw
    # Several outputs: one dict per output (scikit-learn's convention), or "balanced".
    per_output = isinstance(cw, list) and y.ndim == 2 and len(cw) == y.shape[1]
    preset = isinstance(cw, str) and cw in ("balanced", "balanced_subsample")
    if not (preset or isinstance(cw, dict) or per_output):
        raise InvalidParameterError(
            "The 'class_weight' parameter must be None, 'balanced', 'balanced_subsample' "
            f"or a dict (a list of one dict per output for a 2-D y), got {cw!r}."
        )
    if preset and getattr(est, "warm_start", False):
        warnings.warn(
            'class_weight presets "balanced" or "balanced_subsample" are not recommended for '
            "warm_start if the fitted data differs from the full dataset. In order to use "
            '"balanced" weights, use compute_class_weight ("balanced", classes, y). In place '
            "of y you can use a large enough sample of the full training set target to "
            "properly estimate the class frequency distributions. Pass the resulting weights "
            "as the class_weight parameter.",
            UserWarning,
            stacklevel=4,
        )
    if cw == "balanced_subsample":
        return sw
    w = compute_sample_weight(cw, y)
    return w if sw is None else sw * w


def per_tree_or_balanced(
    est: Any, y: np.ndarray, sw: np.ndarray | None, bootstrap: bool, max_samples: int | None
) -> tuple[np.ndarray | None, bool]:
    """``(sample weights, whether the engine weighs classes per tree)`` for
    ``"balanced_subsample"``: per tree when the trees draw rows; when every tree sees every
    row once, ``"balanced"`` on the whole of y, as scikit-learn's forests do then."""
    if not (est._is_classifier and est.class_weight == "balanced_subsample"):
        return sw, False
    if bootstrap or max_samples is not None:
        return sw, True
    w = compute_sample_weight("balanced", y)
    return (w if sw is None else sw * w), False

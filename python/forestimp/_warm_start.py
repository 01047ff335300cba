"""The forests' ``warm_start=True``, with scikit-learn's rules (``BaseForest.fit``).

* ``n_estimators`` smaller than the fitted trees: ``InvalidParameterError``.
* the same ``n_estimators``: a warning, and nothing is fitted: the model, the classes and
  the other fitted attributes stay as they are, whatever data is given. Only when
  ``oob_score`` is set and ``oob_score_`` is missing is it computed, from the given data,
  which must then be the training data (``DataError`` otherwise).
* a larger ``n_estimators``: the trees ``k..n`` are grown on the data given, with the
  parameters as they are now, and put after the ``k`` fitted ones.

On the training data of the fitted trees (the same rows in the same order and the same y,
checked against the fingerprint taken at fit), with the same sample weights (not checked),
parameters and seed, the result is the forest of the ``n`` trees grown at once, bit for bit,
for any ``n_jobs`` and across pickles and files (not for ``ccp_alpha > 0`` or
``monotonic_cst``, which the model bytes do not keep): tree ``i`` depends only on
``(random_state, i)`` and the data (an int ``random_state``, or the seed drawn at the first
fit for None or a ``RandomState``). A changed parameter or seed is then refused
(``InvalidParameterError``), since the new trees could not be those of that forest.

On other data (other rows, another y, another number of rows), the new trees are trees
``k..n`` of the forest that the same seed grows on that data, as scikit-learn grows its new
trees on the data it is given; the parameters may differ from the first fit's, but not the
features, the outputs or the classes (``DataError``, before anything is grown), nor the
criterion or the splitter (``InvalidParameterError`` from ``Forest.assemble``). The trees
then have no common training set, so the forest has no out-of-bag rows
(``Forest.assemble``): ``oob_score=True`` is refused before anything is grown, and
out-of-bag importances refuse it, where scikit-learn would score every tree on rows some of
them were not drawn from.

Invariant: a warm start that raises leaves the estimator as it was fitted.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _float32_routing, _outputs
from . import _params as P
from ._core import DataError, Forest, InvalidParameterError

# The out-of-bag attributes of a forest (one output or several).
OOB_ATTRIBUTES = ("oob_score_", "oob_decision_function_", "oob_prediction_")

# What fit (re)sets, put back when a warm start raises or fits nothing.
_FITTED = (
    "forest_",
    "classes_",
    "n_classes_",
    "n_outputs_",
    "n_features_in_",
    "feature_names_in_",
    "_training_fingerprint",
    *OOB_ATTRIBUTES,
    *_float32_routing.ATTRIBUTES,
)


def saved(est: Any) -> dict[str, Any] | None:
    """The fitted attributes of ``est`` when its next fit is a warm start, else None."""
    if not getattr(est, "warm_start", False) or est.__dict__.get("forest_") is None:
        return None
    return {k: est.__dict__[k] for k in _FITTED if k in est.__dict__}


def restore(est: Any, state: dict[str, Any]) -> None:
    """Puts back the fitted attributes :func:`saved` returned."""
    for name in _FITTED:
        est.__dict__.pop(name, None)
    est.__dict__.update(state)


def drop_oob(est: Any) -> None:
    """Removes out-of-bag attributes, which a forest fitted without ``oob_score`` would
    otherwise keep from an earlier fit."""
    for name in OOB_ATTRIBUTES:
        est.__dict__.pop(name, None)


@dataclass(frozen=True)
class Plan:
    """What a warm start grows: the trees ``kept.n_estimators..n_estimators``, joined to
    ``kept`` as parts of one forest (``same_data``) or assembled (module docstring)."""

    kept: Forest
    n_estimators: int
    same_data: bool

    @property
    def trees(self) -> tuple[int, int]:
        return self.kept.n_estimators, self.n_estimators

    def seed(self, random_state: Any) -> int:
        """The engine's seed: the first fit's unless ``random_state`` is an int (None or a
        RandomState would draw another one)."""
        if P._is_int(random_state):
            return P.seed_from(random_state)
        return int(self.kept.random_state)

    def joined(self, grown: Forest, n_features: int) -> Forest:
        """The forest of the kept trees followed by ``grown``, the new ones."""
        if self.same_data:
            try:
                return Forest.concat([self.kept, grown])
            except InvalidParameterError as e:
                raise InvalidParameterError(
                    "invalid parameter `warm_start`: more trees need the parameters (other "
                    "than n_estimators), the random seed and the shape of the training data "
                    "of the first fit"
                ) from e
        columns = list(range(n_features))
        return Forest.assemble([self.kept, grown], [columns, columns], n_features)


def plan(
    est: Any,
    state: dict[str, Any],
    X: Any,
    fingerprint: tuple[int, int, int],
    n_estimators: int,
    oob: Any,
) -> Plan | None:
    """The warm start of ``est`` (fitted: ``state``) on ``X``, the data whose fingerprint
    is given; None when nothing is to be grown (warned)."""
    kept: Forest = state["forest_"]
    if n_estimators < kept.n_estimators:
        raise InvalidParameterError(
            f"n_estimators={n_estimators} must be larger or equal to "
            f"len(estimators_)={kept.n_estimators} when warm_start==True"
        )
    if n_estimators == kept.n_estimators:
        warnings.warn(
            "Warm-start fitting without increasing n_estimators does not fit new trees.",
            UserWarning,
            stacklevel=4,
        )
        return None
    if X.shape[1] != kept.n_features or est.n_outputs_ != max(1, kept.n_outputs):
        raise DataError(
            f"warm_start grows more trees on data of the first fit's shape: X has "
            f"{X.shape[1]} features and y {est.n_outputs_} outputs, the fitted trees "
            f"{kept.n_features} and {max(1, kept.n_outputs)}."
        )
    if est._is_classifier and not _outputs.same_classes(state.get("classes_"), est.classes_):
        raise DataError(
            "warm_start grows more trees for the classes of the first fit; y has other "
            "classes (set warm_start=False to fit a new forest)."
        )
    same = not kept.assembled and fingerprint == state.get("_training_fingerprint")
    if oob and not same:
        raise InvalidParameterError(
            "oob_score=True needs the training data of every tree: warm_start on other data "
            "than the first fit's grows a forest without out-of-bag rows (set "
            "oob_score=False, or warm_start=False to fit a new forest)."
        )
    return Plan(kept, n_estimators, same)


def keep_fitted(
    est: Any,
    state: dict[str, Any],
    X: Any,
    y: np.ndarray,
    fingerprint: tuple[int, int, int],
    oob: Any,
) -> None:
    """A warm start that grows no tree: the fitted attributes are put back, and
    ``oob_score_`` computed when ``oob_score`` asks for it and it is missing."""
    same_classes = not est._is_classifier or _outputs.same_classes(
        state.get("classes_"), est.classes_
    )
    restore(est, state)
    if not oob or "oob_score_" in state:
        return
    kept: Forest = state["forest_"]
    if kept.assembled or not same_classes or fingerprint != state.get("_training_fingerprint"):
        raise DataError(
            "oob_score_ of the fitted trees needs their training data: X, y differ from "
            "those of the fit (or the trees were grown on different data)."
        )
    est._set_oob_score(X, y)

"""Feature selection with forests: importance thresholds, recursive elimination, Boruta, and
the memory-constrained Sequential Random Subspace (Sutera, PhD ch. 7).

Every selector is a scikit-learn selector (``fit``, ``transform``, ``get_support``,
``get_feature_names_out``; it works in a ``Pipeline`` and can be cloned), keeps the whole
path in ``history_`` (a list of :class:`SelectionStep`) and ranks columns in ``ranking_``.
``estimator=None`` means a forestimp random forest, a classifier or a regressor as
``forestimp rank --task auto`` reads the target (:class:`TaskGuessWarning` where
scikit-learn's ``type_of_target`` would read the other); any scikit-learn estimator with
``feature_importances_`` also works. ``importance=`` names a measure of
:mod:`forestimp.importance`.
"""

from __future__ import annotations

from .._task import TaskGuessWarning
from ..theory import expected_srs_iterations
from ._base import IMPORTANCES, BaseSelector, SelectionStep
from ._boruta import Boruta, BorutaStep
from ._rfe import RFE, RFEStep
from ._srs import SequentialRandomSubspace, SRSStep
from ._threshold import SelectFromImportance, ThresholdStep

__all__ = [
    "IMPORTANCES",
    "RFE",
    "SRSStep",
    "BaseSelector",
    "Boruta",
    "BorutaStep",
    "RFEStep",
    "SelectFromImportance",
    "SelectionStep",
    "TaskGuessWarning",
    "SequentialRandomSubspace",
    "ThresholdStep",
    "expected_srs_iterations",
]

"""Feature selection with forests: importance thresholds, recursive elimination, Boruta, and
the memory-constrained Sequential Random Subspace (Sutera, PhD ch. 7).

Every selector is a scikit-learn selector (``fit``, ``transform``, ``get_support``,
``get_feature_names_out``; it works in a ``Pipeline`` and can be cloned), keeps the whole
path in ``history_`` (a list of :class:`SelectionStep`) and ranks columns in ``ranking_``.
``estimator=None`` means a forestimp random forest; any scikit-learn estimator with
``feature_importances_`` also works. ``importance=`` names a measure of
:mod:`forestimp.importance`.
"""

from __future__ import annotations

from ._base import IMPORTANCES, BaseSelector, SelectionStep
from ._srs import SequentialRandomSubspace, SRSStep

__all__ = ["IMPORTANCES", "BaseSelector", "SelectionStep", "SequentialRandomSubspace", "SRSStep"]

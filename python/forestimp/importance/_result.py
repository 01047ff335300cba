"""The result type shared by the importance measures that average over trees."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Importances:
    """Importances of every feature, with the per-tree values they average.

    Attributes
    ----------
    importances : ndarray of shape (n_features,)
        The measure (the mean of ``per_tree`` over the trees that define it).
    per_tree : ndarray of shape (n_trees, n_features) or None
        One row per tree; NaN rows for trees on which the measure is undefined.
    method : str
        Which measure this is.
    feature_names : ndarray of str or None
        ``feature_names_in_`` of the estimator, when it was fitted on a DataFrame.
    """

    importances: np.ndarray
    per_tree: np.ndarray | None
    method: str
    feature_names: np.ndarray | None = None

    @property
    def standard_error(self) -> np.ndarray:
        """Standard error of the mean over trees, ``std(per_tree, ddof=1) / sqrt(M)``.

        Trees are grown independently given the data, so this is the Monte-Carlo error of the
        forest average; it does not include the sampling variability of the data set.
        """
        if self.per_tree is None:
            raise ValueError(f"{self.method} has no per-tree values")
        rows = self.per_tree[~np.isnan(self.per_tree).any(axis=1)]
        if len(rows) < 2:
            return np.full(self.importances.shape, np.nan)
        return rows.std(axis=0, ddof=1) / np.sqrt(len(rows))

    @property
    def zscores(self) -> np.ndarray:
        """``importances / standard_error`` (Breiman's scaled importance)."""
        se = self.standard_error
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(se > 0, self.importances / se, 0.0)

    def ranking(self) -> np.ndarray:
        """Feature indices from the most to the least important (stable on ties)."""
        return np.argsort(-self.importances, kind="stable")

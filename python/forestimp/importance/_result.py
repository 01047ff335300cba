"""The one family of results every importance measure returns.

Field names follow scikit-learn's ``permutation_importance`` Bunch (``importances_mean``,
``importances_std``, ``importances``), so code written for scikit-learn, and our CLI, read
any forestimp measure the same way: as attributes, or as a Bunch's keys (``r["importances"]``,
``r.keys()``, ``dict(r)``), which are exactly those three.

**One spread rule.** ``importances_std`` is the population standard deviation (``ddof=0``,
as scikit-learn's ``importances_std`` and randomForest's ``SD``) of the draws (the columns of
``importances``: trees, repeats or samples), and ``standard_error = importances_std /
sqrt(n_draws)``. Draws holding a NaN (a tree on which the measure is undefined, a sample
that is in every bag) are left out of both.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

# The keys of scikit-learn's ``permutation_importance`` Bunch, in its order.
BUNCH_KEYS = ("importances_mean", "importances_std", "importances")


def feature_names_of(est: Any, n_features: int) -> np.ndarray:
    """``feature_names_in_`` of ``est``, else ``x0..x{p-1}`` (scikit-learn's
    ``get_feature_names_out`` convention), as an object array."""
    names = getattr(est, "feature_names_in_", None)
    if names is None:
        names = [f"x{i}" for i in range(n_features)]
    return np.asarray(names, dtype=object)


def spread(importances: np.ndarray | None, p: int) -> tuple[np.ndarray, np.ndarray]:
    """``(importances_std, standard_error)`` of draws ``importances`` (p, n_draws): the
    package's one rule (module docstring). NaN without draws."""
    if importances is not None:
        draws = importances[:, ~np.isnan(importances).any(axis=0)]
        if draws.shape[1] > 0:
            std = draws.std(axis=1)
            return std, std / np.sqrt(draws.shape[1])
    return np.full(p, np.nan), np.full(p, np.nan)


@dataclass(frozen=True, kw_only=True, eq=False)
class Importances:
    """Importances of every feature, with the draws (trees, repeats, samples) they average.

    Attributes
    ----------
    importances_mean : ndarray of shape (n_features,)
        The measure. Usually the mean of ``importances`` over its columns; see each
        function for the exact definition (e.g. ``mdi(normalize=True)`` renormalizes).
    importances : ndarray of shape (n_features, n_draws) or None
        One column per draw: per tree (``draws == "trees"``), per permutation repeat
        (``"repeats"``) or per sample (``"samples"``, local measures). None when the
        measure has no draws.
    method : str
        Which measure this is (``"mdi"``, ``"oob"``, ``"held_out"``, ``"air"``, ...).
    feature_names : ndarray of str, shape (n_features,)
        ``feature_names_in_`` of the estimator, or ``x0..x{p-1}``.
    draws : {"trees", "repeats", "samples"} or None
        What the columns of ``importances`` are.
    importances_std : ndarray of shape (n_features,)
        Standard deviation over the draws, ``ddof=0`` (NaN without draws).
    standard_error : ndarray of shape (n_features,)
        ``importances_std / sqrt(n_draws)``. Over trees it is the Monte-Carlo error of the
        forest average (add trees to shrink it); it does not include the sampling
        variability of the data set.
    ranking_ : ndarray of int, shape (n_features,)
        Feature indices from the most to the least important (stable on ties, NaN last).

    Read as scikit-learn's Bunch is read, it maps the keys ``importances_mean``,
    ``importances_std`` and ``importances`` to those attributes (``r["importances"]``,
    ``"importances" in r``, ``r.keys()``, ``r.items()``, ``dict(r)``); the other fields
    are attributes only (and ``values`` is ``LocalImportances``' field, not a method).
    """

    importances_mean: np.ndarray
    importances: np.ndarray | None
    method: str
    feature_names: np.ndarray
    draws: str | None = None

    @cached_property
    def _spread(self) -> tuple[np.ndarray, np.ndarray]:
        return spread(self.importances, len(self.importances_mean))

    @property
    def importances_std(self) -> np.ndarray:
        return self._spread[0]

    @property
    def standard_error(self) -> np.ndarray:
        return self._spread[1]

    @property
    def zscores(self) -> np.ndarray:
        """``importances_mean / standard_error`` (Breiman's scaled importance; 0 where the
        standard error is 0)."""
        se = self.standard_error
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(se > 0, self.importances_mean / se, 0.0)

    @cached_property
    def ranking_(self) -> np.ndarray:
        return np.argsort(-self.importances_mean, kind="stable")

    def __getitem__(self, key: str) -> Any:
        if key not in BUNCH_KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(BUNCH_KEYS)

    def __len__(self) -> int:
        return len(BUNCH_KEYS)

    def __contains__(self, key: object) -> bool:
        return key in BUNCH_KEYS

    def keys(self) -> KeysView[str]:
        """The Bunch keys of scikit-learn's ``permutation_importance`` result."""
        return KeysView(self)

    def items(self) -> ItemsView[str, Any]:
        return ItemsView(self)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in BUNCH_KEYS else default

    @property
    def per_tree(self) -> np.ndarray | None:
        """``importances.T``, shape (n_trees, n_features), when the draws are trees."""
        if self.draws != "trees" or self.importances is None:
            return None
        return self.importances.T

    def to_frame(self) -> Any:
        """A pandas DataFrame indexed by feature name, in feature order, with columns
        ``importances_mean``, ``importances_std``, ``standard_error`` and ``rank`` (1 = most
        important)."""
        import pandas as pd

        rank = np.empty(len(self.ranking_), dtype=np.int64)
        rank[self.ranking_] = np.arange(1, len(rank) + 1)
        return pd.DataFrame(
            {
                "importances_mean": self.importances_mean,
                "importances_std": self.importances_std,
                "standard_error": self.standard_error,
                "rank": rank,
            },
            index=pd.Index(self.feature_names, name="feature"),
        )

    def plot(self, ax: Any = None, *, max_features: int | None = None) -> Any:
        """Horizontal bars of ``importances_mean``, most important on top, with
        ``standard_error`` as error bars (when finite). Needs matplotlib.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        max_features : int, optional
            Draw only the first ``max_features`` of ``ranking_``.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from ..plotting import bar_importances

        keep = self.ranking_[:max_features]
        se = self.standard_error[keep]
        return bar_importances(
            [str(n) for n in self.feature_names[keep]],
            self.importances_mean[keep],
            se if np.all(np.isfinite(se)) else None,
            ax=ax,
            title=self.method,
        )


@dataclass(frozen=True, kw_only=True, eq=False)
class LocalImportances(Importances):
    """A per-sample measure: ``values`` (n_samples, n_features) and its mean over samples.

    ``importances`` is ``values.T`` (a view, ``draws == "samples"``), so
    ``importances_mean`` is the mean over the samples without NaN, ``importances_std`` the
    spread of the local values across samples and ``standard_error`` the standard error of
    that mean.

    Attributes
    ----------
    values : ndarray of shape (n_samples, n_features)
        The local importances (NaN rows for samples on which the measure is undefined).
    """

    values: np.ndarray

    def to_frame(self, per_sample: bool = False) -> Any:
        """The global summary (see :meth:`Importances.to_frame`), or with ``per_sample``
        the ``values`` as a (n_samples, n_features) DataFrame with feature-named columns."""
        if not per_sample:
            return super().to_frame()
        import pandas as pd

        return pd.DataFrame(self.values, columns=pd.Index(self.feature_names, name="feature"))


def local_result(values: np.ndarray, method: str, names: np.ndarray) -> LocalImportances:
    """The :class:`LocalImportances` of ``values`` (n_samples, n_features)."""
    rows = values[~np.isnan(values).any(axis=1)]
    mean = rows.mean(axis=0) if len(rows) else np.full(values.shape[1], np.nan)
    return LocalImportances(
        importances_mean=mean,
        importances=values.T,
        method=method,
        feature_names=names,
        draws="samples",
        values=values,
    )

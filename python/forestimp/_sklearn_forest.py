"""scikit-learn's ensemble interface on forestimp forests (``estimators_``, ``len``, indexing,
iteration, ``estimators_samples_``) and :func:`to_sklearn`, the equivalent fitted
scikit-learn forest, for tools that dispatch on scikit-learn's classes (shap's
``TreeExplainer``, skl2onnx).

``to_sklearn`` chooses the scikit-learn class by the trees' thresholds, since that is what a
refit of the returned forest would draw:

==================================  ===========================================================
forestimp                           scikit-learn
==================================  ===========================================================
RandomForest* (best or hist)        RandomForest*
ExtraTrees* (multiway too)          ExtraTrees*
TotallyRandomizedTrees*             ExtraTrees*, ``max_features=1``
RandomPatches*                      ExtraTrees* (``splitter="random"``) or RandomForest*,
                                    ``max_features`` = K per node
==================================  ===========================================================

The trees are the same whatever the class, so its predictions are forestimp's on float32
inputs and on the training rows (``forestimp._sklearn_trees``,
``forestimp._float32_routing``). What scikit-learn's forests cannot express is kept by the
trees only: the per-tree feature subsets of Random Patches, rows drawn without
replacement (``max_samples`` with ``bootstrap=False``; the parameter is then None), the
histogram splitter. ``estimators_samples_`` of the returned forest works when every tree saw
every row (``arange(n)``); otherwise scikit-learn would regenerate its own draws from tree
seeds it does not have, so it raises ``AttributeError``: read the forestimp model's instead.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import numpy as np
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.utils.validation import check_is_fitted

from ._core import Forest
from ._sklearn_trees import SklearnTree, in_bag_rows, n_training_rows, sklearn_tree, tree_params

# (classifier, random thresholds) -> scikit-learn class.
_SKLEARN_FORESTS = {
    (True, False): RandomForestClassifier,
    (True, True): ExtraTreesClassifier,
    (False, False): RandomForestRegressor,
    (False, True): ExtraTreesRegressor,
}

# Fitted attributes copied as they are, when the forestimp model has them.
_FITTED = ("feature_names_in_", "oob_score_", "oob_decision_function_", "oob_prediction_")


def _forest_params(est: Any) -> dict[str, Any]:
    """Constructor parameters of the scikit-learn forest equivalent to ``est``."""
    own = est.get_params()
    tree = tree_params(est)
    params = {k: v for k, v in tree.items() if k != "splitter"}
    # Keep the user's max_features where it means K per node, as in scikit-learn (a refit
    # on other data resolves it alike); Random Patches and K = 1 trees get the resolved K.
    if "max_features" in own and "max_features_node" not in own:
        params["max_features"] = own["max_features"]
    bootstrap = bool(own["bootstrap"])
    params.update(
        n_estimators=len(est),
        bootstrap=bootstrap,
        oob_score=own["oob_score"],
        n_jobs=own["n_jobs"],
        random_state=own["random_state"],
        verbose=own["verbose"],
        max_samples=own["max_samples"] if bootstrap else None,
    )
    if est._is_classifier:
        params["class_weight"] = own["class_weight"]
    return params


def _sees_every_row(est: Any) -> bool:
    """Whether every tree was grown on every training row, once."""
    return not est.bootstrap and all(
        len(in_bag_rows(est, i)) == n_training_rows(est) for i in range(len(est))
    )


def to_sklearn(est: Any) -> Any:
    """The fitted scikit-learn forest equivalent to the fitted forestimp forest ``est``.

    Its ``estimators_`` are new copies of ``est.estimators_``; it has ``n_features_in_``,
    ``feature_names_in_`` (when ``est`` has them), ``n_outputs_``, ``classes_`` and
    ``n_classes_`` (classifiers) and the out-of-bag results of ``est``. The class mapping
    and what it cannot carry are in this module's docstring.
    """
    check_is_fitted(est, "forest_")
    splitter = tree_params(est)["splitter"]
    cls = _SKLEARN_FORESTS[(bool(est._is_classifier), splitter == "random")]
    forest = cls(**_forest_params(est))
    forest.estimator_ = forest.estimator
    forest.estimators_ = [sklearn_tree(est, i) for i in range(len(est))]
    forest.n_features_in_ = est.n_features_in_
    forest.n_outputs_ = getattr(est, "n_outputs_", 1)
    if est._is_classifier:
        forest.classes_ = est.classes_
        forest.n_classes_ = est.n_classes_
    for name in _FITTED:
        if hasattr(est, name):
            setattr(forest, name, getattr(est, name))
    if getattr(est, "_training_fingerprint", None) is not None and _sees_every_row(est):
        # scikit-learn's estimators_samples_ is then arange(_n_samples), which is right.
        forest._n_samples = n_training_rows(est)
    return forest


class _TreeCache:
    """The scikit-learn trees built for one engine ``Forest``, keyed by its identity, so a
    refit (a new ``forest_``) invalidates them. It pickles empty: the trees are rebuilt from
    the model bytes rather than stored twice."""

    __slots__ = ("forest", "trees")

    def __init__(self) -> None:
        self.forest: Forest | None = None
        self.trees: list[SklearnTree | None] = []

    def __reduce__(self) -> tuple[type[_TreeCache], tuple[()]]:
        return (_TreeCache, ())

    def tree(self, est: Any, index: int) -> SklearnTree:
        """Tree ``index`` of ``est``, built on first use."""
        forest = est.forest_
        if self.forest is not forest:
            self.forest, self.trees = forest, [None] * forest.n_estimators
        tree = self.trees[index]
        if tree is None:
            tree = self.trees[index] = sklearn_tree(est, index)
        return tree


class SklearnEnsembleMixin:
    """scikit-learn's ensemble interface over a fitted forest (``BaseEnsemble``'s
    ``__len__``, ``__getitem__``, ``__iter__``, and the forests' ``estimators_``,
    ``estimators_samples_``), plus :meth:`to_sklearn`."""

    forest_: Forest

    def _tree_cache(self) -> _TreeCache:
        check_is_fitted(self, "forest_")
        cache = self.__dict__.get("_sklearn_trees")
        if cache is None:
            cache = self.__dict__["_sklearn_trees"] = _TreeCache()
        return cache

    @property
    def estimators_(self) -> list[SklearnTree]:
        """The trees as fitted ``sklearn.tree.DecisionTreeClassifier`` /
        ``DecisionTreeRegressor`` objects, built on first access and cached until the next
        fit. Their mean ``predict_proba`` (classifiers) or ``predict`` (regressors) is the
        forest's prediction on float32 inputs and on the training rows, float64 or not
        (``forestimp._sklearn_trees``, ``forestimp._float32_routing``)."""
        cache = self._tree_cache()
        return [cache.tree(self, i) for i in range(len(self))]

    def __len__(self) -> int:
        """Number of trees."""
        check_is_fitted(self, "forest_")
        return self.forest_.n_estimators

    def __getitem__(self, index: int | slice) -> Any:
        """Tree ``index`` (a list of trees for a slice) as a fitted scikit-learn tree."""
        cache = self._tree_cache()
        n = len(self)
        if isinstance(index, slice):
            return [cache.tree(self, i) for i in range(*index.indices(n))]
        i = operator.index(index)
        if not -n <= i < n:
            raise IndexError(f"tree index {i} out of range for a forest of {n} trees")
        return cache.tree(self, i % n)

    def __iter__(self) -> Iterator[SklearnTree]:
        """The trees, in order (``estimators_``)."""
        return iter(self.estimators_)

    @property
    def estimators_samples_(self) -> list[np.ndarray]:
        """In-bag rows of every tree: the training rows it was grown on, increasing, each
        once (scikit-learn repeats a row that a bootstrap drew several times). Regenerated
        from the tree seeds on each access, as scikit-learn does."""
        check_is_fitted(self, "forest_")
        return [in_bag_rows(self, i) for i in range(len(self))]

    def to_sklearn(self) -> Any:
        """The equivalent fitted scikit-learn forest (``RandomForestClassifier``,
        ``ExtraTreesRegressor``, ...) made of these trees; see
        :func:`forestimp._sklearn_forest.to_sklearn`."""
        return to_sklearn(self)

"""Every fitted tree as a real scikit-learn tree, so tools that read scikit-learn's trees
(``sklearn.tree.plot_tree`` / ``export_text``, shap's ``TreeExplainer``, treeinterpreter,
dtreeviz) read forestimp models; :mod:`forestimp._sklearn_forest` assembles them into a forest.

A tree is rebuilt from ``Forest.tree_arrays`` through the pickle state of
``sklearn.tree._tree.Tree``; nothing is refitted. The invariants that make it the same tree:

* **Routing.** forestimp sends ``x <= threshold`` left, ``x`` read as float64; scikit-learn
  casts X to float32 first and then compares with a float64 threshold. The exported threshold
  is a float32 chosen at fit (:mod:`forestimp._float32_routing`) so that every training value
  goes the same way in both, and also through ONNX, whose thresholds are float32; the
  exceptions are splits between two training values that one float32 holds (counted in
  ``_float32_ties``). Every float32 value goes the same way too, except, at a split whose
  threshold the training values moved, those between the moved threshold and forestimp's.
  Another float64 value within half a float32 spacing of a threshold can take the other
  branch (scikit-learn's own trees share this). NaN goes
  to the side stored in the model (``missing_go_to_left``, ``docs/missing-values.md``). The
  split "non-missing | missing" has threshold ``+inf`` in both libraries.
* **Values.** ``tree_.value`` holds class fractions (weighted, as scikit-learn >= 1.4 stores
  them) or the mean output, ``impurity`` is Gini, entropy *in bits* (scikit-learn's
  ``"entropy"``/``"log_loss"`` is in bits too) or the variance, and the weights include
  bootstrap counts and sample/class weights. Each tree's ``feature_importances_`` is therefore
  forestimp's normalized per-tree MDI.
* **Multiway trees** are stored as chains of binary nodes on one feature (``ensemble``'s
  module docstring), so they export as they are: a k-way split is k - 1 nodes, whose
  decreases telescope to the multiway one, and a no-op level is a node whose threshold (the
  largest float32) sends every finite value left, its right leaf empty. ``tree_.max_depth``
  counts those nodes, not the logical depth.
* **Missing values.** NaN never reached a forestimp fit; as scikit-learn does for a split that
  saw none, it goes to the child with more training samples.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.tree._tree import NODE_DTYPE, TREE_LEAF, TREE_UNDEFINED, Tree
from sklearn.utils.validation import check_is_fitted

from ._core import DataError, Forest, in_bag_counts
from ._float32_routing import float32_cut, tree_cuts

# A fitted scikit-learn tree, as the trees of its forests are.
SklearnTree: TypeAlias = DecisionTreeClassifier | DecisionTreeRegressor


def _max_depth(left: np.ndarray, right: np.ndarray) -> int:
    """Depth of the deepest node, one level of nodes at a time (vectorized)."""
    depth, level = -1, np.array([0])
    while level.size:
        depth += 1
        children = np.concatenate([left[level], right[level]])
        level = children[children != TREE_LEAF]
    return depth


def _sklearn_tree_state(
    arrays: dict[str, np.ndarray], widths: list[int], thresholds: np.ndarray | None = None
) -> dict[str, Any]:
    """``Tree.__setstate__``'s dict for one tree's node arrays, whose values hold
    ``widths[k]`` values of output ``k`` in turn (scikit-learn's ``value`` is
    ``(nodes, n_outputs, max widths)``, zero beyond an output's classes); ``thresholds``
    are the exported ones (default: :func:`float32_cut` of the tree's)."""
    left = arrays["children_left"].astype(np.intp)
    right = arrays["children_right"].astype(np.intp)
    split = left != TREE_LEAF
    counts = arrays["n_node_samples"].astype(np.intp)
    nodes = np.zeros(len(left), dtype=NODE_DTYPE)
    nodes["left_child"] = left
    nodes["right_child"] = right
    nodes["feature"] = np.where(split, arrays["feature"], TREE_UNDEFINED)
    if thresholds is None:
        thresholds = float32_cut(arrays["threshold"])
    nodes["threshold"] = np.where(split, thresholds, TREE_UNDEFINED)
    nodes["impurity"] = arrays["impurity"]
    nodes["n_node_samples"] = counts
    nodes["weighted_n_node_samples"] = arrays["weighted_n_node_samples"]
    # The side NaN goes to: learned where the split saw NaN, else (scikit-learn's rule too)
    # the child with more samples.
    nodes["missing_go_to_left"] = arrays["missing_go_to_left"]
    value = np.ascontiguousarray(arrays["value"], dtype=np.float64)
    values = np.zeros((len(left), len(widths), max(widths)))
    start = 0
    for k, w in enumerate(widths):
        values[:, k, :w] = value[:, start : start + w]
        start += w
    return {
        "max_depth": _max_depth(left, right),
        "node_count": len(left),
        "nodes": nodes,
        "values": values,
    }


def tree_params(est: Any) -> dict[str, Any]:
    """Constructor parameters of the scikit-learn tree equivalent to one of ``est``'s trees.

    ``max_features`` is K, the number of candidate features per node. ``class_weight`` stays
    None: as in scikit-learn's forests, class weights reach the trees as sample weights.
    """
    splitter, _, k = est._engine_layout(est.n_features_in_)
    return {
        # What the trees were grown with: scikit-learn 1.9 warns on "friedman_mse" at every
        # construction, and maps it to "squared_error" as forestimp does.
        "criterion": "squared_error" if est.criterion == "friedman_mse" else est.criterion,
        "splitter": "best" if splitter in ("best", "hist") else "random",
        "max_depth": est.max_depth,
        "min_samples_split": est.min_samples_split,
        "min_samples_leaf": est.min_samples_leaf,
        "min_weight_fraction_leaf": est.min_weight_fraction_leaf,
        "max_features": k,
        "max_leaf_nodes": est.max_leaf_nodes,
        "min_impurity_decrease": est.min_impurity_decrease,
        "ccp_alpha": getattr(est, "ccp_alpha", 0.0),
        "monotonic_cst": getattr(est, "monotonic_cst", None),
    }


def sklearn_tree(est: Any, index: int) -> SklearnTree:
    """Tree ``index`` of the fitted forestimp forest ``est`` as a fitted scikit-learn tree.

    Like the trees in scikit-learn's forests it has no ``feature_names_in_``; unlike them,
    a classifier tree's ``classes_`` are the forest's labels, so the tree on its own
    predicts labels rather than class codes.
    """
    forest: Forest = est.forest_
    if forest.n_features != est.n_features_in_:
        raise TypeError(
            "This forest was grown on a view of X (shadow or selected columns): its trees "
            "do not split on the columns of X and have no scikit-learn equivalent."
        )
    params = tree_params(est)
    m = getattr(est, "n_outputs_", 1)
    if est._is_classifier:
        tree: SklearnTree = DecisionTreeClassifier(**params)
        tree.classes_ = est.classes_
        tree.n_classes_ = est.n_classes_
        widths = list(est.n_classes_) if m > 1 else [est.n_classes_]
        n_classes = np.array(widths, dtype=np.intp)
    else:
        tree = DecisionTreeRegressor(**params)
        widths = [1] * m
        n_classes = np.ones(m, dtype=np.intp)
    tree.n_features_in_ = est.n_features_in_
    tree.n_outputs_ = m
    tree.max_features_ = params["max_features"]
    core = Tree(est.n_features_in_, n_classes, m)
    arrays = forest.tree_arrays(index)
    split = np.asarray(arrays["feature"]) >= 0
    if np.isnan(np.asarray(arrays["threshold"])[split]).any():
        # A categorical split (issue #52): its threshold is a NaN, its set not expressible.
        raise ValueError(
            f"tree {index} splits on categories, which scikit-learn's tree arrays cannot "
            "express (one threshold a node)"
        )
    thresholds = tree_cuts(est, index, arrays["threshold"])
    core.__setstate__(_sklearn_tree_state(arrays, widths, thresholds))
    tree.tree_ = core
    return tree


def n_training_rows(est: Any) -> int:
    """Number of rows ``est`` was fitted on (from its training fingerprint)."""
    fingerprint = getattr(est, "_training_fingerprint", None)
    if fingerprint is None:
        raise DataError(
            "The number of training rows of this forest is unknown (it was not fitted by "
            "fit()), so its in-bag rows cannot be listed."
        )
    return int(fingerprint[0])


def in_bag_rows(est: Any, index: int) -> np.ndarray:
    """Rows of the training set that tree ``index`` was grown on, increasing, a row drawn k
    times by a bootstrap repeated k times (scikit-learn's ``estimators_samples_``),
    regenerated from the tree's seed."""
    check_is_fitted(est, "forest_")
    counts = in_bag_counts(est.forest_, index)
    return np.repeat(np.arange(len(counts)), counts)

"""TreeSHAP values of a forest's predictions, computed natively."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core, _sparse
from .._core import InvalidParameterError
from .._fitted import checked_model
from .._params import check_n_jobs
from ._result import LocalImportances, feature_names_of


@dataclass(frozen=True, kw_only=True, eq=False)
class ShapValues(LocalImportances):
    """Path-dependent TreeSHAP values of the rows of ``X`` (a :class:`LocalImportances`).

    ``importances`` holds ``|values|`` per sample (averaged over the classes of a
    classifier), so ``importances_mean`` is the mean absolute SHAP value of each feature,
    the usual global summary (shap's bar plot), and ``importances_std`` /
    ``standard_error`` its spread across the samples.

    Attributes
    ----------
    values : ndarray of shape (n_samples, n_features) or (n_samples, n_features, n_classes)
        SHAP values of the prediction: the regression value, or each class probability
        (``predict_proba``), as ``shap.TreeExplainer`` gives for scikit-learn forests.
    expected_value : float or ndarray of shape (n_classes,)
        The mean prediction over the training data as the trees saw it (each tree's
        cover-weighted root value, averaged). For every sample
        ``values.sum(axis=1) + expected_value == prediction``.
    interaction_values : ndarray or None
        With ``interactions=True``, shape (n_samples, n_features, n_features) or
        (n_samples, n_features, n_features, n_classes): SHAP interaction values, whose sum
        over the last feature axis is ``values``.
    data : ndarray of shape (n_samples, n_features)
        The explained rows, as the forest read them.
    output_names : ndarray or None
        ``classes_`` of a classifier (the last axis of ``values``), None for a regressor.
        Multi-output forests (``docs/multi-output.md``): the last axis holds the outputs
        side by side, named ``"k:class"`` (classifier) or ``"k"`` (regressor, whose
        ``values`` then keep that axis).
    """

    expected_value: Any
    interaction_values: np.ndarray | None = None
    data: np.ndarray
    output_names: np.ndarray | None = None

    def to_explanation(self) -> Any:
        """The values as a ``shap.Explanation`` (needs ``pip install shap``), so that shap's
        plots (``shap.plots.beeswarm``, ``waterfall``, ``bar``, ...) draw them.

        ``base_values`` repeats ``expected_value`` for every sample; for a classifier the
        last axis is the class (``output_names``), so ``explanation[:, :, k]`` is class
        ``k``'s explanation.
        """
        import shap

        n = self.values.shape[0]
        base = np.broadcast_to(self.expected_value, (n, *np.shape(self.expected_value)))
        names = None if self.output_names is None else [str(c) for c in self.output_names]
        return shap.Explanation(
            values=self.values,
            base_values=np.array(base, dtype=np.float64),
            data=self.data,
            feature_names=[str(f) for f in self.feature_names],
            output_names=names,
        )

    def to_frame(self, per_sample: bool = False) -> Any:
        """The global summary (see :meth:`Importances.to_frame`), or with ``per_sample``
        the ``values`` as a DataFrame: one column per feature, or for a classifier one per
        (class, feature) pair."""
        if not per_sample or self.values.ndim == 2:
            return super().to_frame(per_sample)
        import pandas as pd

        n, p, k = self.values.shape
        outputs = self.output_names if self.output_names is not None else np.arange(k)
        columns = pd.MultiIndex.from_product(
            [outputs, self.feature_names], names=["output", "feature"]
        )
        return pd.DataFrame(self.values.transpose(0, 2, 1).reshape(n, k * p), columns=columns)


def shap_values(
    est: Any, X: Any, *, interactions: bool = False, n_jobs: int | None = None
) -> ShapValues:
    """Path-dependent TreeSHAP values (Lundberg et al. 2018, 2020) of the forest's predictions.

    For a tree and a sample ``x``, feature ``i`` gets its Shapley value in the game
    ``v(S) = E[tree(x) | x_S]``, where a split on a feature outside ``S`` sends ``x`` down
    both children weighted by their training cover (weighted, in-bag sample counts). The
    forest's values are the mean of its trees', so that, per sample,
    ``values.sum(axis=1) + expected_value`` is ``predict`` (regression) or
    ``predict_proba`` (classification, one set of values per class). The numbers are those
    of ``shap.TreeExplainer`` (``feature_perturbation="tree_path_dependent"``) on the same
    trees, computed in Rust with one walk per tree for a block of samples and the
    Gauss-Legendre form of the Shapley weights, in parallel and with the same bits for any
    ``n_jobs``. Multiway trees (``multiway=True``) are explained like any other.

    These are not the local MDI of :func:`local_mdi`: Sutera et al. (2021) show that the
    local MDI of totally randomized trees are Shapley values too, but of a game built from
    the impurity, not from the prediction (see ``docs/importances.md``).

    Parameters
    ----------
    est : fitted forestimp estimator
        A forest, or a gradient-boosting model (:mod:`forestimp.boosting`), whose *raw*
        prediction is explained (``decision_function``: the log-odds of a binary classifier,
        one column per class for the multinomial loss, ``predict`` for a regressor). The
        raw prediction is ``init + learning_rate * Σ_t v_t(x)``; TreeSHAP is linear in the
        leaf values, so each tree is explained with its line-searched leaf values times the
        learning rate and the trees' values are summed in tree order (each class's trees
        into its column); ``expected_value`` is ``init`` plus the trees' cover-weighted
        mean outputs, so ``values.sum(axis=1) + expected_value == decision_function(X)``.
        These are ``shap.TreeExplainer``'s numbers for scikit-learn's
        ``GradientBoosting*`` on the same trees. A model with an ``init`` estimator is
        refused (``InvalidParameterError``): its predictions are not trees.
    X : array-like of shape (n_samples, n_features)
        The samples to explain (finite values, the fitted feature count and names).
    interactions : bool, default=False
        Also compute SHAP interaction values (Lundberg et al. 2020): about
        ``1 + (features used per tree)`` times the work, and
        ``n_samples * n_features**2 * n_classes`` floats of memory.
    n_jobs : int, optional
        Threads (default: the estimator's ``n_jobs``).

    Returns
    -------
    ShapValues
        ``values``, ``expected_value``, ``interaction_values`` (with ``interactions``),
        ``importances_mean`` (mean ``|values|`` per feature) and ``to_explanation()``.
    """
    est = checked_model(est, "shap_values", boosting=True)
    X = est._engine_input(_sparse.checked(X))
    jobs = check_n_jobs(est.n_jobs if n_jobs is None else n_jobs)
    if hasattr(est, "booster_"):
        return _boosting_shap(est, X, interactions, jobs)
    values, expected, pairs = _core.tree_shap(est.forest_, X, interactions, n_jobs=jobs)
    classes = getattr(est, "classes_", None)
    multi = getattr(est, "n_outputs_", 1) > 1
    if classes is None and not multi:  # regression: one output, dropped from the shapes
        values, pairs = values[..., 0], None if pairs is None else pairs[..., 0]
        expected_value: Any = float(expected[0])
        magnitude = np.abs(values)
    else:
        expected_value = expected
        magnitude = np.abs(values).mean(axis=2)
    names = None if classes is None or multi else np.asarray(classes)
    if multi:
        # The last axis holds the outputs side by side (TreeSHAP is linear in the leaf
        # values): each output's classes, or one column per regression output.
        names = np.array(
            [f"{k}:{c}" for k, cs in enumerate(classes) for c in cs]
            if classes is not None
            else [str(k) for k in range(est.n_outputs_)]
        )
    return ShapValues(
        importances_mean=magnitude.mean(axis=0),
        importances=magnitude.T,
        method="shap",
        feature_names=feature_names_of(est, X.shape[1]),
        draws="samples",
        values=values,
        expected_value=expected_value,
        interaction_values=pairs,
        data=X,
        output_names=names,
    )


def _boosting_shap(est: Any, X: np.ndarray, interactions: bool, jobs: Any) -> ShapValues:
    """:func:`shap_values` of a gradient-boosting model's raw prediction (see its ``est``)."""
    if est._init_estimator():
        raise InvalidParameterError(
            "TreeSHAP explains trees: a gradient-boosting model with an init estimator "
            "adds that estimator's predictions, which are not explained."
        )
    values, expected, pairs = _core.tree_shap(est.booster_, X, interactions, n_jobs=jobs)
    names = None
    if values.shape[2] == 1:  # regression and binary classification: one raw column
        values, pairs = values[..., 0], None if pairs is None else pairs[..., 0]
        expected_value: Any = float(expected[0])
        magnitude = np.abs(values)
    else:
        expected_value = expected
        magnitude = np.abs(values).mean(axis=2)
        names = np.asarray(est.classes_)
    return ShapValues(
        importances_mean=magnitude.mean(axis=0),
        importances=magnitude.T,
        method="shap",
        feature_names=feature_names_of(est, X.shape[1]),
        draws="samples",
        values=values,
        expected_value=expected_value,
        interaction_values=pairs,
        data=X,
        output_names=names,
    )

"""Variable importances of fitted forestimp forests and gradient-boosting models.

Every function takes a fitted forestimp estimator and returns an :class:`Importances` (or
a subclass): ``importances_mean``, ``importances`` (the per-tree / per-repeat / per-sample
draws), ``importances_std``, ``standard_error``, ``feature_names``, ``ranking_``,
``to_frame()`` and ``plot()``. Out-of-bag measures take the training ``X, y`` explicitly
(the estimators keep no reference to them). The formulas are stated in each docstring and
the user guide (``docs/importances.md``) says when to use which. ``mdi``, ``permutation``
(held out, and out of bag with ``subsample < 1``), ``shap_values`` and ``local_mdi`` also
take a gradient-boosting model (``docs/boosting.md`` defines them for boosting), and
held-out ``permutation`` any fitted estimator (scored as scikit-learn's
``permutation_importance`` scores it). Every result also reads as scikit-learn's Bunch
(``r["importances_mean"]``, ``r.keys()``).
"""

from __future__ import annotations

from ._context import ContextImportances, context
from ._local import local_mdi
from ._mdi import MDIImportances, mdi
from ._permutation import PermutationImportance, local_permutation, permutation
from ._result import Importances, LocalImportances
from ._shap import ShapValues, shap_values
from ._significance import Significance, janitza_pvalues, significance
from ._unbiased import unbiased

__all__: list[str] = [
    "ContextImportances",
    "Importances",
    "LocalImportances",
    "MDIImportances",
    "PermutationImportance",
    "ShapValues",
    "Significance",
    "context",
    "janitza_pvalues",
    "local_mdi",
    "local_permutation",
    "mdi",
    "permutation",
    "shap_values",
    "significance",
    "unbiased",
]

"""Variable importances of fitted forestimp forests.

Every function takes a fitted forestimp estimator and returns NumPy arrays or small result
objects; the formulas are stated in each docstring and the user guide
(``docs/importances.md``) says when to use which.
"""

from __future__ import annotations

from ._context import ContextImportances, context
from ._local import local_mdi
from ._mdi import mdi
from ._permutation import PermutationImportance, local_permutation, permutation
from ._result import Importances
from ._significance import Significance, janitza_pvalues, significance
from ._unbiased import unbiased

__all__: list[str] = [
    "ContextImportances",
    "Importances",
    "PermutationImportance",
    "Significance",
    "context",
    "janitza_pvalues",
    "local_mdi",
    "local_permutation",
    "mdi",
    "permutation",
    "significance",
    "unbiased",
]

"""Variable importances of fitted forestimp forests.

Every function takes a fitted forestimp estimator and returns NumPy arrays; the formulas are
stated in each docstring and the user guide (``docs/importances.md``) says when to use which.
"""

from __future__ import annotations

from ._context import ContextImportances, context

__all__: list[str] = ["ContextImportances", "context"]

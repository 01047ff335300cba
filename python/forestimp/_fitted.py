"""Which fitted models a function of :mod:`forestimp.importance` or :mod:`forestimp.proximity`
takes, said before anything reads them.

Those functions read a forestimp model's internals (``forest_``, ``booster_``,
``_engine_input``). Given a scikit-learn model, a fitted gradient-boosting model where only
forests are read, or any other object, they failed with an ``AttributeError`` from inside,
or with a ``NotFittedError`` telling to fit a model that was fitted. :func:`checked_model`
raises :class:`~forestimp.exceptions.InvalidParameterError` naming what was given and what
the function takes, and ``NotFittedError`` only for an unfitted model of the right kind.
"""

from __future__ import annotations

from typing import Any

from sklearn.utils.validation import check_is_fitted

from ._core import InvalidParameterError


def checked_model(est: Any, what: str, boosting: bool = False) -> Any:
    """``est``, a fitted forestimp forest (or, with ``boosting``, a forestimp
    gradient-boosting model), for the function ``what``.

    Raises
    ------
    InvalidParameterError
        ``est`` is of another kind (a scikit-learn model, a booster where only forests are
        read, anything else).
    NotFittedError
        ``est`` is of the right kind but not fitted.
    """
    from ._base import BaseForest
    from ._boosting_base import BaseGradientBoosting

    if isinstance(est, BaseForest):
        check_is_fitted(est, "forest_")
        return est
    if boosting and isinstance(est, BaseGradientBoosting):
        check_is_fitted(est, "booster_")
        return est
    takes = "a forestimp forest or gradient-boosting model" if boosting else "a forestimp forest"
    extra = ""
    if isinstance(est, BaseGradientBoosting):
        extra = " (gradient-boosting models are not supported here)"
    raise InvalidParameterError(
        f"{what} takes {takes} (forestimp.RandomForestClassifier, ...), got "
        f"{type(est).__module__}.{type(est).__qualname__}{extra}."
    )

"""The registry of model kinds: which estimator classes :mod:`forestimp.persistence` may
build from a file, and which module states and restores each one's fitted attributes.

The estimator modules (:mod:`forestimp.ensemble`, :mod:`forestimp.boosting`) register their
classes here when they are imported, which the package's ``__init__`` does before anything
else can run; persistence looks a file's class up here by name. So persistence needs none
of the estimator modules, and an estimator's ``save`` can import persistence without a
circle. A class is found by its name and nothing else: no name from a file is ever imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class ModelKind:
    """One registered estimator class.

    Attributes
    ----------
    cls : type
        The estimator class.
    state : module
        Its family's state module (``forestimp._state`` for forests,
        ``forestimp._boosting_state`` for boosters): ``SCALARS``, ``ARRAYS``,
        ``fitted_state`` and ``restore_fitted_state``.
    fitted : str
        The attribute ``fit`` sets (``"forest_"``, ``"booster_"``), what
        ``check_is_fitted`` looks for.
    """

    cls: type[Any]
    state: ModuleType
    fitted: str


_KINDS: dict[str, ModelKind] = {}


def register(state: ModuleType, fitted: str, *classes: type) -> None:
    """Register ``classes`` under their names, their fitted attributes held by ``state``.

    A second class under a name already taken is refused: a file's name means one class.
    """
    for cls in classes:
        known = _KINDS.get(cls.__name__)
        if known is not None and known.cls is not cls:
            raise RuntimeError(f"Two model kinds are named {cls.__name__}.")
        _KINDS[cls.__name__] = ModelKind(cls, state, fitted)


def kind_named(name: str) -> ModelKind | None:
    """The kind registered under ``name``; None when there is none."""
    return _KINDS.get(name)

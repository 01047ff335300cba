"""Exceptions raised by forestimp; each one is also a ``ValueError`` (or sklearn's own)."""

from sklearn.exceptions import NotFittedError

from ._core import DataError, InvalidParameterError, ModelFormatError

__all__ = ["DataError", "InvalidParameterError", "ModelFormatError", "NotFittedError"]

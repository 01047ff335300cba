"""Exceptions raised by forestimp; each one is also a ``ValueError`` (or sklearn's own), but
:class:`ClusterError`, a ``RuntimeError``."""

from sklearn.exceptions import NotFittedError

from ._core import DataError, InvalidParameterError, ModelFormatError


class ClusterError(RuntimeError):
    """A Dask cluster could not finish the work (``forestimp.dask``): it had or kept no
    workers, or a task's workers died under it again and again."""


__all__ = [
    "ClusterError",
    "DataError",
    "InvalidParameterError",
    "ModelFormatError",
    "NotFittedError",
]

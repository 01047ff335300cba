"""forestimp: randomized tree ensembles and the variable importances derived from them."""

from ._core import __version__
from .boosting import GradientBoostingClassifier, GradientBoostingRegressor
from .ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    RandomPatchesClassifier,
    RandomPatchesRegressor,
    TotallyRandomizedTreesClassifier,
    TotallyRandomizedTreesRegressor,
)
from .persistence import load

__all__ = [
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "RandomPatchesClassifier",
    "RandomPatchesRegressor",
    "TotallyRandomizedTreesClassifier",
    "TotallyRandomizedTreesRegressor",
    "__version__",
    "load",
]

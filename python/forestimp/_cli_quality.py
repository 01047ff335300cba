"""Whether a forest learned anything, as ``forestimp rank`` and ``forestimp select`` say it.

The forest is grown with bootstrap samples, splitting the table's text columns as categories
unless they are one-hot encoded, and scored out of bag (:func:`build_model`).
:func:`assess` turns it into a :class:`Fit`: the OOB accuracy and the majority-class rate it
must beat, the OOB balanced accuracy (the mean of the per-class recalls, whose chance level is
1 / n_classes however unbalanced the classes are), or the OOB R², which must be above 0.

The chance test reads the accuracy, or the balanced accuracy when ``--class-weight`` is given:
a forest grown with balanced class weights trades accuracy on the frequent class for the
others, so its accuracy may fall under the majority-class rate while it learns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


def build_model(
    model: str,
    task: str,
    n_estimators: int,
    seed: int,
    n_jobs: int,
    class_weight: str | None = None,
    categorical: np.ndarray | None = None,
) -> Any:
    """The forest, always with bootstrap samples and an out-of-bag score; ``categorical``
    (a mask over the columns) is its ``categorical_features``: the columns it splits as
    categories."""
    from . import ensemble as E

    models = {
        "rf": (E.RandomForestClassifier, E.RandomForestRegressor),
        "et": (E.ExtraTreesClassifier, E.ExtraTreesRegressor),
        "trt": (E.TotallyRandomizedTreesClassifier, E.TotallyRandomizedTreesRegressor),
        "patches": (E.RandomPatchesClassifier, E.RandomPatchesRegressor),
    }
    # "hist": a Random Forest on histograms, for large files (no sort per node).
    models["hist"] = models["rf"]
    extra: dict[str, Any] = {"splitter": "hist"} if model == "hist" else {}
    if class_weight is not None and task == "classification":
        extra["class_weight"] = class_weight
    if categorical is not None:
        extra["categorical_features"] = categorical
    cls = models[model][task == "regression"]
    return cls(
        n_estimators=n_estimators,
        random_state=seed,
        n_jobs=n_jobs,
        bootstrap=True,
        oob_score=True,
        **extra,
    )


@dataclass
class Fit:
    """What a report says about a forest before the importances."""

    model: str
    task: str
    task_reason: str
    n_rows: int
    n_features: int  # source columns
    n_encoded: int
    metric: str  # the chance test's: "accuracy", "balanced_accuracy" or "r2"
    oob_score: float  # its value
    chance: float  # majority-class rate, 1 / n_classes, or 0 for R²
    accuracy: float | None = None  # classification: OOB accuracy
    balanced_accuracy: float | None = None  # classification: OOB balanced accuracy
    majority: float = 0.0  # classification: the majority-class rate
    n_classes: int = 0
    class_weight: str | None = None

    @property
    def at_chance(self) -> bool:
        return not self.oob_score > self.chance

    @property
    def near_chance(self) -> bool:
        """Above the majority-class rate by less than two binomial standard errors of it."""
        if self.metric != "accuracy" or self.at_chance:
            return False
        margin = 2 * np.sqrt(self.chance * (1 - self.chance) / self.n_rows)
        return bool(self.oob_score <= self.chance + margin)

    def flag(self) -> str:
        """What a table prints after the OOB score: the chance test's verdict, if any."""
        if self.at_chance:
            return "   <- CHANCE LEVEL"
        return "   <- near chance" if self.near_chance else ""

    def oob_line(self) -> str:
        if self.task != "classification":
            return f"OOB R² {self.oob_score:.4f}"
        line = f"OOB accuracy {self.accuracy:.4f} (majority-class rate {self.majority:.4f})"
        if self.balanced_accuracy is not None:
            line += (
                f", balanced accuracy {self.balanced_accuracy:.4f} "
                f"(chance {1 / max(self.n_classes, 1):.4f})"
            )
        return line

    def warning(self, consequence: str = "its importances describe noise") -> str | None:
        """The chance-level warning, one line, or None; ``consequence`` says what it means
        for the report (``rank``: the importances; ``select``: the selection)."""
        if self.near_chance:
            return (
                "WARNING: the OOB accuracy is above the majority-class rate by less than two "
                "standard errors (binomial, of that rate): the forest may have learned nothing; "
                "read the results with care."
            )
        if not self.at_chance:
            return None
        if self.metric == "accuracy":
            what = "accuracy is not above the majority-class rate: the forest predicts no "
            what += "better than always answering the most frequent class"
        elif self.metric == "balanced_accuracy":
            what = "balanced accuracy is not above 1 / n_classes: the forest predicts no "
            what += "better than chance"
        else:
            what = "R² is not above 0: the forest predicts no better than the mean"
        return (
            f"WARNING: the out-of-bag {what}; {consequence}, not a relation to the target. "
            "Check the target, the task and the features."
        )

    def as_json(self) -> dict[str, Any]:
        """The fields ``rank`` and ``select`` put in their JSON."""
        return {
            "oob_metric": self.metric,
            "oob_score": self.oob_score,
            "chance_level": self.chance,
            "at_chance": self.at_chance,
            "near_chance": self.near_chance,
            "oob_accuracy": self.accuracy,
            "oob_balanced_accuracy": self.balanced_accuracy,
            "class_weight": self.class_weight,
        }


def oob_balanced_accuracy(est: Any, y: np.ndarray) -> float | None:
    """The balanced accuracy of the forest's out-of-bag votes, over the rows that have any
    (None without ``oob_decision_function_``)."""
    from sklearn.metrics import balanced_accuracy_score

    votes = getattr(est, "oob_decision_function_", None)
    if votes is None or np.ndim(votes) != 2:
        return None
    scored = np.isfinite(votes).all(axis=1)
    if not scored.any():
        return None
    predicted = np.asarray(est.classes_)[np.argmax(votes[scored], axis=1)]
    return float(balanced_accuracy_score(np.asarray(y)[scored], predicted))


def assess(
    est: Any,
    y: np.ndarray,
    task: str,
    reason: str,
    n_features: int,
    n_encoded: int,
    class_weight: str | None = None,
) -> Fit:
    """The :class:`Fit` of a forest grown by :func:`build_model` on ``y``."""
    name = type(est).__name__
    score = float(est.oob_score_)
    if task != "classification":
        return Fit(name, task, reason, len(y), n_features, n_encoded, "r2", score, 0.0)
    _, counts = np.unique(y, return_counts=True)
    majority = float(counts.max() / counts.sum())
    balanced = oob_balanced_accuracy(est, y)
    k = len(counts)
    if class_weight is not None and balanced is not None:
        metric, value, chance = "balanced_accuracy", balanced, 1.0 / k
    else:
        metric, value, chance = "accuracy", score, majority
    return Fit(name, task, reason, len(y), n_features, n_encoded, metric, value, chance,
               score, balanced, majority, k, class_weight)  # fmt: skip

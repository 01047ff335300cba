"""The selectors' default model (``estimator=None``) takes its task from the target by the
rule of ``forestimp rank --task auto`` (issue #57, item 1): a count with hundreds of distinct
integer values is a regression target, not hundreds of classes as scikit-learn's
``type_of_target`` would read it, and a ``TaskGuessWarning`` says so once per fit."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from forestimp import RandomForestClassifier, RandomForestRegressor
from forestimp._task import MAX_CLASSES, infer_task, silent_default_task
from forestimp.selection import (
    RFE,
    Boruta,
    SelectFromImportance,
    SequentialRandomSubspace,
    TaskGuessWarning,
)


def count_problem(n=300, seed=0):
    """A count target of column 0 (several hundred distinct integers) and 4 noise columns."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, 5))
    y = np.floor(1000 * X[:, 0] + 20 * rng.random(n)).astype(np.int64)
    return X, y


def guesses(fit):
    """The TaskGuessWarnings that ``fit()`` raises (all warnings recorded)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, TaskGuessWarning)]


@pytest.mark.parametrize(
    ("values", "task"),
    [
        (np.arange(585) % 585, "regression"),  # 585 distinct integers
        (np.arange(100) % (MAX_CLASSES + 1), "regression"),  # 21 levels: one too many
        (np.arange(100) % MAX_CLASSES, "classification"),  # 20 levels
        (np.array([0.0, 1.0, 2.0] * 10), "classification"),  # integer-valued floats
        (np.array([0.5, 1.0, 2.0] * 10), "regression"),
        (np.array(["a", "b", "c"] * 10, dtype=object), "classification"),
        (np.array([True, False] * 10), "classification"),
        (np.array([0.0, 2.0**60] * 10), "regression"),  # beyond exact float64 integers
    ],
)
def test_the_rule_reads_arrays_as_the_cli_reads_columns(values, task):
    # The CLI reads a pandas column, the selectors a validated numpy array: one rule.
    assert infer_task(values)[0] == task
    assert infer_task(pd.Series(values))[0] == task


def test_infer_task_gives_the_count_as_its_reason():
    assert infer_task(np.arange(585)) == ("regression", "585 distinct integer values (> 20)")
    assert infer_task(np.arange(3)) == ("classification", "3 distinct integer values (<= 20)")


def test_select_from_importance_fits_a_regressor_on_a_count_and_warns_once():
    X, y = count_problem()
    assert len(np.unique(y)) > 250  # scikit-learn would read that many classes
    sel = SelectFromImportance(random_state=0)
    found = guesses(lambda: sel.fit(X, y))
    assert len(found) == 1
    message = str(found[0].message)
    assert "distinct integer values (> 20)" in message and "regression forest" in message
    assert "estimator=forestimp.RandomForestClassifier()" in message
    assert found[0].filename == __file__  # points at the user's fit, not into forestimp
    assert isinstance(sel.estimator_, RandomForestRegressor)
    assert sel.get_support()[0] and sel.ranking_[0] == 1


def test_rfe_fits_regressors_on_a_count_and_warns_once():
    X, y = count_problem()
    sel = RFE(random_state=0, step=0.5, scoring="r2", cv=2)
    found = guesses(lambda: sel.fit(X, y))
    assert len(found) == 1  # not again for the cross-validation split (is_classification)
    assert isinstance(sel.estimator_, RandomForestRegressor)
    assert sel.get_support()[0]


def test_boruta_warns_once_per_fit_not_once_per_iteration():
    X, y = count_problem()
    sel = Boruta(random_state=0, max_iter=4)
    found = guesses(lambda: sel.fit(X, y))
    assert sel.n_iter_ == 4 and len(found) == 1
    assert sel.hits_[0] == 4 and sel.ranking_[0] <= 2  # beats the shadows; 4 runs: tentative


def test_srs_default_model_follows_the_rule():
    X, y = count_problem()
    sel = SequentialRandomSubspace(random_state=0, q=3, n_iterations=6, n_probes=0)
    assert len(guesses(lambda: sel.fit(X, y))) == 1


def test_class_labels_and_continuous_targets_fit_without_a_warning():
    X, y = count_problem()
    labels = y % 3
    sel = SelectFromImportance(random_state=0)
    assert guesses(lambda: sel.fit(X, labels)) == []
    assert isinstance(sel.estimator_, RandomForestClassifier)
    assert guesses(lambda: sel.fit(X, y + 0.5)) == []
    assert isinstance(sel.estimator_, RandomForestRegressor)


@pytest.mark.parametrize("cls", [RandomForestClassifier, RandomForestRegressor])
def test_an_estimator_overrides_the_rule_without_a_warning(cls):
    X, y = count_problem(n=120)
    sel = SelectFromImportance(cls(n_estimators=10, random_state=0))
    assert guesses(lambda: sel.fit(X, y)) == []
    assert isinstance(sel.estimator_, cls)


def test_silent_default_task_is_none_where_the_rules_part():
    _, count = count_problem()
    assert silent_default_task(count) is None
    assert silent_default_task(count % 3) == "classification"
    assert silent_default_task(count + 0.5) == "regression"


@pytest.mark.parametrize(
    ("flags", "model"),
    [
        ([], RandomForestRegressor),  # --task auto: the rule, with no warning to show
        (["--task", "classification"], RandomForestClassifier),  # not the default's guess
        (["--task", "regression"], RandomForestRegressor),
    ],
)
def test_forestimp_select_fits_the_task_it_reports_without_a_warning(
    tmp_path, monkeypatch, capsys, flags, model
):
    """``forestimp select`` hands the selector its default model only where that is the
    task the CLI chose and raises no warning its user could not act on."""
    import json

    from forestimp.cli import main

    X, y = count_problem()
    path = tmp_path / "counts.csv"
    pd.DataFrame(X, columns=[f"x{j}" for j in range(5)]).assign(count=y).to_csv(path)
    fitted = []
    fit = SelectFromImportance.fit

    def spy(self, *args, **kwargs):
        fitted.append(self)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(SelectFromImportance, "fit", spy)
    argv = ["select", str(path), "--target", "count", "--method", "threshold", *flags]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scikit-learn's: 250 classes in 300 rows
        warnings.simplefilter("error", TaskGuessWarning)  # checked first: added last
        assert main([*argv, "--output", "json", "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["task"] == ("classification" if model is RandomForestClassifier else
                              "regression")  # fmt: skip
    assert len(fitted) == 1 and type(fitted[0].estimator_) is model

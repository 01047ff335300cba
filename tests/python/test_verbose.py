"""``verbose``: scikit-learn's progress output, validated as scikit-learn validates it, and
never a change to the model."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sklearn.ensemble as sk
from sklearn.datasets import make_classification, make_regression

import forestimp as fi
from forestimp.exceptions import InvalidParameterError

X, Y = make_regression(200, 5, noise=1.0, random_state=0)
XC, YC = make_classification(200, 5, n_informative=3, n_classes=3, random_state=0)


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


@pytest.mark.parametrize("verbose", [-1, 1.5, "yes", None])
@pytest.mark.parametrize("cls", [fi.RandomForestRegressor, fi.GradientBoostingRegressor])
def test_verbose_is_a_bool_or_an_int_at_least_zero(cls, verbose):
    with pytest.raises(InvalidParameterError, match="'verbose'"):
        cls(n_estimators=2, verbose=verbose).fit(X, Y)


@pytest.mark.parametrize("cls", [fi.RandomForestRegressor, fi.GradientBoostingRegressor])
def test_verbose_true_is_accepted_as_scikit_learn_accepts_it(cls, capsys):
    cls(n_estimators=3, verbose=True, random_state=0).fit(X, Y)
    out = capsys.readouterr()
    assert out.out or out.err


def test_booster_table_is_scikit_learns(capsys):
    # subsample=1, max_features=None, continuous features: scikit-learn's trees, so its
    # losses; the iterations reported follow its schedule (1-10, then every 10).
    fi.GradientBoostingRegressor(n_estimators=25, verbose=1, random_state=0).fit(X, Y)
    ours = _rows(capsys.readouterr().out)
    sk.GradientBoostingRegressor(n_estimators=25, verbose=1, random_state=0).fit(X, Y)
    theirs = _rows(capsys.readouterr().out)
    assert ours[0] == theirs[0] == ["Iter", "Train", "Loss", "Remaining", "Time"]
    assert (
        [r[0] for r in ours[1:]]
        == [r[0] for r in theirs[1:]]
        == [
            *map(str, range(1, 11)),
            "20",
        ]
    )
    np.testing.assert_allclose(
        [float(r[1]) for r in ours[1:]], [float(r[1]) for r in theirs[1:]], rtol=1e-6
    )
    assert all(re.fullmatch(r"\d+\.\d\dm?s?", r[2]) for r in ours[1:])


def test_booster_table_with_subsample_reports_oob_improvement(capsys):
    est = fi.GradientBoostingClassifier(
        n_estimators=12, subsample=0.5, verbose=2, random_state=0
    ).fit(XC, YC)
    rows = _rows(capsys.readouterr().out)
    assert rows[0] == ["Iter", "Train", "Loss", "OOB", "Improve", "Remaining", "Time"]
    assert [int(r[0]) for r in rows[1:]] == list(range(1, 13))  # verbose > 1: every one
    np.testing.assert_allclose([float(r[1]) for r in rows[1:]], est.train_score_, atol=5e-5)
    np.testing.assert_allclose([float(r[2]) for r in rows[1:]], est.oob_improvement_, atol=5e-5)


def test_booster_warm_start_reports_the_new_rounds(capsys):
    est = fi.GradientBoostingRegressor(n_estimators=5, warm_start=True, random_state=0)
    est.fit(X, Y)
    assert capsys.readouterr().out == ""
    est.set_params(n_estimators=8, verbose=2).fit(X, Y)
    rows = _rows(capsys.readouterr().out)
    assert [int(r[0]) for r in rows[1:]] == [6, 7, 8]


def test_booster_verbose_and_a_monitor_both_see_every_round(capsys):
    seen = []
    est = fi.GradientBoostingRegressor(n_estimators=30, verbose=1, random_state=0)
    est.fit(X, Y, monitor=lambda i, e, _: seen.append(i) or i == 14)
    rows = _rows(capsys.readouterr().out)
    assert seen == list(range(15)) and est.n_estimators_ == 15
    assert [int(r[0]) for r in rows[1:]] == [*range(1, 11)]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"subsample": 0.6},
        {"n_iter_no_change": 3, "validation_fraction": 0.2},
        {"splitter": "hist", "max_features": 2},
    ],
)
def test_booster_verbose_changes_no_byte(params, capsys):
    def fit(verbose, n_jobs):
        est = fi.GradientBoostingClassifier(
            n_estimators=40, verbose=verbose, n_jobs=n_jobs, random_state=3, **params
        )
        return est.fit(XC, YC).booster_.to_bytes()

    quiet = fit(0, 1)
    assert fit(1, 1) == quiet
    assert fit(2, 2) == quiet
    assert capsys.readouterr().out


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize(
    "cls", [fi.RandomForestClassifier, fi.ExtraTreesRegressor, fi.RandomPatchesClassifier]
)
def test_forest_verbose_changes_no_byte(cls, n_jobs, capsys):
    X_, y = (XC, YC) if cls._is_classifier else (X, Y)
    quiet = cls(20, random_state=0, n_jobs=n_jobs).fit(X_, y).forest_.to_bytes()
    for verbose in (1, 3):
        loud = cls(20, random_state=0, n_jobs=n_jobs, verbose=verbose).fit(X_, y)
        assert loud.forest_.to_bytes() == quiet
    assert capsys.readouterr().err


def test_forest_progress_is_joblibs_lines_and_scikit_learns_tree_lines(capsys):
    fi.RandomForestRegressor(7, random_state=0, n_jobs=2, verbose=1).fit(X, Y)
    out = capsys.readouterr()
    assert out.out == ""
    last = out.err.strip().splitlines()[-1]
    assert re.fullmatch(
        r"\[RandomForestRegressor\(n_jobs=2\)\]: Done 7 out of 7 \| elapsed: +\d+\.\ds finished",
        last,
    )
    # verbose > 1: scikit-learn's "building tree i of n", one line per tree.
    fi.RandomForestRegressor(7, random_state=0, verbose=2).fit(X, Y)
    out = capsys.readouterr()
    assert out.out.splitlines() == [f"building tree {i} of 7" for i in range(1, 8)]
    assert out.err.strip().endswith("finished")


def test_forest_warm_start_reports_the_new_trees(capsys):
    est = fi.ExtraTreesClassifier(4, warm_start=True, random_state=0).fit(XC, YC)
    est.set_params(n_estimators=10, verbose=2).fit(XC, YC)
    out = capsys.readouterr()
    assert out.out.splitlines() == [f"building tree {i} of 6" for i in range(1, 7)]
    assert "Done 6 out of 6" in out.err


def test_forest_progress_lines_are_spread_over_the_fit(monkeypatch):
    import forestimp._verbose as v

    lines: list[str] = []
    monkeypatch.setattr(v, "_write", lambda stream, line: lines.append(line))
    progress = v.ForestProgress("RandomForestClassifier", 1, None)
    for done in (3, 9, 10, 11, 55, 99, 100, 100):
        progress(done, 100)
    done = [int(re.search(r"Done +(\d+)", line).group(1)) for line in lines]
    # verbose=1: a line each time another tenth of the trees is grown, the last one
    # "finished", once.
    assert done == [3, 10, 55, 99, 100]
    assert "remaining" in lines[0] and lines[-1].endswith("finished")

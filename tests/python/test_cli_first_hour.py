"""``forestimp`` as a new user meets it (issue #57, items 2-5): the model's quality in
``select``, source columns counted alike in tables, JSON and plots, tables with holes and
other separators, ``--drop`` before FILE, ``--version``, and defaults that say what they are.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

import forestimp
from forestimp.cli import main


def run_json(argv: list[str], capsys) -> tuple[dict, str]:
    """``(report, stderr)`` of ``forestimp argv --output json``."""
    extra = ["--no-progress"] if argv[0] == "select" else []
    assert main([*argv, "--output", "json", *extra]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def refused(argv: list[str], capsys) -> str:
    """The one error line of ``forestimp argv`` (exit status 2)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    line = err.rstrip("\n").splitlines()[-1]
    assert line.startswith(f"forestimp {argv[0]}: error: "), err
    return line


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """``signal`` and the text column ``colour`` (3 levels) decide ``label``; 8 noise columns."""
    rng = np.random.default_rng(1)
    n = 600
    df = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"noise_{j}" for j in range(8)])
    df.insert(2, "signal", rng.normal(size=n))
    df["colour"] = rng.choice(["red", "green", "blue"], size=n)
    score = df["signal"] + 1.5 * (df["colour"] == "red") + 0.3 * rng.normal(size=n)
    df["label"] = np.where(score > 0.5, "yes", "no")
    path = tmp_path_factory.mktemp("first_hour") / "table.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def noise(tmp_path_factory):
    """Labels that no column predicts, 90 % of them one class."""
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame(rng.normal(size=(n, 6)), columns=[f"x{j}" for j in range(6)])
    df["y"] = (rng.random(n) < 0.1).astype(int)
    path = tmp_path_factory.mktemp("noise") / "noise.csv"
    df.to_csv(path, index=False)
    return path


# -- 2. select says how good the model is -----------------------------------------------------


def test_select_reports_the_oob_score_of_all_and_of_the_kept_columns(table, capsys):
    report, err = run_json(
        ["select", str(table), "--target", "label", "--method", "threshold"], capsys
    )
    assert report["oob_columns"] == "all" and report["oob_metric"] == "accuracy"
    assert report["oob_score"] > 0.9 and report["oob_balanced_accuracy"] > 0.9
    assert report["chance_level"] == pytest.approx(
        pd.read_csv(table)["label"].value_counts(normalize=True).max()
    )
    assert not report["at_chance"] and not report["near_chance"]
    assert report["kept_oob_score"] > 0.85  # signal and colour alone predict as well
    assert report["warnings"] == [] and "WARNING" not in err
    assert (
        main(["select", str(table), "--target", "label", "--method", "threshold", "--no-progress"])
        == 0
    )
    out = capsys.readouterr().out
    assert re.search(r"model quality: OOB accuracy 0\.9\d+ \(majority-class rate 0\.5\d+\)", out)
    assert "with the 2 kept" in out


@pytest.mark.parametrize("method", ["threshold", "boruta"])
def test_select_warns_when_the_forest_is_at_chance_level(noise, capsys, method):
    argv = ["select", str(noise), "--target", "y", "--method", method, "--n-estimators", "50"]
    if method == "boruta":
        argv += ["--max-iter", "10"]
    report, err = run_json(argv, capsys)
    assert report["at_chance"] or report["near_chance"], report
    assert report["oob_balanced_accuracy"] < 0.6  # the majority class, nearly always
    chance = [w for w in report["warnings"] if w.startswith("WARNING")]
    assert len(chance) == 1 and "noise" in chance[0]
    assert chance[0] in err


def test_class_weight_and_balanced_accuracy(noise, capsys):
    plain, _ = run_json(["rank", str(noise), "--target", "y", "--n-estimators", "60"], capsys)
    assert plain["oob_metric"] == "accuracy" and plain["class_weight"] is None
    labels = pd.read_csv(noise)["y"]
    assert plain["chance_level"] == pytest.approx(1 - labels.mean())  # the majority: 0
    weighted, _ = run_json(
        ["rank", str(noise), "--target", "y", "--n-estimators", "60", "--class-weight", "balanced"],
        capsys,
    )
    assert weighted["class_weight"] == "balanced"
    assert weighted["oob_metric"] == "balanced_accuracy"
    assert weighted["chance_level"] == 0.5
    assert weighted["oob_score"] == weighted["oob_balanced_accuracy"]
    assert weighted["at_chance"] or weighted["oob_score"] < 0.56, weighted
    report, _ = run_json(
        [
            "select",
            str(noise),
            "--target",
            "y",
            "--method",
            "threshold",
            "--class-weight",
            "balanced_subsample",
        ],
        capsys,
    )
    assert report["class_weight"] == "balanced_subsample"
    assert report["oob_metric"] == "balanced_accuracy"


def test_balanced_accuracy_is_the_mean_recall_of_the_oob_votes():
    from forestimp._cli_quality import assess, build_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] > 1.0, 2, np.where(X[:, 1] > 0.5, 1, 0))
    est = build_model("rf", "classification", 30, 0, 1).fit(X, y)
    fit = assess(est, y, "classification", "test", 3, 3)
    votes = est.oob_decision_function_
    seen = np.isfinite(votes).all(axis=1)
    predicted = est.classes_[votes[seen].argmax(axis=1)]
    recalls = [np.mean(predicted[y[seen] == c] == c) for c in (0, 1, 2)]
    assert fit.balanced_accuracy == pytest.approx(np.mean(recalls), abs=1e-12)
    assert fit.accuracy == est.oob_score_ and fit.n_classes == 3
    assert fit.majority == pytest.approx(np.bincount(y).max() / len(y))


def test_class_weight_is_refused_for_a_regression_target(table, tmp_path, capsys):
    df = pd.DataFrame({"a": np.arange(50.0), "y": np.linspace(0, 1, 50)})
    path = tmp_path / "reg.csv"
    df.to_csv(path, index=False)
    for command in ("rank", "select"):
        line = refused([command, str(path), "--target", "y", "--class-weight", "balanced"], capsys)
        assert "--class-weight applies to classification" in line


def test_rfe_scores_its_path_with_a_scorer(table, capsys):
    report, _ = run_json(
        [
            "select",
            str(table),
            "--target",
            "label",
            "--method",
            "rfe",
            "--scoring",
            "balanced_accuracy",
        ],
        capsys,
    )
    assert {"signal", "colour"} <= {
        r["feature"] for r in report["features"] if r["status"] == "kept"
    }
    assert (
        main(
            [
                "select",
                str(table),
                "--target",
                "label",
                "--method",
                "rfe",
                "--scoring",
                "balanced_accuracy",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "5-fold CV balanced_accuracy score" in capsys.readouterr().out
    line = refused(["select", str(table), "--target", "label", "--scoring", "f1"], capsys)
    assert "--scoring applies to --method rfe only" in line


# -- 3. source columns, counted alike everywhere ----------------------------------------------


def _captured_titles(monkeypatch) -> list[str]:
    """The titles of the figures the command saves."""
    from matplotlib.figure import Figure

    titles: list[str] = []
    monkeypatch.setattr(
        Figure, "savefig", lambda self, *a, **k: titles.append(self.axes[0].get_title())
    )
    return titles


def test_boruta_plot_title_json_and_table_count_source_columns(
    table, tmp_path, capsys, monkeypatch
):
    pytest.importorskip("matplotlib")
    titles = _captured_titles(monkeypatch)
    argv = [
        "select",
        str(table),
        "--target",
        "label",
        "--max-iter",
        "12",
        "--plot",
        str(tmp_path / "b.png"),
        "--one-hot",  # the levels of colour, counted apart from the source columns
    ]
    report, _ = run_json(argv, capsys)
    assert report["n_features"] == 10 and report["n_encoded"] == 12
    title = titles[-1]
    first = title.splitlines()[0]
    assert f"{report['n_kept']} confirmed, {report['n_tentative']} tentative of 10 columns" in (
        first
    ), title
    assert "of 12)" in title  # the encoded levels, counted apart
    assert main([*argv, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"kept {report['n_kept']} of 10 columns ({report['n_tentative']} tentative)" in out


def test_threshold_plot_title_counts_source_columns(table, tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    titles = _captured_titles(monkeypatch)
    argv = [
        "select",
        str(table),
        "--target",
        "label",
        "--method",
        "threshold",
        "--plot",
        str(tmp_path / "t.png"),
    ]
    report, _ = run_json(argv, capsys)
    assert f"{report['n_kept']}" in titles[-1] and "of 10 columns kept" in titles[-1]


def test_rfe_summary_counts_source_columns(table, capsys):
    report, _ = run_json(["select", str(table), "--target", "label", "--method", "rfe"], capsys)
    assert (
        main(["select", str(table), "--target", "label", "--method", "rfe", "--no-progress"]) == 0
    )
    out = capsys.readouterr().out
    line = next(s for s in out.splitlines() if s.startswith("path of"))
    counts = [int(n) for n in re.findall(r"at (\d+) columns?", line)]
    assert counts and max(counts) <= 10, line
    assert counts[0] == report["n_kept"], (line, report["n_kept"])


def test_rfe_plot_axis_counts_source_columns(table):
    pytest.importorskip("matplotlib")
    from forestimp._cli_table import encode, read_frame
    from forestimp.selection import RFE

    data = encode(read_frame(str(table)), "label", [], str(table), one_hot=True)
    rfe = RFE(random_state=0).fit(data.X, data.y.to_numpy())
    ax = rfe.plot(groups=data.groups)
    xs = ax.lines[0].get_xdata() if ax.lines else ax.containers[0][0].get_xdata()
    assert max(xs) == 10  # not the 12 encoded columns
    assert "counts once" in ax.get_xlabel()


# -- 4. tables as they come -------------------------------------------------------------------


@pytest.fixture
def holes(tmp_path):
    """A ';'-separated table: missing feature values, two missing targets, an identifier."""
    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame(
        {
            "id": np.arange(n),
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "town": rng.choice(["x", "y", "z"], n),
        }
    )
    df["y"] = (df["a"] > 0).astype(float)
    df.loc[rng.random(n) < 0.1, "b"] = np.nan
    df.loc[[3, 7], "y"] = np.nan
    path = tmp_path / "holes.csv"
    df.to_csv(path, index=False, sep=";")
    return path, df


def test_missing_values_kept_and_missing_targets_dropped_on_request(holes, capsys):
    path, df = holes
    base = [str(path), "--target", "y", "--sep", ";", "--drop", "id"]
    line = refused(["rank", *base], capsys)
    assert "2 missing values" in line and "--drop-missing-target" in line
    report, err = run_json(["rank", *base, "--drop-missing-target", "--n-estimators", "40"], capsys)
    assert report["n_rows"] == len(df) - 2 and report["n_rows_dropped"] == 2
    assert report["missing_values"] == {"b": int(df["b"].isna().sum())}
    assert report["features"][0]["feature"] == "a"
    assert "dropped 2 rows" in err and "missing values in b" in err
    for method in ("threshold", "rfe", "srs"):
        sel, _ = run_json(["select", *base, "--drop-missing-target", "--method", method], capsys)
        assert "a" in {r["feature"] for r in sel["features"] if r["status"] in ("kept", "found")}
    line = refused(["select", *base, "--drop-missing-target", "--method", "boruta"], capsys)
    assert "boruta needs complete features" in line and "missing values in b" in line


def test_sep(holes, tmp_path, capsys):
    path, df = holes
    line = refused(["rank", str(path), "--target", "y"], capsys)
    assert "is the separator ';'? (--sep ';')" in line
    tsv = tmp_path / "holes.txt"
    df.dropna(subset=["y"]).to_csv(tsv, index=False, sep="\t")
    report, _ = run_json(
        ["rank", str(tsv), "--target", "y", "--sep", "tab", "--drop", "id", "--n-estimators", "20"],
        capsys,
    )
    assert report["n_features"] == 3
    parquet = tmp_path / "holes.parquet"
    pytest.importorskip("pyarrow")
    df.to_parquet(parquet)
    assert "--sep applies to CSV files" in refused(
        ["rank", str(parquet), "--target", "y", "--sep", ";"], capsys
    )


def test_srs_on_parquet_encodes_text_columns_and_drops(holes, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    _, df = holes
    path = tmp_path / "holes.parquet"
    df.to_parquet(path)
    argv = ["select", str(path), "--target", "y", "--method", "srs", "--drop-missing-target"]
    report, err = run_json([*argv, "--drop", "id"], capsys)
    assert "reading" in err and "whole" in err
    town = next(r for r in report["features"] if r["feature"] == "town")
    assert town["n_columns"] == 1 and report["n_features"] == 3  # split natively
    numeric = tmp_path / "numeric.parquet"
    df.drop(columns=["town", "id"]).dropna(subset=["y"]).to_parquet(numeric)
    report, err = run_json(["select", str(numeric), "--target", "y", "--method", "srs"], capsys)
    assert "whole" not in err  # out of core: the found columns alone are scored
    assert report["oob_columns"] == "found" and report["n_features"] == 2


@pytest.mark.parametrize(
    "drop",
    [["--drop", "id", "noise_0"], ["--drop", "id,noise_0"], ["--drop", "id", "--drop", "noise_0"]],
    ids=["words", "commas", "repeated"],
)
@pytest.mark.parametrize("command", ["rank", "select"])
def test_drop_before_file_does_not_swallow_it(table, tmp_path, capsys, drop, command):
    df = pd.read_csv(table).assign(id=np.arange(600))
    path = tmp_path / "with_id.csv"
    df.to_csv(path, index=False)
    argv = [command, *drop, str(path), "--target", "label", "--n-estimators", "20"]
    if command == "select":
        argv += ["--method", "threshold"]
    report, _ = run_json(argv, capsys)
    assert report["file"] == str(path)
    assert {r["feature"] for r in report["features"]} == set(df.columns) - {
        "id",
        "noise_0",
        "label",
    }


def test_drop_without_a_file_is_still_refused(capsys):
    line = refused(["rank", "--drop", "a", "b", "--target", "y"], capsys)
    assert "required: file" in line


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"forestimp {forestimp.__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "``" not in text and ":mod:" not in text and "forestimp select data.csv" in text
    with pytest.raises(SystemExit):
        main(["select", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert re.search(r"--output \{table,csv,json\} table \(default, for people\)", text), text
    for option in ("--sep", "--drop-missing-target", "--class-weight", "--scoring"):
        assert option in text


# -- 5. defaults that say what they are -------------------------------------------------------


@pytest.fixture(scope="module")
def biased(tmp_path_factory):
    """A binary column that agrees with the label 65 % of the time and 10 continuous noise
    columns: MDI ranks the noise first (docs/importances.md)."""
    rng = np.random.default_rng(0)
    n = 400
    x0 = rng.integers(0, 2, n)
    df = pd.DataFrame(rng.normal(size=(n, 10)), columns=[f"noise{j}" for j in range(10)])
    df.insert(0, "informative", x0)
    df["label"] = np.where(rng.random(n) < 0.65, x0, 1 - x0)
    path = tmp_path_factory.mktemp("biased") / "biased.csv"
    df.to_csv(path, index=False)
    return path


def test_threshold_names_its_measure_and_is_not_fooled_by_mdi_bias(biased, capsys):
    argv = ["select", str(biased), "--target", "label", "--method", "threshold"]
    report, _ = run_json(argv, capsys)
    assert report["measure"] == "permutation"
    assert report["features"][0]["feature"] == "informative"
    assert report["features"][0]["status"] == "kept"
    mdi, _ = run_json([*argv, "--importance", "mdi"], capsys)
    assert mdi["measure"] == "mdi"
    assert mdi["features"][0]["feature"] != "informative"  # the bias the default avoids
    assert main([*argv, "--no-progress"]) == 0
    assert "importance: permutation: OOB permutation importance" in capsys.readouterr().out


def test_rank_permutation_spread_is_over_trees_with_one_repeat(table, capsys):
    report, _ = run_json(["rank", str(table), "--target", "label", "--n-estimators", "64"], capsys)
    assert report["measure"] == "permutation" and report["n_repeats"] == 1
    top = report["features"][0]
    assert top["std"] > 0  # per-tree draws: not the 0 of one held-out repeat
    assert top["standard_error"] == pytest.approx(top["std"] / 8, rel=1e-9)


@pytest.mark.parametrize("method", ["boruta", "rfe", "threshold", "srs"])
def test_select_json_has_what_rank_json_has(table, capsys, method):
    argv = ["select", str(table), "--target", "label", "--method", method]
    report, _ = run_json(argv + (["--max-iter", "20"] if method == "boruta" else []), capsys)
    expected = {"boruta": "permutation", "threshold": "permutation", "rfe": "mdi", "srs": "mdi"}
    assert report["measure"] == expected[method]
    assert report["task"] == "classification"
    for key in ("oob_metric", "oob_score", "chance_level", "at_chance", "warnings"):
        assert key in report
    assert report["iterations"] >= 1
    if method == "boruta":
        assert report["iterations"] <= 20 and report["max_iter"] == 20
    if method == "threshold":
        assert report["iterations"] == 1 and report["threshold"] > 0


def test_boruta_says_to_raise_max_iter_when_columns_stay_tentative(table, capsys):
    report, err = run_json(["select", str(table), "--target", "label", "--max-iter", "8"], capsys)
    assert report["n_tentative"] > 0
    warning = next(w for w in report["warnings"] if "tentative" in w)
    assert f"{report['n_tentative']} tentative columns" in warning
    assert "raise --max-iter" in warning and warning in err


def test_srs_says_to_raise_iterations_when_it_has_not_converged(table, capsys):
    argv = [
        "select",
        str(table),
        "--target",
        "label",
        "--method",
        "srs",
        "--memory-features",
        "3",
        "--iterations",
        "2",
    ]
    report, err = run_json(argv, capsys)
    warnings = [w for w in report["warnings"] if "raise --iterations" in w]
    assert warnings and all(w in err for w in warnings)
    assert any("never drew" in w for w in warnings)  # 2 x 3 draws cannot cover 12 columns

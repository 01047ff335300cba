"""The ``forestimp`` console command: ``demo`` and ``rank``."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pandas as pd
import pytest

from forestimp.cli import main

LED_EXACT = [0.4127, 0.5815, 0.5312, 0.5421, 0.6566, 0.2258, 0.3720]


def test_demo_prints_the_led_table(capsys):
    code = main(["demo", "--n-estimators", "300"])
    assert code in (None, 0)
    out = capsys.readouterr().out
    for m in range(1, 8):
        assert re.search(rf"\bX{m}\b", out), f"X{m} missing from:\n{out}"
    # The exact Thm-1 values are printed next to the estimates.
    for value in LED_EXACT:
        assert f"{value:.4f}" in out or f"{value:.3f}" in out, value


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(
        {
            "noise_a": rng.normal(size=n),
            "signal": rng.normal(size=n),
            "noise_b": rng.normal(size=n),
            "noise_c": rng.uniform(size=n),
        }
    )
    df["label"] = np.where(df["signal"] + 0.1 * rng.normal(size=n) > 0, "yes", "no")
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def _ranked_columns(out: str, names) -> list[str]:
    """Column names in the order the report first mentions them."""
    found = {name: out.find(name) for name in names}
    return sorted((n for n, pos in found.items() if pos >= 0), key=found.get)


@pytest.mark.parametrize("model", ["rf", "hist"])
def test_rank_puts_the_informative_column_first(csv_file, capsys, model):
    code = main(["rank", str(csv_file), "--target", "label", "--model", model])
    assert code in (None, 0)
    out = capsys.readouterr().out
    ranked = _ranked_columns(out, ["signal", "noise_a", "noise_b", "noise_c"])
    assert ranked[0] == "signal", out
    assert len(ranked) == 4, out


def test_rank_missing_target_column_exits_with_usage_error(csv_file, capsys):
    with pytest.raises(SystemExit) as info:
        main(["rank", str(csv_file), "--target", "no_such_column"])
    assert info.value.code == 2
    assert "no_such_column" in capsys.readouterr().err


def test_rank_missing_file_exits_with_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["rank", str(tmp_path / "absent.csv"), "--target", "label"])
    # Any failing exit status with a message naming the file (no traceback).
    code = info.value.code
    assert code not in (0, None)
    assert "absent.csv" in (code if isinstance(code, str) else capsys.readouterr().err)


def test_unknown_command_exits_with_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


@pytest.mark.parametrize("command", ["demo", "rank"])
def test_plots_are_written_as_png(command, csv_file, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / f"{command}.png"
    if command == "demo":
        argv = ["demo", "--n-estimators", "200", "--plot", str(png)]
    else:
        argv = ["rank", str(csv_file), "--target", "label", "--n-estimators", "50"]
        argv += ["--plot", str(png)]
    assert main(argv) in (None, 0)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in capsys.readouterr().out


def _run_json(argv, capsys) -> dict:
    assert main([*argv, "--output", "json"]) in (None, 0)
    return json.loads(capsys.readouterr().out)


def _order(report: dict) -> list[str]:
    return [row["feature"] for row in report["features"]]


@pytest.fixture
def biased_csv(tmp_path):
    """A binary feature that agrees with the label 65% of the time, and 10 continuous noise
    columns: raw MDI prefers the many-valued noise (docs/importances.md)."""
    rng = np.random.default_rng(0)
    n = 400
    x0 = rng.integers(0, 2, n)
    df = pd.DataFrame(rng.normal(size=(n, 10)), columns=[f"noise{j}" for j in range(10)])
    df.insert(0, "informative", x0)
    df["label"] = np.where(rng.random(n) < 0.65, x0, 1 - x0)
    path = tmp_path / "biased.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("measure", [None, "air", "mdi_oob"])
def test_default_measure_is_not_fooled_by_many_valued_noise(biased_csv, capsys, measure):
    argv = ["rank", str(biased_csv), "--target", "label", "--n-estimators", "100"]
    mdi = _run_json([*argv, "--measure", "mdi"], capsys)
    assert _order(mdi)[0] != "informative"  # raw MDI ranks it last on this seed
    report = _run_json(argv if measure is None else [*argv, "--measure", measure], capsys)
    assert report["measure"] == (measure or "permutation")
    assert _order(report)[0] == "informative", report


def test_oob_score_is_printed_with_the_majority_class_rate(csv_file, capsys):
    assert main(["rank", str(csv_file), "--target", "label", "--n-estimators", "100"]) == 0
    captured = capsys.readouterr()
    m = re.search(r"OOB accuracy (\d\.\d+) \(majority-class rate (\d\.\d+)\)", captured.out)
    assert m, captured.out
    assert float(m[1]) > 0.9 and float(m[2]) < 0.6
    assert "WARNING" not in captured.err


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_forest_at_chance_level_is_flagged(tmp_path, capsys, task):
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    df["y"] = rng.integers(0, 2, 200) if task == "classification" else rng.normal(size=200)
    path = tmp_path / "noise.csv"
    df.to_csv(path, index=False)
    argv = ["rank", str(path), "--target", "y", "--n-estimators", "100"]
    report = _run_json(argv, capsys)
    assert report["task"] == task
    assert report["at_chance"] or report["near_chance"], report
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "WARNING" in captured.err
    assert "CHANCE" in captured.out or "near chance" in captured.out


def test_csv_and_json_are_the_same_ranking(csv_file, tmp_path, capsys):
    argv = ["rank", str(csv_file), "--target", "label", "--n-estimators", "50"]
    report = _run_json(argv, capsys)
    out = tmp_path / "ranking.csv"
    assert main([*argv, "--output", "csv", "--out", str(out)]) == 0
    assert str(out) in capsys.readouterr().out
    table = pd.read_csv(out)
    assert list(table.columns) == [
        "rank", "feature", "importance", "std", "standard_error", "n_columns"
    ]  # fmt: skip
    assert table["rank"].tolist() == [1, 2, 3, 4]
    assert table["feature"].tolist() == _order(report)
    assert table["feature"][0] == "signal"
    np.testing.assert_allclose(table["importance"], [r["importance"] for r in report["features"]])
    se = np.array([r["standard_error"] for r in report["features"]])
    np.testing.assert_allclose(se, table["std"] / np.sqrt(50))
    assert np.all(table["importance"].diff().dropna() <= 0)
    top = _run_json([*argv, "--top", "2"], capsys)
    assert (top["n_features"], _order(top)) == (4, _order(report)[:2])


def test_machine_output_on_stdout_stays_parseable_with_a_plot(csv_file, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "rank.png"
    argv = ["rank", str(csv_file), "--target", "label", "--n-estimators", "20"]
    report = _run_json([*argv, "--plot", str(png)], capsys)  # stdout is pure JSON
    assert len(report["features"]) == 4
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_parquet_input(csv_file, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    path = tmp_path / "data.parquet"
    pd.read_csv(csv_file).to_parquet(path)
    report = _run_json(["rank", str(path), "--target", "label", "--n-estimators", "50"], capsys)
    assert _order(report)[0] == "signal"


def test_parquet_without_pyarrow_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    # None in sys.modules makes the import fail as it does where pyarrow is not installed.
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(SystemExit) as info:
        main(["rank", str(tmp_path / "data.parquet"), "--target", "label"])
    assert info.value.code == 2
    assert "pip install pyarrow" in capsys.readouterr().err


@pytest.fixture
def text_csv(tmp_path):
    rng = np.random.default_rng(1)
    n = 300
    df = pd.DataFrame({
        "x": rng.normal(size=n),
        "color": rng.choice(["red", "green", "blue"], n),
        "noise": rng.normal(size=n),
    })  # fmt: skip
    df["y"] = df["x"] + 2.0 * (df["color"] == "red") + 0.3 * rng.normal(size=n)
    path = tmp_path / "text.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("measure", ["permutation", "mdi"])
def test_one_hot_columns_are_reported_as_their_source_column(text_csv, capsys, measure):
    argv = ["rank", str(text_csv), "--target", "y", "--n-estimators", "50", "--measure", measure]
    report = _run_json([*argv, "--one-hot"], capsys)
    assert report["encoding"] == "one-hot" and report["n_encoded"] == 5
    rows = {r["feature"]: r for r in report["features"]}
    assert set(rows) == {"x", "color", "noise"}
    assert rows["color"]["n_columns"] == 3 and rows["x"]["n_columns"] == 1
    assert _order(report)[2] == "noise"
    assert report["additive"] == (measure == "mdi")
    if measure == "mdi":  # normalized MDI: the three rows share 1
        assert sum(r["importance"] for r in rows.values()) == pytest.approx(1.0)


def test_group_standard_error_is_that_of_the_summed_draws():
    from forestimp._rank import by_source

    # Columns 0 and 1 (one source column) move in opposite directions from tree to tree:
    # their sum is the same in every tree, so its standard error is 0, not a combination of
    # the two per-column errors.
    draws = np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0], [0.0, 2.0, 0.0, 2.0]])
    imp, std, se = by_source(draws.mean(axis=1), draws, [np.array([0, 1]), np.array([2])])
    np.testing.assert_allclose(imp, [5.0, 1.0])
    np.testing.assert_allclose(std, [0.0, 1.0])  # ddof 0, the package's rule
    np.testing.assert_allclose(se, std / 2)
    # A tree on which the measure is undefined (NaN) is left out of every column's error.
    draws[2, 0] = np.nan
    _, std, _ = by_source(draws.mean(axis=1), draws, [np.array([0, 1]), np.array([2])])
    np.testing.assert_allclose(std, [0.0, np.std([2.0, 0.0, 2.0])])


@pytest.mark.parametrize(
    "values, task",
    [
        (np.arange(60) % 50, "regression"),  # 50 distinct integers
        (np.arange(60) % 3, "classification"),
        (np.arange(60) % 3 + 0.5, "regression"),
        ((np.arange(60) % 3).astype(float), "classification"),  # 0.0, 1.0, 2.0
        (np.array(["a", "b"] * 30), "classification"),
    ],
)
def test_auto_task(values, task):
    from forestimp._rank import infer_task

    assert infer_task(pd.Series(values))[0] == task


def test_many_valued_integer_target_is_regression_unless_told(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=200)})
    df["age"] = np.round(40 + 10 * df["x"] + rng.normal(size=200)).astype(int)
    path = tmp_path / "ages.csv"
    df.to_csv(path, index=False)
    argv = ["rank", str(path), "--target", "age", "--n-estimators", "20"]
    report = _run_json(argv, capsys)
    assert (report["task"], report["model"], report["oob_metric"]) == (
        "regression", "RandomForestRegressor", "r2"
    )  # fmt: skip
    assert report["oob_score"] > 0.5
    report = _run_json([*argv, "--task", "classification"], capsys)
    assert report["model"] == "RandomForestClassifier"


def test_help_explains_the_default_measure(capsys):
    with pytest.raises(SystemExit) as info:
        main(["rank", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert re.search(r"permutation\s+\(default\)", text)
    assert "additive" in text


@pytest.mark.parametrize("one_hot", [False, True])
def test_missing_values(tmp_path, capsys, one_hot):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60), "town": rng.choice(["a", "b"], 60)})
    df["y"] = (df["x"] > 0).astype(int)
    df.loc[3, "town"] = None  # natively routed as a missing number is; one-hot, a level
    path = tmp_path / "holes.csv"
    df.to_csv(path, index=False)
    argv = ["rank", str(path), "--target", "y", "--n-estimators", "20"]
    argv += ["--one-hot"] if one_hot else []
    report = _run_json(argv, capsys)
    rows = {r["feature"]: r for r in report["features"]}
    assert rows["town"]["n_columns"] == (3 if one_hot else 1)
    town = {} if one_hot else {"town": 1}
    assert report["missing_values"] == town
    df.loc[5, "x"] = np.nan  # a missing number is kept (the trees route it), and said, by name
    df.to_csv(path, index=False)
    report = _run_json(argv, capsys)
    assert report["missing_values"] == {"x": 1, **town}
    assert report["features"][0]["feature"] == "x"


@pytest.mark.parametrize("name", ["permutation", "air", "mdi_oob", "mdi"])
def test_measure_contract(name):
    """What ``_rank`` needs from forestimp.importance, whatever its API: the importances and
    the per-tree values they average, one column per tree."""
    from forestimp._rank import _measure, build_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    est = build_model("rf", "classification", 40, 0, 1).fit(X, y)
    values, draws = _measure(est, X, y, name, seed=0, n_jobs=1)
    assert values.shape == (3,) and draws.shape == (3, 40)
    assert np.argmax(values) == 0
    if name == "mdi":  # normalized like scikit-learn; each tree normalized on its own
        np.testing.assert_allclose(values, est.feature_importances_)
        np.testing.assert_allclose(draws.sum(axis=0), 1.0)
    else:
        kept = ~np.isnan(draws).any(axis=0)
        np.testing.assert_allclose(values, draws[:, kept].mean(axis=1), atol=1e-12)

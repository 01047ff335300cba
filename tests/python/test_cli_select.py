"""``forestimp select``: every method on a file and on the built-in data with a known answer."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from forestimp.cli import main

METHODS = ["boruta", "rfe", "threshold", "srs"]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """Two informative columns (one of them text), a count target's worth of noise."""
    rng = np.random.default_rng(1)
    n = 600
    df = pd.DataFrame(rng.normal(size=(n, 8)), columns=[f"noise_{j}" for j in range(8)])
    df.insert(2, "signal", rng.normal(size=n))
    df["colour"] = rng.choice(["red", "green", "blue"], size=n)
    score = df["signal"] + 1.5 * (df["colour"] == "red") + 0.3 * rng.normal(size=n)
    df["label"] = np.where(score > 0.5, "yes", "no")
    df["count"] = np.round(10 * np.exp(df["signal"]) + 40 * (df["colour"] == "red"))
    path = tmp_path_factory.mktemp("select") / "table.csv"
    df.to_csv(path, index=False)
    return path


def _json(argv, capsys) -> dict:
    assert main(["select", *argv, "--output", "json", "--no-progress"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out)


def _kept(report: dict) -> set[str]:
    return {
        r["feature"] for r in report["features"] if r["status"] in ("kept", "confirmed", "found")
    }


@pytest.mark.parametrize("method", METHODS)
def test_every_method_keeps_the_informative_columns_of_a_file(table, capsys, method):
    report = _json([str(table), "--target", "label", "--drop", "count", "--method", method],
                   capsys)  # fmt: skip
    assert report["method"] == method
    rows = report["features"]
    assert len(rows) == 10  # every source column, the text one once
    assert {"signal", "colour"} <= _kept(report)
    # RFE keeps the fewest columns within alpha standard errors of its path's best
    # out-of-bag score, which on 600 rows may still hold two noise columns.
    assert len(_kept(report) - {"signal", "colour"}) <= (2 if method == "rfe" else 1)
    assert [r["rank"] for r in rows] == list(range(1, 11))
    assert rows[0]["feature"] in ("signal", "colour")
    colour = next(r for r in rows if r["feature"] == "colour")
    # Natively one column (--one-hot: three).
    assert report["encoding"] == "native" and colour["n_columns"] == 1


def test_builtin_data_reports_how_close_the_selection_came(capsys):
    assert main(["select", "--method", "threshold", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "built-in MADELON-like" in out
    assert "known answer: 10 relevant columns" in out
    recall = float(out.split("recall ")[1].split(",")[0])
    precision = float(out.split("precision ")[1].split()[0])
    assert recall >= 0.8 and precision >= 0.8, out


def test_builtin_boruta_is_the_main_job(capsys):
    """What the README's first command runs: Boruta finds all 10 relevant columns."""
    assert main(["select", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "kept 5/5 informative, 5/5 redundant and 0 noise" in out, out


def test_integer_target_as_regression(table, capsys):
    report = _json([str(table), "--target", "count", "--drop", "label", "--method", "threshold",
                    "--task", "regression"], capsys)  # fmt: skip
    assert {"signal", "colour"} <= _kept(report)


@pytest.mark.parametrize("method", METHODS)
def test_plots_are_written_for_every_method(table, tmp_path, capsys, method):
    pytest.importorskip("matplotlib")
    png = tmp_path / f"{method}.png"
    argv = ["select", str(table), "--target", "label", "--drop", "count", "--method", method]
    assert main([*argv, "--plot", str(png), "--no-progress"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in capsys.readouterr().out


def test_srs_reads_a_parquet_file_out_of_core(table, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    path = tmp_path / "numeric.parquet"
    pd.read_csv(table).drop(columns=["colour", "count"]).to_parquet(path)
    argv = [str(path), "--target", "label", "--method", "srs"]
    report = _json([*argv, "--memory-features", "4"], capsys)
    assert "signal" in _kept(report)
    assert len(report["features"]) == 9


def test_srs_in_rounds_on_a_dask_cluster_is_the_same_selection(table, tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    path = tmp_path / "numeric.parquet"
    pd.read_csv(table).drop(columns=["colour", "count"]).to_parquet(path)
    argv = [str(path), "--target", "label", "--method", "srs", "--memory-features", "4"]
    here = _json([*argv, "--batch-size", "3"], capsys)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        there = _json([*argv, "--batch-size", "3", "--scheduler", cluster.scheduler_address],
                      capsys)  # fmt: skip
    assert there["features"] == here["features"]
    assert "signal" in _kept(there)


def test_csv_output_lists_every_column_with_its_status(table, tmp_path, capsys):
    out = tmp_path / "sel.csv"
    argv = ["select", str(table), "--target", "label", "--method", "threshold", "--drop", "count"]
    assert main([*argv, "--output", "csv", "--out", str(out), "--no-progress"]) == 0
    frame = pd.read_csv(out)
    assert set(frame["status"]) <= {"kept", "dropped"}
    assert len(frame) == 10


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--target", "label"], "need a FILE"),
        (["--memory-features", "5"], "--memory-features applies to --method srs only"),
        (["--method", "srs", "--scheduler", "tcp://x:1"], "give --batch-size"),
        (["--batch-size", "2"], "--batch-size applies to --method srs only"),
        (["--method", "rfe", "--max-iter", "5"], "--max-iter applies to --method boruta only"),
        (["--method", "boruta", "--importance", "air"], "importance"),
    ],
)
def test_usage_errors_exit_with_status_2(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(["select", *argv, "--no-progress"])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_file_needs_a_target(table, capsys):
    with pytest.raises(SystemExit) as info:
        main(["select", str(table)])
    assert info.value.code == 2
    assert "--target" in capsys.readouterr().err

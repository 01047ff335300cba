"""Every failure of the ``forestimp`` command is one line on stderr and exit status 2.

Inputs an adversarial campaign found ending in a traceback (exit status 1), or in exit
status 0 without a check: empty or one-row tables, infinite or huge values, lying Parquet
footers, out-of-range numeric arguments, outputs that cannot be written. Each is refused as
argparse refuses its own arguments: ``forestimp <command>: error: <message>``. A genuine bug
(any other exception) keeps its traceback.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import forestimp
from forestimp.cli import main

HUGE = "99999999999999999999"  # more than any int64


def refused(argv: list[str], capsys, *fragments: str) -> str:
    """The one-line error of ``forestimp argv``, checked to name ``fragments``."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1, err
    line = err.rstrip("\n").splitlines()[-1]
    assert line == errors[0] and line.startswith(f"forestimp {argv[0]}: error: "), err
    for fragment in fragments:
        assert fragment in line, line
    return line


def refused_or_done(argv: list[str], capsys) -> None:
    """``forestimp argv`` either runs or is refused on one line: never a traceback."""
    try:
        code = main(argv)
    except SystemExit as exc:
        assert exc.code == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        assert err.rstrip("\n").splitlines()[-1].startswith(f"forestimp {argv[0]}: error: ")
    else:
        assert code == 0


def frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    df["y"] = (df["a"] > 0).astype(int)
    return df


@pytest.fixture
def csv(tmp_path):
    """A file with ``df`` written to it, as CSV or (by suffix) Parquet."""

    def write(df: pd.DataFrame, name: str = "data.csv") -> str:
        path = tmp_path / name
        if name.endswith(".parquet"):
            df.to_parquet(path)
        else:
            df.to_csv(path, index=False)
        return str(path)

    return write


RANK = ["--target", "y", "--n-estimators", "5"]
SELECT = ["--target", "y", "--n-estimators", "5", "--no-progress"]


# -- tables the forests cannot be grown on --------------------------------------------------


@pytest.mark.parametrize(
    "rows, name", [(0, "data.csv"), (1, "data.csv"), (0, "data.parquet")], ids=str
)
def test_rank_refuses_a_table_without_rows_enough(csv, capsys, rows, name):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    path = csv(frame().head(rows), name)
    refused(["rank", path, *RANK], capsys, f"{rows} row", "at least 2")


def test_select_refuses_a_header_only_table(csv, capsys):
    path = csv(frame().head(0))
    refused(["select", path, *SELECT, "--method", "threshold"], capsys, "0 row")


@pytest.mark.parametrize("command", ["rank", "select"])
@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_infinite_feature_is_refused_by_name(csv, capsys, command, value):
    df = frame()
    df.loc[3, "b"] = value
    extra = RANK if command == "rank" else [*SELECT, "--method", "threshold"]
    refused([command, csv(df), *extra], capsys, "infinite values in b")


@pytest.mark.parametrize("command", ["rank", "select"])
def test_infinite_target_is_refused_by_name(csv, capsys, command):
    df = frame()
    df["y"] = df["a"] * 2.0
    df.loc[5, "y"] = np.inf
    extra = RANK if command == "rank" else [*SELECT, "--method", "threshold"]
    refused([command, csv(df), *extra], capsys, "target 'y'", "infinite")


def huge_frames():
    """Finite values near the largest float64, in features, in the target, or both."""
    rng = np.random.default_rng(3)
    n = 40
    a = rng.uniform(-1, 1, n) * 1e308
    two = np.where(rng.integers(0, 2, n) == 1, 1e308, -1e308)  # two integer-valued "labels"
    return {
        "feature": pd.DataFrame({"a": a, "b": rng.normal(size=n), "y": (a > 0).astype(int)}),
        "regression target": pd.DataFrame({"a": rng.normal(size=n), "y": a}),
        "both": pd.DataFrame({"a": a, "b": rng.normal(size=n), "y": a + 1e307}),
        "two huge labels": pd.DataFrame({"a": rng.normal(size=n), "y": two}),
        "huge and 0 labels": pd.DataFrame({"a": rng.normal(size=n), "y": (two > 0) * 1e308}),
    }


@pytest.mark.parametrize("case", list(huge_frames()))
def test_rank_on_1e308_values_never_shows_a_traceback(csv, capsys, case):
    refused_or_done(["rank", csv(huge_frames()[case]), *RANK], capsys)


@pytest.mark.parametrize("method", ["threshold", "rfe"])
@pytest.mark.parametrize("case", list(huge_frames()))
def test_select_on_1e308_values_never_shows_a_traceback(csv, capsys, case, method):
    refused_or_done(["select", csv(huge_frames()[case]), *SELECT, "--method", method], capsys)


def test_huge_integer_values_are_not_class_labels():
    from forestimp._rank import infer_task

    assert infer_task(pd.Series([0.0, 1e308] * 5))[0] == "regression"
    assert infer_task(pd.Series([0.0, 2.0**53] * 5))[0] == "classification"


# -- Parquet files read out of core by SRS ---------------------------------------------------

ROWS = 77  # an unusual count, to find it in the footer


def varint(value: int) -> bytes:
    z, out = (value << 1) ^ (value >> 63), bytearray()
    while True:
        out.append(z & 0x7F | (0x80 if z > 0x7F else 0))
        z >>= 7
        if not z:
            return bytes(out)


def lying_parquet(path: Path, rows: int) -> str:
    """A Parquet file whose footer claims ``rows`` rows everywhere (file, row group and
    column chunks): a consistent lie, which pyarrow allocates for."""
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"a": np.arange(ROWS, dtype=np.float64), "y": np.arange(ROWS) % 2})
    pq.write_table(table, path, write_statistics=False)
    raw = path.read_bytes()
    (length,) = struct.unpack("<I", raw[-8:-4])
    body, footer = raw[: -8 - length], raw[-8 - length : -8]
    field = b"\x16" + varint(ROWS)  # Thrift compact: an i64 field, then a zigzag varint
    assert footer.count(field) == 4
    footer = footer.replace(field, b"\x16" + varint(rows))
    path.write_bytes(body + footer + struct.pack("<I", len(footer)) + b"PAR1")
    return str(path)


def test_srs_refuses_a_parquet_footer_that_lies_about_its_rows(tmp_path, capsys):
    path = lying_parquet(tmp_path / "lie.parquet", 2**60)
    refused(["select", path, *SELECT, "--method", "srs"], capsys, "lie.parquet", "claims")


def test_rank_refuses_a_parquet_footer_that_lies_about_its_rows(tmp_path, capsys):
    path = lying_parquet(tmp_path / "lie.parquet", 2**60)
    refused(["rank", path, *RANK], capsys, "lie.parquet")


@pytest.mark.parametrize(
    "target, fragment", [("no_such", "'no_such'"), ("y", "missing values")], ids=str
)
def test_srs_parquet_target_is_checked(csv, capsys, target, fragment):
    pytest.importorskip("pyarrow")
    df = frame()
    df["y"] = df["y"].astype(float)
    df.loc[2, "y"] = np.nan
    path = csv(df, "data.parquet")
    argv = ["select", path, *SELECT, "--method", "srs"]
    argv[argv.index("y")] = target
    refused(argv, capsys, fragment)


def test_srs_on_an_absent_parquet_file(tmp_path, capsys):
    path = str(tmp_path / "absent.parquet")
    refused(["select", path, *SELECT, "--method", "srs"], capsys, "absent.parquet")


# -- numeric arguments ------------------------------------------------------------------------

ARGUMENTS = [
    ("--n-estimators", HUGE),
    ("--n-estimators", "0"),
    ("--n-estimators", "-5"),
    ("--n-estimators", str(2**32 - 1)),
    ("--n-estimators", "ten"),
    ("--n-jobs", "0"),
    ("--n-jobs", str(2**31 + 1)),
    ("--n-jobs", HUGE),
    ("--n-jobs", "-" + HUGE),
    ("--random-state", "-1"),
    ("--random-state", str(2**32)),
    ("--random-state", HUGE),
]


@pytest.mark.parametrize("option, value", ARGUMENTS)
@pytest.mark.parametrize("command", ["rank", "select", "demo"])
def test_out_of_range_numeric_arguments_are_refused_while_parsing(
    csv, capsys, command, option, value
):
    head = [] if command == "demo" else [csv(frame()), "--target", "y"]
    refused([command, *head, f"{option}={value}"], capsys, f"argument {option}")


@pytest.mark.parametrize(
    "option, value",
    [
        ("--threshold", "nan"),
        ("--threshold", "inf"),
        ("--threshold", "-inf"),
        ("--threshold", "1e999"),
        ("--threshold", "nan*mean"),
        ("--threshold", "inf*median"),
        ("--alpha", "nan"),
        ("--alpha", "inf"),
        ("--alpha", "-1"),
        ("--alpha", "x"),
    ],
)
def test_thresholds_and_levels_must_be_finite(csv, capsys, option, value):
    method = "threshold" if option == "--threshold" else "rfe"
    argv = ["select", csv(frame()), *SELECT, "--method", method, f"{option}={value}"]
    refused(argv, capsys, f"argument {option}")


def test_a_finite_threshold_still_runs(csv, capsys):
    argv = ["select", csv(frame()), *SELECT, "--method", "threshold", "--threshold", "1.5*mean"]
    assert main(argv) == 0


def test_estimator_parameters_out_of_range_are_one_line(csv, capsys):
    # Valid for argparse, refused by the selector before it fits (InvalidParameterError).
    argv = ["select", csv(frame()), *SELECT, "--method", "srs", "--memory-features", HUGE]
    refused(argv, capsys, "'q' parameter")
    refused(["rank", csv(frame()), *RANK, "--n-repeats", HUGE], capsys, "n_repeats")


# -- outputs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--out", "--plot"])
@pytest.mark.parametrize("command", ["rank", "select"])
def test_output_that_is_a_directory_or_in_no_directory(csv, tmp_path, capsys, command, option):
    head = [command, csv(frame()), "--target", "y"]
    refused([*head, option, str(tmp_path)], capsys, f"argument {option}", "directory")
    inside_a_file = str(tmp_path / "data.csv" / "out.csv")
    refused([*head, option, inside_a_file], capsys, f"argument {option}", "no directory")


def test_demo_plot_in_no_directory(tmp_path, capsys):
    refused(["demo", "--plot", str(tmp_path / "absent" / "x.png")], capsys, "argument --plot")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", ["rank", "select"])
def test_output_that_cannot_be_written(csv, capsys, command):
    extra = RANK if command == "rank" else [*SELECT, "--method", "threshold"]
    refused([command, csv(frame()), *extra, "--out", "/dev/full"], capsys, "No space left")


def test_output_in_a_read_only_directory(csv, tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("this user writes anywhere (root)")
        refused(["rank", csv(frame()), *RANK, "--out", str(folder / "r.csv")], capsys, "ro")
    finally:
        folder.chmod(0o700)


# -- argparse's own errors, and the mapping of the library's --------------------------------


def test_argparse_errors_are_one_line_too(csv, capsys):
    refused(["rank", csv(frame())], capsys, "--target")
    refused(["select", "--method", "nope"], capsys, "--method")


def errors():
    from forestimp.exceptions import DataError, InvalidParameterError, ModelFormatError

    return [
        DataError("bad data\nsecond line"),
        InvalidParameterError("bad parameter"),
        ModelFormatError("bad model"),
        PermissionError(13, "Permission denied", "x.csv"),
        MemoryError(),
        pd.errors.EmptyDataError("No columns to parse from file"),
        pd.errors.ParserError("Error tokenizing data"),
    ]


@pytest.mark.parametrize("error", errors(), ids=lambda e: type(e).__name__)
def test_library_errors_become_one_line(csv, capsys, monkeypatch, error):
    import forestimp._rank

    def run(args):
        raise error

    monkeypatch.setattr(forestimp._rank, "run", run)
    line = refused(["rank", csv(frame()), "--target", "y"], capsys)
    assert line != "forestimp rank: error: "


def test_a_bug_keeps_its_traceback(csv, monkeypatch):
    import forestimp._rank

    def run(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(forestimp._rank, "run", run)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["rank", csv(frame()), "--target", "y"])


def test_the_console_command_exits_2_without_a_traceback(csv):
    path = csv(frame().head(0))
    env = {**os.environ, "PYTHONPATH": str(Path(forestimp.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-m", "forestimp.cli", "rank", path, "--target", "y"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("forestimp rank: error: ")

"""The one checked Parquet reader (forestimp._parquet.read_parquet) behind ``forestimp rank``,
``forestimp select`` and the Parquet paths of forestimp.dask.

A truncated file, a damaged footer, a footer that lies about its rows, or a numeric value
outside the range the footer records is a DataError naming the file (one line from the
command), never a pyarrow traceback. With page checksums, any damaged data page is one.
"""

from __future__ import annotations

import struct

import numpy as np
import pandas as pd
import pytest

from forestimp.cli import main
from forestimp.exceptions import DataError

pq = pytest.importorskip("pyarrow.parquet")
from forestimp._dask_read import read  # noqa: E402
from forestimp._parquet import read_parquet  # noqa: E402

RANK = ["--target", "y", "--n-estimators", "25", "--n-repeats", "1"]
SELECT = ["--target", "y", "--n-estimators", "10", "--method", "threshold"]


def table(n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    df["t"] = rng.choice(["red", "blue"], n)
    df["y"] = (df["a"] > 0).astype(int)
    return df


def footer_start(raw: bytes) -> int:
    (length,) = struct.unpack("<I", raw[-8:-4])
    return len(raw) - 8 - length


def value_offset(path, column: int = 0) -> int:
    """The middle of a column chunk's bytes (PLAIN doubles, uncompressed)."""
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(column)
    return chunk.data_page_offset + chunk.total_compressed_size // 2


def refused(argv: list[str], capsys, name: str) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = err.rstrip("\n").splitlines()
    assert lines[-1].startswith(f"forestimp {argv[0]}: error: ") and name in lines[-1], err
    return lines[-1]


def damage(path, raw: bytes, case: str) -> None:
    body = footer_start(raw)
    if case == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif case == "last byte cut":
        path.write_bytes(raw[:-1])
    elif case == "footer overwritten":  # the middle of the Thrift metadata
        mid = (body + len(raw) - 8) // 2
        path.write_bytes(raw[:mid] + b"\xaa" * 24 + raw[mid + 24 :])
    elif case == "values overwritten":  # 0x7f... is 1.4e306, far outside column a's range
        mid = value_offset(path)
        path.write_bytes(raw[:mid] + b"\x7f" * 16 + raw[mid + 16 :])
    else:
        raise AssertionError(case)


CASES = ["truncated", "last byte cut", "footer overwritten", "values overwritten"]


@pytest.fixture
def plain(tmp_path):
    """An uncompressed, PLAIN-encoded file: a byte offset is a value."""
    path = tmp_path / "data.parquet"
    table().to_parquet(path, compression="none", use_dictionary=False)
    return path


@pytest.mark.parametrize("case", CASES)
def test_damaged_file_is_a_data_error_naming_it(plain, case):
    damage(plain, plain.read_bytes(), case)
    with pytest.raises(DataError, match="data.parquet") as error:
        read_parquet(plain)
    assert "\n" not in str(error.value)


def test_an_overwritten_value_names_its_column_and_the_ranges(plain):
    damage(plain, plain.read_bytes(), "values overwritten")
    with pytest.raises(DataError, match=r"column 'a' holds values in \[.*outside the range"):
        read_parquet(plain)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", ["rank", "select"])
def test_the_command_refuses_a_damaged_file_on_one_line(plain, capsys, case, command):
    damage(plain, plain.read_bytes(), case)
    refused([command, str(plain), *(RANK if command == "rank" else SELECT)], capsys, "data.parquet")


@pytest.mark.parametrize("case", CASES)
def test_dask_workers_read_parquet_through_the_same_check(plain, case):
    damage(plain, plain.read_bytes(), case)
    data = {"X": str(plain), "y": "y", "sample_weight": None, "target_column": True}
    with pytest.raises(DataError, match="data.parquet"):
        read(data)


def test_with_page_checksums_every_overwrite_of_a_data_page_is_caught(tmp_path):
    path = tmp_path / "sum.parquet"
    df = table(60)
    df.to_parquet(path, write_page_checksum=True)
    raw = path.read_bytes()
    caught = 0
    for at in range(4, footer_start(raw) - 8, 5):
        path.write_bytes(raw[:at] + bytes(8) + raw[at + 8 :])
        try:
            got = read_parquet(path)
        except DataError:
            caught += 1
        else:  # the 8 bytes were zeros already, or padding: the data must be intact
            pd.testing.assert_frame_equal(got, df)
    assert caught > 100


def test_any_overwrite_without_checksums_reads_or_refuses_never_a_traceback(tmp_path):
    # Without page checksums a value damaged within its column's range reads as another
    # value (the format cannot tell); no position may end in another exception.
    path = tmp_path / "any.parquet"
    table(60).to_parquet(path)
    raw = path.read_bytes()
    for at in range(4, len(raw) - 8, 11):
        for fill in (b"\xff", b"\x00"):
            path.write_bytes(raw[:at] + fill * 8 + raw[at + 8 :])
            try:
                read_parquet(path)
            except DataError as e:
                assert "any.parquet" in str(e)


def test_a_consistent_lie_about_the_rows_is_refused(tmp_path):
    from test_cli_errors import lying_parquet

    path = lying_parquet(tmp_path / "lie.parquet", 2**60)
    with pytest.raises(DataError, match="claims"):
        read_parquet(path)


def test_sound_files_read_as_pandas_reads_them(tmp_path):
    rng = np.random.default_rng(1)
    n = 500
    df = pd.DataFrame(
        {
            "u64": rng.integers(0, 2**64 - 1, n, dtype=np.uint64),
            "i8": rng.integers(-128, 127, n, dtype=np.int8),
            "f32": rng.normal(size=n).astype(np.float32),
            "f16": rng.normal(size=n).astype(np.float16),
            "nan": np.where(rng.random(n) > 0.8, np.nan, rng.normal(size=n)),
            "int": pd.array(np.where(rng.random(n) > 0.5, None, 3), dtype="Int64"),
            "flag": rng.random(n) > 0.5,
            "when": pd.date_range("2000", periods=n),
            "cat": pd.Categorical(rng.choice(["a", "b"], n)),
            "text": rng.choice(["x", "yy", None], n),
        },
        index=pd.Index(np.arange(n) * 3, name="id"),
    )
    path = tmp_path / "ok.parquet"
    df.to_parquet(path, row_group_size=97)  # several row groups
    pd.testing.assert_frame_equal(read_parquet(path), pd.read_parquet(path))
    part = read_parquet(path, columns=["nan", "u64"])
    pd.testing.assert_frame_equal(part, df[["nan", "u64"]].reset_index(drop=True))
    with pytest.raises(DataError, match="no column 'absent'"):
        read_parquet(path, columns=["absent"])
    empty = tmp_path / "empty.parquet"
    df.head(0).to_parquet(empty)
    assert read_parquet(empty).shape == (0, df.shape[1])


def test_rank_on_a_sound_file_still_runs(tmp_path, capsys):
    path = tmp_path / "ok.parquet"
    table().to_parquet(path, row_group_size=50)
    assert main(["rank", str(path), *RANK]) == 0
    assert "a" in capsys.readouterr().out

"""Damaged or lying ``.npy`` and Parquet files given to the out-of-core column readers
(``forestimp.selection._columns``): every failure is a one-line ``DataError`` naming the file,
raised before anything is sized from what the file claims.

The lies are tiny files whose headers claim 2**60 columns or rows: code that trusted them
fails at once (numpy refuses the size, no address space maps it) rather than allocating for
real, so a regression fails these tests without endangering the machine.
"""

from __future__ import annotations

import os
import struct
import threading

import numpy as np
import pytest

from forestimp.exceptions import DataError
from forestimp.selection import SequentialRandomSubspace
from forestimp.selection._columns import open_source

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # the .npy tests still run
    pa = pq = None

needs_pyarrow = pytest.mark.skipif(pa is None, reason="needs pyarrow")

# 2**60 entries: more than any address space maps, so trusting it fails without allocating.
HUGE = 2**60


def write_npy(path, header, data=b"", version=(1, 0)):
    """A .npy file with ``header`` (the text of its dict) verbatim: numpy cannot write lies."""
    text = header.encode("latin1")
    size = 2 if version == (1, 0) else 4
    text += b" " * (-(8 + size + len(text) + 1) % 64) + b"\n"
    length = len(text).to_bytes(size, "little")
    path.write_bytes(b"\x93NUMPY" + bytes(version) + length + text + data)
    return path


def header(shape, descr="<f8", fortran=False):
    return f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}"


def assert_one_line_naming(error, path):
    message = str(error.value)
    assert "\n" not in message and path.name in message, message


# -- 1. a header whose shape the file cannot hold ------------------------------------------


@pytest.mark.parametrize(
    "shape, data",
    [
        ((300, HUGE), b"\0" * 64),  # a few bytes claiming 2.7 ZB
        ((300, 10**9), b"\0" * 64),  # 2.4 TB
        ((2**40, 2**40), b""),  # n * p * itemsize overflows 64 bits
        ((3, 2), b"\0" * 40),  # truncated: 48 bytes declared
        ((3, 2), b"\0" * 56),  # trailing bytes: not what numpy wrote
    ],
    ids=["2**60 columns", "2.4 TB", "overflow", "truncated", "trailing bytes"],
)
def test_npy_shape_is_checked_against_the_file_size(tmp_path, shape, data):
    path = write_npy(tmp_path / "x.npy", header(shape), data)
    with pytest.raises(DataError, match="bytes") as error:
        open_source(str(path))
    assert_one_line_naming(error, path)


def test_srs_fails_on_a_huge_p_header_before_sizing_anything_from_it(tmp_path):
    # The old code sized arrays of p entries (found set, draw counts, C-order row buffer)
    # from the header and died in MemoryError; the check runs when the file is opened.
    path = write_npy(tmp_path / "x.npy", header((300, HUGE)), b"\0" * 64)
    with pytest.raises(DataError) as error:
        SequentialRandomSubspace(q=2, n_iterations=1, n_probes=0).fit(str(path), np.zeros(300))
    assert_one_line_naming(error, path)


# -- 2. every reader failure is a one-line DataError naming the file ------------------------

MALFORMED_NPY = {
    "unclosed string": header((3, 2))[:-1] + "'x': '''",  # tokenize.TokenError in numpy
    "syntax": header((3, 2)).replace(", }", ",, }"),
    "not a dict": "[1, 2]",
    "missing key": "{'descr': '<f8', 'shape': (3, 2)}",
    "bad descr": header((3, 2), descr="zz"),
    "bad fortran_order": header((3, 2)).replace("False", "'yes'"),
    "expression in shape": header("(3, 2 ** 80)"),
    "negative shape": header((-3, -2)),
    "nested": header("(" * 3000 + ")" * 3000),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_NPY))
def test_malformed_npy_header_is_a_data_error(tmp_path, case):
    path = write_npy(tmp_path / "x.npy", MALFORMED_NPY[case], b"\0" * 48)
    with pytest.raises(DataError) as error:
        open_source(str(path))
    assert_one_line_naming(error, path)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"GARBAGE!" * 10,  # bad magic
        b"\x93NUMPY\x01\x00\x50\x00{'descr'",  # header shorter than its length field
        b"\x93NUMPY\x02\x00" + struct.pack("<I", 2**31) + b"{",  # claims a 2 GiB header
        b"\x93NUMPY\x09\x00" + b"\0" * 80,  # unknown format version
    ],
    ids=["empty", "magic", "short header", "huge header length", "version"],
)
def test_npy_that_is_not_one_is_a_data_error(tmp_path, content):
    path = tmp_path / "x.npy"
    path.write_bytes(content)
    with pytest.raises(DataError) as error:
        open_source(str(path))
    assert_one_line_naming(error, path)


def test_npy_without_rows_is_a_data_error(tmp_path):
    # With no rows the file holds no bytes to confirm the number of columns by.
    np.save(tmp_path / "x.npy", np.zeros((0, 5)))
    path = write_npy(tmp_path / "y.npy", header((0, HUGE)))
    for p in (tmp_path / "x.npy", path):
        with pytest.raises(DataError) as error:
            open_source(str(p))
        assert_one_line_naming(error, p)
    with pytest.raises(DataError):
        SequentialRandomSubspace().fit(str(tmp_path / "x.npy"), np.zeros(0))


@pytest.mark.parametrize(
    "array",
    [np.zeros(6), np.zeros((2, 3, 1)), np.array([[1, "a"]], dtype=object), np.array([["ab"]])],
    ids=["1-D", "3-D", "object", "text"],
)
def test_npy_that_is_not_a_numeric_matrix_is_a_data_error(tmp_path, array):
    np.save(tmp_path / "x.npy", array, allow_pickle=True)
    with pytest.raises(DataError, match="x.npy"):
        open_source(str(tmp_path / "x.npy"))


@pytest.mark.parametrize("dtype", ["<f8", ">f8", "<f4", ">i4", "|b1", "<u2"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_valid_npy_still_reads_in_either_order_and_byte_order(tmp_path, dtype, order):
    X = np.arange(12).reshape(4, 3).astype(dtype)
    np.save(tmp_path / "x.npy", np.asarray(X, order=order))
    source, _ = open_source(str(tmp_path / "x.npy"))
    with source:
        assert np.array_equal(source.read([2, 0]), X[:, [2, 0]].astype(source.dtype))


def test_directory_named_npy_is_a_data_error(tmp_path):
    (tmp_path / "d.npy").mkdir()
    with pytest.raises(DataError, match="d.npy"):
        open_source(str(tmp_path / "d.npy"))


def _error_of(function, *args):
    try:
        function(*args)
    except Exception as e:
        return e
    return None


def test_fifo_named_npy_is_a_data_error_without_blocking(tmp_path):
    # Opening a FIFO for reading blocks until a writer comes: the reader must not wait.
    fifo = tmp_path / "f.npy"
    os.mkfifo(fifo)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_error_of(open_source, str(fifo))))
    worker.start()
    worker.join(2)
    if worker.is_alive():  # release the blocked open, then fail
        os.close(os.open(fifo, os.O_WRONLY))
        worker.join(5)
        pytest.fail("opening a FIFO named .npy blocked")
    assert isinstance(outcome[0], DataError), outcome


# -- Parquet --------------------------------------------------------------------------------

ROWS = 77  # an unusual count, to find it in the footer


def write_parquet(path):
    table = pa.table({"a": np.arange(ROWS, dtype=np.float64), "target": np.arange(ROWS) % 2})
    pq.write_table(table, path, write_statistics=False)
    return path


@pytest.fixture
def parquet(tmp_path):
    return write_parquet(tmp_path / "x.parquet")


def split_footer(raw):
    """The body and the footer (Thrift metadata) of the bytes of a Parquet file."""
    (length,) = struct.unpack("<I", raw[-8:-4])
    return raw[: -8 - length], raw[-8 - length : -8]


def join_footer(path, body, footer):
    path.write_bytes(body + footer + struct.pack("<I", len(footer)) + b"PAR1")


def varint(value, zigzag=True):
    z = (value << 1) ^ (value >> 63) if zigzag else value
    out = bytearray()
    while True:
        out.append(z & 0x7F | (0x80 if z > 0x7F else 0))
        z >>= 7
        if not z:
            return bytes(out)


def claim_rows(path, rows, everywhere):
    """Make the footer claim ``rows``: in the file's row count only, or also in the row
    group's and in each column chunk's value count (a consistent lie)."""
    body, footer = split_footer(path.read_bytes())
    # Thrift compact: an i64 field right after the previous one is 0x16, then a zigzag varint.
    field = b"\x16" + varint(ROWS)
    assert footer.count(field) == 4  # the file, 2 column chunks, the row group
    if everywhere:
        footer = footer.replace(field, b"\x16" + varint(rows))
    else:  # the file's row count comes first: right after the schema
        footer = footer.replace(field, b"\x16" + varint(rows), 1)
    join_footer(path, body, footer)


@needs_pyarrow
@pytest.mark.parametrize("everywhere", [False, True], ids=["file count", "consistent lie"])
@pytest.mark.parametrize("target", [None, "target"])
def test_parquet_row_count_is_checked_against_the_data(parquet, everywhere, target):
    # The old code allocated n_rows x q from the claim (and pyarrow's read_row_group reserved
    # the row group's claimed rows): 2**60 rows failed, 1000 gave uninitialised rows.
    for rows in (HUGE, 1000):
        write_parquet(parquet)
        claim_rows(parquet, rows, everywhere)
        with pytest.raises(DataError, match="rows") as error:
            open_source(str(parquet), target=target)
        assert_one_line_naming(error, parquet)


@needs_pyarrow
def test_parquet_footer_lists_are_bounded_by_the_footer(parquet):
    # A footer of a few hundred bytes claiming a schema of 10**5 elements: pyarrow builds
    # them all before it finds them missing, unless the Thrift list limit says otherwise.
    body, footer = split_footer(parquet.read_bytes())
    at = footer.index(b"\x19\x3c")  # the schema: a list of 3 structs (root, a, target)
    assert at < 8
    join_footer(parquet, body, footer[: at + 1] + b"\xfc" + varint(10**5, False) + footer[at + 2 :])
    with pytest.raises(DataError, match="limit") as error:
        open_source(str(parquet), target="target")
    assert_one_line_naming(error, parquet)


def damaged(raw):
    """The bytes of a Parquet file, damaged in each of the ways of DAMAGES."""
    body = len(split_footer(raw)[0])
    return {
        "empty": b"",
        "garbage": b"x" * 500,
        "truncated": raw[: len(raw) // 2],
        "magic": raw[:-4] + b"PAR2",
        "footer length": raw[:-8] + struct.pack("<I", 2**31) + b"PAR1",
        "footer zeroed": raw[:body] + bytes(len(raw) - body - 8) + raw[-8:],
        "pages zeroed": raw[:4] + bytes(body - 4) + raw[body:],
        "data": raw[:40] + b"\xff" * 60 + raw[100:],
    }


DAMAGES = [
    "empty",
    "garbage",
    "truncated",
    "magic",
    "footer length",
    "footer zeroed",
    "pages zeroed",
    "data",
]


@needs_pyarrow
@pytest.mark.parametrize("case", DAMAGES)
def test_damaged_parquet_is_a_data_error(parquet, case):
    parquet.write_bytes(damaged(parquet.read_bytes())[case])
    with pytest.raises(DataError) as error:
        source, _ = open_source(str(parquet), target="target")
        with source:
            source.read([0])
    assert_one_line_naming(error, parquet)


@needs_pyarrow
def test_parquet_with_duplicate_or_no_rows_is_a_data_error(tmp_path):
    path = tmp_path / "dup.parquet"
    columns = [pa.array(np.ones(5)), pa.array(np.zeros(5)), pa.array(np.arange(5) % 2)]
    pq.write_table(pa.Table.from_arrays(columns, names=["x", "x", "target"]), path)
    with pytest.raises(DataError, match="'x'") as error:
        open_source(str(path), target="target")[0].read([0, 1])
    assert_one_line_naming(error, path)
    path = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"a": np.ones(0), "target": np.ones(0)}), path)
    with pytest.raises(DataError, match="no rows"):
        SequentialRandomSubspace().fit(str(path), "target")


@needs_pyarrow
def test_directory_named_parquet_is_a_data_error(tmp_path):
    (tmp_path / "d.parquet").mkdir()
    with pytest.raises(DataError, match="d.parquet"):
        open_source(str(tmp_path / "d.parquet"))

"""Column sources: read only the requested columns of a matrix in memory or on disk.

:func:`open_source` turns what ``fit`` was given into a :class:`ColumnSource`:

* an ndarray or a pandas DataFrame (already in memory: ``read`` copies the columns);
* a ``.npy`` file, in either memory order. The header is parsed with ``numpy.lib.format`` and
  the data read with ``os.preadv`` into a preallocated buffer: no ``np.load`` of the whole
  array and no memory map, whose resident pages would accumulate in the process's RSS (and in
  a cgroup memory limit) as columns are visited.

  - Fortran order: each column is contiguous; ``read`` costs exactly ``n * q * itemsize``
    bytes (one ``preadv`` per run of adjacent columns).
  - C order: a column is strided over the whole file, so ``read`` scans every row, in blocks
    of at most ``block_bytes``, and keeps the q requested values of each row. **Each call
    reads the whole file** (``n * p * itemsize`` bytes) whatever q is; convert large C-order
    files to Fortran order once when they are read many times (Sequential Random Subspace
    reads once per iteration).
* a Parquet file, read with ``pyarrow.parquet`` column projection, in record batches of at
  most 16 MiB; ``bytes_read`` counts the compressed size of the column chunks read.

A file is checked against what its header or footer claims before anything is sized from the
claim: the shape of a ``.npy`` file must account for its size exactly, and the rows of a
Parquet file are counted in one column (the target's, or the first feature's) when it is
opened. A file that is damaged, not what its suffix says, or lying raises a DataError that
names it.

Every ``read`` returns an ``(n, q)`` Fortran-ordered array, so the engine takes each column
without a copy (``forestimp._base._as_engine_matrix``). The dtype is the stored one when it is
float32 or float64 (for all columns), float64 otherwise, so an array and the file it was saved
to give the same values. Reads are serialized by a lock: a source may be read from a prefetch
thread and from the caller, and ``bytes_read`` stays exact.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._core import DataError, InvalidParameterError
from .._files import open_regular

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Row blocks of a C-order scan: large enough for few system calls, small next to n * q.
_BLOCK_BYTES = 16 << 20
_NPY_MAGIC = b"\x93NUMPY"
# np.load's limit on a header (numpy.lib.format's max_header_size); a 2-D numeric array's
# header takes about 120 bytes.
_NPY_MAX_HEADER = 10_000
_PARQUET_MAGIC = b"PAR1"  # an encrypted footer ends with b"PARE": not read


def engine_dtype(dtypes: Sequence[np.dtype]) -> np.dtype:
    """float32 when every column is native float32, float64 otherwise (see the module doc)."""
    f32 = np.dtype(np.float32)
    return f32 if dtypes and all(d == f32 for d in dtypes) else np.dtype(np.float64)


def _check_numeric(dtype: np.dtype, what: str) -> None:
    if dtype.kind not in "biuf":
        raise DataError(f"{what} must hold numbers (bool, int or float), got dtype {dtype}.")


def _one_line(error: BaseException) -> str:
    """``error`` for a one-line message: numpy quotes the whole header it failed on, and
    pyarrow's messages span lines."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= 200 else text[:197] + "..."


def _open_regular(path: str) -> int:
    """A read-only descriptor on ``path``, a regular file (a directory or a device has no
    size to check a header against), else a DataError."""
    return open_regular(path, DataError)


class ColumnSource:
    """A matrix of ``n_rows x n_columns`` numbers of which ``read`` fetches a few columns.

    Attributes
    ----------
    n_rows, n_columns : int
    names : list of str or None
        Column names (DataFrame, Parquet), None for arrays and ``.npy`` files.
    dtype : numpy dtype
        float32 or float64: the dtype of what ``read`` returns.
    """

    n_rows: int
    n_columns: int
    names: list[str] | None = None
    dtype: np.dtype

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bytes_read = 0

    @property
    def bytes_read(self) -> int:
        """Bytes fetched so far (copied, for sources already in memory)."""
        return self._bytes_read

    def read(self, columns: Sequence[int] | np.ndarray) -> np.ndarray:
        """The ``columns`` (indices, in this order) as an ``(n_rows, len(columns))``
        Fortran-ordered array of ``dtype``."""
        cols = np.asarray(columns, dtype=np.intp).reshape(-1)
        if len(cols) and (cols.min() < 0 or cols.max() >= self.n_columns):
            raise IndexError(f"column indices must be in [0, {self.n_columns}).")
        out = np.empty((self.n_rows, len(cols)), dtype=self.dtype, order="F")
        if len(cols):  # no columns, no read (a C-order scan would read the whole file)
            with self._lock:
                self._bytes_read += self._fill(out, cols)
        return out

    def _fill(self, out: np.ndarray, cols: np.ndarray) -> int:
        """Write the columns into ``out`` and return the bytes it cost."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the file, if any."""

    def __enter__(self) -> ColumnSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ArrayColumns(ColumnSource):
    """A 2-D array already in memory (any memory order)."""

    def __init__(self, X: np.ndarray) -> None:
        super().__init__()
        _check_numeric(X.dtype, "X")
        if X.ndim != 2:
            raise DataError(f"X must be 2-D, got shape {X.shape}.")
        self._X = X
        self.n_rows, self.n_columns = X.shape
        self.dtype = engine_dtype([X.dtype])

    def _fill(self, out: np.ndarray, cols: np.ndarray) -> int:
        for k, j in enumerate(cols):
            out[:, k] = self._X[:, j]
        return out.nbytes


class FrameColumns(ColumnSource):
    """The columns of a pandas DataFrame at ``positions`` (the target, if any, left out)."""

    def __init__(self, frame: Any, positions: Sequence[int]) -> None:
        super().__init__()
        self._frame = frame
        self._positions = np.asarray(positions, dtype=np.intp)
        for j in self._positions:
            # (np.dtype of a pandas category or extension dtype is a TypeError.)
            if not isinstance(frame.dtypes.iloc[j], np.dtype):
                raise DataError(
                    f"column {frame.columns[j]!r} must hold numbers (bool, int or float), got "
                    f"dtype {frame.dtypes.iloc[j]}: pass category columns as their codes with "
                    "the model's categorical_features (docs/categorical.md)."
                )
        dtypes = [np.dtype(frame.dtypes.iloc[j]) for j in self._positions]
        for j, d in zip(self._positions, dtypes, strict=True):
            _check_numeric(d, f"column {frame.columns[j]!r}")
        self.n_rows, self.n_columns = len(frame), len(self._positions)
        self.names = [str(frame.columns[j]) for j in self._positions]
        self.dtype = engine_dtype(dtypes)

    def _fill(self, out: np.ndarray, cols: np.ndarray) -> int:
        for k, j in enumerate(cols):
            out[:, k] = self._frame.iloc[:, self._positions[j]].to_numpy(dtype=self.dtype)
        return out.nbytes


def _npy_header(fd: int, path: str) -> tuple[Any, Any, np.dtype, int]:
    """The shape, Fortran order and dtype that the header of the ``.npy`` file at ``fd``
    declares, and the offset of the data.

    The header's length is checked against the file before the header is read: numpy reads
    as many bytes as the length field says (up to 4 GiB in format 2.0), then checks them.
    What numpy's parser raises on a damaged header depends on the damage and on the numpy
    version (ValueError, SyntaxError, tokenize.TokenError, TypeError): all of it is a
    DataError.
    """
    start = os.pread(fd, 12, 0)  # magic, version, header length (a header is >= 64 bytes)
    if len(start) < 12 or start[:6] != _NPY_MAGIC:
        raise DataError(f"{path!r} is not a .npy file: it does not start with {_NPY_MAGIC!r}.")
    version = (start[6], start[7])
    # 3.0 only differs by a UTF-8 header, for non-Latin-1 field names.
    if version not in ((1, 0), (2, 0)):
        raise DataError(f"{path!r}: .npy format {version} is not read.")
    prefix = 10 if version == (1, 0) else 12
    length = int.from_bytes(start[8:prefix], "little")
    if length > _NPY_MAX_HEADER or prefix + length > os.fstat(fd).st_size:
        raise DataError(
            f"{path!r}: its .npy header claims {length} bytes, more than the file holds or "
            f"than the {_NPY_MAX_HEADER} numpy reads."
        )
    f = io.BytesIO(os.pread(fd, prefix + length, 0))
    f.seek(8)
    if version == (1, 0):
        read = np.lib.format.read_array_header_1_0
    else:
        read = np.lib.format.read_array_header_2_0
    try:
        shape, fortran, dtype = read(f)
    except Exception as e:  # whatever the parser raises: see the docstring
        raise DataError(f"{path!r} has a malformed .npy header: {_one_line(e)}") from e
    return shape, fortran, dtype, prefix + length


def _check_npy_size(path: str, shape: tuple[int, int], dtype: np.dtype, data: int) -> None:
    """Refuse a shape that the ``data`` bytes after the header do not hold exactly, before
    anything is sized from it (a few bytes of header can claim 2**60 columns).

    The shape's numbers are Python integers, so their product cannot overflow; once it
    matches the file, every offset computed from the shape lies in the file. Without rows,
    the file has no bytes to confirm its number of columns by (nor anything to select).
    """
    if min(shape) <= 0:
        raise DataError(f"{path!r} holds no data: its header declares shape {shape}.")
    declared = math.prod(shape) * dtype.itemsize
    if declared != data:
        raise DataError(
            f"{path!r}: its header declares shape {shape} of {dtype}, {declared} bytes of data, "
            f"but {data} bytes follow the header (truncated or damaged?)."
        )


class NpyColumns(ColumnSource):
    """A 2-D ``.npy`` file read with positional reads (see the module doc for the costs)."""

    def __init__(self, path: str | os.PathLike[str], block_bytes: int = _BLOCK_BYTES) -> None:
        super().__init__()
        self._path = os.fspath(path)
        self._fd = _open_regular(self._path)
        try:
            shape, fortran, stored, self._offset = _npy_header(self._fd, self._path)
            if stored.hasobject:
                raise DataError(f"{self._path!r} holds Python objects, not numbers.")
            _check_numeric(stored, f"{self._path!r}")
            if len(shape) != 2:
                raise DataError(f"{self._path!r} must hold a 2-D array, got shape {shape}.")
            _check_npy_size(self._path, shape, stored, os.fstat(self._fd).st_size - self._offset)
        except BaseException:
            os.close(self._fd)
            raise
        self.n_rows, self.n_columns = (int(s) for s in shape)
        self.fortran_order = bool(fortran)
        self._stored = stored
        self.dtype = engine_dtype([stored])
        self._block_rows = max(1, block_bytes // max(1, self.n_columns * stored.itemsize))

    def _pread(self, buf: np.ndarray, offset: int) -> None:
        # ``buf`` is contiguous in one order or the other; its bytes are those of the file.
        view = (buf if buf.flags.c_contiguous else buf.T).data.cast("B")
        done = 0
        while done < len(view):  # preadv may return short counts
            got = os.preadv(self._fd, [view[done:]], offset + done)
            if got == 0:  # checked at open: the file was truncated since
                raise DataError(f"{self._path!r} is shorter than its header says (truncated?).")
            done += got

    def _fill(self, out: np.ndarray, cols: np.ndarray) -> int:
        if self.fortran_order:
            return self._fill_fortran(out, cols)
        return self._fill_c(out, cols)

    def _fill_fortran(self, out: np.ndarray, cols: np.ndarray) -> int:
        n, size = self.n_rows, self._stored.itemsize
        direct = self._stored == out.dtype
        k = 0
        while k < len(cols):
            end = k + 1  # a run of adjacent columns is one contiguous range of the file
            while end < len(cols) and cols[end] == cols[end - 1] + 1:
                end += 1
            target = out[:, k:end] if direct else np.empty((n, end - k), self._stored, "F")
            self._pread(target, self._offset + int(cols[k]) * n * size)
            if not direct:
                out[:, k:end] = target
            k = end
        return n * len(cols) * size

    def _fill_c(self, out: np.ndarray, cols: np.ndarray) -> int:
        n, p = self.n_rows, self.n_columns
        rows = self._block_rows
        buf = np.empty(min(rows, n) * p, dtype=self._stored)
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            block = buf[: (r1 - r0) * p]
            self._pread(block, self._offset + r0 * p * self._stored.itemsize)
            out[r0:r1] = block.reshape(r1 - r0, p)[:, cols]
        return n * p * self._stored.itemsize

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(
            "Reading Parquet files needs pyarrow: pip install 'forestimp[parquet]'."
        ) from exc
    return pq


def _parquet_footer_length(path: str) -> int:
    """The length of the footer (the Thrift-encoded metadata) of the Parquet file at
    ``path``, checked against the file's size."""
    fd = _open_regular(path)
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, 8, max(0, size - 8))
    finally:
        os.close(fd)
    if size < 12 or tail[4:] != _PARQUET_MAGIC:
        raise DataError(f"{path!r} is not a Parquet file: it does not end with {_PARQUET_MAGIC!r}.")
    length = int.from_bytes(tail[:4], "little")
    if length + 12 > size:
        raise DataError(f"{path!r}: its footer claims {length} bytes, the file has {size}.")
    return length


def open_parquet(path: str) -> Any:
    """pyarrow's ``ParquetFile`` at ``path``, its footer checked against the file's size
    first. Thrift lists and strings are bounded by the footer's length: pyarrow builds every
    element a list claims (10**6 by default) before finding them missing. Page checksums are
    verified where the writer left them (``write_page_checksum=True``)."""
    import inspect

    pq = _pyarrow_parquet()
    limit = max(1, _parquet_footer_length(path))
    options = {"thrift_container_size_limit": limit, "thrift_string_size_limit": limit}
    if "page_checksum_verification" in inspect.signature(pq.ParquetFile).parameters:
        options["page_checksum_verification"] = True  # pyarrow >= 14
    with _parquet_errors(path):
        return pq.ParquetFile(path, **options)


def parquet_rows(file: Any, path: str, empty_ok: bool = False) -> int:
    """The rows the footer of ``file`` claims, once its row groups add up to them (a
    DataError for a file of no rows, unless ``empty_ok``)."""
    meta = file.metadata
    groups = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    if min(groups, default=0) < 0 or sum(groups) != meta.num_rows:
        raise DataError(
            f"{path!r}: its footer claims {meta.num_rows} rows, its row groups {sum(groups)}."
        )
    if meta.num_rows == 0 and not empty_ok:
        raise DataError(f"{path!r} holds no rows.")
    return int(meta.num_rows)


@contextlib.contextmanager
def _parquet_errors(path: str) -> Iterator[None]:
    """pyarrow's errors on a damaged file (OSError, ArrowInvalid, ...) as a DataError that
    names the file."""
    import pyarrow as pa

    try:
        yield
    except (OSError, pa.ArrowException) as e:
        raise DataError(f"{path!r} is not a readable Parquet file: {_one_line(e)}") from e


class ParquetColumns(ColumnSource):
    """A Parquet file read by column projection, in record batches."""

    def __init__(self, path: str | os.PathLike[str], target: str | None = None) -> None:
        super().__init__()
        self._path = os.fspath(path)
        self._file = open_parquet(self._path)
        try:
            with _parquet_errors(self._path):
                self._open(self._path, target)
        except BaseException:
            self._file.close()
            raise

    def _open(self, path: str, target: str | None) -> None:
        schema = self._file.schema_arrow
        all_names = list(schema.names)
        repeated = [name for name, count in Counter(all_names).items() if count > 1]
        if repeated:  # columns are read by name
            raise DataError(f"{path!r} has several columns named {repeated[0]!r}.")
        if target is not None and target not in all_names:
            raise DataError(
                f"Target column {target!r} is not in {path!r}; its columns are "
                f"{all_names[:10]}{' ...' if len(all_names) > 10 else ''}."
            )
        # A pandas index written as a column (not a RangeIndex) is not a feature.
        index = (schema.pandas_metadata or {}).get("index_columns", [])
        skip = {target} | {name for name in index if isinstance(name, str)}
        self.target = target
        self._fields = [j for j, name in enumerate(all_names) if name not in skip]
        dtypes = []
        for j in self._fields:
            field = schema.field(j)
            try:
                dtypes.append(np.dtype(field.type.to_pandas_dtype()))
            except (NotImplementedError, TypeError):
                dtypes.append(np.dtype(object))
            _check_numeric(dtypes[-1], f"column {field.name!r}")
        self.n_rows, self.n_columns = parquet_rows(self._file, path), len(self._fields)
        self.names = [all_names[j] for j in self._fields]
        self.dtype = engine_dtype(dtypes)
        # The footer's row count is a claim (a few bytes claim 2**60 rows): count the rows of
        # one column before anything is sized from it.
        self._y = None if target is None else self._column(target)
        if target is None and self.names:
            for _ in self._batches(self.names[:1]):
                pass

    def _batches(self, names: list[str]) -> Iterator[Any]:
        """The ``names`` columns in record batches of at most ``_BLOCK_BYTES`` (at 8 bytes a
        value), checked to add up to ``n_rows``.

        Not ``read_row_group``: it reserves memory for as many rows as the footer claims for
        the group; a batch reserves its own.
        """
        rows, done = max(1, _BLOCK_BYTES // (8 * len(names))), 0
        for batch in self._file.iter_batches(batch_size=rows, columns=names):
            done += batch.num_rows
            if done > self.n_rows:
                break
            yield batch
        if done != self.n_rows:
            raise DataError(
                f"{self._path!r}: its footer claims {self.n_rows} rows, but its column "
                f"{names[0]!r} holds {'more' if done > self.n_rows else done}."
            )

    def _column(self, name: str) -> np.ndarray:
        import pyarrow as pa

        return pa.chunked_array([b.column(name) for b in self._batches([name])]).to_numpy()

    def read_target(self) -> np.ndarray:
        """The target column, whole (read when the file was opened)."""
        if self._y is None:
            raise InvalidParameterError("No target column was named.")
        return self._y

    def _fill(self, out: np.ndarray, cols: np.ndarray) -> int:
        fields = [self._fields[j] for j in cols]
        names = [self._file.schema_arrow.names[j] for j in fields]
        r0 = 0
        with _parquet_errors(self._path):
            for batch in self._batches(list(dict.fromkeys(names))):  # each column once
                r1 = r0 + batch.num_rows
                for k, name in enumerate(names):
                    values = batch.column(name).to_numpy(zero_copy_only=False)
                    out[r0:r1, k] = values.astype(self.dtype, copy=False)
                r0 = r1
        # What a projection reads: the compressed column chunks (flat schema: numeric
        # columns only, so arrow field j is Parquet column j).
        meta = self._file.metadata
        groups = (meta.row_group(g) for g in range(meta.num_row_groups))
        return sum(group.column(j).total_compressed_size for group in groups for j in fields)

    def close(self) -> None:
        self._file.close()


def open_source(X: Any, *, target: str | None = None) -> tuple[ColumnSource, np.ndarray | None]:
    """The column source for ``X`` and, when ``target`` names one of its columns (DataFrame
    or Parquet file), that column, which is then left out of the features.

    Raises
    ------
    FileNotFoundError
        ``X`` is a path to no file.
    InvalidParameterError
        ``X`` is a path with another suffix than ``.npy`` / ``.parquet``, or ``target`` is
        given for an array or ``.npy`` file.
    DataError
        The data is not a 2-D numeric matrix, or ``target`` is not one of its columns, or
        the file is damaged or holds less (or more) than its header or footer claims.
    """
    if isinstance(X, (str, os.PathLike)):
        suffix = os.path.splitext(os.fspath(X))[1].lower()
        if suffix in (".parquet", ".pq"):
            source = ParquetColumns(X, target)
            return source, (source.read_target() if target is not None else None)
        if suffix != ".npy":
            raise InvalidParameterError(
                f"X must be an array, a DataFrame, or a path to a .npy or .parquet file; got "
                f"{os.fspath(X)!r}."
            )
        if target is not None:
            raise InvalidParameterError(
                "y names a column only for a DataFrame or a Parquet file; pass y as an array."
            )
        return NpyColumns(X), None
    if hasattr(X, "iloc") and hasattr(X, "columns"):
        names = list(X.columns)
        if target is not None and target not in names:
            raise DataError(f"Target column {target!r} is not a column of X.")
        keep = [j for j, name in enumerate(names) if target is None or name != target]
        y = X[target].to_numpy() if target is not None else None
        return FrameColumns(X, keep), y
    if target is not None:
        raise InvalidParameterError(
            "y names a column only for a DataFrame or a Parquet file; pass y as an array."
        )
    if hasattr(X, "tocsr") or hasattr(X, "todense"):
        raise DataError("Sparse X is not supported by this selector; pass a dense array.")
    return ArrayColumns(np.asarray(X)), None

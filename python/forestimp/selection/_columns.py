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
* a Parquet file, read with ``pyarrow.parquet`` column projection, one row group at a time;
  ``bytes_read`` counts the compressed size of the column chunks read.

Every ``read`` returns an ``(n, q)`` Fortran-ordered array, so the engine takes each column
without a copy (``forestimp._base._as_engine_matrix``). The dtype is the stored one when it is
float32 or float64 (for all columns), float64 otherwise, so an array and the file it was saved
to give the same values. Reads are serialized by a lock: a source may be read from a prefetch
thread and from the caller, and ``bytes_read`` stays exact.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import DataError, InvalidParameterError

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# Row blocks of a C-order scan: large enough for few system calls, small next to n * q.
_BLOCK_BYTES = 16 << 20


def engine_dtype(dtypes: Sequence[np.dtype]) -> np.dtype:
    """float32 when every column is native float32, float64 otherwise (see the module doc)."""
    f32 = np.dtype(np.float32)
    return f32 if dtypes and all(d == f32 for d in dtypes) else np.dtype(np.float64)


def _check_numeric(dtype: np.dtype, what: str) -> None:
    if dtype.kind not in "biuf":
        raise DataError(f"{what} must hold numbers (bool, int or float), got dtype {dtype}.")


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


class NpyColumns(ColumnSource):
    """A 2-D ``.npy`` file read with positional reads (see the module doc for the costs)."""

    def __init__(self, path: str | os.PathLike[str], block_bytes: int = _BLOCK_BYTES) -> None:
        super().__init__()
        self._fd = os.open(path, os.O_RDONLY)
        try:
            with open(self._fd, "rb", closefd=False) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, fortran, stored = np.lib.format.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, fortran, stored = np.lib.format.read_array_header_2_0(f)
                else:  # 3.0 only differs by a UTF-8 header, for non-Latin-1 field names
                    raise DataError(f"{os.fspath(path)!r}: .npy format {version} is not read.")
                self._offset = f.tell()
            if stored.hasobject:
                raise DataError(f"{os.fspath(path)!r} holds Python objects, not numbers.")
            _check_numeric(stored, f"{os.fspath(path)!r}")
            if len(shape) != 2:
                raise DataError(f"{os.fspath(path)!r} must hold a 2-D array, got shape {shape}.")
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
            if got == 0:
                raise DataError("the .npy file is shorter than its header says (truncated?).")
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


class ParquetColumns(ColumnSource):
    """A Parquet file read by column projection, one row group at a time."""

    def __init__(self, path: str | os.PathLike[str], target: str | None = None) -> None:
        super().__init__()
        pq = _pyarrow_parquet()
        self._file = pq.ParquetFile(path)
        try:
            self._open(os.fspath(path), target)
        except BaseException:
            self._file.close()
            raise

    def _open(self, path: str, target: str | None) -> None:
        schema = self._file.schema_arrow
        all_names = list(schema.names)
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
        self.n_rows, self.n_columns = int(self._file.metadata.num_rows), len(self._fields)
        self.names = [all_names[j] for j in self._fields]
        self.dtype = engine_dtype(dtypes)

    def read_target(self) -> np.ndarray:
        """The target column, whole."""
        if self.target is None:
            raise InvalidParameterError("No target column was named.")
        return self._file.read(columns=[self.target]).column(0).to_numpy()

    def _fill(self, out: np.ndarray, cols: np.ndarray) -> int:
        fields = [self._fields[j] for j in cols]
        names = [self._file.schema_arrow.names[j] for j in fields]
        meta = self._file.metadata
        r0 = cost = 0
        for g in range(self._file.num_row_groups):
            table = self._file.read_row_group(g, columns=names)
            r1 = r0 + table.num_rows
            for k, name in enumerate(names):
                out[r0:r1, k] = table.column(name).to_numpy().astype(self.dtype, copy=False)
            # What a projection reads: the compressed column chunks (flat schema: numeric
            # columns only, so arrow field j is Parquet column j).
            group = meta.row_group(g)
            cost += sum(group.column(j).total_compressed_size for j in fields)
            r0 = r1
        return cost

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
        The data is not a 2-D numeric matrix, or ``target`` is not one of its columns.
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

"""A Parquet file read whole (or some of its columns) into a DataFrame, checked against
what its footer claims: the one reader of ``forestimp rank``, ``forestimp select`` and the
Parquet paths of :mod:`forestimp.dask`.

``pandas.read_parquet`` trusts the footer: a truncated file ends in a pyarrow traceback, a
footer claiming 2**60 rows allocates for them, and bytes overwritten inside a data page are
often read as other numbers without a word. Here the footer is checked against the file's
size before it is parsed (:func:`forestimp.selection._columns.open_parquet`), each row group
is read in record batches and counted against its claimed rows, and the numeric columns of
each row group are checked against the statistics the writer recorded for them (values
within ``[min, max]``, as many nulls as counted). A file that fails raises a
:class:`~forestimp.exceptions.DataError` that names it.

What no check can see without page checksums (pyarrow writes them with
``write_page_checksum=True``; they are verified where present): a damaged value that stays
within its column's range or becomes NaN, and damage to a text column.
"""

from __future__ import annotations

import os
from typing import Any

from ._core import DataError
from .selection._columns import _BLOCK_BYTES, _parquet_errors, open_parquet, parquet_rows


def read_parquet(path: str | os.PathLike[str], columns: list[str] | None = None) -> Any:
    """The Parquet file at ``path`` as ``pandas.read_parquet(path, columns=columns)`` gives
    it (its pandas index and dtypes restored when ``columns`` is None).

    Raises
    ------
    ImportError
        pyarrow is not installed.
    DataError
        The file is not Parquet, is truncated or damaged, lacks one of ``columns``, or
        holds other rows or values than its footer records.
    """
    import pyarrow as pa

    path = os.fspath(path)
    file = open_parquet(path)
    try:
        with _parquet_errors(path):
            schema = file.schema_arrow
            if columns is not None:
                absent = [c for c in columns if c not in schema.names]
                if absent:
                    raise DataError(f"{path!r} has no column {', '.join(map(repr, absent))}.")
                schema = pa.schema([schema.field(c) for c in columns])
            batches = _checked_batches(file, path, list(schema.names))
            table = pa.Table.from_batches(batches, schema=schema)
    finally:
        file.close()
    try:
        return table.to_pandas()
    except (ValueError, TypeError, KeyError, IndexError) as e:
        # The data were checked: what fails here is the pandas metadata in the footer.
        raise DataError(f"{path!r}: its pandas metadata is damaged ({e}).") from e


def _checked_batches(file: Any, path: str, names: list[str]) -> list[Any]:
    """Every row group's record batches of ``names``, each group counted against its
    claimed rows and checked against its recorded statistics."""
    import pyarrow as pa

    parquet_rows(file, path, empty_ok=True)  # the groups add up to the file's claim
    meta = file.metadata
    size = max(1, _BLOCK_BYTES // (8 * max(1, len(names))))
    out = []
    for g in range(meta.num_row_groups):
        claimed = meta.row_group(g).num_rows
        group, done = [], 0
        # Batch by batch, not read_row_group: that reserves the rows the group claims.
        for batch in file.iter_batches(batch_size=size, row_groups=[g], columns=names):
            done += batch.num_rows
            if done > claimed:
                break
            group.append(batch)
        if done != claimed:
            held = "more" if done > claimed else done
            raise DataError(
                f"{path!r}: its footer claims {claimed} rows in row group {g}, which holds {held}."
            )
        if group:
            _check_statistics(meta.row_group(g), pa.Table.from_batches(group), path, g)
        out.extend(group)
    return out


def _check_statistics(group: Any, table: Any, path: str, g: int) -> None:
    """Raise DataError when a numeric column of row group ``g`` holds a value outside the
    ``[min, max]`` its footer records, or another number of nulls. Bounds may be loose (a
    writer may widen them), so only values outside them are damage; NaN is in no bound."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for i in range(group.num_columns):
        chunk = group.column(i)
        name = chunk.path_in_schema
        stats = chunk.statistics
        if stats is None or name not in table.column_names:
            continue  # a nested leaf (a dotted path), or a column not read
        column = table.column(name)
        kind = column.type
        if not (pa.types.is_integer(kind) or pa.types.is_float32(kind)
                or pa.types.is_float64(kind) or pa.types.is_boolean(kind)):  # fmt: skip
            continue  # min_max has no float16 kernel; other types' statistics are not numbers
        if stats.has_null_count and stats.null_count != column.null_count:
            raise DataError(
                f"{path!r} is damaged: its column {name!r} holds {column.null_count} missing "
                f"values in row group {g}, its footer records {stats.null_count}."
            )
        if not stats.has_min_max or column.null_count == len(column):
            continue
        found = pc.min_max(column)
        low, high = found["min"].as_py(), found["max"].as_py()
        if low < stats.min or high > stats.max:
            raise DataError(
                f"{path!r} is damaged: its column {name!r} holds values in [{low}, {high}] "
                f"in row group {g}, outside the range its footer records, "
                f"[{stats.min}, {stats.max}]."
            )

"""Columns that hold nothing take no memory: all null, all zero, every list empty.

Many columns of a trials table say nothing about a set: no suite or version recorded, no
retries, no handoffs, no tool errors. Made by a query, each still fills a buffer per row (a
16-byte view per string, 8 bytes per count or list offset: 30–61 MiB each at 4M trials), and a
table of millions of trials holds a dozen of them. Made anew as zeroed buffers, the same
columns cost nothing: the system gives a zeroed buffer pages only when something writes to it,
and nothing does (a column is read, never changed in place). The values, types and names stay
exactly those of the column replaced.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from assay.store import int64_array

__all__ = ["unwritten", "with_unwritten_columns"]


def with_unwritten_columns(table: pl.DataFrame) -> pl.DataFrame:
    """``table`` with each column that holds nothing made anew by :func:`unwritten`."""
    made = [c for c in (unwritten(s) for s in table.iter_columns()) if c is not None]
    return table.with_columns(made) if made else table


def unwritten(column: pl.Series) -> pl.Series | None:
    """``column`` made anew in zeroed buffers, if it holds nothing; else None.

    Nothing is: every value null; every value the integer 0; every value an empty list.
    """
    rows, nulls = column.len(), column.null_count()
    if not rows:
        return None
    if nulls == rows:
        return pl.Series(column.name, [], column.dtype).extend_constant(None, rows)
    if nulls:
        return None
    dtype = column.dtype
    if dtype.is_integer() and column.min() == 0 and column.max() == 0:
        return pl.zeros(rows, dtype, eager=True).alias(column.name)
    if isinstance(dtype, pl.List) and column.list.len().max() == 0:
        return _empty_lists(column.name, dtype, rows)
    return None


def _empty_lists(name: str, dtype: pl.List, rows: int) -> pl.Series | None:
    """``rows`` empty lists of ``dtype``: offsets all zero (numpy's zeroed array, shared)."""
    offsets = int64_array(np.zeros(rows + 1, dtype=np.int64))
    values = pl.Series([], dtype=dtype.inner).to_arrow(compat_level=pl.CompatLevel.newest())
    made = pl.Series(name, pa.LargeListArray.from_arrays(offsets, values))
    # Polars takes Arrow's offsets as they are only for types it holds as Arrow does; for
    # others it would convert (and write), so those keep the column they had.
    return made if made.dtype == dtype else None

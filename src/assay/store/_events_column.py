"""A bucket's ``events`` column read by pyarrow (:func:`events_column`).

The spans' events are a list of structs holding a list of structs (the attributes), ten
leaf columns. Polars' reader decodes that column at 0.21–0.25 CPU-s per million spans where
most spans hold no event; pyarrow's, one thread, at 0.07–0.09 (a file of 1M spans of the
bench shapes, docs/scale.md). The rest of a bucket's columns are flat, and Polars reads them
faster: only this column is read here.

The column comes in the order of the bucket's scan (:func:`~assay.store.scan_bucket`): its
files in order, each whole or its row ranges. Where that order cannot be matched exactly — a
file in an object store, a file whose events column has another type (Polars' scan casts it),
a range that is not whole row groups — the reader answers None, and the caller reads the
events with the rest of the scan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from assay.store import _schema as s
from assay.store._arrow import int64_array
from assay.store._paths import is_remote

__all__ = ["EventsColumn", "HeldEvents", "events_column"]


@dataclass(frozen=True, slots=True)
class HeldEvents:
    """The spans of a scan that hold events: where they are among its rows, and their events."""

    rows: pl.Series
    """Their positions among the scan's rows, in order."""
    events: pl.Series
    """Their ``events``, in the same order."""
    spans: int
    """Every span read, holding events or not (the scan's row count)."""


EventsColumn = Callable[[], "HeldEvents | None"]
"""Reads the spans of a scan that hold events (:class:`HeldEvents`); None where it cannot."""


def events_column(
    files: Sequence[str], row_ranges: Sequence[Sequence[tuple[int, int]]] | None = None
) -> EventsColumn | None:
    """The reader of the events of ``files`` (each whole, or its ``(offset, rows)`` ranges).

    None at once when some file lies in an object store (Polars reads those).
    """
    if any(is_remote(f) for f in files):
        return None
    listed = tuple(files)
    ranges = tuple(tuple(r) for r in row_ranges) if row_ranges is not None else None
    return lambda: _read(listed, ranges)


@cache
def _events_type() -> pa.DataType:
    return s.SPANS_SCHEMA.field(s.EVENTS).type


def _read(
    files: tuple[str, ...], row_ranges: tuple[tuple[tuple[int, int], ...], ...] | None
) -> HeldEvents | None:
    # A row group at a time, only its spans holding events kept: the column of every span
    # decoded at once would hold a file's worth of Arrow's buffers (1M spans: +0.2 GiB).
    rows: list[npt.NDArray[np.int64]] = []
    chunks: list[pa.Array] = []
    offset = 0
    for at, path in enumerate(files):
        parquet = pq.ParquetFile(path)
        schema = parquet.schema_arrow
        index = schema.get_field_index(s.EVENTS)
        if index < 0 or schema.field(index).type != _events_type():
            return None
        ranges = row_ranges[at] if row_ranges is not None else ()
        groups = _row_groups(parquet.metadata, ranges) if ranges else None
        if groups is None:
            if ranges:
                return None
            groups = list(range(parquet.metadata.num_row_groups))
        for group in groups:
            column = parquet.read_row_group(group, columns=[s.EVENTS], use_threads=False)[0]
            found = _holding(column)
            if found.size:
                rows.append(found + offset)
                chunks.extend(column.take(int64_array(found)).chunks)
            offset += len(column)
    events = pl.from_arrow(pa.chunked_array(chunks, _events_type()))
    assert isinstance(events, pl.Series)
    found_rows = np.concatenate(rows) if rows else np.empty(0, dtype=np.int64)
    return HeldEvents(pl.Series("_row", found_rows), events.alias(s.EVENTS), offset)


def _holding(column: pa.ChunkedArray) -> npt.NDArray[np.int64]:
    """The positions of the lists of ``column`` that hold something (a null list holds nothing).

    Read from the lists' offsets and validity, not by Arrow's compute functions: their first
    scalar, or an array's ``to_numpy``, makes pyarrow import pandas (see
    :mod:`assay.store._arrow`).
    """
    found: list[npt.NDArray[np.int64]] = []
    start = 0
    for chunk in column.chunks:
        validity, offsets_buffer = chunk.buffers()[:2]
        offsets = np.frombuffer(
            offsets_buffer, dtype=np.int32, count=len(chunk) + 1, offset=chunk.offset * 4
        )
        held = np.diff(offsets) > 0
        if chunk.null_count:
            bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            held &= bits[chunk.offset : chunk.offset + len(chunk)].astype(bool)
        found.append(np.flatnonzero(held) + start)
        start += len(chunk)
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _row_groups(metadata: pq.FileMetaData, ranges: Sequence[tuple[int, int]]) -> list[int] | None:
    """The row groups that make up ``ranges`` exactly, in order; None if they do not."""
    sizes = [metadata.row_group(g).num_rows for g in range(metadata.num_row_groups)]
    starts: dict[int, int] = {}
    offset = 0
    for group, size in enumerate(sizes):
        starts[offset] = group
        offset += size
    chosen: list[int] = []
    for start, rows in ranges:
        at, end = start, start + rows
        while at < end and at in starts:
            chosen.append(starts[at])
            at += sizes[starts[at]]
        if at != end:
            return None
    return chosen

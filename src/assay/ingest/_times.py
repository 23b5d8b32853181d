"""Span times far from the others: named after an import, never dropped.

A time in the wrong unit is the usual cause: OTLP times are nanoseconds, so microseconds,
milliseconds or seconds written there land in January 1970; a host with a broken clock, or a
field left at a sentinel, puts one span decades from the rest of its trace. The formats whose
times carry a unit of their own (Jaeger, Zipkin, MLflow, Phoenix, Langfuse) refuse a time before
2000 as they read it (:func:`assay.ingest._build.checked_time`); an OTLP time is a plain count of
nanoseconds, valid by the protocol, so it is kept as read — and said. Three checks, on the
spans an import wrote:

1. a start before 2000 (no span of an AI agent is older: :data:`assay.conventions.EARLIEST_START`);
2. a start more than :data:`TRACE_SPREAD` from its trace (no agent's trace lasts a year),
   the trace being read at its span nearest the set's median start — of a trace's two spans
   decades apart, the odd one is the one far from every other trace;
3. a trace more than :data:`SET_SPREAD` from the set's median start (an import of a few
   years' archives is ordinary; decades apart is a unit or a clock).

Cost: the Parquet footers' statistics give the set's earliest and latest start, so a set whose
starts all lie within a year from 2000 on — almost every import — is cleared without reading a
row. Otherwise two columns are read (the trace id and the start), once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

import polars as pl
import pyarrow.parquet as pq

from assay.conventions import EARLIEST_START
from assay.ingest._build import moment
from assay.store import schema as s

__all__ = ["SET_SPREAD", "TRACE_SPREAD", "far_times"]

_YEAR: Final = 365 * 86_400 * 1_000_000_000
TRACE_SPREAD: Final = _YEAR
"""A span starting further than this from its trace (read at its span nearest the set's
median start) is far from its trace."""
SET_SPREAD: Final = 20 * _YEAR
"""A trace further than this from the set's median start is far from the set."""
_EXAMPLES: Final = 3


def _years(nanos: int) -> str:
    years = abs(nanos) / _YEAR
    return f"{years:.0f} years" if years >= 2 else f"{abs(nanos) / (_YEAR / 365):.0f} days"


def _extent(files: Sequence[Path]) -> tuple[int, int] | None:
    """The earliest and latest start in ``files`` by their footers; None when one is unknown."""
    low: int | None = None
    high: int | None = None
    for path in files:
        metadata = pq.ParquetFile(path).metadata
        column = metadata.schema.names.index(s.START_TIME)
        for group in range(metadata.num_row_groups):
            stats = metadata.row_group(group).column(column).statistics
            if stats is None or not stats.has_min_max:
                return None
            low = stats.min if low is None else min(low, stats.min)
            high = stats.max if high is None else max(high, stats.max)
    return None if low is None or high is None else (int(low), int(high))


def far_times(files: Sequence[Path]) -> str | None:
    """A warning naming the spans of ``files`` whose start is far from the others, else None.

    Args:
        files: The spans files an import wrote.
    """
    if not files:
        return None
    extent = _extent(files)
    if extent is not None and extent[0] >= EARLIEST_START and extent[1] - extent[0] <= TRACE_SPREAD:
        return None
    start = pl.col(s.START_TIME)
    spans = (
        pl.scan_parquet(list(files), hive_partitioning=False)
        .select(pl.col(s.TRACE_ID), start)
        .collect()
    )
    parts: list[str] = []
    early = spans.filter(start < EARLIEST_START)
    if early.height:
        first = early.row(0, named=True)
        parts.append(
            f"{early.height} start before 2000 (e.g. trace {first[s.TRACE_ID]} at "
            f"{moment(first[s.START_TIME])}: OTLP times are nanoseconds, so microseconds, "
            "milliseconds or seconds land in 1970)"
        )
    # Which of two spans is the odd one: the one further from the rest of the set. So each
    # trace is read from its span nearest the set's median start, never from its own median.
    centre = int(spans.select(start.median()).item())
    nearest = start.sort_by((start - centre).abs()).first().over(s.TRACE_ID)
    spans = spans.with_columns(nearest.alias("_ref"), (start - nearest).alias("_away"))
    away = spans.filter(pl.col("_away").abs() > TRACE_SPREAD)
    if away.height:
        traces = away[s.TRACE_ID].n_unique()
        first = away.row(0, named=True)
        parts.append(
            f"{away.height} start more than a year from the other spans of their trace "
            f"({traces} trace(s); e.g. in trace {first[s.TRACE_ID]}, one at "
            f"{moment(first[s.START_TIME])}, {_years(first['_away'])} from the others)"
        )
    lonely = spans.filter((pl.col("_ref") - centre).abs() > SET_SPREAD)
    if lonely.height:
        ids = lonely[s.TRACE_ID].unique().sort()
        names = ", ".join(ids.head(_EXAMPLES).to_list())
        parts.append(
            f"{lonely.height} lie in {ids.len()} trace(s) more than 20 years from the rest "
            f"of the set, whose median span starts at {moment(centre)} (e.g. {names})"
        )
    if not parts:
        return None
    return (
        "span times far from the others, kept as read: "
        + "; ".join(parts)
        + " — durations, orders and date partitions that use them are wrong; check the "
        "exporter's time unit and clock (docs/reliability.md)"
    )

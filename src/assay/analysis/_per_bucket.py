"""Trials bucket by bucket: one bucket's trials, and one trials table from all the buckets'.

Both engines (:mod:`._engines` here, :mod:`._spark` inside Spark) run the spans → trials
function on one bucket of whole traces at a time and put the tables together here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt
import polars as pl

from assay.analysis import _columns as tc
from assay.analysis._attribute import attribute_as_string
from assay.analysis._in_order import taken_in_order
from assay.analysis._trials import NoTrialSpans, Trials
from assay.analysis._unwritten import unwritten
from assay.analysis._waiting import ColumnWaiting, Packed, columns_waiting
from assay.errors import SchemaError
from assay.quality import DataQuality, Finding, Severity
from assay.store import EventsColumn


class TrialsFunction(Protocol):
    """Spans of whole traces → their trials table and findings.

    With ``screen_repeats`` it raises :class:`SpansMayRepeat` when some span id repeats;
    ``events`` reads the spans' events faster than the scan (see
    :func:`~assay.analysis._trials.read_trials`).
    """

    def __call__(
        self,
        spans: pl.LazyFrame,
        *,
        screen_repeats: bool = False,
        events: EventsColumn | None = None,
    ) -> Trials: ...


COMPACT_TOOLS = pl.List(pl.Categorical)
"""Tool sequences as a dictionary (4 bytes a call, not 16) while many buckets wait, and through
the analysis until a reader asks for strings (:func:`tools_as_strings`)."""


def bucket_trials(
    spans: pl.LazyFrame,
    build: TrialsFunction,
    test_attribute: str,
    *,
    screen_repeats: bool = False,
    events: EventsColumn | None = None,
) -> Trials | None:
    """The trials of one bucket, or None when the bucket holds no trial span at all.

    A bucket without trials is normal (a set with few traces, or traces without trials); the
    set as a whole must still hold some, which :func:`concat_trials` checks. With
    ``screen_repeats``, :class:`SpansMayRepeat` is raised when some span id repeats. ``events``
    reads the bucket's events (:func:`assay.store.bucket_events`).
    """
    try:
        return build(spans, screen_repeats=screen_repeats, events=events)
    except SchemaError:
        has_trials = spans.select(attribute_as_string(test_attribute).is_not_null().any())
        if has_trials.collect().item():
            raise
        return None


def concat_trials(
    tables: Sequence[Trials | Packed | None], spans_read: Callable[[], int], test_attribute: str
) -> Trials:
    """One trials table from the buckets' tables, in a fixed order, with their findings.

    The order is that of :func:`trials_from_spans` (test, start time, trial index), with the
    trace and span ids breaking ties, so it does not depend on how traces were bucketed.
    ``spans_read`` counts the set's spans, for the message when no bucket held a trial.
    Findings of one kind from several buckets become one finding (see :func:`merge_findings`).
    Tool sequences stay as the buckets held them (see :func:`tools_as_strings`).
    A list ``tables`` is emptied on the way, so that the buckets' tables (packed or not) are
    freed column by column as the set's table is sorted.

    Raises:
        NoTrialSpans: No bucket held a trial span.
    """
    found = [t for t in tables if t is not None]
    if not found:
        raise NoTrialSpans(
            f"no trial spans: none of the {spans_read()} spans read carries {test_attribute}"
        )
    if isinstance(tables, list):
        tables.clear()
    kept = [t.trials if isinstance(t, Packed) else t for t in found]
    quality = merge_findings([t.data_quality for t in kept])
    # Known for the set only if known for every bucket (Spark's tables do not carry them).
    known = [t.unnamed_calls for t in kept if t.unnamed_calls is not None]
    unnamed = pl.concat(known) if len(known) == len(kept) else None
    schema = kept[0].table.schema
    same = all(t.table.schema == schema for t in kept)
    del kept
    if same:
        # Tables of one schema (the usual case): each column is put together from the
        # buckets' pieces only when its turn to be sorted comes, no column copied before.
        held = columns_waiting(found)
    else:
        # A relaxed concatenation copies the columns (4M trials: 0.35 s, +0.56 GiB).
        whole = [t.unpacked() if isinstance(t, Packed) else t for t in found]
        found.clear()
        table = pl.concat([t.table for t in whole], how="diagonal_relaxed", rechunk=False)
        del whole
        held = [ColumnWaiting(name, [table.get_column(name)]) for name in table.columns]
        del table
    return Trials(_sorted(held), quality, unnamed)


def tools_as_strings(table: pl.DataFrame) -> pl.DataFrame:
    """The trials table with its tool sequences as lists of strings, as the contract has them.

    A set read in many buckets holds them as a dictionary (:data:`COMPACT_TOOLS`) until a
    reader asks for the table: every figure is computed from the dictionary, so an analysis
    that only reports them never makes the strings (1M trials of 8 calls: 0.2–0.3 s;
    10M: 1.7–5.3 s and 0.7–0.8 GiB).
    """
    if table.schema.get(tc.TOOL_SEQUENCE) != COMPACT_TOOLS:
        return table
    return table.with_columns(pl.col(tc.TOOL_SEQUENCE).cast(pl.List(pl.String)))


_ORDER = (tc.TEST_ID, tc.START_TIME, tc.TRIAL_INDEX, tc.TRACE_ID, tc.SPAN_ID)


def _sorted(held: list[ColumnWaiting]) -> pl.DataFrame:
    """The table of the columns in ``held``, taken out of it, in :data:`_ORDER`.

    The columns are put together (packed pieces read back) and reordered two at a time,
    each let go once reordered, so the buckets' tables are held once plus two columns rather
    than twice (a sort of the whole frame gathers every column at once); for that the caller
    must hold no other reference to their pieces. A column is made one chunk before its
    gather: gathering from the buckets' chunks costs several times as much. A column that
    holds nothing (all null, all zero, all empty lists) has no order: it is made anew, in no
    memory (:func:`~assay.analysis._unwritten.unwritten`).
    """
    keys: dict[str, pl.Series] = {}
    for column in held:
        if column.name in _ORDER:
            keys[column.name] = column.read().rechunk()
            column.pieces = [keys[column.name]]
    order = _order(keys)
    del keys

    def reordered(box: list[ColumnWaiting]) -> pl.Series:
        # The column comes in a box, emptied here, so that its pieces are freed once copied
        # into one, not held by the pool's call until the gather returns.
        column = box.pop().read()
        made = unwritten(column)
        if made is not None:
            return made
        whole = column.rechunk()
        del column
        return whole.gather(order)

    # Polars lets go of Python's lock while it reads and gathers, so two columns are made at
    # once, one a core (4M trials: 2.4–2.7 → 1.5–1.6 s); beside the table, two columns' memory.
    names = [column.name for column in held]
    columns = dict(zip(names, taken_in_order(held, reordered, "assay-order"), strict=True))
    return pl.DataFrame(columns)


def _order(keys: dict[str, pl.Series]) -> pl.Series:
    """The row order of the key columns ``keys`` by :data:`_ORDER`.

    Sorted by test, start time and trial index first, by numpy's ``lexsort`` of
    :func:`_sort_keys` (4M trials: 0.3 s, against 0.8–1.3 s for a Polars sort of the three
    columns); the ids are compared, by Polars, only if two rows tie on those three, which
    distinct trials almost never do.
    """
    first = _ORDER[:3]
    found = [k for name in first for k in _sort_keys(keys[name])]
    if all(k is not None for k in found):
        numbers = [k for k in found if k is not None]
        order = np.lexsort(numbers[::-1])
        tied = np.ones(max(order.size - 1, 0), dtype=bool)
        for key in numbers:
            ranked = key[order]
            tied &= ranked[1:] == ranked[:-1]
            del ranked
        if not tied.any():
            return pl.Series("_row", order)
    table = pl.DataFrame([keys[name] for name in _ORDER])
    return table.with_row_index("_row").sort(_ORDER, nulls_last=True)["_row"]


def _sort_keys(column: pl.Series) -> list[npt.NDArray[np.generic] | None]:
    """Numbers that sort as ``column`` does, nulls last: for numpy's ``lexsort``.

    Integers are their own key (after a key putting their nulls last); strings are their rank
    among the column's distinct strings, in Polars' order of strings. Of another type, [None]:
    the caller sorts with Polars instead. numpy's ``lexsort`` of these keys holds a copy of
    one key at a time; a Polars sort of the columns with a row index, every key and its
    sorted copy at once (4M trials: 0.13 against 0.45 GiB at most).
    """
    if column.dtype == pl.String:
        names = column.unique().drop_nulls().sort()
        coded = column.cast(pl.Enum(names.to_list())).to_physical()
        return [coded.fill_null(names.len()).to_numpy()]
    if not column.dtype.is_integer():
        return [None]
    if not column.null_count():
        return [column.to_numpy()]
    return [column.is_null().to_numpy(), column.fill_null(0).to_numpy()]


def merge_findings(per_bucket: Sequence[DataQuality]) -> DataQuality:
    """The findings of several buckets as those of one set.

    A kind found in one bucket is kept as it is; a kind found in several becomes one finding
    whose count is the sum, whose examples are the first few, and whose message is the first
    bucket's, saying in how many buckets it was found — so nothing is repeated or lost.
    """
    by_kind: dict[str, list[Finding]] = {}
    for quality in per_bucket:
        for finding in quality.findings:
            by_kind.setdefault(finding.kind, []).append(finding)
    merged: list[Finding] = []
    for kind, found in by_kind.items():
        if len(found) == 1:
            merged.append(found[0])
            continue
        total = sum(f.count for f in found)
        examples = tuple(e for f in found for e in f.examples)[:5]
        severity: Severity = "warning" if any(f.severity == "warning" for f in found) else "info"
        message = f"{found[0].message} (found in {len(found)} buckets of the set: {total} in all)"
        tests = tuple(sorted({t for f in found for t in f.tests}))
        merged.append(Finding(kind, message, total, examples, severity, tests))
    return DataQuality(tuple(merged))

"""What a set of spans files may hold, read from their Parquet footers, so readers skip the rest.

Decoding a nested column costs as much when it is empty as when it is full: ``events`` (ten
leaf columns) and ``attributes`` (eight) are most of the cost of a scan that reads them. The
analysis needs them only for a few things — score and check events, the judgement recorded on
trial spans, costs recorded on LLM calls — and most trace sets have none of some of them. The
footers say so without reading a row:

* **events**: a row group without events has only nulls in the ``events`` leaf columns, which
  its column statistics record (any Parquet writer that writes statistics, pyarrow's default).
* **judgements and recorded costs**: assay's writers record in each file's metadata which of
  these attribute families its spans carry (:data:`ATTRIBUTE_FAMILIES_KEY`).

A file that does not say (no statistics, no metadata, an object-store URL whose footer is not
read ahead) *may* hold anything, so nothing is skipped for it: a skip is only ever taken on
the footer's word.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from assay import conventions as c
from assay.store import _schema as s

ATTRIBUTE_FAMILIES_KEY: Final = b"assay.attribute.families"
"""Parquet file metadata: the attribute families the file's spans carry, comma-separated."""
JUDGEMENT: Final = "judgement"
"""Attributes ``assay.judgement.*`` (the judgement ``assay run`` recorded on a trial span)."""
RECORDED_COST: Final = "recorded_cost"
"""Attributes in :data:`assay.conventions.RECORDED_COST_ATTRIBUTES` (a cost an
instrumentation recorded on an LLM call)."""
FAMILIES: Final = (JUDGEMENT, RECORDED_COST)

_EVENT_LEAF: Final = f"{s.EVENTS}.list.element.time_unix_nano"
_EVENT_NAME_LEAF: Final = f"{s.EVENTS}.list.element.name"


@dataclass(frozen=True, slots=True)
class SpanContents:
    """What some spans *may* hold; False only where every file's footer rules it out."""

    events: bool = True
    """Some span may have events (scores, checks, exceptions)."""
    judgements: bool = True
    """Some span may carry ``assay.judgement.*`` attributes."""
    recorded_costs: bool = True
    """Some span may carry a recorded cost attribute."""


def attribute_families(attributes: pa.ChunkedArray | pa.Array) -> set[str]:
    """The families of :data:`FAMILIES` present in a spans batch's ``attributes`` column."""
    keys = pc.struct_field(pc.list_flatten(attributes), "key")
    found = set()
    if len(keys) and pc.any(pc.starts_with(keys, c.JUDGEMENT_PREFIX)).as_py():
        found.add(JUDGEMENT)
    cost_keys = pa.array(list(c.RECORDED_COST_ATTRIBUTES), pa.string())
    if len(keys) and pc.any(pc.is_in(keys, value_set=cost_keys)).as_py():
        found.add(RECORDED_COST)
    return found


def families_metadata(families: Iterable[str]) -> dict[bytes, bytes]:
    """The file metadata a writer records for the families its spans carried."""
    return {ATTRIBUTE_FAMILIES_KEY: ",".join(sorted(families)).encode()}


def span_contents(files: Iterable[str]) -> SpanContents:
    """What the spans of ``files`` may hold, from their footers (see the module docstring)."""
    events = judgements = costs = False
    for f in files:
        metadata = _footer(f)
        if metadata is None:
            return SpanContents()
        events = events or _may_have_events(metadata)
        recorded = (metadata.metadata or {}).get(ATTRIBUTE_FAMILIES_KEY)
        if recorded is None:
            judgements = costs = True
        else:
            families = set(recorded.decode().split(","))
            judgements = judgements or JUDGEMENT in families
            costs = costs or RECORDED_COST in families
        if events and judgements and costs:
            break
    return SpanContents(events=events, judgements=judgements, recorded_costs=costs)


def _footer(path: str) -> pq.FileMetaData | None:
    from assay.store._buckets import _is_remote

    if _is_remote(path) or not path.endswith(".parquet"):
        return None
    try:
        return pq.read_metadata(path)
    except (OSError, pa.ArrowException):
        return None  # the reader reports an unreadable file; here it only means "may"


def _may_have_events(metadata: pq.FileMetaData) -> bool:
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        if group.num_rows == 0:
            continue
        leaves = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
        for leaf in (_EVENT_LEAF, _EVENT_NAME_LEAF):
            column = leaves.get(leaf)
            if column is None:
                return True
            stats = column.statistics
            if stats is None or stats.null_count is None:
                return True
            # Every level entry null: no row has an event with this field set.
            if stats.null_count != column.num_values:
                return True
    return False

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
* **column values**: the statistics of each top-level column say whether it is null in every
  row, and the smallest and largest string it holds (so "no span is ERROR" when the smallest
  ``status_code`` sorts after ``ERROR``).

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

from assay import conventions as c
from assay.store import _schema as s
from assay.store._coercion import PROMOTION_KEY, PROMOTION_RULE
from assay.store._footers import Footer, read_footer
from assay.store._paths import is_remote

ATTRIBUTE_FAMILIES_KEY: Final = b"assay.attribute.families"
"""Parquet file metadata: the attribute families the file's spans carry, comma-separated."""
JUDGEMENT: Final = "judgement"
"""Attributes ``assay.judgement.*`` (the judgement ``assay run`` recorded on a trial span)."""
RECORDED_COST: Final = "recorded_cost"
"""Attributes in :data:`assay.conventions.RECORDED_COST_ATTRIBUTES` (a cost an
instrumentation recorded on an LLM call)."""
OUTCOME: Final = "outcome"
"""The attribute ``assay.trial.outcome``; recorded only by writers of promotion rule 2 (see
``_coercion``), so a file without that rule *may* hold it."""
FAMILIES: Final = (JUDGEMENT, RECORDED_COST, OUTCOME)


@dataclass(frozen=True, slots=True)
class SpanContents:
    """What some spans *may* hold; False only where every file's footer rules it out."""

    events: bool = True
    """Some span may have events (scores, checks, exceptions)."""
    judgements: bool = True
    """Some span may carry ``assay.judgement.*`` attributes."""
    recorded_costs: bool = True
    """Some span may carry a recorded cost attribute."""
    outcomes: bool = True
    """Some span may carry ``assay.trial.outcome`` (whether or not its column holds it)."""
    null_columns: frozenset[str] = frozenset()
    """Columns null in every span."""
    bounds: tuple[tuple[str, str, str], ...] = ()
    """``(column, smallest, largest)`` of string columns whose every value lies in that range."""

    def may_hold(self, column: str, value: str) -> bool:
        """Whether some span may have ``value`` in ``column``."""
        if column in self.null_columns:
            return False
        for name, low, high in self.bounds:
            if name == column:
                return low <= value <= high
        return True


def attribute_families(attributes: pa.ChunkedArray | pa.Array) -> set[str]:
    """The families of :data:`FAMILIES` present in a spans batch's ``attributes`` column."""
    keys = pc.struct_field(pc.list_flatten(attributes), "key")
    found = set()
    if len(keys) and pc.any(pc.starts_with(keys, c.JUDGEMENT_PREFIX)).as_py():
        found.add(JUDGEMENT)
    cost_keys = pa.array(list(c.RECORDED_COST_ATTRIBUTES), pa.string())
    if len(keys) and pc.any(pc.is_in(keys, value_set=cost_keys)).as_py():
        found.add(RECORDED_COST)
    if len(keys) and pc.any(pc.equal(keys, c.TRIAL_OUTCOME)).as_py():
        found.add(OUTCOME)
    return found


def families_metadata(families: Iterable[str]) -> dict[bytes, bytes]:
    """The file metadata a writer records for the families its spans carried."""
    return {
        ATTRIBUTE_FAMILIES_KEY: ",".join(sorted(families)).encode(),
        PROMOTION_KEY: PROMOTION_RULE,
    }


def span_contents(files: Iterable[str]) -> SpanContents:
    """What the spans of ``files`` may hold, from their footers (see the module docstring).

    The footers are read once per process (``_footers``): opening the set read them already.
    """
    events = judgements = costs = outcomes = False
    columns: dict[str, _Column] = {}
    for f in files:
        footer = _footer(f)
        if footer is None:
            return SpanContents()
        events = events or footer.events
        recorded = footer.file_metadata.get(ATTRIBUTE_FAMILIES_KEY)
        if recorded is None:
            judgements = costs = outcomes = True
        else:
            families = set(recorded.decode().split(","))
            judgements = judgements or JUDGEMENT in families
            costs = costs or RECORDED_COST in families
            # Older writers did not record this family: their files may hold it.
            current = footer.file_metadata.get(PROMOTION_KEY) == PROMOTION_RULE
            outcomes = outcomes or OUTCOME in families or not current
        _column_facts(footer, columns)
    return SpanContents(
        events=events,
        judgements=judgements,
        recorded_costs=costs,
        outcomes=outcomes,
        null_columns=frozenset(n for n, f in columns.items() if f.known and f.all_null),
        bounds=tuple(
            (n, f.low, f.high)
            for n, f in sorted(columns.items())
            if f.known and f.bounded and f.low is not None and f.high is not None
        ),
    )


@dataclass(slots=True)
class _Column:
    known: bool = True
    """Every row group had statistics for it."""
    all_null: bool = True
    bounded: bool = True
    """Every row group holding values gave its smallest and largest string."""
    low: str | None = None
    high: str | None = None


def _column_facts(footer: Footer, columns: dict[str, _Column]) -> None:
    """Fold one file's top-level column statistics into ``columns`` (name → what is known).

    A column the file lacks is unknown: the reader may rebuild it from ``attributes``. A file
    without row groups says nothing of the columns it has.
    """
    present = set(footer.names)
    for name in s.SPANS_SCHEMA.names:
        if name not in present:
            columns.setdefault(name, _Column()).known = False
    if not footer.row_groups:
        return
    for name, facts in zip(footer.flat, footer.columns, strict=True):
        fact = columns.setdefault(name, _Column())
        if not facts.known:
            fact.known = False
            continue
        if facts.all_null:
            continue
        fact.all_null = False
        if not facts.bounded:
            fact.bounded = False
        if facts.low is not None and facts.high is not None:
            fact.low = facts.low if fact.low is None else min(fact.low, facts.low)
            fact.high = facts.high if fact.high is None else max(fact.high, facts.high)


def _footer(path: str) -> Footer | None:
    if is_remote(path) or not path.endswith(".parquet"):
        return None
    try:
        return read_footer(path)
    except (OSError, pa.ArrowException):
        return None  # the reader reports an unreadable file; here it only means "may"

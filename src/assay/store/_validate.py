"""Checks on a trace set's files before anything is counted: schema, ids, copies, duplicates.

The order keeps it cheap (issue 12 reads 20M spans): each file's Parquet footer first (schema
version, columns, null ids from the column statistics), then whole-file copies (same size and
footer, confirmed byte for byte), and only then one pass over the two id columns to find spans
stored more than once — the only span-level work, and it reads 2 of ~40 columns.
"""

from __future__ import annotations

import filecmp
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from assay.errors import InputError, SchemaError
from assay.quality import Finding
from assay.store import _schema as s
from assay.store._footers import Footer, read_footer

__all__ = [
    "FileCheck",
    "check_read_footer",
    "check_spans_file",
    "count_duplicate_spans",
    "span_ids_may_repeat",
    "find_copies",
]

_EXAMPLES = 5
_ID_COLUMNS = (s.TRACE_ID, s.SPAN_ID)
#: Columns a reader may fill with null when absent: nothing that decides a figure lives there.
_OPTIONAL = frozenset({s.TRACE_STATE, s.SCOPE_NAME, s.SCOPE_VERSION, s.LINKS})
#: Promoted columns: when absent they are rebuilt from the lossless ``attributes``.
_PROMOTED = frozenset(s.promoted_column(a) for a in s.PROMOTED_ATTRIBUTES)


@dataclass(frozen=True, slots=True)
class FileCheck:
    """What a spans file's footer says about it."""

    path: str
    """The file."""
    rows: int
    """Spans it holds."""
    size: int
    """Bytes on disk."""
    missing_promoted: frozenset[str]
    """Promoted columns it lacks (read from ``attributes`` instead)."""
    missing_optional: frozenset[str]
    """Optional columns it lacks (read as null)."""
    footer: bytes
    """A hash of the raw Parquet footer, to spot whole-file copies without reading the data."""


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _bad_ids(footer: Footer) -> dict[str, tuple[int, int]]:
    """Null and empty trace_id / span_id counts, from the column statistics where they tell.

    An empty id is an invalid id, as in OTLP: two spans with ``span_id ""`` are two spans, not
    one stored twice, so they cannot be told apart and the file is refused. The statistics'
    smallest value is ``""`` exactly when some id is empty and their null count says whether
    one is null, so the column is read only then (to count them for the message) or when the
    statistics are missing.
    """
    counts: dict[str, tuple[int, int]] = {}
    for column in _ID_COLUMNS:
        facts = footer.column(column)
        if facts is not None and facts.known and not facts.some_null and not facts.may_be_empty:
            continue
        # The file is refused, or its statistics do not tell: the ids themselves are counted.
        values = pq.read_table(footer.path, columns=[column])[column]
        nulls = values.null_count
        empty = int(pc.sum(pc.equal(values, "")).as_py() or 0)
        if nulls or empty:
            counts[column] = (nulls, empty)
    return counts


def check_spans_file(path: str) -> FileCheck:
    """Check one spans file from its footer; raise unless assay can read it correctly.

    Reads only the Parquet footer (and, for a file written without statistics, its id
    columns), so a truncated or non-Parquet file is caught cheaply. The footer is parsed once
    per process (``_footers``): the steps after the checks read it from there.

    Raises:
        InputError: Not a readable Parquet file.
        SchemaError: Not a spans file, a newer schema, a required column missing, or spans
            without a trace_id or span_id.
    """
    try:
        footer: Footer | BaseException = read_footer(path)
    except (OSError, pa.ArrowException) as exc:
        footer = exc
    return check_read_footer(path, footer)


def check_read_footer(path: str, footer: Footer | BaseException) -> FileCheck:
    """:func:`check_spans_file` of a footer already read, or of the error reading it."""
    if isinstance(footer, BaseException):
        raise InputError(f"{path}: not a readable Parquet file ({_first_line(footer)})") from (
            footer
        )
    version = footer.schema_metadata.get(s.SCHEMA_VERSION_KEY)
    if version is None:
        raise SchemaError(f"{path}: not an assay spans file (no {s.SCHEMA_VERSION_KEY.decode()})")
    if not version.isdigit() or int(version) > s.SCHEMA_VERSION:
        raise SchemaError(
            f"{path}: spans schema version {version.decode(errors='replace')} is newer than this "
            f"assay understands ({s.SCHEMA_VERSION}); upgrade assay"
        )
    names = footer.names
    missing = [c for c in s.REQUIRED_COLUMNS if c not in names]
    if s.EVENTS not in names:
        missing.append(f"{s.EVENTS} (scores and checks)")
    if missing:
        raise SchemaError(f"{path}: missing column(s) {', '.join(missing)}")
    try:
        bad = _bad_ids(footer)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({_first_line(exc)})") from exc
    if bad:
        parts: list[str] = []
        for column, (nulls, empty) in bad.items():
            parts += [f"{nulls} span(s) without a {column}"] if nulls else []
            parts += [f"{empty} span(s) with an empty {column}"] if empty else []
        what = " and ".join(parts)
        raise SchemaError(f"{path}: {what}; every span needs a trace_id and a span_id")
    absent = frozenset(s.SPANS_SCHEMA.names) - set(names)
    return FileCheck(
        path, footer.rows, footer.size, absent & _PROMOTED, absent & _OPTIONAL, footer.digest
    )


def find_copies(checks: Sequence[FileCheck]) -> tuple[list[FileCheck], Finding | None]:
    """Drop files that are byte-for-byte copies of another; return the rest and a finding.

    Candidates share size, row count and footer; each is confirmed by comparing the bytes, so
    only real copies cost a read.
    """
    kept: dict[tuple[int, int, bytes], list[FileCheck]] = {}
    unique: list[FileCheck] = []
    copies: list[FileCheck] = []
    for check in checks:
        key = (check.size, check.rows, check.footer)
        twins = kept.setdefault(key, [])
        if any(filecmp.cmp(t.path, check.path, shallow=False) for t in twins):
            copies.append(check)
            continue
        twins.append(check)
        unique.append(check)
    if not copies:
        return unique, None
    spans = sum(c.rows for c in copies)
    finding = Finding(
        "duplicate_files",
        f"{len(copies)} file(s) are copies of another file in the trace set; their {spans} "
        "span(s) are read once",
        spans,
        tuple(c.path for c in copies[:_EXAMPLES]),
    )
    return unique, finding


def span_ids_may_repeat(spans: pl.LazyFrame, *, streaming: bool = True) -> bool:
    """Whether some span id of ``spans`` may repeat: its 64-bit hashes are not all distinct.

    The screen for spans stored twice (a repeated (trace_id, span_id) repeats its span_id):
    False means none is; True, that :func:`count_duplicate_spans` must look at the exact pairs
    (a real duplicate, a span id reused in another trace, or a hash collision). The hashes
    are read by the streaming engine when ``spans`` is a file scan, and counted in memory
    (8 bytes a span): the streaming engine's own distinct count merges per-thread sets and
    takes twice as long. Spans already in memory are hashed where they are (``streaming``
    False).
    """
    hashes = spans.select(pl.col(s.SPAN_ID).hash(seed=0))
    found = hashes.collect(engine="streaming" if streaming else "auto").to_series()
    return bool(found.n_unique() != found.len())


def count_duplicate_spans(scan: pl.LazyFrame) -> tuple[int, tuple[str, ...], pl.DataFrame]:
    """How many rows repeat a (trace_id, span_id) seen before, a few such trace ids, the pairs.

    The common case costs one pass over the span_id column (:func:`span_ids_may_repeat`);
    only when some hash repeats are the exact pairs grouped.
    """
    ids = scan.select(_ID_COLUMNS)
    none = pl.DataFrame(schema={c: pl.String for c in _ID_COLUMNS})
    if not span_ids_may_repeat(scan):
        return 0, (), none
    repeated = (
        ids.group_by(_ID_COLUMNS)
        .agg(pl.len().alias("copies"))
        .filter(pl.col("copies") > 1)
        .collect(engine="streaming")
        .sort(_ID_COLUMNS)
    )
    if repeated.height == 0:
        return 0, (), none  # a span id reused across traces, or a hash collision
    extra = int(repeated["copies"].sum()) - repeated.height
    examples = tuple(dict.fromkeys(repeated[s.TRACE_ID].head(50).to_list()))[:_EXAMPLES]
    return extra, examples, repeated.select(_ID_COLUMNS)

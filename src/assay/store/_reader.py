"""Reading a trace set: a folder, a glob or a list of spans files, scanned lazily with Polars.

Every file is checked first (``_paths`` lists each file once, ``_validate`` checks its footer
and finds copies and repeated spans), so that what is scanned counts every span exactly once,
and what had to be collapsed, rebuilt or left out is in :attr:`TraceSet.quality`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache

import polars as pl
import pyarrow as pa

from assay.errors import InputError
from assay.quality import DataQuality, Finding
from assay.store import _schema as s
from assay.store._buckets import Bucket, total_spans
from assay.store._coercion import coerce_expr
from assay.store._compact import replaced_inputs
from assay.store._contents import SpanContents, span_contents
from assay.store._copies import conflicting_copies, one_copy_each
from assay.store._events_column import EventsColumn, events_column
from assay.store._footers import read_footers
from assay.store._paths import list_files
from assay.store._validate import (
    FileCheck,
    check_read_footer,
    count_duplicate_spans,
    find_copies,
)

_EXAMPLES = 5

READ_ERRORS: tuple[type[BaseException], ...] = (
    pl.exceptions.PolarsError,
    pl.exceptions.PanicException,  # Polars' Rust side on bytes that changed under it
    pa.ArrowException,
    OSError,
)
"""What reading a checked trace set's files can raise when they change while being read (a
file deleted, truncated or rewritten in place): each is an input problem, never a bug to
report as a traceback with exit 1, which means FAIL. See :func:`read_failure`."""


def read_failure(exc: BaseException, names: Sequence[str]) -> InputError:
    """The one-line :class:`InputError` for ``exc`` (one of :data:`READ_ERRORS`)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return InputError(
        f"{', '.join(names) or 'the trace set'}: could not read the trace set ({first}); "
        "was a file changed or removed while it was read? Run again once the set is complete"
    )


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file left out of a trace set because it could not be read."""

    path: str
    """The file."""
    reason: str
    """Why it was skipped, in words."""


@dataclass(frozen=True, slots=True)
class TraceSet:
    """The spans files that make up a trace set, checked and ready to scan."""

    files: tuple[str, ...]
    """Every file that will be read (local paths or object-store URLs)."""
    skipped: tuple[SkippedFile, ...] = ()
    """Files left out under ``skip_bad_files``, with the reason."""
    quality: DataQuality = DataQuality()
    """What the checks found: copies and repeated spans collapsed, columns rebuilt."""
    names: tuple[str, ...] = ()
    """The paths the set was opened with (named in errors)."""
    rebuilt: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Files lacking promoted columns, with those columns (read from ``attributes``)."""
    deduplicate: bool = False
    """Whether some (trace_id, span_id) is stored more than once, so :meth:`scan` collapses."""
    screened: bool = True
    """Whether repeated spans were looked for over the whole set. A large set opened with a
    ``screen_limit`` is not: its reader looks bucket by bucket (a repeated span has its first
    copy's trace id, so it is in the same bucket), in memory bounded by a bucket, or calls
    :meth:`screen` first."""

    def screen(self) -> TraceSet:
        """This set with repeated spans looked for over the whole set (itself if they were)."""
        if self.screened:
            return self
        found = duplicate_spans(self.scan())
        return replace(
            self,
            quality=self.quality.merged(found),
            deduplicate=bool(found),
            screened=True,
        )

    def contents(self) -> SpanContents:
        """What the set's spans may hold, from the files' footers (parts a reader may skip)."""
        return span_contents(self.files)

    def scan(self) -> pl.LazyFrame:
        """A lazy scan of every span in the set, each once, with the spans-table schema."""
        missing = dict(self.rebuilt)
        groups: dict[tuple[str, ...], list[str]] = {}
        for f in self.files:
            groups.setdefault(missing.get(f, ()), []).append(f)
        frames = []
        for columns, files in groups.items():
            frame = pl.scan_parquet(
                files,
                schema=polars_schema(),
                hive_partitioning=False,
                missing_columns="insert",
                extra_columns="ignore",
            )
            if columns:
                frame = frame.with_columns(promoted_from_attributes(c) for c in columns)
            frames.append(frame)
        scan = frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")
        if self.deduplicate:
            scan = one_copy_each(scan)
        return scan


@cache
def polars_schema() -> pl.Schema:
    """The spans-table schema as Polars types."""
    # Not ``empty_table()``: that makes pyarrow import pandas (about 1 s) when it is installed.
    frame = pl.from_arrow(pa.Table.from_batches([], schema=s.SPANS_SCHEMA))
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


@cache
def _promoted_types() -> dict[str, tuple[str, bool]]:
    """Promoted column → (attribute name, whether it is an integer column)."""
    import pyarrow as pa

    return {
        s.promoted_column(a): (a, pa.types.is_integer(t)) for a, t in s.PROMOTED_ATTRIBUTES.items()
    }


def promoted_from_attributes(column: str) -> pl.Expr:
    """A promoted column rebuilt from ``attributes`` by the writers' rule (``_coercion``)."""
    attribute, integer = _promoted_types()[column]
    found = (
        pl.col(s.ATTRIBUTES)
        .list.eval(pl.element().filter(pl.element().struct.field("key") == attribute))
        .list.last()
    )
    return coerce_expr(found, integer).alias(column)


def _findings(checks: Sequence[FileCheck]) -> list[Finding]:
    out: list[Finding] = []
    for what, attribute, how, severity in (
        ("promoted", "missing_promoted", "rebuilt from their attributes", "info"),
        ("optional", "missing_optional", "read as empty", "info"),
    ):
        lacking = [c for c in checks if getattr(c, attribute)]
        if lacking:
            columns = sorted(set().union(*(getattr(c, attribute) for c in lacking)))
            out.append(
                Finding(
                    f"missing_{what}_columns",
                    f"{len(lacking)} file(s) lack column(s) {', '.join(columns)}; {how}",
                    len(lacking),
                    tuple(c.path for c in lacking[:_EXAMPLES]),
                    severity,  # type: ignore[arg-type]
                )
            )
    return out


def open_trace_set(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    skip_bad_files: bool = False,
    screen_limit: int | None = None,
) -> TraceSet:
    """Resolve folders, globs and files into a checked :class:`TraceSet`.

    Each file is read once however it is named (folders twice, relative and absolute, through
    symlinks; loops are not followed); whole-file copies are left out, and spans stored more
    than once are collapsed by :meth:`TraceSet.scan`; each of these is a finding in
    :attr:`TraceSet.quality`.

    Args:
        paths: One or more folders (searched recursively, Hive partitions included), glob
            patterns, files, or object-store URLs (passed to Polars unchecked).
        skip_bad_files: Leave out unreadable files and folders (listed in
            ``TraceSet.skipped``) instead of failing on the first.
        screen_limit: Above this many spans (local files, counted from their footers) the
            set is not screened for repeated spans as a whole: the screen's memory grows
            with the set, so its reader screens bucket by bucket (``TraceSet.screened``).

    Raises:
        InputError: A path does not exist, a folder is empty or unreadable, or a file is
            unreadable or breaks the spans-table contract (e.g. a span without a span_id).
    """
    items: Iterable[str | os.PathLike[str]] = (
        [paths] if isinstance(paths, str | os.PathLike) else paths
    )
    names = [os.fspath(p) for p in items]
    if not names:
        raise InputError("no trace set given")
    try:
        return _open(names, skip_bad_files, screen_limit)
    except READ_ERRORS as exc:
        raise read_failure(exc, names) from exc


def _open(names: list[str], skip_bad_files: bool, screen_limit: int | None) -> TraceSet:
    listing = list_files(names)
    skipped: list[SkippedFile] = []
    for path, reason in listing.unreadable:
        if not skip_bad_files:
            raise InputError(f"{path}: {reason}")
        skipped.append(SkippedFile(path, reason))
    remote = [f for f in listing.files if "://" in f]
    local = [f for f in listing.files if "://" not in f]
    checks: list[FileCheck] = []
    replaced: set[str] = set()
    # Every footer is read first (by a few threads), then checked in the listing's order, so
    # the first bad file is the one reported. Later steps read the footers from memory.
    for f, footer in zip(local, read_footers(local), strict=True):
        if not isinstance(footer, BaseException):
            folder = os.path.dirname(f)
            replaced.update(os.path.join(folder, name) for name, _ in replaced_inputs(footer))
        try:
            checks.append(check_read_footer(f, footer))
        except InputError as exc:
            if not skip_bad_files:
                raise
            skipped.append(SkippedFile(f, str(exc).removeprefix(f"{f}: ")))
    if not checks and not remote:
        raise InputError(f"{', '.join(names)}: no readable spans file")
    checks, superseded = _drop_replaced(checks, replaced)
    checks, copies = find_copies(checks)
    findings = listing.findings() + superseded + ([copies] if copies else []) + _findings(checks)
    trace_set = TraceSet(
        tuple(c.path for c in checks) + tuple(remote),
        tuple(skipped),
        names=tuple(names),
        rebuilt=tuple(
            (c.path, tuple(sorted(c.missing_promoted))) for c in checks if c.missing_promoted
        ),
    )
    if screen_limit is not None and not remote and total_spans(trace_set.files) > screen_limit:
        return replace(trace_set, quality=DataQuality(tuple(findings)), screened=False)
    found = duplicate_spans(trace_set.scan())
    return replace(
        trace_set,
        quality=DataQuality(tuple(findings) + found),
        deduplicate=bool(found),
    )


def _drop_replaced(
    checks: list[FileCheck], replaced: set[str]
) -> tuple[list[FileCheck], list[Finding]]:
    """``checks`` less the inputs of a compaction whose merged file is present (``_compact``).

    A crash between a compaction's rename and its deletions leaves both; the merged file holds
    every row of each, so reading both would count them twice.
    """
    if not replaced:
        return checks, []
    kept = [c for c in checks if c.path not in replaced]
    dropped = [c.path for c in checks if c.path in replaced]
    if not dropped:
        return checks, []
    found = Finding(
        "compacted_inputs",
        f"{len(dropped)} file(s) were merged into a compacted file that is present (a "
        "compaction interrupted before it deleted them); each is read once, from that file",
        len(dropped),
        tuple(dropped[:_EXAMPLES]),
        "info",
    )
    return kept, [found]


DUPLICATE_SPANS = "duplicate_spans"
"""The kind of the finding about spans stored more than once."""


def duplicate_spans(scan: pl.LazyFrame) -> tuple[Finding, ...]:
    """The findings about spans stored more than once in ``scan``; empty if none is.

    ``duplicate_spans`` counts every repeat; ``conflicting_spans`` (``_copies``) names the
    spans whose copies differ, with what each copy says and which one is counted.
    """
    repeated, examples, pairs = count_duplicate_spans(scan)
    if not repeated:
        return ()
    conflict = conflicting_copies(scan, pairs)
    if conflict is None:
        what = "e.g. an import run twice or a retried export"
    elif conflict.count == pairs.height:
        what = "and every one differs between its copies: see conflicting_spans"
    else:
        what = (
            f"{conflict.count} of the spans differ between their copies (conflicting_spans), "
            "the rest are identical copies, e.g. an import run twice"
        )
    found = Finding(
        DUPLICATE_SPANS,
        f"{repeated} span(s) are stored more than once (same trace_id and span_id, {what}); "
        "each is counted once",
        repeated,
        examples,
    )
    return (found,) if conflict is None else (found, conflict)


def scan_spans(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    skip_bad_files: bool = False,
) -> pl.LazyFrame:
    """A lazy Polars scan of the spans in ``paths`` (see :func:`open_trace_set`)."""
    return open_trace_set(paths, skip_bad_files=skip_bad_files).scan()


def read_spans(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> pl.DataFrame:
    """Read every span in ``paths`` into memory (convenient for small sets and tests)."""
    return scan_spans(paths).collect()


def scan_bucket(bucket: Bucket, like: TraceSet | None = None) -> pl.LazyFrame:
    """A lazy scan of a bucket's spans, with the spans-table schema.

    Args:
        bucket: The bucket.
        like: The whole trace set the bucket belongs to: its checks (promoted columns
            rebuilt from ``attributes``, repeated spans collapsed) apply to the bucket too.
            A repeated span has the trace id of its first copy, so it falls in the same
            bucket and collapsing per bucket is collapsing over the set.
    """
    whole = like if like is not None else TraceSet(bucket.files)
    if bucket.ipc:
        scan = pl.scan_ipc(list(bucket.files))
    elif bucket.row_ranges is None:
        return replace(whole, files=bucket.files).scan()
    else:
        scan = pl.concat(_row_range_scans(bucket.files, bucket.row_ranges, whole))
    if whole.deduplicate:
        scan = one_copy_each(scan)
    return scan


def bucket_events(bucket: Bucket, like: TraceSet | None = None) -> EventsColumn | None:
    """The reader of the events of :func:`scan_bucket`'s spans, in its order.

    See :func:`~assay.store.events_column`. None where the scan's rows are not the files' rows
    in order: repeated spans collapsed, a copy in Arrow IPC, or columns rebuilt (files grouped
    by what is rebuilt).
    """
    whole = like if like is not None else TraceSet(bucket.files)
    rebuilt = dict(whole.rebuilt)
    if bucket.ipc or whole.deduplicate or any(f in rebuilt for f in bucket.files):
        return None
    return events_column(bucket.files, bucket.row_ranges)


def _row_range_scans(
    files: tuple[str, ...], row_ranges: tuple[tuple[tuple[int, int], ...], ...], whole: TraceSet
) -> list[pl.LazyFrame]:
    """The scans of a row-group bucket's parts, in file order.

    Consecutive whole files are read by one scan, as a set (Polars costs about as much per
    scan of a small file as per thousands of its rows); ranges of a file by a sliced scan. A set
    with rebuilt columns is read a file at a time: its scan groups files by what is rebuilt,
    which would change the order of the spans.
    """
    scans: list[pl.LazyFrame] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            scans.append(replace(whole, files=tuple(run), deduplicate=False).scan())
            run.clear()

    for f, ranges in zip(files, row_ranges, strict=True):
        if not ranges and not whole.rebuilt:
            run.append(f)
            continue
        flush()
        single = replace(whole, files=(f,), deduplicate=False).scan()
        scans.extend(single.slice(offset, rows) for offset, rows in ranges or ((0, None),))
    flush()
    return scans

"""``ParquetSpanExporter``: a standard OpenTelemetry ``SpanExporter`` writing the spans table."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_span_id, format_trace_id

from assay.errors import ConfigError
from assay.store import DEFAULT_FANOUT, SpanRows, SpanWriter, compact_tree, encode_attributes

_LOG = logging.getLogger("assay")


def _append_span(rows: SpanRows, span: ReadableSpan) -> None:
    context = span.context
    assert context is not None
    parent = span.parent
    resource = span.resource.attributes if span.resource is not None else {}
    scope = span.instrumentation_scope
    rows.append(
        trace_id=format_trace_id(context.trace_id),
        span_id=format_span_id(context.span_id),
        parent_span_id=format_span_id(parent.span_id) if parent is not None else None,
        trace_state=context.trace_state.to_header() if context.trace_state else None,
        name=span.name,
        kind=span.kind.name,
        start_time=span.start_time or 0,
        end_time=span.end_time or span.start_time or 0,
        status_code=span.status.status_code.name,
        status_message=span.status.description,
        service_name=str(resource["service.name"]) if "service.name" in resource else None,
        scope_name=scope.name if scope is not None else None,
        scope_version=scope.version if scope is not None else None,
        attributes=encode_attributes(span.attributes),
        resource_attributes=encode_attributes(resource),
        events=[
            {
                "time_unix_nano": e.timestamp,
                "name": e.name,
                "attributes": encode_attributes(e.attributes),
            }
            for e in span.events
        ],
        links=[
            {
                "trace_id": format_trace_id(link.context.trace_id),
                "span_id": format_span_id(link.context.span_id),
                "trace_state": link.context.trace_state.to_header()
                if link.context.trace_state
                else None,
                "attributes": encode_attributes(link.attributes),
            }
            for link in span.links
        ],
    )


def spans_table(spans: Iterable[ReadableSpan]) -> pa.Table:
    """Finished SDK spans as a spans table (the exporter's rows, in memory, nothing written)."""
    rows = SpanRows()
    for span in spans:
        _append_span(rows, span)
    return rows.to_table()


class ParquetSpanExporter(SpanExporter):
    """Write finished spans to a folder of Parquet files in the assay spans-table format.

    Use it with any ``TracerProvider``, like any OpenTelemetry exporter::

        provider.add_span_processor(BatchSpanProcessor(ParquetSpanExporter("traces")))

    Spans are buffered in memory and written as complete files (atomically) when a file fills,
    once nothing has been exported for ``idle_flush_s`` (a pause of the agent, or the end of a
    ``provider.force_flush()``: the SDK's processors hand the exporter their spans but never call
    its ``force_flush``), once a file is ``max_file_age_s`` old, on ``force_flush()`` and on
    ``shutdown()`` — which the SDK calls at interpreter exit. A background thread keeps the two
    clocks, so spans become visible while the agent is idle too. A process killed with SIGKILL
    loses its unflushed spans: use the collector when every span must survive a crash.

    Args:
        path: Output folder; files go into Hive partitions ``date=YYYY-MM-DD/``.
        max_file_bytes: Roll to a new file past this size.
        max_file_age_s: Make a file visible once it is this old, even under steady exports;
            None: only on the other triggers.
        idle_flush_s: Make what is buffered visible once no export has come for this long
            (0.5 s, as the collector's ``--idle-flush``). Each idle flush follows at least this
            long a pause, so it writes at most one file per partition per ``idle_flush_s``;
            None: never (files only when full, old, flushed or shut down).
        buckets: Also lay the files out in this many ``bucket=NN`` folders by trace, so that
            large sets are analysed bucket by bucket (see ``docs/scale.md``).
        compact_fanout: After each flush, merge a partition's files once it holds this many of
            one size tier (crash-safe, ``assay.store.compact_folder``), so that a day of
            sporadic trials stays a few dozen files (docs/scale.md); None: never.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "traces",
        *,
        max_file_bytes: int = 128 * 1024 * 1024,
        max_file_age_s: float | None = 60.0,
        idle_flush_s: float | None = 0.5,
        buckets: int | None = None,
        compact_fanout: int | None = DEFAULT_FANOUT,
    ) -> None:
        if idle_flush_s is not None and not idle_flush_s > 0:
            raise ConfigError(f"idle_flush_s must be positive or None, not {idle_flush_s}")
        if compact_fanout is not None and compact_fanout < 2:
            raise ConfigError(f"compact_fanout must be at least 2 or None, not {compact_fanout}")
        self._writer = SpanWriter(
            path,
            max_file_bytes=max_file_bytes,
            max_file_age_s=max_file_age_s,
            buckets=buckets,
            on_roll=self._rolled,
        )
        self._compact_fanout = compact_fanout
        self._touched: set[Path] = set()
        self._compacting = threading.Lock()
        self._idle_flush_s = idle_flush_s
        self._max_file_age_s = max_file_age_s
        self._lock = threading.Condition()
        self._last_export = 0.0
        self._timer: threading.Thread | None = None
        self._shut_down = False

    @property
    def path(self) -> str:
        """The output folder."""
        return str(self._writer.root)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Buffer a batch of finished spans; write whatever is complete."""
        if self._shut_down:
            return SpanExportResult.FAILURE
        rows = SpanRows()
        for span in spans:
            _append_span(rows, span)
        with self._lock:
            self._writer.write(rows.to_table())
            self._last_export = time.monotonic()
            self._start_timer()
            self._lock.notify()
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Write every buffered span to a complete, visible file."""
        with self._lock:
            self._writer.flush()
            background = self._timer is not None and self._timer.is_alive()
            if background:
                self._lock.notify()  # the timer thread compacts: the caller does not wait
        if not background:
            self._compact()
        return True

    def shutdown(self) -> None:
        """Flush and refuse further exports."""
        with self._lock:
            self._writer.flush()
            self._shut_down = True
            self._lock.notify()
            timer = self._timer
        if timer is not None and timer is not threading.current_thread():
            timer.join()
        self._compact(wait=True)

    def _rolled(self, path: Path, rows: int) -> None:
        """The writer's ``on_roll``: remember the partition folder to compact."""
        self._touched.add(path.parent)

    def _compact(self, *, wait: bool = False) -> None:
        """Compact the partitions written since the last compaction (one thread at a time).

        Called without the export lock, by the timer thread after a flush (so ``force_flush()``
        does not wait for it) or inline when there is none: compaction reads only visible
        files, which the writer never touches again, so exports go on meanwhile. A failure is
        said, never raised: the inputs stay, complete and readable, and the next flush into
        the folder tries again. ``wait``: wait for a compaction in progress instead of leaving
        the folders to it.
        """
        if self._compact_fanout is None or not self._compacting.acquire(blocking=wait):
            return
        try:
            with self._lock:
                folders, self._touched = self._touched, set()
            if not folders:
                return
            try:
                compact_tree(self._writer.root, self._compact_fanout, sorted(folders))
            except (OSError, pa.ArrowException) as error:
                _LOG.warning("assay: could not compact spans files in %s: %s", self.path, error)
        finally:
            self._compacting.release()

    def _start_timer(self) -> None:
        """Start the thread that flushes on the clocks, once (again in a forked child)."""
        if self._idle_flush_s is None and self._max_file_age_s is None:
            return
        if self._timer is None or not self._timer.is_alive():
            self._timer = threading.Thread(
                target=self._flush_on_time, name="assay-parquet-exporter", daemon=True
            )
            self._timer.start()

    def _due(self) -> float | None:
        """When buffered spans are next due to be made visible; None: nothing is buffered."""
        opened = self._writer.oldest_open()
        if opened is None:
            return None
        deadlines = []
        if self._idle_flush_s is not None:
            deadlines.append(self._last_export + self._idle_flush_s)
        if self._max_file_age_s is not None:
            deadlines.append(opened + self._max_file_age_s)
        return min(deadlines)

    def _flush_on_time(self) -> None:
        with self._lock:
            while not self._shut_down:
                if self._touched and self._compact_fanout is not None:
                    self._lock.release()  # exports go on while files are merged
                    try:
                        self._compact(wait=True)
                    finally:
                        self._lock.acquire()
                    continue
                due = self._due()
                wait = None if due is None else due - time.monotonic()
                if wait is not None and wait <= 0:
                    idle = self._idle_flush_s is not None and (
                        time.monotonic() - self._last_export >= self._idle_flush_s
                    )
                    try:
                        if idle:
                            self._writer.flush()
                        else:
                            self._writer.roll_aged()
                    except (OSError, pa.ArrowException) as error:
                        # Said, not raised in a thread nobody joins; the next export starts a
                        # new timer, and force_flush() or shutdown() raise it to their caller.
                        _LOG.warning("assay: could not write spans to %s: %s", self.path, error)
                        return
                    continue
                self._lock.wait(wait)

"""``ParquetSpanExporter``: a standard OpenTelemetry ``SpanExporter`` writing the spans table."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence

import pyarrow as pa
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_span_id, format_trace_id

from assay.store import SpanRows, SpanWriter, encode_attributes


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
    on ``force_flush()`` and on ``shutdown()`` — which the SDK calls at interpreter exit — so
    a process killed with SIGKILL loses its unflushed spans. Use the collector when every span
    must survive a crash.

    Args:
        path: Output folder; files go into Hive partitions ``date=YYYY-MM-DD/``.
        max_file_bytes: Roll to a new file past this size.
        max_file_age_s: Make a file visible once it is this old (at the next export).
        buckets: Also lay the files out in this many ``bucket=NN`` folders by trace, so that
            large sets are analysed bucket by bucket (see ``docs/scale.md``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "traces",
        *,
        max_file_bytes: int = 128 * 1024 * 1024,
        max_file_age_s: float | None = 60.0,
        buckets: int | None = None,
    ) -> None:
        self._writer = SpanWriter(
            path, max_file_bytes=max_file_bytes, max_file_age_s=max_file_age_s, buckets=buckets
        )
        self._lock = threading.Lock()
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
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Write every buffered span to a complete, visible file."""
        with self._lock:
            self._writer.flush()
        return True

    def shutdown(self) -> None:
        """Flush and refuse further exports."""
        with self._lock:
            self._writer.flush()
            self._shut_down = True

"""A ``BatchSpanProcessor`` that never drops a span: a full queue makes the caller wait.

The SDK's ``BatchSpanProcessor`` holds at most ``max_queue_size`` spans (2048 by default,
``OTEL_BSP_MAX_QUEUE_SIZE``); when an agent ends spans faster than the exporter writes them, the
oldest are dropped with a log line ("Queue full, dropping span") and the trace set silently
misses spans — trials then look shorter than they were. assay's processor counts the spans it
handed on and those the exporter received; when the difference reaches the queue size, it
flushes first (backpressure), so the queue never overflows. Anything still missing at shutdown
is logged with its count.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

_LOG = logging.getLogger("assay")
_DEFAULT_QUEUE = 2048  # the SDK's default


class _CountingExporter(SpanExporter):
    """Forwards to an exporter and counts the spans handed to it."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.received = 0
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            self.received += len(spans)
        return self.inner.export(spans)

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def queue_size() -> int:
    """``OTEL_BSP_MAX_QUEUE_SIZE`` if set to a whole number, else the SDK's 2048."""
    try:
        return max(1, int(os.environ.get("OTEL_BSP_MAX_QUEUE_SIZE", _DEFAULT_QUEUE)))
    except ValueError:
        return _DEFAULT_QUEUE


class LosslessBatchSpanProcessor(BatchSpanProcessor):
    """A batch processor whose queue never overflows: a full queue is flushed first.

    Args:
        exporter: Where spans go.
        max_queue_size: Spans held before the caller waits (default ``queue_size()``).
    """

    def __init__(self, exporter: SpanExporter, max_queue_size: int | None = None) -> None:
        self._limit = max_queue_size or queue_size()
        self._counter = _CountingExporter(exporter)
        self._ended = 0
        self._stopped = False
        self._lock = threading.Lock()
        super().__init__(
            self._counter,
            max_queue_size=self._limit,
            max_export_batch_size=min(512, self._limit),
        )

    def on_end(self, span: ReadableSpan) -> None:
        """Queue the span, flushing first when the queue could be full."""
        # After shutdown the provider's other processors still get spans; this one is done.
        if self._stopped or not (span.context and span.context.trace_flags.sampled):
            return
        with self._lock:
            self._ended += 1
            pending = self._ended - self._counter.received
        if pending >= self._limit:
            self.force_flush()
        super().on_end(span)

    @property
    def dropped(self) -> int:
        """Spans ended but not (yet) handed to the exporter."""
        with self._lock:
            return self._ended - self._counter.received

    def shutdown(self) -> None:
        """Export what is queued, then say how many spans were lost, if any (once)."""
        if self._stopped:
            return
        self._stopped = True
        super().shutdown()  # type: ignore[no-untyped-call]
        if self.dropped:
            _LOG.warning(
                "assay: %d span(s) ended but never reached the exporter (%s)",
                self.dropped,
                type(self._counter.inner).__name__,
            )

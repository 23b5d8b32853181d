"""assay's batch processor: a full queue makes the caller wait instead of dropping spans."""

from __future__ import annotations

import time
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from assay.instrument import LosslessBatchSpanProcessor


class SlowExporter(SpanExporter):
    def __init__(self) -> None:
        self.names: list[str] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        time.sleep(0.01)
        self.names += [s.name for s in spans]
        return SpanExportResult.SUCCESS


def _burst(processor_type: type[BatchSpanProcessor], spans: int) -> SlowExporter:
    exporter = SlowExporter()
    provider = TracerProvider()
    processor = (
        LosslessBatchSpanProcessor(exporter, max_queue_size=8)
        if processor_type is LosslessBatchSpanProcessor
        else BatchSpanProcessor(exporter, max_queue_size=8, max_export_batch_size=8)
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("burst")
    for i in range(spans):
        tracer.start_span(str(i)).end()
    provider.shutdown()
    return exporter


def test_the_sdk_batch_processor_drops_spans_when_its_queue_is_full(caplog) -> None:
    # The failure assay's processor exists for (if the SDK stops dropping, this test says so).
    assert len(_burst(BatchSpanProcessor, 300).names) < 300


def test_assays_processor_keeps_every_span_of_a_burst(caplog) -> None:
    names = _burst(LosslessBatchSpanProcessor, 300).names
    assert sorted(names, key=int) == [str(i) for i in range(300)]
    assert "never reached" not in caplog.text


def test_spans_after_shutdown_are_not_counted_as_lost(caplog) -> None:
    exporter = SlowExporter()
    provider = TracerProvider()
    processor = LosslessBatchSpanProcessor(exporter, max_queue_size=8)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("late")
    tracer.start_span("before").end()
    processor.shutdown()
    tracer.start_span("after").end()
    processor.shutdown()
    assert exporter.names == ["before"] and processor.dropped == 0
    assert "never reached" not in caplog.text

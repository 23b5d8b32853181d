"""A running collector's acknowledged spans are readable within 2 s, without stopping it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from collector_process import CollectorFactory
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from assay.cli import run
from assay.errors import InputError
from assay.store import read_spans


class _Acknowledged(SpanExporter):
    """The real OTLP/HTTP exporter, asserting that the collector acknowledged every export."""

    def __init__(self, endpoint: str) -> None:
        self.inner = OTLPSpanExporter(endpoint=endpoint)

    def export(self, spans):  # type: ignore[no-untyped-def]
        result = self.inner.export(spans)
        assert result is SpanExportResult.SUCCESS
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()


def _send_trials(url: str, count: int) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "live-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(_Acknowledged(f"{url}/v1/traces")))
    tracer = provider.get_tracer("assay.tests")
    for i in range(count):
        with tracer.start_as_current_span(
            "trial", attributes={"assay.test.id": "live", "assay.trial.index": i}
        ) as trial:
            trial.add_event("assay.check", {"assay.check.name": "ok", "assay.check.passed": i > 0})
            with tracer.start_as_current_span("tool", attributes={"gen_ai.tool.name": "search"}):
                pass
    provider.shutdown()


def _spans(out: Path) -> int:
    """How many spans a reader of OUT sees now (0 while it holds no file)."""
    try:
        return read_spans(out).height
    except InputError:
        return 0


def _analyzed(out: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object] | None:
    """``assay analyze OUT --format json``'s one test, or None while no file is visible."""
    code = run(["analyze", str(out), "--format", "json", "--inconclusive-ok"])
    captured = capsys.readouterr()
    if code == 2:
        assert "holds no .parquet files yet: a running collector writes here" in captured.err
        return None
    tests: list[dict[str, object]] = json.loads(captured.out)["tests"]
    assert len(tests) == 1
    return tests[0]


@pytest.mark.slow
def test_twelve_acknowledged_trials_are_visible_without_another_request(
    tmp_path: Path,
    collector_factory: CollectorFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The real command in its own process, with its default roll age (60 s) and its decode
    # worker processes: only the idle flush can show the spans before the roll age, and the first
    # records arrive while the workers may still be starting. How soon they show is measured by
    # benchmarks/bench_visibility.py (docs/collector.md), not asserted here.
    collector = collector_factory(tmp_path / "traces", [], process=True).start()
    out = collector.out
    assert _analyzed(out, capsys) is None
    assert _spans(out) == 0
    _send_trials(collector.url, 12)
    # Polled with the reader `assay analyze` uses (its file listing and scan); the deadline,
    # half the roll age, only keeps a broken idle flush from being rescued by the roll.
    deadline = time.monotonic() + 30
    visible = _spans(out)
    while visible < 24 and time.monotonic() < deadline:
        time.sleep(0.02)
        visible = _spans(out)
    assert visible == 24, f"{visible} of 24 spans visible"
    seen = _analyzed(out, capsys)
    assert seen is not None and seen["n"] == 12, seen
    assert seen["passed"] == 11
    # nothing is read twice: not now, not after the collector's later checkpoints and its stop
    time.sleep(1.0)
    again = _analyzed(out, capsys)
    assert again is not None and again["n"] == 12
    assert collector.terminate() == 0
    spans = read_spans(out)
    assert spans.height == 24
    assert spans["span_id"].n_unique() == 24

"""``--export-otlp``: verdicts as OTLP spans with GenAI evaluation events, and as gauges.

Checked with the OTel SDK's in-memory exporter and reader, against ``assay collect`` on
127.0.0.1 (a real OTLP/HTTP receiver: the spans land in its trace set) and against a minimal
OTLP/HTTP receiver that decodes what the SDK's exporters post, metrics included.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import assay
from assay.report import export_otlp, otlp_url, record_verdicts
from assay.report._text import shown_interval
from assay.store import read_spans

sys.path.insert(0, str(Path(__file__).parents[1] / "collect"))
from collector_process import InProcessCollector  # noqa: E402

ASSAY = str(Path(sys.executable).parent / "assay")


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1: decodes each protobuf request it accepts."""

    def __init__(self) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                assert self.headers["Content-Type"] == "application/x-protobuf"
                if self.path == "/v1/traces":
                    owner.traces.append(ExportTraceServiceRequest.FromString(body))
                elif self.path == "/v1/metrics":
                    owner.metrics.append(ExportMetricsServiceRequest.FromString(body))
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def gauges(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """Every gauge point received: (name, labels) → value."""
        points = {}
        for request in self.metrics:
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        for point in metric.gauge.data_points:
                            labels = tuple(
                                sorted((a.key, a.value.string_value) for a in point.attributes)
                            )
                            value = point.as_double if point.HasField("as_double") else point.as_int
                            points[(metric.name, labels)] = float(value)
        return points


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.server.shutdown()
    made.server.server_close()


@pytest.fixture(scope="module")
def example(traces: Path) -> assay.Analysis:
    return assay.analyze(traces)


def _events(span: Any) -> list[dict[str, Any]]:
    return [dict(e.attributes) for e in span.events if e.name == "gen_ai.evaluation.result"]


def test_each_test_and_suite_is_a_span_with_its_evaluation_event(example: assay.Analysis) -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("t")
    record_verdicts(example.result, tracer_provider.get_tracer("t"), meter)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    root = spans.pop("assay analyze")
    assert all(
        s.parent is not None and s.parent.span_id == root.context.span_id for s in spans.values()
    )
    for test in example.result.tests:
        span = spans.pop(f"assay.verdict {test.test_id}")
        (event,) = _events(span)
        assert event["gen_ai.evaluation.score.label"] == test.verdict.value
        assert event["gen_ai.evaluation.score.value"] == pytest.approx(test.pass_rate)
        assert event["gen_ai.evaluation.explanation"] == test.verdict_reason
        assert (
            span.attributes["assay.pass_rate.lower"],
            span.attributes["assay.pass_rate.upper"],
        ) == shown_interval(test)
    (suite,) = example.result.suites
    (event,) = _events(spans.pop("assay.suite_verdict example"))
    assert event["gen_ai.evaluation.score.label"] == suite.verdict.value
    assert spans == {}
    # the gauges: one point per test and series, the figures of the result
    data = reader.get_metrics_data()
    assert data is not None
    points = {
        (m.name, tuple(sorted(p.attributes.items()))): p.value
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        for p in m.data.data_points
    }
    for test in example.result.tests:
        labels = (("assay.test.id", test.test_id),)
        assert points[("assay.test.pass_rate", labels)] == pytest.approx(test.pass_rate)
        low, high = shown_interval(test) or (None, None)
        assert points[("assay.test.pass_rate.lower", labels)] == low
        assert points[("assay.test.pass_rate.upper", labels)] == high
        states = {
            v: points[
                ("assay.test.verdict", (("assay.test.id", test.test_id), ("assay.verdict", v)))
            ]
            for v in ("PASS", "FAIL", "INCONCLUSIVE")
        }
        assert states[test.verdict.value] == 1 and sum(states.values()) == 1
    assert points[("assay.suite.pass_rate", (("assay.suite", "example"),))] == pytest.approx(
        suite.pass_rate
    )


def test_the_verdicts_land_in_assay_collect_as_spans(
    example: assay.Analysis, tmp_path: Path
) -> None:
    collector = InProcessCollector(tmp_path / "received", ["--roll-age", "0.2"]).start()
    try:
        problem = export_otlp(example.result, collector.url, timeout_s=5)
    finally:
        collector.terminate()
    # assay collect takes traces, not metrics: the spans are in, and the warning says so
    assert problem is not None and problem.startswith("metrics not accepted")
    spans = read_spans(tmp_path / "received")
    names = set(spans["name"].to_list())
    assert {f"assay.verdict {t.test_id}" for t in example.result.tests} <= names
    labels = {
        attribute["string_value"]
        for events in spans["events"].to_list()
        for event in events or []
        if event["name"] == "gen_ai.evaluation.result"
        for attribute in event["attributes"]
        if attribute["key"] == "gen_ai.evaluation.score.label"
    }
    assert labels == {t.verdict.value for t in example.result.tests} | {
        s.verdict.value for s in example.result.suites
    }


def test_spans_and_metrics_reach_an_otlp_receiver(
    example: assay.Analysis, receiver: Receiver
) -> None:
    assert export_otlp(example.result, receiver.url + "/v1/traces") is None  # a signal path too
    (request,) = receiver.traces
    names = [s.name for r in request.resource_spans for sc in r.scope_spans for s in sc.spans]
    assert len(names) == 1 + len(example.result.tests) + len(example.result.suites)
    gauges = receiver.gauges()
    for test in example.result.tests:
        key = ("assay.test.trials", (("assay.test.id", test.test_id),))
        assert gauges[key] == test.trials


@pytest.mark.slow  # two analyses in processes of their own
def test_the_cli_sends_them_and_keeps_its_exit_code(traces: Path, receiver: Receiver) -> None:
    plain = subprocess.run([ASSAY, "analyze", str(traces), "-q"], capture_output=True, check=False)
    sent = subprocess.run(
        [ASSAY, "analyze", str(traces), "-q", "--export-otlp", receiver.url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert sent.returncode == plain.returncode == 1  # the example FAILs a test
    assert f"sent the verdicts to {receiver.url}" in sent.stderr
    assert len(receiver.traces) == 1 and len(receiver.metrics) == 1


def test_watch_sends_its_verdicts_and_gauges(traces: Path, receiver: Receiver) -> None:
    done = subprocess.run(
        [ASSAY, "watch", str(traces), "--once", "--export-otlp", receiver.url],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    gauges = receiver.gauges()
    assert gauges[("assay.test.trials", (("assay.test.id", "greeting"),))] == 30
    assert (
        gauges[("assay.test.verdict", (("assay.test.id", "greeting"), ("assay.verdict", "PASS")))]
        == 1
    )


def test_the_url_of_each_signal() -> None:
    assert otlp_url("http://h:4318", "metrics") == "http://h:4318/v1/metrics"
    assert otlp_url("http://h:4318/v1/traces", "metrics") == "http://h:4318/v1/metrics"
    assert otlp_url("http://h:4318/", "traces") == "http://h:4318/v1/traces"


def test_an_endpoint_that_does_not_answer_is_named(example: assay.Analysis) -> None:
    problem = export_otlp(example.result, "http://127.0.0.1:9", timeout_s=0.5)  # nothing listens
    assert problem is not None and problem.startswith("spans and metrics not accepted")
    assert "assay collect" not in problem

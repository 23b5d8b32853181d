"""Real OpenTelemetry exporters (HTTP and gRPC) against a real ``assay collect`` on 127.0.0.1."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from collector_process import AnyCollector
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link, SpanKind, Status, StatusCode
from otlp_helpers import post

from assay.store import decode_attributes, read_spans


class _Checked(SpanExporter):
    """Wraps an exporter and fails the test if any export is not acknowledged."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner

    def export(self, spans):  # type: ignore[no-untyped-def]
        result = self.inner.export(spans)
        assert result is SpanExportResult.SUCCESS
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()


def _send_spans(exporter: SpanExporter, service: str) -> dict[str, dict[str, object]]:
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "deployment.environment": "test"})
    )
    provider.add_span_processor(SimpleSpanProcessor(_Checked(exporter)))
    tracer = provider.get_tracer("assay.tests", "1.2.3")
    expected: dict[str, dict[str, object]] = {}
    for i in range(20):
        with tracer.start_as_current_span(
            "trial",
            kind=SpanKind.SERVER,
            attributes={
                "assay.test.id": f"t{i % 3}",
                "assay.trial.index": i,
                "score": 0.25 * i,
                "ok": i % 2 == 0,
                "tags": ["a", "b"],
                "counts": [1, 2, 3],
            },
        ) as trial:
            trial.add_event("assay.check", {"assay.check.name": "c", "assay.check.passed": True})
            with tracer.start_as_current_span(
                "tool", links=[Link(trial.get_span_context(), {"why": "test"})]
            ) as tool:
                tool.set_attribute("gen_ai.tool.name", "search")
                tool.set_status(Status(StatusCode.ERROR, "tool broke"))
            trial.set_status(Status(StatusCode.OK))
            expected[format(trial.get_span_context().span_id, "016x")] = {"index": i}
    provider.shutdown()
    return expected


_COMPRESSION = {"http-gzip": Compression.Gzip, "http-deflate": Compression.Deflate}


@pytest.mark.parametrize("transport", ["http", "http-gzip", "http-deflate", "grpc"])
def test_every_span_arrives_once_intact(collector: AnyCollector, transport: str) -> None:
    if transport == "grpc":
        exporter: SpanExporter = GrpcSpanExporter(
            endpoint=f"127.0.0.1:{collector.grpc_port}", insecure=True
        )
    else:
        exporter = HttpSpanExporter(
            endpoint=f"{collector.url}/v1/traces",
            compression=_COMPRESSION.get(transport, Compression.NoCompression),
        )
    expected = _send_spans(exporter, f"agent-{transport}")
    assert collector.terminate() == 0
    spans = read_spans(collector.out)
    assert spans.height == 40
    assert spans["span_id"].n_unique() == 40
    trials = spans.filter(spans["name"] == "trial").sort("assay_trial_index")
    assert set(trials["span_id"].to_list()) == set(expected)
    first = trials.row(1, named=True)
    assert first["kind"] == "SERVER"
    assert first["status_code"] == "OK"
    assert first["service_name"] == f"agent-{transport}"
    assert first["scope_name"] == "assay.tests" and first["scope_version"] == "1.2.3"
    assert first["assay_test_id"] == "t1" and first["assay_trial_index"] == 1
    assert decode_attributes(first["attributes"]) == {
        "assay.test.id": "t1",
        "assay.trial.index": 1,
        "score": 0.25,
        "ok": False,
        "tags": ["a", "b"],
        "counts": [1, 2, 3],
    }
    resource = decode_attributes(first["resource_attributes"])
    assert resource["service.name"] == f"agent-{transport}"
    assert resource["deployment.environment"] == "test"
    (event,) = first["events"]
    assert event["name"] == "assay.check"
    assert decode_attributes(event["attributes"]) == {
        "assay.check.name": "c",
        "assay.check.passed": True,
    }
    tools = spans.filter(spans["name"] == "tool")
    tool = tools.row(0, named=True)
    assert tool["status_code"] == "ERROR" and tool["status_message"] == "tool broke"
    assert tool["gen_ai_tool_name"] == "search"
    assert tool["parent_span_id"] in expected
    (link,) = tool["links"]
    assert link["span_id"] == tool["parent_span_id"]
    assert decode_attributes(link["attributes"]) == {"why": "test"}
    assert "wrote " in collector.output()
    assert "spans_written=40" in collector.output()


def test_otlp_json_hex_and_base64_ids_and_logs(collector: AnyCollector) -> None:
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "trial",
        "kind": 2,
        "startTimeUnixNano": "1764000000000000000",
        "endTimeUnixNano": "1764000001000000000",
        "attributes": [
            {"key": "assay.test.id", "value": {"stringValue": "json"}},
            {"key": "assay.trial.index", "value": {"intValue": "7"}},
        ],
        "status": {"code": "STATUS_CODE_ERROR", "message": "nope"},
    }
    base64_span = dict(span, spanId="7uGbfsPBsXU=", traceId="W47/95gDgQPSabYzgT/GDA==")
    document = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "j"}}]
                },
                "scopeSpans": [{"scope": {"name": "s"}, "spans": [span, base64_span]}],
            }
        ]
    }
    body = gzip.compress(json.dumps(document).encode())
    status, headers, reply = post(
        collector.http_port,
        "/v1/traces",
        body,
        {"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert status == 200, reply
    assert headers["Content-Type"] == "application/json"
    assert json.loads(reply) == {}
    evaluation = {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "j"}}]
                },
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "timeUnixNano": "1764000002000000000",
                                "eventName": "gen_ai.evaluation.result",
                                "traceId": span["traceId"],
                                "spanId": span["spanId"],
                                "attributes": [
                                    {
                                        "key": "gen_ai.evaluation.name",
                                        "value": {"stringValue": "relevance"},
                                    },
                                    {
                                        "key": "gen_ai.evaluation.score.value",
                                        "value": {"doubleValue": 0.75},
                                    },
                                ],
                            },
                            {"body": {"stringValue": "an ordinary log line"}},
                        ]
                    }
                ],
            }
        ]
    }
    status, _, reply = post(
        collector.http_port,
        "/v1/logs",
        json.dumps(evaluation).encode(),
        {"Content-Type": "application/json"},
    )
    assert status == 200, reply
    assert json.loads(reply)["partialSuccess"]["rejectedLogRecords"] == "1"
    assert collector.terminate() == 0
    spans = read_spans(collector.out).sort("start_time_unix_nano")
    assert spans["span_id"].to_list()[:2] == ["eee19b7ec3c1b174", "eee19b7ec3c1b175"]
    assert spans["trace_id"].to_list()[:2] == [span["traceId"], "5b8efff798038103d269b633813fc60c"]
    assert spans["status_code"].to_list()[:2] == ["ERROR", "ERROR"]
    assert spans["assay_trial_index"].to_list()[:2] == [7, 7]
    evaluation_span = spans.row(2, named=True)
    assert evaluation_span["parent_span_id"] == span["spanId"]
    assert evaluation_span["trace_id"] == span["traceId"]
    (event,) = evaluation_span["events"]
    assert event["name"] == "gen_ai.evaluation.result"
    assert decode_attributes(event["attributes"]) == {
        "gen_ai.evaluation.name": "relevance",
        "gen_ai.evaluation.score.value": 0.75,
    }


def test_path_traversal_through_service_name_stays_inside(
    tmp_path: Path, collector: AnyCollector
) -> None:
    from otlp_helpers import make_request, post_protobuf

    for service in ("../../escape", "/etc/passwd", "..", "a/../../b", "\\..\\x", ""):
        request, _ = make_request(2, service=service)
        assert post_protobuf(collector.http_port, request) == 200
    assert collector.terminate() == 0
    root = collector.out.resolve()
    files = list(tmp_path.rglob("*.parquet"))
    assert files
    for f in files:
        assert f.resolve().is_relative_to(root)
        assert ".." not in f.relative_to(root).parts
    assert read_spans(collector.out).height == 12

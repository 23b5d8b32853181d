"""Make the committed fixtures of other tools' trace exports (run by hand; see below).

    pip install opentelemetry-exporter-zipkin-json==1.45.1  # this script only; tests need none
    PYTHONPATH=src python tests/ingest/formats/make_fixtures.py

One agent, played with the real OpenTelemetry SDK (seeded ids, fixed clock), records 12 runs of
two tests: ``invoke_agent`` spans with ``chat`` (tokens) and ``execute_tool`` children, a tool
that fails (recovered from), runs that crash (the root span ERROR) and a judge's
``gen_ai.evaluation.result`` event on each run that finished. Its spans are then written as:

- ``otlp.jsonl``: OTLP/JSON, one request per line, as the Collector's file exporter writes it
  (the OpenTelemetry exporter's own encoder, ``encode_spans``): the reference, decoded by the
  collector's decoder;
- ``zipkin.json``: by the OpenTelemetry Zipkin exporter's own encoder
  (``opentelemetry-exporter-zipkin-json`` 1.45.1, ``JsonV2Encoder``; only this script needs it)
  and ``zipkin-traces.json``, the same spans grouped per trace as ``/api/v2/traces`` answers;
- ``jaeger.json`` (``{"data": [...]}``, the query API and the UI's search download) and
  ``jaeger-trace.json`` (one trace object, the UI's trace-page JSON), by the OpenTelemetry
  specification's "OpenTelemetry to Jaeger Transformation" onto Jaeger's JSON model
  (jaegertracing/jaeger ``model/json``), since Jaeger itself does not run here;
- ``tempo-v1.json`` (``{"batches": [...]}``, ``/api/traces/<id>``) and ``tempo-v2.json``
  (``{"trace": {"resourceSpans": [...]}}``, ``/api/v2/traces/<id>``), base64 ids as Tempo
  writes them;
- ``truth.json``: what the agent did in each run, by trace id.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry import trace as api
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

HERE = Path(__file__).parent
T0 = 1_764_000_000_000_000_000  # 2025-11-24, ns
MS = 1_000_000


class _SeededIds(IdGenerator):
    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self._random.getrandbits(64) or 1

    def generate_trace_id(self) -> int:
        return self._random.getrandbits(128) or 1


def record() -> tuple[list[ReadableSpan], dict[str, dict[str, Any]]]:
    """Play the agent; return its spans and the truth of each run by trace id."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create(
            {
                "service.name": "shop-agent",
                "deployment.environment": "ci",
                "service.instance.id": "agent-1",
            }
        ),
        id_generator=_SeededIds(43),
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("shop.agent", "1.2.0")
    rng = random.Random(11)
    truth: dict[str, dict[str, Any]] = {}
    clock = T0
    for run in range(12):
        test = "refund" if run % 2 == 0 else "lookup"
        start = clock
        root = tracer.start_span(
            f"invoke_agent {test}",
            kind=SpanKind.INTERNAL,
            start_time=clock,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": test},
        )
        trace_id = format(root.get_span_context().trace_id, "032x")
        context = api.set_span_in_context(root)
        tools: list[str] = []
        llm_calls = input_tokens = output_tokens = tool_errors = 0
        for _ in range(rng.randint(1, 3)):
            clock += 3 * MS
            tin, tout = rng.randint(50, 400), rng.randint(5, 80)
            chat = tracer.start_span(
                "chat gpt-test",
                context=context,
                kind=SpanKind.CLIENT,
                start_time=clock,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-test",
                    "gen_ai.usage.input_tokens": tin,
                    "gen_ai.usage.output_tokens": tout,
                },
            )
            clock += 40 * MS
            chat.end(end_time=clock)
            llm_calls += 1
            input_tokens += tin
            output_tokens += tout
            if rng.random() < 0.7:
                name = rng.choice(["search_orders", "issue_refund", "lookup_customer"])
                clock += 1 * MS
                tool = tracer.start_span(
                    f"execute_tool {name}",
                    context=context,
                    start_time=clock,
                    attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name},
                )
                clock += 7 * MS
                if rng.random() < 0.2:
                    tool.set_status(Status(StatusCode.ERROR, "timeout"))
                    tool_errors += 1
                tool.end(end_time=clock)
                tools.append(name)
        crashed = rng.random() < 0.2
        clock += 2 * MS
        label = None
        if crashed:
            root.add_event(
                "exception",
                {"exception.type": "RuntimeError", "exception.message": "model unavailable"},
                timestamp=clock,
            )
            root.set_status(Status(StatusCode.ERROR, "RuntimeError: model unavailable"))
        else:
            label = "pass" if rng.random() < 0.6 else "fail"
            root.add_event(
                "gen_ai.evaluation.result",
                {
                    "gen_ai.evaluation.name": "correctness",
                    "gen_ai.evaluation.score.label": label,
                    "gen_ai.evaluation.score.value": 1.0 if label == "pass" else 0.0,
                },
                timestamp=clock,
            )
        root.end(end_time=clock)
        truth[trace_id] = {
            "test_id": test,
            "tools": tools,
            "tool_errors": tool_errors,
            "llm_calls": llm_calls,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "outcome": "error" if crashed else label,
            "duration_ns": clock - start,
        }
        clock += 100 * MS
    provider.shutdown()
    return list(exporter.get_finished_spans()), truth


def _otlp_document(spans: list[ReadableSpan]) -> dict[str, Any]:
    document: dict[str, Any] = json_format.MessageToDict(encode_spans(spans))
    return document


def _hex_ids(document: dict[str, Any]) -> dict[str, Any]:
    """OTLP/JSON ids in hex, as the specification and the file exporter write them."""
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for field in ("traceId", "spanId", "parentSpanId"):
                    if field in span:
                        span[field] = base64.b64decode(span[field]).hex()
    return document


_JAEGER_KINDS = {
    SpanKind.SERVER: "server",
    SpanKind.CLIENT: "client",
    SpanKind.PRODUCER: "producer",
    SpanKind.CONSUMER: "consumer",
    SpanKind.INTERNAL: "internal",
}


def _jaeger_tag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        return {"key": key, "type": "float64", "value": value}
    return {"key": key, "type": "string", "value": str(value)}


def _jaeger_span(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    tags = [_jaeger_tag(k, v) for k, v in (span.attributes or {}).items()]
    tags.append(_jaeger_tag("otel.scope.name", span.instrumentation_scope.name))
    tags.append(_jaeger_tag("otel.scope.version", span.instrumentation_scope.version))
    tags.append(_jaeger_tag("span.kind", _JAEGER_KINDS[span.kind]))
    if span.status.status_code is StatusCode.ERROR:
        tags.append(_jaeger_tag("otel.status_code", "ERROR"))
        tags.append(_jaeger_tag("error", True))
        if span.status.description:
            tags.append(_jaeger_tag("otel.status_description", span.status.description))
    elif span.status.status_code is StatusCode.OK:
        tags.append(_jaeger_tag("otel.status_code", "OK"))
    references = []
    if span.parent is not None:
        references.append(
            {
                "refType": "CHILD_OF",
                "traceID": format(context.trace_id, "032x"),
                "spanID": format(span.parent.span_id, "016x"),
            }
        )
    logs = [
        {
            "timestamp": event.timestamp // 1000,
            "fields": [_jaeger_tag("event", event.name)]
            + [_jaeger_tag(k, v) for k, v in event.attributes.items()],
        }
        for event in span.events
    ]
    assert span.start_time is not None and span.end_time is not None
    return {
        "traceID": format(context.trace_id, "032x"),
        "spanID": format(context.span_id, "016x"),
        "flags": 1,
        "operationName": span.name,
        "references": references,
        "startTime": span.start_time // 1000,
        "duration": (span.end_time - span.start_time) // 1000,
        "tags": tags,
        "logs": logs,
        "processID": "p1",
        "warnings": None,
    }


def _jaeger_traces(spans: list[ReadableSpan]) -> list[dict[str, Any]]:
    resource = spans[0].resource.attributes
    process = {
        "serviceName": resource["service.name"],
        "tags": [_jaeger_tag(k, v) for k, v in resource.items() if k != "service.name"],
    }
    traces: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        encoded = _jaeger_span(span)
        traces.setdefault(encoded["traceID"], []).append(encoded)
    return [
        {"traceID": t, "spans": s, "processes": {"p1": process}, "warnings": None}
        for t, s in traces.items()
    ]


def _zipkin(spans: list[ReadableSpan]) -> list[dict[str, Any]]:
    from opentelemetry.exporter.zipkin.json.v2 import JsonV2Encoder
    from opentelemetry.exporter.zipkin.node_endpoint import NodeEndpoint

    endpoint = NodeEndpoint(ipv4="10.0.0.7", port=8080)
    endpoint.service_name = spans[0].resource.attributes["service.name"]  # as the exporter does
    encoded: list[dict[str, Any]] = json.loads(JsonV2Encoder().serialize(spans, endpoint))
    return encoded


def main() -> None:
    spans, truth = record()
    (HERE / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    half = len(spans) // 2
    lines = [_hex_ids(_otlp_document(part)) for part in (spans[:half], spans[half:])]
    (HERE / "otlp.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    zipkin = _zipkin(spans)
    (HERE / "zipkin.json").write_text(json.dumps(zipkin) + "\n")
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in zipkin:
        by_trace.setdefault(span["traceId"], []).append(span)
    (HERE / "zipkin-traces.json").write_text(json.dumps(list(by_trace.values()), indent=1) + "\n")
    traces = _jaeger_traces(spans)
    api = {"data": traces, "total": 0, "limit": 0, "offset": 0, "errors": None}
    (HERE / "jaeger.json").write_text(json.dumps(api, indent=2) + "\n")
    (HERE / "jaeger-trace.json").write_text(json.dumps(traces[0], indent=2) + "\n")
    otlp = _otlp_document(spans)  # base64 ids, as Tempo writes them
    (HERE / "tempo-v1.json").write_text(json.dumps({"batches": otlp["resourceSpans"]}) + "\n")
    (HERE / "tempo-v2.json").write_text(json.dumps({"trace": otlp}, indent=1) + "\n")


if __name__ == "__main__":
    main()

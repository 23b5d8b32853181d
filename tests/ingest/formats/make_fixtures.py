"""Make the committed fixtures of other tools' trace exports (run by hand; see below).

    pip install opentelemetry-exporter-zipkin-json==1.45.1 mlflow-skinny==3.18.0  # this only
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
- ``mlflow.jsonl`` (one ``Trace.to_dict()`` a line) and ``mlflow-trace.json`` (one trace): the
  same runs played with MLflow's own tracing (``mlflow-skinny`` 3.18.0, a local file store;
  only this script needs it): ``AGENT``, ``CHAT_MODEL`` and ``TOOL`` spans, token usage, the
  judge's verdicts logged with ``mlflow.log_feedback``; MLflow makes its own trace ids, so
  ``mlflow-truth.json`` holds the truth by those;
- ``truth.json``: what the agent did in each run, by trace id.
"""

from __future__ import annotations

import base64
import json
import random
import tempfile
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Step:
    """One call the agent makes: an LLM call (tokens) or a tool (which may fail)."""

    tool: str | None
    start: int
    end: int
    input_tokens: int = 0
    output_tokens: int = 0
    failed: bool = False


@dataclass(frozen=True)
class Run:
    """One run of the agent: its test, its calls, and how it ended."""

    test: str
    start: int
    end: int
    steps: tuple[Step, ...]
    label: str | None  # the judge's verdict; None when the run crashed

    def truth(self) -> dict[str, Any]:
        chats = [s for s in self.steps if s.tool is None]
        return {
            "test_id": self.test,
            "tools": [s.tool for s in self.steps if s.tool is not None],
            "tool_errors": sum(s.failed for s in self.steps),
            "llm_calls": len(chats),
            "input_tokens": sum(s.input_tokens for s in chats),
            "output_tokens": sum(s.output_tokens for s in chats),
            "outcome": self.label or "error",
            "duration_ns": self.end - self.start,
        }


def plan() -> list[Run]:
    """What the agent does in each of its 12 runs (seeded), on a fixed clock."""
    rng = random.Random(11)
    runs = []
    clock = T0
    for run in range(12):
        test = "refund" if run % 2 == 0 else "lookup"
        start = clock
        steps = []
        for _ in range(rng.randint(1, 3)):
            clock += 3 * MS
            tin, tout = rng.randint(50, 400), rng.randint(5, 80)
            steps.append(Step(None, clock, clock + 40 * MS, tin, tout))
            clock += 40 * MS
            if rng.random() < 0.7:
                name = rng.choice(["search_orders", "issue_refund", "lookup_customer"])
                clock += 1 * MS
                steps.append(Step(name, clock, clock + 7 * MS, failed=rng.random() < 0.2))
                clock += 7 * MS
        crashed = rng.random() < 0.2
        clock += 2 * MS
        label = None if crashed else "pass" if rng.random() < 0.6 else "fail"
        runs.append(Run(test, start, clock, tuple(steps), label))
        clock += 100 * MS
    return runs


def record(
    runs: list[Run], judge: bool = True
) -> tuple[list[ReadableSpan], dict[str, dict[str, Any]]]:
    """Play the runs with the OpenTelemetry SDK (GenAI conventions); spans and truth by trace.

    With ``judge`` each finished run's verdict is an evaluation event on its span; without, the
    caller logs the verdicts its own way (``truth[...]["outcome"]``).
    """
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
    truth: dict[str, dict[str, Any]] = {}
    for run in runs:
        root = tracer.start_span(
            f"invoke_agent {run.test}",
            kind=SpanKind.INTERNAL,
            start_time=run.start,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": run.test},
        )
        context = api.set_span_in_context(root)
        for step in run.steps:
            if step.tool is None:
                attributes: dict[str, Any] = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-test",
                    "gen_ai.usage.input_tokens": step.input_tokens,
                    "gen_ai.usage.output_tokens": step.output_tokens,
                }
                name, kind = "chat gpt-test", SpanKind.CLIENT
            else:
                attributes = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": step.tool,
                }
                name, kind = f"execute_tool {step.tool}", SpanKind.INTERNAL
            span = tracer.start_span(
                name, context=context, kind=kind, start_time=step.start, attributes=attributes
            )
            if step.failed:
                span.set_status(Status(StatusCode.ERROR, "timeout"))
            span.end(end_time=step.end)
        if run.label is None:
            root.add_event(
                "exception",
                {"exception.type": "RuntimeError", "exception.message": "model unavailable"},
                timestamp=run.end,
            )
            root.set_status(Status(StatusCode.ERROR, "RuntimeError: model unavailable"))
        elif judge:
            root.add_event(
                "gen_ai.evaluation.result",
                {
                    "gen_ai.evaluation.name": "correctness",
                    "gen_ai.evaluation.score.label": run.label,
                    "gen_ai.evaluation.explanation": "judged by the rubric",
                },
                timestamp=run.end,
            )
        root.end(end_time=run.end)
        truth[format(root.get_span_context().trace_id, "032x")] = run.truth()
    provider.shutdown()
    return list(exporter.get_finished_spans()), truth


def record_mlflow(runs: list[Run], root: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Play the runs with MLflow's own tracing (span types, token usage, judge feedback).

    The traces are kept in a local MLflow file store under ``root`` and read back with
    ``mlflow.get_trace``; returns their ``to_dict()`` and the truth by (OpenTelemetry) trace id.
    """
    import os

    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    import mlflow
    from mlflow.entities import AssessmentSource, SpanStatus, SpanType
    from mlflow.tracing.constant import SpanAttributeKey

    mlflow.set_tracking_uri((root / "mlruns").as_uri())
    mlflow.set_experiment("shop-agent")
    traces = []
    truth: dict[str, Any] = {}
    for run in runs:
        agent = mlflow.start_span_no_context(
            run.test, span_type=SpanType.AGENT, inputs={"q": "help"}, start_time_ns=run.start
        )
        for step in run.steps:
            if step.tool is None:
                span = mlflow.start_span_no_context(
                    "chat", SpanType.CHAT_MODEL, parent_span=agent, start_time_ns=step.start
                )
                span.set_attribute(SpanAttributeKey.MODEL, "gpt-test")
                span.set_attribute(
                    SpanAttributeKey.CHAT_USAGE,
                    {
                        "input_tokens": step.input_tokens,
                        "output_tokens": step.output_tokens,
                        "total_tokens": step.input_tokens + step.output_tokens,
                    },
                )
            else:
                span = mlflow.start_span_no_context(
                    step.tool, SpanType.TOOL, parent_span=agent, start_time_ns=step.start
                )
                if step.failed:
                    span.set_status(SpanStatus("ERROR", "timeout"))
            span.end(end_time_ns=step.end)
        if run.label is None:
            agent.record_exception(RuntimeError("model unavailable"))
        agent.end(end_time_ns=run.end)
        trace_id = agent.trace_id
        if run.label is not None:
            mlflow.log_feedback(
                trace_id=trace_id,
                name="correctness",
                value=run.label,
                rationale="judged by the rubric",
                source=AssessmentSource(source_type="LLM_JUDGE", source_id="judge"),
            )
        trace = mlflow.get_trace(trace_id)
        assert trace is not None
        encoded = trace.to_dict()
        otel_id = base64.b64decode(encoded["data"]["spans"][0]["trace_id"]).hex()
        truth[otel_id] = run.truth()
        traces.append(encoded)
    return traces, truth


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
    runs = plan()
    spans, truth = record(runs)
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
    with tempfile.TemporaryDirectory() as scratch:
        traces, mlflow_truth = record_mlflow(runs, Path(scratch))
    for trace in traces:  # where and by whom it was made here: not part of the agent's trace
        trace["info"]["tags"].pop("mlflow.artifactLocation", None)
        metadata = trace["info"]["trace_metadata"]
        for key in [k for k in metadata if k.startswith("mlflow.source.git") or k == "mlflow.user"]:
            del metadata[key]
    (HERE / "mlflow.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces))
    (HERE / "mlflow-trace.json").write_text(json.dumps(traces[1], indent=1) + "\n")
    (HERE / "mlflow-truth.json").write_text(json.dumps(mlflow_truth, indent=1) + "\n")


if __name__ == "__main__":
    main()

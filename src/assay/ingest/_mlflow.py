r"""MLflow 3 traces (``Trace.to_dict()`` / ``to_json()``: ``info`` + ``data.spans``) → OTLP.

A document is one trace ``{"info": {...}, "data": {"spans": [...]}}`` or a JSON array of them
(``[t.to_dict() for t in mlflow.search_traces(return_type="list")]``). Spans are OpenTelemetry
spans (ids in base64, times in nanoseconds, ``status.code`` as ``STATUS_CODE_*``) whose
attribute values MLflow stores as JSON text (``"mlflow.spanType": "\"TOOL\""`` in JSON).

Read:

- each attribute whose JSON text holds a scalar as that scalar (``mlflow.spanType = TOOL``,
  ``mlflow.spanLogLevel = 20``); objects and arrays (inputs, outputs, token usage) stay text;
- ``mlflow.spanType`` as the GenAI convention assay reads, on a span that carries no
  ``gen_ai.operation.name`` of its own: ``TOOL`` → ``execute_tool`` named by the span,
  ``LLM`` / ``CHAT_MODEL`` → ``chat`` with ``gen_ai.usage.*`` from ``mlflow.chat.tokenUsage``
  and ``gen_ai.request.model`` from ``mlflow.llm.model``, ``AGENT`` → ``invoke_agent`` named by
  the span, ``EMBEDDING`` → ``embeddings``;
- the trace's ``info.tags`` and ``info.trace_metadata`` as attributes of its root span (a tag
  set with ``mlflow.update_current_trace(tags=...)`` can name the test);
- each valid feedback in ``info.assessments`` as a ``gen_ai.evaluation.result`` event on the
  span it names (its ``span_id``, else the root): name, label (text and booleans), score
  (numbers and booleans), ``gen_ai.evaluation.explanation`` (the rationale), source.

docs/integrations.md ("MLflow 3 traces") lists what is dropped and why.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from assay import conventions as c
from assay.errors import InputError
from assay.ingest._build import as_list, as_object, bytes_id, key_value
from assay.ingest._tempo import wrapped_to_request

__all__ = ["is_mlflow", "mlflow_to_request"]

_SPAN_TYPE = "mlflow.spanType"
_TOKEN_USAGE = "mlflow.chat.tokenUsage"
_MODEL = "mlflow.llm.model"
_OPERATION = "gen_ai.operation.name"
_LLM_TYPES = frozenset({"LLM", "CHAT_MODEL"})
_EVALUATION = "gen_ai.evaluation.result"


def _is_trace(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("info"), dict)
        and isinstance(item.get("data"), dict)
        and isinstance(item["data"].get("spans"), list)
    )


def is_mlflow(document: Any) -> bool:
    """An MLflow trace, or a non-empty JSON array of them."""
    if isinstance(document, list):
        return bool(document) and all(_is_trace(t) for t in document)
    return _is_trace(document)


def _scalar(text: Any) -> Any:
    """The value of MLflow's JSON-encoded attribute when it is a scalar; else ``text`` itself."""
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str | int | float | bool) else text


def _usage(text: Any) -> dict[str, Any]:
    try:
        usage = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    return usage if isinstance(usage, dict) else {}


def _derived(name: str, attributes: dict[str, Any]) -> list[tuple[str, Any]]:
    """The GenAI attributes ``mlflow.spanType`` stands for (none if the span has its own)."""
    if _OPERATION in attributes:
        return []
    kind = str(attributes.get(_SPAN_TYPE, "")).upper()
    if kind == "TOOL":
        return [(_OPERATION, "execute_tool"), ("gen_ai.tool.name", name)]
    if kind == "AGENT":
        return [(_OPERATION, "invoke_agent"), ("gen_ai.agent.name", name)]
    if kind == "EMBEDDING":
        return [(_OPERATION, "embeddings")]
    if kind not in _LLM_TYPES:
        return []
    out: list[tuple[str, Any]] = [(_OPERATION, "chat")]
    usage = _usage(attributes.get(_TOKEN_USAGE))
    for field, attribute in (
        ("input_tokens", "gen_ai.usage.input_tokens"),
        ("output_tokens", "gen_ai.usage.output_tokens"),
    ):
        if isinstance(usage.get(field), int) and attribute not in attributes:
            out.append((attribute, usage[field]))
    if attributes.get(_MODEL) is not None and "gen_ai.request.model" not in attributes:
        out.append(("gen_ai.request.model", str(attributes[_MODEL])))
    return out


def _otlp_span(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """One MLflow span as an OTLP/JSON span (its attributes decoded and mapped).

    Raises:
        InputError: An MLflow 2 span (ids under ``context``), or a span without ids.
    """
    if "trace_id" not in raw or "span_id" not in raw:
        older = " (an MLflow 2 span: export the traces with MLflow 3)" if "context" in raw else ""
        raise InputError(f"{where} has no trace_id and span_id{older}")
    attributes = {
        str(k): _scalar(v)
        for k, v in as_object(raw.get("attributes") or {}, f"{where}.attributes").items()
    }
    name = str(raw.get("name") or "")
    pairs = list(attributes.items()) + _derived(name, attributes)
    span: dict[str, Any] = {
        "traceId": raw.get("trace_id"),
        "spanId": raw.get("span_id"),
        "name": name,
        "kind": raw.get("kind") or "SPAN_KIND_INTERNAL",
        "startTimeUnixNano": raw.get("start_time_unix_nano"),
        "endTimeUnixNano": raw.get("end_time_unix_nano"),
        "status": raw.get("status") or {},
        "attributes": [_json_kv(k, v) for k, v in pairs],
        "events": [
            {
                "name": str(e.get("name", "")),
                "timeUnixNano": e.get("time_unix_nano"),
                "attributes": [_json_kv(str(k), v) for k, v in (e.get("attributes") or {}).items()],
            }
            for e in (as_object(e, f"{where}.events") for e in as_list(raw.get("events"), where))
        ],
    }
    if raw.get("parent_span_id"):
        span["parentSpanId"] = raw["parent_span_id"]
    return span


def _json_kv(key: str, value: Any) -> dict[str, Any]:
    """An OTLP/JSON attribute (``json_format`` spelling of :func:`key_value`)."""
    return dict(json_format.MessageToDict(key_value(key, value)))


def _nanos(text: Any, where: str) -> int:
    """Nanoseconds since the epoch of an ISO 8601 time (``2025-06-01T10:00:00.123Z``)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return int(text) * 1_000_000  # milliseconds, as MLflow's protobuf form has them
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputError(f"{where} {text!r} is not an ISO 8601 time") from exc
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _evaluation(assessment: dict[str, Any], where: str) -> tuple[int, list[Any]] | None:
    """``(time, attributes)`` of a feedback's evaluation event; None for other assessments."""
    feedback = assessment.get("feedback")
    if not isinstance(feedback, dict) or assessment.get("valid") is False:
        return None  # an expectation (ground truth) or a superseded feedback
    name = assessment.get("assessment_name") or assessment.get("name") or "feedback"
    attributes = [key_value("gen_ai.evaluation.name", str(name))]
    value = feedback.get("value")
    if isinstance(value, bool):
        attributes.append(key_value("gen_ai.evaluation.score.label", str(value).lower()))
        attributes.append(key_value("gen_ai.evaluation.score.value", 1.0 if value else 0.0))
    elif isinstance(value, int | float):
        attributes.append(key_value("gen_ai.evaluation.score.value", float(value)))
    elif isinstance(value, str):
        attributes.append(key_value("gen_ai.evaluation.score.label", value))
    elif value is not None:
        attributes.append(key_value("gen_ai.evaluation.score.label", json.dumps(value)))
    error = feedback.get("error")
    if isinstance(error, dict):
        attributes.append(key_value("error.type", str(error.get("error_code", "error"))))
    if assessment.get("rationale"):
        attributes.append(key_value("gen_ai.evaluation.explanation", str(assessment["rationale"])))
    source = assessment.get("source")
    if isinstance(source, dict):
        for field in ("source_type", "source_id"):
            if source.get(field) is not None:
                attributes.append(key_value(f"mlflow.assessment.{field}", str(source[field])))
        if str(source.get("source_type") or "").upper() == "HUMAN":
            # A person's feedback: a label of the judge, not the judge's record.
            attributes.append(key_value(c.EVALUATION_SOURCE, c.EVALUATION_SOURCE_HUMAN))
            if source.get("source_id") is not None:
                attributes.append(key_value(c.EVALUATION_LABELLER, str(source["source_id"])))
    time = assessment.get("create_time") or assessment.get("last_update_time")
    return _nanos(time, f"{where}.create_time"), attributes


def mlflow_to_request(document: Any) -> ExportTraceServiceRequest:
    """Translate MLflow traces into an OTLP request: one resource per trace.

    Raises:
        InputError: A field has the wrong type or an id or time is invalid, named by its path.
    """
    traces = document if isinstance(document, list) else [document]
    resources = []
    for t, trace in enumerate(traces):
        where = f"[{t}]" if isinstance(document, list) else "trace"
        as_object(trace["info"], f"{where}.info")
        raw_spans = as_list(trace["data"].get("spans"), f"{where}.data.spans")
        spans = [
            _otlp_span(as_object(s, f"{where}.data.spans[{i}]"), f"{where}.data.spans[{i}]")
            for i, s in enumerate(raw_spans)
        ]
        resources.append({"resource": {}, "scopeSpans": [{"spans": spans}]})
    request = wrapped_to_request("mlflow", resources)
    for t, (trace, resource) in enumerate(zip(traces, request.resource_spans, strict=True)):
        where = f"[{t}]" if isinstance(document, list) else "trace"
        _trace_level(trace["info"], list(resource.scope_spans[0].spans), where)
    return request


def _trace_level(info: dict[str, Any], spans: list[Span], where: str) -> None:
    """Put the trace's tags, metadata and feedback onto its spans."""
    roots = [s for s in spans if not s.parent_span_id]
    if not roots:
        return
    root = roots[0]
    held = {kv.key for kv in root.attributes}
    for field in ("tags", "trace_metadata", "request_metadata"):
        for key, value in as_object(info.get(field) or {}, f"{where}.info.{field}").items():
            if key not in held:
                root.attributes.append(key_value(str(key), value))
                held.add(key)
    by_id = {s.span_id: s for s in spans}
    for i, raw in enumerate(as_list(info.get("assessments"), f"{where}.info.assessments")):
        here = f"{where}.info.assessments[{i}]"
        assessment = as_object(raw, here)
        found = _evaluation(assessment, here)
        if found is None:
            continue
        target = root
        if assessment.get("span_id"):
            named = by_id.get(bytes_id(assessment["span_id"], 8, f"{here}.span_id"))
            target = named if named is not None else root
        event = target.events.add()
        event.time_unix_nano, attributes = found
        event.name = _EVALUATION
        event.attributes.extend(attributes)

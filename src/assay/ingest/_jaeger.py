"""Jaeger JSON (the UI's "Download JSON" and the query API ``/api/traces``) → OTLP.

The document is Jaeger's JSON model (jaegertracing/jaeger ``model/json``):
``{"data": [{"traceID", "spans": [...], "processes": {"p1": {"serviceName", "tags"}}}]}``, or
one trace object on its own. Each span has ``traceID``, ``spanID``, ``operationName``,
``references`` (``CHILD_OF`` / ``FOLLOWS_FROM``), ``startTime`` and ``duration`` in
microseconds, typed ``tags``, ``logs`` (``timestamp`` in µs, ``fields``) and a ``processID``
(or an inline ``process``).

The reverse of the OpenTelemetry → Jaeger translation (the OpenTelemetry specification's
"OpenTelemetry to Jaeger Transformation", as the Collector's ``jaeger`` translator does it):
the tags ``span.kind``, ``otel.status_code``, ``otel.status_description``, ``error``,
``otel.scope.name`` / ``otel.library.name``, ``otel.scope.version`` / ``otel.library.version``
and ``w3c.tracestate`` go back to the span's fields; a log's ``event`` field is the event's name.
docs/integrations.md ("Jaeger JSON") lists what is read and dropped.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, Span, Status

from assay.errors import InputError
from assay.ingest._build import (
    FORMAT_ATTRIBUTE,
    SCOPE_NAME_TAGS,
    SCOPE_VERSION_TAGS,
    as_list,
    as_object,
    bytes_id,
    key_value,
    micros,
    span_kind,
    time_micros,
)

__all__ = ["is_jaeger", "jaeger_to_request"]

_STATUS = {"OK": Status.STATUS_CODE_OK, "ERROR": Status.STATUS_CODE_ERROR}
_SCOPE_NAME = SCOPE_NAME_TAGS
_SCOPE_VERSION = SCOPE_VERSION_TAGS
#: Tags that are span fields in OTLP, not attributes (read back into the fields).
_FIELD_TAGS = frozenset(
    {
        "span.kind",
        "otel.status_code",
        "otel.status_description",
        "error",
        "w3c.tracestate",
        *_SCOPE_NAME,
        *_SCOPE_VERSION,
    }
)


def _is_trace(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("spans"), list) and "traceID" in item


def is_jaeger(document: Any) -> bool:
    """A Jaeger JSON document: ``{"data": [trace, ...]}`` or one trace object."""
    if not isinstance(document, dict):
        return False
    data = document.get("data")
    if isinstance(data, list):
        return all(_is_trace(t) for t in data) and ("traceID" not in document)
    return _is_trace(document)


def _tag_value(tag: dict[str, Any], where: str) -> Any:
    kind = str(tag.get("type", "string")).lower()
    value = tag.get("value")
    if kind == "binary" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return value  # some writers give binary tags as hex or text: kept as text
    if kind == "int64" and isinstance(value, str):
        try:
            return int(value)
        except ValueError as exc:
            raise InputError(f"{where}: int64 tag value {value!r} is not an integer") from exc
    if kind == "float64" and isinstance(value, str):
        try:
            return float(value)
        except ValueError as exc:
            raise InputError(f"{where}: float64 tag value {value!r} is not a number") from exc
    if kind == "bool" and isinstance(value, str):
        return value.lower() == "true"
    return value


def _tags(value: Any, where: str) -> list[tuple[str, Any]]:
    out = []
    for i, tag in enumerate(as_list(value, where)):
        tag = as_object(tag, f"{where}[{i}]")
        key = tag.get("key")
        if not isinstance(key, str):
            raise InputError(f"{where}[{i}].key is not a string")
        out.append((key, _tag_value(tag, f"{where}[{i}] ({key})")))
    return out


def _first(tags: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if key in tags and tags[key] is not None:
            return str(tags[key])
    return None


def _span(raw: dict[str, Any], where: str, trace_id: bytes) -> tuple[Span, str | None, str | None]:
    """One Jaeger span as an OTLP ``Span``, with its scope name and version."""
    span = Span()
    span.trace_id = (
        bytes_id(raw.get("traceID"), 16, f"{where}.traceID") if "traceID" in raw else (trace_id)
    )
    span.span_id = bytes_id(raw.get("spanID"), 8, f"{where}.spanID")
    name = raw.get("operationName", "")
    span.name = name if isinstance(name, str) else str(name)
    start = time_micros(raw.get("startTime"), f"{where}.startTime")
    span.start_time_unix_nano = start
    span.end_time_unix_nano = start + micros(raw.get("duration", 0), f"{where}.duration")
    tags = _tags(raw.get("tags"), f"{where}.tags")
    fields = {k: v for k, v in tags if k in _FIELD_TAGS}
    span.kind = span_kind(fields.get("span.kind"))
    code = fields.get("otel.status_code")
    if isinstance(code, str) and code.upper() in _STATUS:
        span.status.code = _STATUS[code.upper()]
    elif fields.get("error") is True or str(fields.get("error", "")).lower() == "true":
        span.status.code = Status.STATUS_CODE_ERROR
    description = fields.get("otel.status_description")
    if description and span.status.code == Status.STATUS_CODE_ERROR:
        span.status.message = str(description)
    if fields.get("w3c.tracestate"):
        span.trace_state = str(fields["w3c.tracestate"])
    span.attributes.extend(key_value(k, v) for k, v in tags if k not in _FIELD_TAGS)
    for i, ref in enumerate(as_list(raw.get("references"), f"{where}.references")):
        ref = as_object(ref, f"{where}.references[{i}]")
        ref_where = f"{where}.references[{i}]"
        ref_trace = bytes_id(ref.get("traceID"), 16, f"{ref_where}.traceID")
        ref_span = bytes_id(ref.get("spanID"), 8, f"{ref_where}.spanID")
        kind = str(ref.get("refType", "CHILD_OF")).upper()
        if kind == "CHILD_OF" and not span.parent_span_id and ref_trace == span.trace_id:
            span.parent_span_id = ref_span
            continue
        link = span.links.add()
        link.trace_id = ref_trace
        link.span_id = ref_span
        link.attributes.append(key_value("opentracing.ref_type", kind.lower()))
    for i, log in enumerate(as_list(raw.get("logs"), f"{where}.logs")):
        log = as_object(log, f"{where}.logs[{i}]")
        event = span.events.add()
        event.time_unix_nano = time_micros(log.get("timestamp"), f"{where}.logs[{i}].timestamp")
        log_fields = _tags(log.get("fields"), f"{where}.logs[{i}].fields")
        named = dict(log_fields).get("event")
        event.name = str(named) if named is not None else ""
        event.attributes.extend(key_value(k, v) for k, v in log_fields if k != "event")
    return span, _first(fields, _SCOPE_NAME), _first(fields, _SCOPE_VERSION)


def _traces(document: dict[str, Any]) -> list[Any]:
    return as_list(document["data"], "data") if "data" in document else [document]


def jaeger_to_request(document: dict[str, Any]) -> ExportTraceServiceRequest:
    """Translate a Jaeger JSON document into an OTLP request: a resource per process.

    Raises:
        InputError: A field has the wrong type or an id or time is invalid, named by its path.
    """
    request = ExportTraceServiceRequest()
    for t, trace in enumerate(_traces(document)):
        where = f"data[{t}]" if "data" in document else "trace"
        trace = as_object(trace, where)
        trace_id = bytes_id(trace.get("traceID"), 16, f"{where}.traceID")
        processes = as_object(trace.get("processes") or {}, f"{where}.processes")
        resources: dict[str, ResourceSpans] = {}
        scopes: dict[tuple[str, str | None, str | None], Any] = {}
        for i, raw in enumerate(as_list(trace.get("spans"), f"{where}.spans")):
            span_where = f"{where}.spans[{i}]"
            raw = as_object(raw, span_where)
            process_id = str(raw.get("processID", ""))
            if process_id not in resources:
                process = raw.get("process") or processes.get(process_id) or {}
                resources[process_id] = _resource(
                    request, as_object(process, f"{span_where}.process"), span_where
                )
            span, scope_name, scope_version = _span(raw, span_where, trace_id)
            key = (process_id, scope_name, scope_version)
            if key not in scopes:
                scope = resources[process_id].scope_spans.add()
                scope.scope.name = scope_name or ""
                scope.scope.version = scope_version or ""
                scopes[key] = scope
            scopes[key].spans.append(span)
    return request


def _resource(
    request: ExportTraceServiceRequest, process: dict[str, Any], where: str
) -> ResourceSpans:
    resource: ResourceSpans = request.resource_spans.add()
    attributes = resource.resource.attributes
    service = process.get("serviceName")
    if service is not None:
        attributes.append(key_value("service.name", str(service)))
    attributes.extend(
        key_value(k, v)
        for k, v in _tags(process.get("tags"), f"{where}.process.tags")
        if k != "service.name"
    )
    attributes.append(key_value(FORMAT_ATTRIBUTE, "jaeger"))
    return resource

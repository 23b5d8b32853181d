"""Zipkin v2 JSON (``POST /api/v2/spans``, ``GET /api/v2/trace/{id}``, ``/api/v2/traces``) → OTLP.

A document is a JSON array of spans (zipkin2-api.yaml, ``ListOfSpans``), or an array of such
arrays (``/api/v2/traces``): ``{traceId, id, parentId, name, kind, timestamp, duration,
localEndpoint, remoteEndpoint, annotations: [{timestamp, value}], tags: {string: string}}``,
times in microseconds.

The reverse of the OpenTelemetry → Zipkin translation (the OpenTelemetry specification's
"OpenTelemetry to Zipkin Transformation", as the Python and Collector exporters do it): the tags
``otel.status_code``, ``error`` (the status message), ``otel.scope.name`` /
``otel.library.name`` and their ``version`` go back to the span's fields; an annotation whose
value is the exporters' ``{"event name": {attributes}}`` JSON becomes that event with its
attributes, any other annotation an event named by its text. docs/integrations.md ("Zipkin v2
JSON") lists what is read and dropped, and what Zipkin cannot tell.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from assay.errors import InputError
from assay.ingest._build import (
    FORMAT_ATTRIBUTE,
    SCOPE_NAME_TAGS,
    SCOPE_VERSION_TAGS,
    as_list,
    as_object,
    bytes_id,
    json_value,
    key_value,
    micros,
    span_kind,
    time_micros,
)

__all__ = ["is_zipkin", "zipkin_to_request"]

_SCOPE_NAME = SCOPE_NAME_TAGS
_SCOPE_VERSION = SCOPE_VERSION_TAGS
_FIELD_TAGS = frozenset(
    {"otel.status_code", "otel.status_description", "error", *_SCOPE_NAME, *_SCOPE_VERSION}
)


def _is_span(item: Any) -> bool:
    return isinstance(item, dict) and "traceId" in item and "id" in item


def is_zipkin(document: Any) -> bool:
    """A Zipkin v2 JSON document: an array of spans, or of arrays of spans (not empty)."""
    if not isinstance(document, list) or not document:
        return False
    if all(isinstance(t, list) for t in document):
        return all(_is_span(s) for t in document for s in t)
    return all(_is_span(s) for s in document)


def _spans(document: list[Any]) -> list[tuple[str, Any]]:
    if document and all(isinstance(t, list) for t in document):
        return [(f"[{t}][{i}]", s) for t, trace in enumerate(document) for i, s in enumerate(trace)]
    return [(f"[{i}]", s) for i, s in enumerate(document)]


def _event(value: str) -> tuple[str, dict[str, Any]]:
    """An annotation's event: the exporters' ``{"name": {attributes}}`` or the plain text."""
    if value.startswith("{"):
        try:
            decoded = json_value(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and len(decoded) == 1:
            ((name, attributes),) = decoded.items()
            if isinstance(attributes, dict):
                return str(name), attributes
    return value, {}


def _first(tags: dict[str, str], keys: tuple[str, ...]) -> str | None:
    return next((tags[k] for k in keys if k in tags), None)


def _span(raw: dict[str, Any], where: str) -> tuple[Span, str, str | None, str | None]:
    span = Span()
    span.trace_id = bytes_id(raw.get("traceId"), 16, f"{where}.traceId")
    span.span_id = bytes_id(raw.get("id"), 8, f"{where}.id")
    if raw.get("parentId"):
        span.parent_span_id = bytes_id(raw["parentId"], 8, f"{where}.parentId")
    name = raw.get("name") or ""
    span.name = str(name)
    if "timestamp" not in raw:
        raise InputError(f"{where}.timestamp is missing (the span cannot be placed in time)")
    start = time_micros(raw["timestamp"], f"{where}.timestamp")
    span.start_time_unix_nano = start
    span.end_time_unix_nano = start + micros(raw.get("duration", 0), f"{where}.duration")
    span.kind = span_kind(raw.get("kind"))
    tags = {str(k): v for k, v in as_object(raw.get("tags") or {}, f"{where}.tags").items()}
    code = str(tags.get("otel.status_code", "")).upper()
    if code == "OK":
        span.status.code = Status.STATUS_CODE_OK
    elif code == "ERROR" or "error" in tags:
        span.status.code = Status.STATUS_CODE_ERROR
        message = tags.get("error") or tags.get("otel.status_description")
        if message and str(message).lower() != "true":
            span.status.message = str(message)
    span.attributes.extend(key_value(k, v) for k, v in tags.items() if k not in _FIELD_TAGS)
    remote = as_object(raw.get("remoteEndpoint") or {}, f"{where}.remoteEndpoint")
    for field, attribute in (
        ("serviceName", "peer.service"),
        ("ipv4", "network.peer.address"),
        ("ipv6", "network.peer.address"),
        ("port", "network.peer.port"),
    ):
        if remote.get(field) is not None:
            span.attributes.append(key_value(attribute, remote[field]))
    for i, annotation in enumerate(as_list(raw.get("annotations"), f"{where}.annotations")):
        annotation = as_object(annotation, f"{where}.annotations[{i}]")
        event = span.events.add()
        event.time_unix_nano = time_micros(
            annotation.get("timestamp"), f"{where}.annotations[{i}].timestamp"
        )
        event.name, attributes = _event(str(annotation.get("value", "")))
        event.attributes.extend(key_value(k, v) for k, v in attributes.items())
    local = as_object(raw.get("localEndpoint") or {}, f"{where}.localEndpoint")
    service = str(local.get("serviceName") or "")
    return span, service, _first(tags, _SCOPE_NAME), _first(tags, _SCOPE_VERSION)


def zipkin_to_request(document: list[Any]) -> ExportTraceServiceRequest:
    """Translate a Zipkin v2 JSON document into an OTLP request: a resource per service.

    Raises:
        InputError: A field has the wrong type or an id or time is invalid, named by its path.
    """
    request = ExportTraceServiceRequest()
    resources: dict[str, Any] = {}
    scopes: dict[tuple[str, str | None, str | None], Any] = {}
    for where, raw in _spans(document):
        span, service, scope_name, scope_version = _span(as_object(raw, where), where)
        if service not in resources:
            resource = request.resource_spans.add()
            if service:
                resource.resource.attributes.append(key_value("service.name", service))
            resource.resource.attributes.append(key_value(FORMAT_ATTRIBUTE, "zipkin"))
            resources[service] = resource
        key = (service, scope_name, scope_version)
        if key not in scopes:
            scope = resources[service].scope_spans.add()
            scope.scope.name = scope_name or ""
            scope.scope.version = scope_version or ""
            scopes[key] = scope
        scopes[key].spans.append(span)
    return request

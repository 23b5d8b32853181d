"""Grafana Tempo's trace query results (``/api/traces/<id>``, ``/api/v2/traces/<id>``) → OTLP.

Tempo answers with OTLP/JSON under another key: ``{"batches": [ResourceSpans...]}`` from
``/api/traces/<id>`` (the v1 API, also what Grafana's "Download trace" saves), and
``{"trace": {"resourceSpans": [...]}}`` from ``/api/v2/traces/<id>``. Tempo writes ids in base64
(protobuf's JSON mapping) and, before OTLP 0.19, ``instrumentationLibrarySpans`` /
``instrumentationLibrary`` for what is now ``scopeSpans`` / ``scope``; both are read. Jaeger's
``/api/v3/traces`` answers OTLP/JSON under ``result`` and is read the same way.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from assay.ingest._build import FORMAT_ATTRIBUTE, as_list, as_object, key_value
from assay.ingest._otlp import parse_traces_json

__all__ = ["otlp_wrapped", "wrapped_to_request"]

_OLD_SCOPES = ("instrumentationLibrarySpans", "instrumentation_library_spans")
_OLD_SCOPE = ("instrumentationLibrary", "instrumentation_library")
_RESOURCE_SPANS = ("resourceSpans", "resource_spans", "batches")


def _resource_spans(value: Any) -> list[Any] | None:
    if isinstance(value, dict):
        for key in _RESOURCE_SPANS:
            if isinstance(value.get(key), list):
                return list(value[key])
    return None


def otlp_wrapped(document: Any) -> tuple[str, list[Any]] | None:
    """``(format key, resource spans)`` of OTLP/JSON wrapped by Tempo or Jaeger v3, else None.

    ``tempo`` for ``batches`` or ``trace``, ``jaeger-v3`` for ``result``.
    """
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("batches"), list):
        return "tempo", list(document["batches"])
    for key, name in (("trace", "tempo"), ("result", "jaeger-v3")):
        found = _resource_spans(document.get(key))
        if found is not None:
            return name, found
    return None


def _modernise(raw: Any, where: str) -> dict[str, Any]:
    """A ``ResourceSpans`` with the old instrumentation-library names renamed to scopes."""
    resource = dict(as_object(raw, where))
    for old in _OLD_SCOPES:
        if old in resource:
            scopes: list[dict[str, Any]] = []
            for i, item in enumerate(as_list(resource.pop(old), f"{where}.{old}")):
                scope = dict(as_object(item, f"{where}.{old}[{i}]"))
                for old_scope in _OLD_SCOPE:
                    if old_scope in scope:
                        scope["scope"] = scope.pop(old_scope)
                scopes.append(scope)
            resource["scopeSpans"] = [*as_list(resource.get("scopeSpans"), where), *scopes]
    return resource


def wrapped_to_request(format_key: str, resources: list[Any]) -> ExportTraceServiceRequest:
    """The OTLP request of wrapped resource spans, each resource marked with its source format.

    Raises:
        InputError: Not OTLP/JSON resource spans (the message names the part).
    """
    document = {
        "resourceSpans": [_modernise(r, f"resourceSpans[{i}]") for i, r in enumerate(resources)]
    }
    request = parse_traces_json(document)
    for resource in request.resource_spans:
        resource.resource.attributes.append(key_value(FORMAT_ATTRIBUTE, format_key))
    return request

"""OTLP trace requests (protobuf or OTLP/JSON) → spans-table batches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from assay.ingest._columns import SpanColumns
from assay.ingest._parse import parse_json, parse_protobuf
from assay.ingest._validate import describe, span_problem

__all__ = [
    "DecodedSpans",
    "count_spans",
    "parse_traces_json",
    "parse_traces_protobuf",
    "traces_to_table",
]


@dataclass(frozen=True, slots=True)
class DecodedSpans:
    """The spans of one OTLP request as a spans-table batch."""

    table: pa.Table
    """Accepted spans, with :data:`assay.store.SPANS_SCHEMA`."""
    rejected: int
    """Spans left out because the table cannot hold them (``_validate``: ids, timestamps)."""
    problem: str = ""
    """The first span left out and why (empty when none was)."""


def parse_traces_protobuf(data: bytes) -> ExportTraceServiceRequest:
    """Parse an ``ExportTraceServiceRequest`` in protobuf encoding.

    Raises:
        InputError: The bytes are not a valid message.
    """
    return parse_protobuf(ExportTraceServiceRequest, data)


def parse_traces_json(data: bytes | str | dict[str, Any]) -> ExportTraceServiceRequest:
    """Parse an ``ExportTraceServiceRequest`` in OTLP/JSON encoding.

    IDs are hex as the OTLP/JSON specification says; base64 IDs (protobuf's canonical JSON
    mapping, which some exporters emit) are tolerated.

    Raises:
        InputError: The text is not JSON, or not an ``ExportTraceServiceRequest``.
    """
    return parse_json(ExportTraceServiceRequest, data, "resourceSpans", "resource_spans")


def count_spans(request: ExportTraceServiceRequest) -> tuple[int, int, str]:
    """Return ``(valid, invalid, first problem)`` of a request, by the decoder's rule.

    The problem names the first invalid span and why (``_validate``); empty when none is.
    """
    valid = invalid = 0
    first = ""
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                problem = span_problem(span)
                if problem is None:
                    valid += 1
                    continue
                invalid += 1
                if not first:
                    first = describe("span", span.trace_id, span.span_id, problem)
    return valid, invalid, first


def traces_to_table(request: ExportTraceServiceRequest) -> DecodedSpans:
    """Convert a parsed ``ExportTraceServiceRequest`` into a spans-table batch."""
    columns = SpanColumns()
    rejected = 0
    for resource_spans in request.resource_spans:
        columns.add_resource(resource_spans.resource)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            name = scope.name or None
            version = scope.version or None
            rejected += columns.add_spans(scope_spans.spans, name, version)
    return DecodedSpans(columns.to_table(), rejected, columns.first_problem)

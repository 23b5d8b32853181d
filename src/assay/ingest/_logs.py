"""OTLP log requests: GenAI evaluation results → events on zero-length child spans.

The OpenTelemetry GenAI conventions send an evaluation as a log record (event name
``gen_ai.evaluation.result``) carrying the trace and span ID of the evaluated span. Parquet files
are immutable, and an evaluation usually arrives after its span was exported (often from another
process, minutes later), so the span cannot be rewritten to carry the event. Instead each
evaluation becomes a zero-length span, a child of the evaluated span in the same trace, named
``gen_ai.evaluation.result`` and carrying one event of that name with the record's attributes.
Readers that look for the event on a trial's spans find it there. The synthetic span's ID is
derived from the record's content, so replaying the same record yields the same span.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from assay.ingest._columns import SpanColumns
from assay.ingest._parse import parse_json, parse_protobuf
from assay.ingest._validate import log_record_problem

__all__ = [
    "EVALUATION_EVENT",
    "DecodedLogs",
    "count_log_records",
    "logs_to_table",
    "parse_logs_json",
    "parse_logs_protobuf",
]

#: The GenAI semantic-convention event name of an evaluation result.
EVALUATION_EVENT = "gen_ai.evaluation.result"
#: Attribute marking a span the collector made from a log record.
SYNTHETIC_ATTRIBUTE = "assay.synthetic"


@dataclass(frozen=True, slots=True)
class DecodedLogs:
    """The evaluation results of one OTLP logs request, as spans."""

    table: pa.Table
    """One synthetic span per evaluation result."""
    rejected: int
    """Log records not stored: not an evaluation result, or without a valid trace/span ID."""


def parse_logs_protobuf(data: bytes) -> ExportLogsServiceRequest:
    """Parse an ``ExportLogsServiceRequest`` in protobuf encoding.

    Raises:
        InputError: The bytes are not a valid message.
    """
    return parse_protobuf(ExportLogsServiceRequest, data)


def parse_logs_json(data: bytes | str | dict[str, Any]) -> ExportLogsServiceRequest:
    """Parse an ``ExportLogsServiceRequest`` in OTLP/JSON encoding (hex or base64 IDs).

    Raises:
        InputError: The text is not an OTLP/JSON logs request.
    """
    return parse_json(ExportLogsServiceRequest, data, "resourceLogs", "resource_logs")


def _event_name(record: Any) -> str:
    if record.event_name:
        return str(record.event_name)
    for kv in record.attributes:
        if kv.key == "event.name" and kv.value.WhichOneof("value") == "string_value":
            return str(kv.value.string_value)
    return ""


def _storable(record: Any) -> bool:
    return _event_name(record) == EVALUATION_EVENT and log_record_problem(record) is None


def count_log_records(request: ExportLogsServiceRequest) -> tuple[int, int]:
    """Return ``(stored, rejected)`` log-record counts of a request."""
    stored = rejected = 0
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                if _storable(record):
                    stored += 1
                else:
                    rejected += 1
    return stored, rejected


def logs_to_table(request: ExportLogsServiceRequest) -> DecodedLogs:
    """Turn the evaluation results of a logs request into synthetic child spans."""
    columns = SpanColumns()
    rejected = 0
    for resource_logs in request.resource_logs:
        columns.add_resource(resource_logs.resource)
        for scope_logs in resource_logs.scope_logs:
            scope = scope_logs.scope
            for record in scope_logs.log_records:
                if not _storable(record):
                    rejected += 1
                    continue
                time = record.time_unix_nano or record.observed_time_unix_nano
                attributes = [kv for kv in record.attributes if kv.key != "event.name"]
                if record.HasField("body"):
                    attributes.append(KeyValue(key="gen_ai.evaluation.body", value=record.body))
                digest = hashlib.blake2b(record.SerializeToString(), digest_size=8).digest()
                columns.add_row(
                    trace_id=record.trace_id.hex(),
                    span_id=digest.hex(),
                    parent_span_id=record.span_id.hex(),
                    name=EVALUATION_EVENT,
                    start_time=time,
                    end_time=time,
                    scope_name=scope.name or None,
                    scope_version=scope.version or None,
                    attributes=[
                        KeyValue(key=SYNTHETIC_ATTRIBUTE, value=AnyValue(string_value="log"))
                    ],
                    events=[(time, EVALUATION_EVENT, attributes)],
                )
    return DecodedLogs(columns.to_table(), rejected)

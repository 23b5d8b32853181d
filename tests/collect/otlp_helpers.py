"""Building OTLP requests directly from the protobuf classes (fast, exact control)."""

from __future__ import annotations

import http.client
import itertools

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

_counter = itertools.count(1)


def make_request(
    n: int, *, service: str = "svc", prefix: int = 0, bad_ids: int = 0
) -> tuple[ExportTraceServiceRequest, list[str]]:
    """A request of ``n`` spans with unique IDs; returns it and the hex span IDs."""
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value=service))
    )
    scope_spans = resource_spans.scope_spans.add()
    scope_spans.scope.name = "test"
    ids: list[str] = []
    for i in range(n):
        number = next(_counter)
        span = scope_spans.spans.add()
        span.trace_id = prefix.to_bytes(8, "big") + number.to_bytes(8, "big")
        span.span_id = number.to_bytes(8, "big")
        span.name = f"span-{i}"
        span.start_time_unix_nano = 1_764_000_000_000_000_000 + number
        span.end_time_unix_nano = span.start_time_unix_nano + 1000
        span.attributes.append(KeyValue(key="i", value=AnyValue(int_value=i)))
        ids.append(span.span_id.hex())
    for _ in range(bad_ids):
        span = scope_spans.spans.add()
        span.trace_id = b"\x01" * 3
        span.span_id = b"\x02" * 8
        span.name = "bad"
    return request, ids


def post(
    port: int,
    path: str,
    body: bytes,
    headers: dict[str, str] | None = None,
    *,
    timeout: float = 30,
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def post_protobuf(port: int, request: ExportTraceServiceRequest, **headers: str) -> int:
    status, _, _ = post(
        port,
        "/v1/traces",
        request.SerializeToString(),
        {"Content-Type": "application/x-protobuf", **headers},
    )
    return status

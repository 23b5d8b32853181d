"""Each bad request gets its OTLP status, and the collector keeps serving the next one."""

from __future__ import annotations

import concurrent.futures
import gzip
import json
import urllib.request
from pathlib import Path

import grpc
import pytest
from collector_process import AnyCollector, CollectorFactory
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from otlp_helpers import make_request, post

from assay.store import read_spans

TOKEN = "s3cret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PROTOBUF = {"Content-Type": "application/x-protobuf", **AUTH}
TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"


@pytest.fixture
def guarded(tmp_path: Path, collector_factory: CollectorFactory) -> AnyCollector:
    return collector_factory(
        tmp_path / "traces",
        ["--token", TOKEN, "--max-body-mb", "1", "--max-decompressed-mb", "2", "--roll-age", "1"],
    ).start()


def _good(collector: AnyCollector, sent: list[str]) -> None:
    request, ids = make_request(3)
    status, _, body = post(collector.http_port, "/v1/traces", request.SerializeToString(), PROTOBUF)
    assert status == 200, body
    sent.extend(ids)


def _status(body: bytes) -> status_pb2.Status:
    status = status_pb2.Status()
    status.ParseFromString(body)
    return status


def test_http_bad_inputs_get_their_status(guarded: AnyCollector) -> None:
    port = guarded.http_port
    sent: list[str] = []
    valid, _ = make_request(2)
    body = valid.SerializeToString()
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))
    cases: list[tuple[str, bytes, dict[str, str], int]] = [
        ("garbage protobuf", b"\xff\xff\xff\xff", PROTOBUF, 400),
        ("truncated protobuf", body[:-7], PROTOBUF, 400),
        ("bad json", b"{not json", {"Content-Type": "application/json", **AUTH}, 400),
        ("json array", b"[1, 2]", {"Content-Type": "application/json", **AUTH}, 400),
        (
            "json bad id",
            json.dumps(
                {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "x"}]}]}]}
            ).encode(),
            {"Content-Type": "application/json", **AUTH},
            400,
        ),
        ("not gzip", b"plain", {**PROTOBUF, "Content-Encoding": "gzip"}, 400),
        ("no token", body, {"Content-Type": "application/x-protobuf"}, 401),
        ("wrong token", body, {**PROTOBUF, "Authorization": "Bearer nope"}, 401),
        ("text/plain", body, {"Content-Type": "text/plain", **AUTH}, 415),
        ("brotli", body, {**PROTOBUF, "Content-Encoding": "br"}, 415),
        ("over body limit", b"\0" * (3 * 1024 * 1024), PROTOBUF, 413),
        ("gzip bomb", bomb, {**PROTOBUF, "Content-Encoding": "gzip"}, 413),
        ("wrong path", body, PROTOBUF, 404),
    ]
    for name, payload, headers, expected in cases:
        path = "/v1/nothing" if name == "wrong path" else "/v1/traces"
        status, reply_headers, reply = post(port, path, payload, headers)
        assert status == expected, (name, reply)
        if expected == 401:
            assert reply_headers.get("WWW-Authenticate", "").startswith("Bearer")
        if reply_headers.get("Content-Type") == "application/x-protobuf":
            assert _status(reply).message
        _good(guarded, sent)
    # some spans with invalid IDs: accepted in part, reported as partial success
    partial, ids = make_request(4, bad_ids=2)
    status, _, reply = post(port, "/v1/traces", partial.SerializeToString(), PROTOBUF)
    assert status == 200
    response = ExportTraceServiceResponse()
    response.ParseFromString(reply)
    assert response.partial_success.rejected_spans == 2
    assert "invalid" in response.partial_success.error_message
    sent.extend(ids)
    health = guarded.health()
    assert health["requests_refused"] == len(cases)
    log = guarded.output()
    assert "with 415: unsupported content encoding 'br'" in log
    assert "with 404: no OTLP endpoint at /v1/nothing" in log
    assert guarded.terminate() == 0
    assert sorted(read_spans(guarded.out)["span_id"].to_list()) == sorted(sent)


def test_grpc_bad_inputs_get_their_status(guarded: AnyCollector) -> None:
    channel = grpc.insecure_channel(
        f"127.0.0.1:{guarded.grpc_port}",
        options=[("grpc.max_send_message_length", 64 * 1024 * 1024)],
    )
    export = channel.unary_unary(TRACES)
    metadata = (("authorization", f"Bearer {TOKEN}"),)
    request, ids = make_request(3)
    cases = [
        (b"\xff\xff\xff", metadata, grpc.StatusCode.INVALID_ARGUMENT),
        (request.SerializeToString(), (), grpc.StatusCode.UNAUTHENTICATED),
        (
            request.SerializeToString(),
            (("authorization", "Bearer x"),),
            grpc.StatusCode.UNAUTHENTICATED,
        ),
        (
            b"\n" + b"\xff" * 5 + b"\x01" + b"\0" * (3 * 1024 * 1024),
            metadata,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        ),
    ]
    sent: list[str] = []
    for payload, call_metadata, expected in cases:
        with pytest.raises(grpc.RpcError) as caught:
            export(payload, metadata=call_metadata, timeout=10)
        assert caught.value.code() == expected
        good, good_ids = make_request(2)
        reply = export(good.SerializeToString(), metadata=metadata, timeout=10)
        assert ExportTraceServiceResponse.FromString(reply).partial_success.rejected_spans == 0
        sent.extend(good_ids)
    channel.close()
    assert "with UNAUTHENTICATED: missing or wrong bearer token" in guarded.output()
    assert "with INVALID_ARGUMENT: " in guarded.output()
    assert guarded.terminate() == 0
    assert sorted(read_spans(guarded.out)["span_id"].to_list()) == sorted(sent)


def test_backpressure_answers_429_with_retry_after(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    collector = collector_factory(tmp_path / "traces", ["--max-queue-mb", "1"]).start()
    requests = [make_request(3000) for _ in range(24)]
    bodies = [r.SerializeToString() for r, _ in requests]
    assert all(len(b) > 100_000 for b in bodies)

    def send(i: int) -> tuple[int, dict[str, str], list[str]]:
        status, headers, _ = post(
            collector.http_port,
            "/v1/traces",
            bodies[i],
            {"Content-Type": "application/x-protobuf"},
        )
        return status, headers, requests[i][1]

    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        results = list(pool.map(send, range(len(bodies))))
    statuses = [status for status, _, _ in results]
    assert set(statuses) <= {200, 429}
    assert 429 in statuses
    assert all(h.get("Retry-After") == "1" for status, h, _ in results if status == 429)
    acknowledged = [i for status, _, ids in results if status == 200 for i in ids]
    assert collector.terminate() == 0
    assert sorted(read_spans(collector.out)["span_id"].to_list()) == sorted(acknowledged)


def test_grpc_resource_exhausted_carries_retry_info(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    collector = collector_factory(tmp_path / "traces", ["--max-queue-mb", "1"]).start()
    channel = grpc.insecure_channel(f"127.0.0.1:{collector.grpc_port}")
    export = channel.unary_unary(TRACES)
    bodies = [make_request(3000)[0].SerializeToString() for _ in range(24)]

    def send(body: bytes) -> grpc.RpcError | None:
        try:
            export(body, timeout=30)
        except grpc.RpcError as exc:
            return exc
        return None

    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        errors = [e for e in pool.map(send, bodies) if e is not None]
    channel.close()
    assert errors
    for error in errors:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        trailing = dict(error.trailing_metadata() or ())
        status = status_pb2.Status.FromString(trailing["grpc-status-details-bin"])
        retry = error_details_pb2.RetryInfo()
        assert status.details[0].Unpack(retry)
        assert retry.retry_delay.seconds == 1
    assert collector.terminate() == 0


def test_empty_request_is_fine(collector: AnyCollector) -> None:
    status, _, reply = post(
        collector.http_port,
        "/v1/traces",
        ExportTraceServiceRequest().SerializeToString(),
        {"Content-Type": "application/x-protobuf"},
    )
    assert status == 200
    assert ExportTraceServiceResponse.FromString(reply).partial_success.rejected_spans == 0
    with urllib.request.urlopen(collector.url + "/metrics", timeout=5) as response:
        text = response.read().decode()
    assert "assay_collector_requests 1" in text
    assert "# TYPE assay_collector_queue_bytes gauge" in text


def test_draining_collector_answers_503_and_unavailable(tmp_path: Path) -> None:
    """While draining (between SIGTERM and exit) new requests are pushed back, not lost."""
    from assay.collect import Collector, CollectorConfig

    config = CollectorConfig(out=tmp_path / "traces", http_port=0, grpc_port=0, workers=0)
    collector = Collector(config)
    collector.start()
    try:
        request, _ = make_request(2)
        assert collector.http_port is not None
        status, _, _ = post(
            collector.http_port,
            "/v1/traces",
            request.SerializeToString(),
            {"Content-Type": "application/x-protobuf"},
        )
        assert status == 200
        collector._intake.draining = True  # type: ignore[union-attr]  # the first step of stop()
        status, headers, body = post(
            collector.http_port,
            "/v1/traces",
            request.SerializeToString(),
            {"Content-Type": "application/x-protobuf"},
        )
        assert status == 503
        assert headers["Retry-After"] == "1"
        assert "shutting down" in _status(body).message
        channel = grpc.insecure_channel(f"127.0.0.1:{collector.grpc_port}")
        with pytest.raises(grpc.RpcError) as caught:
            channel.unary_unary(TRACES)(request.SerializeToString(), timeout=10)
        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        channel.close()
    finally:
        collector.stop()
    assert read_spans(config.out).height == 2


def test_grpc_gzip_bomb_is_refused(guarded: AnyCollector) -> None:
    channel = grpc.insecure_channel(
        f"127.0.0.1:{guarded.grpc_port}",
        options=[("grpc.max_send_message_length", 64 * 1024 * 1024)],
        compression=grpc.Compression.Gzip,
    )
    export = channel.unary_unary(TRACES)
    bomb = b"\x0a\x80\x80\x80\x0a" + b"\0" * (20 * 1024 * 1024)  # inflates to 20 MiB > 2 MiB
    with pytest.raises(grpc.RpcError) as caught:
        export(bomb, metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=30)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    good, _ = make_request(2)
    export(good.SerializeToString(), metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=10)
    channel.close()
    assert guarded.health()["status"] == "ok"

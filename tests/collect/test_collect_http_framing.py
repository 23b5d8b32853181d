"""How OTLP/HTTP senders frame their requests: chunked bodies, ``Expect: 100-continue``,
keep-alive, gzip — each accepted within the limits, each refusal answered and logged with its
reason, and the collector serving on after it.

The senders are real: ``http.client`` (which streams an iterable body chunked), raw sockets
where a client library would not send what is tested (a malformed chunk, both framings at once).
The OpenTelemetry JS exporters, which send chunked bodies, run in
``tests/integrations/test_typescript.py``.
"""

from __future__ import annotations

import gzip
import http.client
import socket
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from collector_process import AnyCollector, CollectorFactory
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from otlp_helpers import make_request

from assay.store import read_spans

PROTOBUF = {"Content-Type": "application/x-protobuf"}


@pytest.fixture
def limited(tmp_path: Path, collector_factory: CollectorFactory) -> AnyCollector:
    args = ["--max-body-mb", "1", "--max-decompressed-mb", "2", "--roll-age", "0.5"]
    return collector_factory(tmp_path / "traces", args).start()


def _pieces(data: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _chunked(connection: http.client.HTTPConnection, body: bytes, headers: dict[str, str]) -> int:
    """POST ``body`` in 1000-byte chunks on ``connection`` (kept open); the status."""
    connection.request(
        "POST", "/v1/traces", body=_pieces(body, 1000), headers=headers, encode_chunked=True
    )
    response = connection.getresponse()
    reply = response.read()
    if response.status == 200:
        assert ExportTraceServiceResponse.FromString(reply).partial_success.rejected_spans == 0
    return response.status


def _raw(port: int, request: bytes, *, body: bytes = b"") -> bytes:
    """Send ``request`` (then ``body``) on a fresh socket; everything answered until close."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_chunked_bodies_on_one_kept_alive_connection(limited: AnyCollector) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", limited.http_port, timeout=30)
    sent: list[str] = []
    for compress in (False, True, False):
        request, ids = make_request(100)
        body = request.SerializeToString()
        assert len(body) > 3000  # several chunks
        headers = dict(PROTOBUF)
        if compress:
            body = gzip.compress(body)
            headers["Content-Encoding"] = "gzip"
        assert _chunked(connection, body, headers) == 200
        sent += ids
    # the same connection served all three, and a Content-Length request after them
    request, ids = make_request(2)
    connection.request("POST", "/v1/traces", body=request.SerializeToString(), headers=PROTOBUF)
    assert connection.getresponse().status == 200
    sent += ids
    connection.close()
    assert limited.health()["requests_refused"] == 0
    assert limited.terminate() == 0
    assert sorted(read_spans(limited.out)["span_id"].to_list()) == sorted(sent)


def test_chunked_bodies_keep_the_body_and_decompression_limits(limited: AnyCollector) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", limited.http_port, timeout=30)
    assert _chunked(connection, b"\0" * (3 * 1024 * 1024), PROTOBUF) == 413
    connection.close()
    bomb = gzip.compress(b"\0" * (5 * 1024 * 1024))
    connection = http.client.HTTPConnection("127.0.0.1", limited.http_port, timeout=30)
    assert _chunked(connection, bomb, {**PROTOBUF, "Content-Encoding": "gzip"}) == 413
    deflate = {**PROTOBUF, "Content-Encoding": "deflate"}
    assert _chunked(connection, zlib.compress(b"\0" * (5 * 1024 * 1024)), deflate) == 413
    connection.close()
    connection = http.client.HTTPConnection("127.0.0.1", limited.http_port, timeout=30)
    assert _chunked(connection, zlib.compress(b"\0" * 100)[:-3], deflate) == 400
    request, ids = make_request(3)
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)  # raw deflate, as some senders make it
    body = raw.compress(request.SerializeToString()) + raw.flush()
    assert _chunked(connection, body, deflate) == 200  # serving on
    connection.close()
    output = limited.output()
    assert "with 413: chunked body exceeds the limit of 1048576 bytes" in output
    assert "with 413: decompressed body exceeds 2097152 bytes" in output
    assert "with 400: truncated or trailing deflate data" in output
    assert limited.terminate() == 0
    assert read_spans(limited.out)["span_id"].to_list() == ids


def test_bad_framing_is_refused_with_its_status_and_logged(limited: AnyCollector) -> None:
    port = limited.http_port
    head = b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
    # h11's words after the receiver's (h11 >= 0.16 checks the CRLF after each chunk's data)
    bad_size = "malformed chunked body: illegal chunk header"
    too_long = "malformed chunked body: malformed chunk footer"
    cases = [
        (b"Transfer-Encoding: chunked\r\n\r\n", b"zz\r\nab\r\n0\r\n\r\n", b"400", bad_size),
        (b"Transfer-Encoding: chunked\r\n\r\n", b"2\r\nabcd\r\n0\r\n\r\n", b"400", too_long),
        (b"Transfer-Encoding: chunked\r\n\r\n", b"-2\r\nab\r\n0\r\n\r\n", b"400", bad_size),
        (
            b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            b"0\r\n\r\n",
            b"400",
            "both Transfer-Encoding and Content-Length",
        ),
        (b"Transfer-Encoding: gzip, chunked\r\n\r\n", b"0\r\n\r\n", b"501", "Transfer-Encoding"),
        (b"\r\n", b"", b"411", "Content-Length header or Transfer-Encoding: chunked"),
    ]
    for headers, body, status, reason in cases:
        answer = _raw(port, head + headers, body=body)
        assert answer.startswith(b"HTTP/1.1 " + status), (headers, answer[:200])
        assert reason in limited.output().split(f"with {status.decode()}: ", 1)[-1], reason
        request, _ = make_request(1)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        assert _chunked(connection, request.SerializeToString(), PROTOBUF) == 200
        connection.close()
    assert limited.health()["requests_refused"] == len(cases)


def test_expect_100_continue(tmp_path: Path, collector_factory: CollectorFactory) -> None:
    collector = collector_factory(tmp_path / "traces", ["--token", "t0ken"]).start()
    request, ids = make_request(5)
    body = request.SerializeToString()
    with socket.create_connection(("127.0.0.1", collector.http_port), timeout=10) as sock:
        sock.sendall(
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            b"Authorization: Bearer t0ken\r\nExpect: 100-continue\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
        )
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"  # only then the body
        sock.sendall(body)
        assert sock.recv(100).startswith(b"HTTP/1.1 200 OK")
    # refused on its headers: answered at once, no 100 asked the sender for a body in vain
    answer = _raw(
        collector.http_port,
        b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
        b"Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n",
    )
    assert answer.startswith(b"HTTP/1.1 401"), answer[:100]
    assert b"100 Continue" not in answer
    assert "with 401: missing or wrong bearer token" in collector.output()
    assert collector.terminate() == 0
    assert sorted(read_spans(collector.out)["span_id"].to_list()) == sorted(ids)


def test_a_flood_of_refusals_is_logged_in_few_lines(limited: AnyCollector) -> None:
    for _ in range(30):
        answer = _raw(
            limited.http_port,
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 2\r\n\r\nab",
        )
        assert answer.startswith(b"HTTP/1.1 415")
    lines = [line for line in limited.output().splitlines() if "with 415" in line]
    assert len(lines) == 1, lines
    assert "unsupported content type 'text/plain'" in lines[0]
    assert limited.health()["requests_refused"] == 30


def test_bad_request_heads_are_refused_with_their_status(limited: AnyCollector) -> None:
    """What h11 cannot frame is answered with its status, logged, and the next request served."""
    port = limited.http_port
    post = b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
    cases = [
        (b"GARBAGE\r\n\r\n", b"400", "malformed request"),
        (b"POST /v1/traces HTTP/1.1\r\nContent-Length: 0\r\n\r\n", b"400", "Host"),
        (post + b"Content-Length: 12abc\r\n\r\n", b"400", "Content-Length"),
        (post + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", b"400", "Content-Length"),
        (post + b"X-Endless: " + b"a" * 70_000, b"431", "malformed request"),
    ]
    for request, status, reason in cases:
        answer = _raw(port, request)
        assert answer.startswith(b"HTTP/1.1 " + status), (request[:60], answer[:200])
        assert reason in limited.output().split(f"with {status.decode()}: ", 1)[-1], reason
        good, _ = make_request(1)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        assert _chunked(connection, good.SerializeToString(), PROTOBUF) == 200
        connection.close()
    answer = _raw(port, b"PUT /v1/traces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 405") and b"\r\nAllow: GET, HEAD, POST\r\n" in answer
    assert limited.health()["requests_refused"] == len(cases) + 1


def test_pipelined_and_http_1_0_requests(limited: AnyCollector) -> None:
    sent: list[str] = []
    requests = b""
    for connection_header in (b"", b"Connection: close\r\n"):
        request, ids = make_request(2)
        body = request.SerializeToString()
        requests += (
            b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\n"
            + connection_header
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        sent += ids
    answer = _raw(limited.http_port, requests)  # both in one write, answered in order
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 2, answer[:300]
    request, ids = make_request(2)
    body = request.SerializeToString()
    answer = _raw(
        limited.http_port,
        b"POST /v1/traces HTTP/1.0\r\nContent-Type: application/x-protobuf\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode(),
        body=body,
    )  # an HTTP/1.0 sender: answered, then closed
    assert answer.startswith(b"HTTP/1.1 200 OK") and b"\r\nConnection: close\r\n" in answer
    sent += ids
    head = _raw(limited.http_port, b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and head.endswith(b"\r\n\r\n")  # no body
    assert limited.terminate() == 0
    assert sorted(read_spans(limited.out)["span_id"].to_list()) == sorted(sent)

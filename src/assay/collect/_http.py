"""The OTLP/HTTP receiver (``POST /v1/traces``, ``POST /v1/logs``), health and metrics.

Status codes follow the OTLP/HTTP specification: 200 with an ``Export*ServiceResponse`` in the
request's encoding (``partial_success`` when some items were refused); 400 for undecodable
data; 401 for a missing or wrong token; 413 for a body (or its decompressed form) over the
limit; 415 for an unsupported content type or encoding (gzip and deflate are read); 429 with
``Retry-After`` when the queue is full and 503 with ``Retry-After`` while shutting down. Error
bodies are a ``google.rpc.Status`` in the request's encoding, and every refusal is logged with
its reason (``_refusals``).

Bodies come with a ``Content-Length`` or chunked (``Transfer-Encoding: chunked``, what the
OpenTelemetry JS exporters send), within the same limits. ``Expect: 100-continue`` is answered
only once the headers pass every check, so a refused sender does not send its body in vain.
Connections are kept alive between requests (HTTP/1.1) unless a refusal leaves a body unread.
"""

from __future__ import annotations

import io
import json
import logging
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from assay.collect._chunked import ChunkedBodyError, read_chunked
from assay.collect._config import (
    CollectorConfig,
    DecompressionError,
    TooLargeError,
    gunzip_bounded,
    inflate_bounded,
)
from assay.collect._counters import Counters
from assay.collect._intake import Accepted, Intake, OverloadedError, UnavailableError
from assay.collect._refusals import RefusalLog
from assay.collect._tls import ServerTls, failure_reason
from assay.errors import InputError

__all__ = ["HttpReceiver"]

_log = logging.getLogger("assay.collect")
_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
# google.rpc.Code numbers for error bodies
_RPC_CODE = {
    500: 13, 400: 3, 401: 16, 404: 5, 405: 12, 411: 3, 413: 8, 415: 3, 429: 8, 501: 12, 503: 14
}  # fmt: skip
_THROTTLED = (429, 503)
#: Lengths standing for a body without a valid ``Content-Length`` (see ``_body_length``).
_CHUNKED, _NO_LENGTH, _BAD_LENGTH, _AMBIGUOUS, _BAD_CODING = -1, -2, -3, -4, -5


_LENGTH_REFUSALS: dict[int, tuple[int, str, dict[str, str] | None]] = {
    _NO_LENGTH: (411, "a Content-Length header or Transfer-Encoding: chunked is required", None),
    _BAD_LENGTH: (400, "the Content-Length header is not a byte count", None),
    _AMBIGUOUS: (400, "both Transfer-Encoding and Content-Length were sent", None),
    _BAD_CODING: (
        501,
        "unsupported Transfer-Encoding; use chunked (Content-Encoding: gzip to compress)",
        None,
    ),
}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        intake: Intake,
        config: CollectorConfig,
        counters: Counters,
        tls: ssl.SSLContext | None,
    ) -> None:
        self.tls = tls
        self.intake = intake
        self.config = config
        self.counters = counters
        self.refusals = RefusalLog()
        self.connections = threading.BoundedSemaphore(config.max_connections)
        self.active = 0
        self.idle = threading.Condition()
        super().__init__(address, _Handler)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no POST is being handled; return False on timeout."""
        with self.idle:
            return self.idle.wait_for(lambda: self.active == 0, timeout=timeout)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.connections.acquire(blocking=False):
            limit = f"{self.config.max_connections} connections are open"
            self.refusals.refused(
                "503", str(client_address[0]), "a connection", limit, throttled=True
            )
            try:  # over TLS, plain text would be noise before a handshake: just close
                if self.tls is None:
                    request.sendall(
                        b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
                        b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                    )
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release()

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        # The handshake runs here, on the connection's own thread (never on the accepting
        # one, which a slow handshake would block), within the header deadline.
        secure = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        try:
            secure.settimeout(self.config.header_timeout_s)
            try:
                secure.do_handshake()
            except (ssl.SSLError, OSError) as exc:
                reason = f"TLS handshake failed ({failure_reason(exc)})"
                self.refusals.refused(
                    "TLS", str(client_address[0]), "a connection", reason, throttled=False
                )
                self.counters.add("tls_handshakes_failed")
                return
            super().finish_request(secure, client_address)
        finally:
            try:
                secure.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            secure.close()


class _DeadlineReader(io.RawIOBase):
    """A socket reader with a deadline for the whole of a request's headers or body.

    A per-read timeout alone lets a slow client (slowloris) keep a connection by sending a
    byte just before each timeout; a deadline bounds the total time instead.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.deadline = float("inf")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("read deadline passed")
        self._sock.settimeout(min(remaining, 3600.0))
        return self._sock.recv_into(buffer)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "assay-collector"
    # An answer is written as headers then body: with Nagle's algorithm on, the body waits
    # for the sender's delayed ACK of the headers, 40 ms per request on a kept-alive
    # connection.
    disable_nagle_algorithm = True
    _reader: _DeadlineReader
    _expects_continue = False

    def setup(self) -> None:
        super().setup()
        self._reader = _DeadlineReader(self.connection)
        self.rfile = io.BufferedReader(self._reader, 1 << 16)

    def handle_one_request(self) -> None:
        # The header deadline includes the wait for the request (idle keep-alive time).
        self._reader.deadline = time.monotonic() + self.server.config.header_timeout_s
        self._expects_continue = False
        super().handle_one_request()

    def handle_expect_100(self) -> bool:
        # The stdlib answers "100 Continue" before the request is looked at; defer it to
        # ``_post``, which sends it only for a request it will read.
        self._expects_continue = True
        return True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        _log.debug("%s " + format, self.address_string(), *args)

    # --- responses ----------------------------------------------------------------------------
    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        # Reads may have left a nearly spent deadline as the socket timeout; writing the
        # answer gets its own (a sender that stops reading is still cut off).
        self.connection.settimeout(self.server.config.body_timeout_s)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _error(
        self, status: int, message: str, *, json_body: bool, headers: dict[str, str] | None = None
    ) -> None:
        counters = self.server.counters
        counters.add("requests")
        throttled = status in _THROTTLED
        counters.add("requests_throttled" if throttled else "requests_refused")
        if status != 500:  # an internal error is logged with its traceback where it happens
            what = f"POST {self.path.split('?', 1)[0]}"
            self.server.refusals.refused(
                str(status), self.address_string(), what, message, throttled=throttled
            )
        rpc = status_pb2.Status(code=_RPC_CODE.get(status, 2), message=message)
        if json_body:
            body = json.dumps(json_format.MessageToDict(rpc)).encode()
            self._send(status, body, _JSON, headers)
        else:
            self._send(status, rpc.SerializeToString(), _PROTOBUF, headers)

    # --- GET: health and metrics --------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        """Serve ``/health`` (JSON, with counters) and ``/metrics`` (Prometheus text)."""
        path = self.path.split("?", 1)[0]
        counters = self.server.counters
        if path in ("/health", "/healthz", "/"):
            snapshot = counters.snapshot()
            status = "ok"
            if snapshot.get("converter_failed") or snapshot.get("wal_failed"):
                status = "failed"  # the log still holds every acknowledged span
            elif snapshot.get("disk_full"):
                status = "disk_full"  # refusing (WAL) or waiting to convert, nothing lost
            elif self.server.intake.draining:
                status = "draining"
            document = {"status": status, **snapshot}
            self._send(200 if status == "ok" else 503, json.dumps(document).encode(), _JSON)
        elif path == "/metrics":
            self._send(200, counters.prometheus().encode(), "text/plain; version=0.0.4")
        else:
            self._send(404, b"not found\n", "text/plain")

    # --- POST: OTLP ---------------------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        """Receive one OTLP export request."""
        server = self.server
        with server.idle:
            server.active += 1
        try:
            if server.intake.draining:
                self.close_connection = True
            self._post()
        except (TimeoutError, ConnectionError):
            self.close_connection = True
        except Exception as exc:  # a bug must cost one request, never the collector
            _log.exception("unexpected error handling %s", self.path)
            self.close_connection = True
            try:
                self._error(500, f"internal error: {type(exc).__name__}", json_body=False)
            except OSError:
                pass
        finally:
            with server.idle:
                server.active -= 1
                server.idle.notify_all()

    def _post(self) -> None:
        config = self.server.config
        intake = self.server.intake
        path = self.path.split("?", 1)[0].rstrip("/")
        media = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if media == "application/protobuf":  # some senders use the unprefixed name
            media = _PROTOBUF
        json_body = media == _JSON
        length = self._body_length()
        # A request refused before its body is read closes the connection (the unread body
        # would otherwise be taken for the next request). A body of bounded size is read and
        # dropped first, so that the sender, still writing it, gets to read the answer.
        refusal: tuple[int, str, dict[str, str] | None] | None = None
        if path not in ("/v1/traces", "/v1/logs"):
            refusal = (404, f"no OTLP endpoint at {path}", None)
        elif not intake.authorized(self.headers.get("Authorization")):
            challenge = {"WWW-Authenticate": 'Bearer realm="assay"'}
            refusal = (401, "missing or wrong bearer token", challenge)
        elif media not in (_PROTOBUF, _JSON):
            allowed = f"use {_PROTOBUF} or {_JSON}"
            refusal = (415, f"unsupported content type {media or '(none)'!r}; {allowed}", None)
        elif length < _CHUNKED:
            refusal = _LENGTH_REFUSALS[length]
        elif length > config.max_body_bytes:
            limit = config.max_body_bytes
            refusal = (413, f"body of {length} bytes exceeds the limit of {limit}", None)
        self._reader.deadline = time.monotonic() + config.body_timeout_s
        if refusal is not None:
            status, message, headers = refusal
            self.close_connection = True
            if not self._expects_continue:  # else the sender waits for a word to send it
                self._discard(length, 4 * config.max_body_bytes)
            self._error(status, message, json_body=json_body and status != 415, headers=headers)
            return
        if self._expects_continue:
            self.send_response_only(100)
            self.end_headers()
        body = self._read_body(length, json_body)  # under the body deadline set above
        if body is None:
            return
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        try:
            if encoding in ("gzip", "x-gzip"):
                body = gunzip_bounded(body, config.max_decompressed_bytes, config.max_gzip_members)
            elif encoding == "deflate":
                body = inflate_bounded(body, config.max_decompressed_bytes)
            elif encoding != "identity":
                message = f"unsupported content encoding {encoding!r}; use gzip (or deflate)"
                self._error(415, message, json_body=json_body)
                return
            if len(body) > config.max_decompressed_bytes:
                raise TooLargeError(f"body exceeds {config.max_decompressed_bytes} bytes")
            if path == "/v1/traces":
                result = intake.traces(body, json=json_body)
            else:
                result = intake.logs(body, json=json_body)
        except TooLargeError as exc:
            self._error(413, str(exc), json_body=json_body)
        except (DecompressionError, InputError) as exc:
            self._error(400, str(exc), json_body=json_body)
        except OverloadedError as exc:
            retry = str(config.retry_after_s)
            self._error(429, str(exc), json_body=json_body, headers={"Retry-After": retry})
        except UnavailableError as exc:
            retry = str(config.retry_after_s)
            self._error(503, str(exc), json_body=json_body, headers={"Retry-After": retry})
        else:
            self._ok(path, result, json_body)

    def _body_length(self) -> int:
        """The body's ``Content-Length``, ``_CHUNKED``, or the code of what is wrong."""
        coding = self.headers.get("Transfer-Encoding")
        length_header = self.headers.get("Content-Length")
        if coding is not None:
            if length_header is not None:  # a request smuggling vector: refuse, do not pick
                return _AMBIGUOUS
            codings = [part.strip().lower() for part in coding.split(",")]
            return _CHUNKED if codings == ["chunked"] else _BAD_CODING
        if length_header is None:
            return _NO_LENGTH
        try:
            length = int(length_header)
        except ValueError:
            return _BAD_LENGTH
        return length if length >= 0 else _BAD_LENGTH

    def _read_body(self, length: int, json_body: bool) -> bytes | None:
        """The request's body, or None once the request is answered or the sender is gone."""
        if length != _CHUNKED:
            body = self.rfile.read(length)
            if len(body) < length:
                self.close_connection = True
                return None
            return body
        limit = self.server.config.max_body_bytes
        try:
            return read_chunked(self.rfile, limit, drain=4 * limit)
        except (TooLargeError, ChunkedBodyError) as exc:
            self.close_connection = True  # what is left of the body cannot be told apart
            status = 413 if isinstance(exc, TooLargeError) else 400
            self._error(status, str(exc), json_body=json_body)
            return None

    def _discard(self, length: int, limit: int) -> None:
        """Read and drop a body of at most ``limit`` bytes (larger ones are left unread)."""
        if length == _CHUNKED:
            try:
                read_chunked(self.rfile, limit)
            except (TooLargeError, ChunkedBodyError):
                pass
            return
        if not 0 < length <= limit:
            return
        remaining = length
        while remaining:
            chunk = self.rfile.read(min(remaining, 1 << 16))
            if not chunk:
                return
            remaining -= len(chunk)

    def _ok(self, path: str, result: Accepted, json_body: bool) -> None:
        response: ExportTraceServiceResponse | ExportLogsServiceResponse
        if path == "/v1/traces":
            response = ExportTraceServiceResponse()
            if result.rejected:
                response.partial_success.rejected_spans = result.rejected
                response.partial_success.error_message = result.message
        else:
            response = ExportLogsServiceResponse()
            if result.rejected:
                response.partial_success.rejected_log_records = result.rejected
                response.partial_success.error_message = result.message
        self.server.counters.add("requests")
        if json_body:
            self._send(200, json.dumps(json_format.MessageToDict(response)).encode(), _JSON)
        else:
            self._send(200, response.SerializeToString(), _PROTOBUF)


class HttpReceiver:
    """The OTLP/HTTP server, run on its own thread.

    Args:
        config: Host, port and limits.
        intake: Where requests go.
        counters: Served on ``/health`` and ``/metrics``.
        tls: Serve HTTPS (health and metrics too) with these; None = plain HTTP.
    """

    def __init__(
        self,
        config: CollectorConfig,
        intake: Intake,
        counters: Counters,
        tls: ServerTls | None = None,
    ) -> None:
        assert config.http_port is not None
        address = (config.host, config.http_port)
        context = None if tls is None else tls.context
        self._server = _Server(address, intake, config, counters, context)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="assay-http"
        )

    @property
    def port(self) -> int:
        """The bound port (useful when 0 was asked for)."""
        return int(self._server.server_address[1])

    def start(self) -> None:
        """Serve in the background."""
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop accepting connections and wait for requests in progress to be answered."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        if not self._server.wait_idle(timeout):
            _log.warning("HTTP requests still in progress after %.0f s; stopping anyway", timeout)

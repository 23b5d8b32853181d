"""The OTLP/HTTP receiver (``POST /v1/traces``, ``POST /v1/logs``), health and metrics.

Status codes follow the OTLP/HTTP specification: 200 with an ``Export*ServiceResponse`` in the
request's encoding (``partial_success`` when some items were refused); 400 for undecodable
data; 401 for a missing or wrong token; 413 for a body (or its decompressed form) over the
limit; 415 for an unsupported content type or encoding (gzip and deflate are read); 429 with
``Retry-After`` when the queue is full and 503 with ``Retry-After`` while shutting down. Error
bodies are a ``google.rpc.Status`` in the request's encoding, and every refusal is logged with
its reason (``_refusals``).

HTTP/1.1 is framed by h11 (``_http11``): a body comes with a ``Content-Length`` or chunked
(``Transfer-Encoding: chunked``, what the OpenTelemetry JS exporters send), within the same
limits; what h11 cannot frame is answered with the status it names (400, 431, 501) and the
connection closed. ``Expect: 100-continue`` is answered only once the headers pass every
check, so a refused sender does not send its body in vain. Connections are kept alive between
requests unless a request is refused on its headers. Each connection has its own thread, up
to ``max_connections``.
"""

from __future__ import annotations

import json
import logging
import socket
import socketserver
import ssl
import threading
from typing import Any

import h11
from google.protobuf import json_format
from google.rpc import status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from assay.collect._config import (
    CollectorConfig,
    DecompressionError,
    TooLargeError,
    gunzip_bounded,
    inflate_bounded,
)
from assay.collect._counters import Counters
from assay.collect._http11 import FramingError, Head, Http11Connection
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
    500: 13, 400: 3, 401: 16, 404: 5, 405: 12, 411: 3, 413: 8, 415: 3, 429: 8, 431: 8,
    501: 12, 503: 14,
}  # fmt: skip
_THROTTLED = (429, 503)


class _Server(socketserver.ThreadingTCPServer):
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


class _Handler(socketserver.BaseRequestHandler):
    """One connection: its requests, one after another (HTTP/1.1 keep-alive)."""

    server: _Server
    request: socket.socket
    _wire: Http11Connection
    _what = "a request"
    """The request as the refusal log names it (``POST /v1/traces``)."""
    _closing = False
    """Close the connection after this request's answer."""

    def handle(self) -> None:
        config = self.server.config
        # An answer is written in one piece, but with Nagle's algorithm on, a kept-alive
        # connection's next answer can wait for the sender's delayed ACK, 40 ms a request.
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        self._wire = Http11Connection(self.request, config.header_timeout_s, config.body_timeout_s)
        while True:
            self._what = "a request"
            try:
                head = self._wire.next_request()
            except FramingError as exc:
                self._answer_quietly(exc.status, exc.reason)
                return
            except OSError as exc:  # the header deadline passed (idle or slow), or a reset
                _log.debug("%s: connection ended waiting for a request: %s", self._peer, exc)
                return
            if head is None:
                return
            self._serve(head)
            if not self._wire.next_cycle():  # closed after the answer, or never answered
                return

    @property
    def _peer(self) -> str:
        return str(self.client_address[0])

    def _serve(self, head: Head) -> None:
        """Answer one request (or, past a deadline or a broken connection, none)."""
        self._what = f"{head.method} {head.path}"
        server = self.server
        post = head.method == "POST"
        self._closing = post and server.intake.draining  # the sender should go elsewhere
        if post:
            with server.idle:
                server.active += 1
        try:
            if post:
                self._post(head)
            elif head.method in ("GET", "HEAD"):
                self._wire.discard_body(server.config.max_body_bytes)
                self._get(head.path)
            else:
                self._wire.discard_body(server.config.max_body_bytes)
                message = f"method {head.method} is not served; OTLP is POST"
                self._error(405, message, json_body=False, headers={"Allow": "GET, HEAD, POST"})
        except (TimeoutError, ConnectionError, ssl.SSLError):  # past a deadline, or gone
            pass
        except Exception as exc:  # a bug must cost one request, never the collector
            _log.exception("unexpected error handling %s", self._what)
            self._answer_quietly(500, f"internal error: {type(exc).__name__}")
        finally:
            if post:
                with server.idle:
                    server.active -= 1
                    server.idle.notify_all()

    # --- responses ----------------------------------------------------------------------------
    def _answer(
        self,
        status: int,
        body: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
        *,
        close: bool = False,
    ) -> None:
        _log.debug("%s %s: %d, %d bytes", self._peer, self._what, status, len(body))  # --verbose
        self._wire.respond(status, body, content_type, headers, close=close or self._closing)

    def _answer_quietly(self, status: int, message: str) -> None:
        """Answer an error and close, if the connection still takes an answer."""
        try:
            self._error(status, message, json_body=False, close=True)
        except (OSError, h11.LocalProtocolError):
            pass

    def _error(
        self,
        status: int,
        message: str,
        *,
        json_body: bool,
        headers: dict[str, str] | None = None,
        close: bool = False,
    ) -> None:
        counters = self.server.counters
        counters.add("requests")
        throttled = status in _THROTTLED
        counters.add("requests_throttled" if throttled else "requests_refused")
        if status != 500:  # an internal error is logged with its traceback where it happens
            self.server.refusals.refused(
                str(status), self._peer, self._what, message, throttled=throttled
            )
        rpc = status_pb2.Status(code=_RPC_CODE.get(status, 2), message=message)
        if json_body:
            body = json.dumps(json_format.MessageToDict(rpc)).encode()
            self._answer(status, body, _JSON, headers, close=close)
        else:
            self._answer(status, rpc.SerializeToString(), _PROTOBUF, headers, close=close)

    # --- GET: health and metrics --------------------------------------------------------------
    def _get(self, path: str) -> None:
        """Serve ``/health`` (JSON, with counters) and ``/metrics`` (Prometheus text)."""
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
            body = json.dumps(document).encode()
            self._answer(200 if status == "ok" else 503, body, _JSON)
        elif path == "/metrics":
            self._answer(200, counters.prometheus().encode(), "text/plain; version=0.0.4")
        else:
            self._answer(404, b"not found\n", "text/plain")

    # --- POST: OTLP ---------------------------------------------------------------------------
    def _post(self, head: Head) -> None:
        """Receive one OTLP export request."""
        config = self.server.config
        intake = self.server.intake
        path = head.path.rstrip("/")
        media = head.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media == "application/protobuf":  # some senders use the unprefixed name
            media = _PROTOBUF
        json_body = media == _JSON
        # A request refused on its headers closes the connection. A body of bounded size is
        # read and dropped first, so that the sender, still writing it, gets to read the
        # answer.
        refusal: tuple[int, str, dict[str, str] | None] | None = None
        if path not in ("/v1/traces", "/v1/logs"):
            refusal = (404, f"no OTLP endpoint at {path}", None)
        elif not intake.authorized(head.headers.get("authorization")):
            challenge = {"WWW-Authenticate": 'Bearer realm="assay"'}
            refusal = (401, "missing or wrong bearer token", challenge)
        elif media not in (_PROTOBUF, _JSON):
            allowed = f"use {_PROTOBUF} or {_JSON}"
            refusal = (415, f"unsupported content type {media or '(none)'!r}; {allowed}", None)
        else:
            refusal = _framing_refusal(head, config.max_body_bytes)
        if refusal is not None:
            status, message, headers = refusal
            if not head.expects_continue:  # else the sender waits for a word to send it
                self._wire.discard_body(4 * config.max_body_bytes)
            json_answer = json_body and status != 415
            self._error(status, message, json_body=json_answer, headers=headers, close=True)
            return
        if head.expects_continue:
            self._wire.send_continue()
        try:
            body = self._wire.read_body(config.max_body_bytes, drain=4 * config.max_body_bytes)
        except (TooLargeError, FramingError) as exc:
            status = exc.status if isinstance(exc, FramingError) else 413
            self._error(status, str(exc), json_body=json_body, close=True)
            return
        self._export(path, head, body, json_body)

    def _export(self, path: str, head: Head, body: bytes, json_body: bool) -> None:
        """Inflate, decode and append one request's body; answer its status."""
        config = self.server.config
        intake = self.server.intake
        encoding = head.headers.get("content-encoding", "identity").strip().lower()
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
            body = json.dumps(json_format.MessageToDict(response)).encode()
            self._answer(200, body, _JSON)
        else:
            self._answer(200, response.SerializeToString(), _PROTOBUF)


def _framing_refusal(head: Head, limit: int) -> tuple[int, str, dict[str, str] | None] | None:
    """Why a POST's body framing is refused (h11 frames it; these are the receiver's rules)."""
    if head.chunked and head.content_length is not None:
        # h11 would take Transfer-Encoding (RFC 9112 lets a server); a smuggling vector, so
        # refused as before, not picked
        return (400, "both Transfer-Encoding and Content-Length were sent", None)
    if not head.chunked and head.content_length is None:
        return (411, "a Content-Length header or Transfer-Encoding: chunked is required", None)
    if head.content_length is not None and head.content_length > limit:
        message = f"body of {head.content_length} bytes exceeds the limit of {limit}"
        return (413, message, None)
    return None


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

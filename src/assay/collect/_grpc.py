"""The OTLP/gRPC receiver (``TraceService/Export``, ``LogsService/Export``).

Status codes follow the OTLP/gRPC specification: ``OK`` with an ``Export*ServiceResponse``
(``partial_success`` when some items were refused); ``INVALID_ARGUMENT`` for undecodable data;
``UNAUTHENTICATED`` for a missing or wrong token; ``RESOURCE_EXHAUSTED`` with a ``RetryInfo``
detail when the queue is full (and, from gRPC itself, for a message over the size limit);
``UNAVAILABLE`` while shutting down. gzip-compressed messages are inflated by gRPC, which checks
the size limit on the inflated message.

**Idle callers cannot starve the rest.** The server runs on gRPC's asyncio API, on its own
event loop thread: a call waiting for its request message holds no thread, only a slot among
``max_connections`` concurrent calls, and only for ``body_timeout_s`` — the method is served
as stream-unary, which the wire cannot tell from unary, so that the receiver reads the message
itself, under that deadline, and answers ``DEADLINE_EXCEEDED`` past it (as the HTTP side
closes a body that does not arrive in time). Decoding and the durable append run on a small
thread pool once the message is in. Before, 16 calls that never sent their message held the
16 threads of the synchronous server, and every other exporter's call timed out.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from assay.collect._config import CollectorConfig
from assay.collect._counters import Counters
from assay.collect._intake import Accepted, Intake, OverloadedError, UnavailableError
from assay.collect._refusals import RefusalLog
from assay.collect._tls import ServerTls
from assay.errors import InputError

__all__ = ["GrpcReceiver"]

_log = logging.getLogger("assay.collect")
_TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
_LOGS = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
#: Threads decoding and appending messages that have arrived (not waiting for them).
_WORKERS = 16
#: Concurrent calls on one HTTP/2 connection: one sender cannot take every slot alone.
_STREAMS_PER_CONNECTION = 100


class _Handler(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(
        self, config: CollectorConfig, intake: Intake, counters: Counters, pool: ThreadPoolExecutor
    ) -> None:
        self._config = config
        self._intake = intake
        self._counters = counters
        self._refusals = RefusalLog()
        self._pool = pool

    def service(self, handler_call_details: Any) -> Any:
        method = handler_call_details.method
        if method == _TRACES:
            return grpc.stream_unary_rpc_method_handler(self._traces)
        if method == _LOGS:
            return grpc.stream_unary_rpc_method_handler(self._logs)
        return None

    async def _traces(self, requests: Any, context: Any) -> bytes:
        result = await self._handle(context, self._intake.traces)
        response = ExportTraceServiceResponse()
        if result.rejected:
            response.partial_success.rejected_spans = result.rejected
            response.partial_success.error_message = result.message
        return bytes(response.SerializeToString())

    async def _logs(self, requests: Any, context: Any) -> bytes:
        result = await self._handle(context, self._intake.logs)
        response = ExportLogsServiceResponse()
        if result.rejected:
            response.partial_success.rejected_log_records = result.rejected
            response.partial_success.error_message = result.message
        return bytes(response.SerializeToString())

    async def _message(self, context: Any) -> bytes:
        """The call's one request message, read under the body deadline."""
        deadline = self._config.body_timeout_s
        try:
            body = await asyncio.wait_for(context.read(), timeout=deadline)
        except TimeoutError:
            self._counters.add("requests_refused")
            await context.abort(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"the request message did not arrive within {deadline:g} s",
            )
        if body is grpc.aio.EOF:
            self._counters.add("requests_refused")
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no request message")
        return bytes(body)

    async def _handle(self, context: Any, accept: Callable[[bytes], Accepted]) -> Accepted:
        counters = self._counters
        counters.add("requests")
        metadata = {k: v for k, v in (context.invocation_metadata() or ())}
        if not self._intake.authorized(metadata.get("authorization")):
            self._refused(context, "UNAUTHENTICATED", "missing or wrong bearer token")
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        body = await self._message(context)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, accept, body)
        except InputError as exc:
            self._refused(context, "INVALID_ARGUMENT", str(exc))
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except OverloadedError as exc:
            self._refused(context, "RESOURCE_EXHAUSTED", str(exc), throttled=True)
            retry = error_details_pb2.RetryInfo(
                retry_delay=Duration(seconds=self._config.retry_after_s)
            )
            status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=str(exc))
            status.details.add().Pack(retry)
            context.set_trailing_metadata(
                (("grpc-status-details-bin", status.SerializeToString()),)
            )
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except UnavailableError as exc:
            self._refused(context, "UNAVAILABLE", str(exc), throttled=True)
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except Exception as exc:  # a bug must cost one call, never the collector
            _log.exception("unexpected error handling an export call")
            counters.add("requests_refused")
            await context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")
        raise AssertionError("unreachable")  # pragma: no cover - abort raises

    def _refused(self, context: Any, status: str, reason: str, *, throttled: bool = False) -> None:
        self._counters.add("requests_throttled" if throttled else "requests_refused")
        self._refusals.refused(
            status, str(context.peer()), "an export call", reason, throttled=throttled
        )


class GrpcReceiver:
    """The OTLP/gRPC server, on its own event loop thread.

    Args:
        config: Host, port and limits.
        intake: Where requests go.
        counters: Where to count.
        tls: Serve over TLS with these; None = plaintext.
    """

    def __init__(
        self,
        config: CollectorConfig,
        intake: Intake,
        counters: Counters,
        tls: ServerTls | None = None,
    ) -> None:
        assert config.grpc_port is not None
        self._config = config
        self._tls = tls
        self._pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="assay-grpc")
        self._handler = _Handler(config, intake, counters, self._pool)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="assay-grpc-loop", daemon=True
        )
        self._thread.start()
        try:
            self._server, self.port = self._call(self._bind())
        except BaseException:
            self._close_loop()
            raise
        if self.port == 0:
            self._close_loop()
            raise OSError(f"cannot bind gRPC to {config.host}:{config.grpc_port}")

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    async def _bind(self) -> tuple[Any, int]:
        config = self._config
        server = grpc.aio.server(
            handlers=[self._handler],
            options=[
                ("grpc.max_receive_message_length", config.max_decompressed_bytes),
                ("grpc.max_send_message_length", 4 * 1024 * 1024),
                ("grpc.so_reuseport", 0),
                ("grpc.max_concurrent_streams", _STREAMS_PER_CONNECTION),
            ],
            maximum_concurrent_rpcs=config.max_connections,
        )
        address = f"{config.host}:{config.grpc_port}"
        tls = self._tls
        if tls is None:
            port = int(server.add_insecure_port(address))
        else:
            credentials = grpc.ssl_server_credentials(
                [(tls.key, tls.cert)],
                root_certificates=tls.client_ca,
                require_client_auth=tls.client_ca is not None,
            )
            port = int(server.add_secure_port(address, credentials))
        return server, port

    def start(self) -> None:
        """Serve in the background."""
        self._call(self._server.start())

    def stop(self, grace: float = 30.0) -> None:
        """Refuse new calls and wait up to ``grace`` seconds for calls in progress."""
        try:
            self._call(self._server.stop(grace))
        finally:
            self._close_loop()

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
        self._pool.shutdown(wait=True)

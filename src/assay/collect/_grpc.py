"""The OTLP/gRPC receiver (``TraceService/Export``, ``LogsService/Export``).

Status codes follow the OTLP/gRPC specification: ``OK`` with an ``Export*ServiceResponse``
(``partial_success`` when some items were refused); ``INVALID_ARGUMENT`` for undecodable data;
``UNAUTHENTICATED`` for a missing or wrong token; ``RESOURCE_EXHAUSTED`` with a ``RetryInfo``
detail when the queue is full (and, from gRPC itself, for a message over the size limit);
``UNAVAILABLE`` while shutting down. gzip-compressed messages are inflated by gRPC, which checks
the size limit on the inflated message.
"""

from __future__ import annotations

import logging
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
from assay.errors import InputError

__all__ = ["GrpcReceiver"]

_log = logging.getLogger("assay.collect")
_TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
_LOGS = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"


class _Handler(grpc.GenericRpcHandler):  # type: ignore[misc]
    def __init__(self, config: CollectorConfig, intake: Intake, counters: Counters) -> None:
        self._config = config
        self._intake = intake
        self._counters = counters
        self._refusals = RefusalLog()

    def service(self, handler_call_details: Any) -> Any:
        method = handler_call_details.method
        if method == _TRACES:
            return grpc.unary_unary_rpc_method_handler(self._traces)
        if method == _LOGS:
            return grpc.unary_unary_rpc_method_handler(self._logs)
        return None

    def _traces(self, body: bytes, context: Any) -> bytes:
        result = self._handle(body, context, self._intake.traces)
        response = ExportTraceServiceResponse()
        if result.rejected:
            response.partial_success.rejected_spans = result.rejected
            response.partial_success.error_message = result.message
        return bytes(response.SerializeToString())

    def _logs(self, body: bytes, context: Any) -> bytes:
        result = self._handle(body, context, self._intake.logs)
        response = ExportLogsServiceResponse()
        if result.rejected:
            response.partial_success.rejected_log_records = result.rejected
            response.partial_success.error_message = result.message
        return bytes(response.SerializeToString())

    def _handle(self, body: bytes, context: Any, accept: Callable[[bytes], Accepted]) -> Accepted:
        counters = self._counters
        counters.add("requests")
        metadata = dict(context.invocation_metadata() or ())
        if not self._intake.authorized(metadata.get("authorization")):
            self._refused(context, "UNAUTHENTICATED", "missing or wrong bearer token")
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        try:
            return accept(body)
        except InputError as exc:
            self._refused(context, "INVALID_ARGUMENT", str(exc))
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
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
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
        except UnavailableError as exc:
            self._refused(context, "UNAVAILABLE", str(exc), throttled=True)
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except Exception as exc:  # a bug must cost one call, never the collector
            _log.exception("unexpected error handling an export call")
            counters.add("requests_refused")
            context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")
        raise AssertionError("unreachable")  # pragma: no cover - abort raises

    def _refused(self, context: Any, status: str, reason: str, *, throttled: bool = False) -> None:
        self._counters.add("requests_throttled" if throttled else "requests_refused")
        self._refusals.refused(
            status, str(context.peer()), "an export call", reason, throttled=throttled
        )


class GrpcReceiver:
    """The OTLP/gRPC server.

    Args:
        config: Host, port and limits.
        intake: Where requests go.
        counters: Where to count.
    """

    def __init__(self, config: CollectorConfig, intake: Intake, counters: Counters) -> None:
        assert config.grpc_port is not None
        self._server = grpc.server(
            ThreadPoolExecutor(max_workers=16, thread_name_prefix="assay-grpc"),
            handlers=[_Handler(config, intake, counters)],
            options=[
                ("grpc.max_receive_message_length", config.max_decompressed_bytes),
                ("grpc.max_send_message_length", 4 * 1024 * 1024),
                ("grpc.so_reuseport", 0),
            ],
            maximum_concurrent_rpcs=256,
        )
        self.port = int(self._server.add_insecure_port(f"{config.host}:{config.grpc_port}"))
        if self.port == 0:
            raise OSError(f"cannot bind gRPC to {config.host}:{config.grpc_port}")

    def start(self) -> None:
        """Serve in the background."""
        self._server.start()

    def stop(self, grace: float = 30.0) -> None:
        """Refuse new calls and wait up to ``grace`` seconds for calls in progress."""
        self._server.stop(grace).wait()

"""``configure``: route spans to a Parquet trace set (default) or an OTLP endpoint.

Precedence, as everywhere in assay: an argument > an ``ASSAY_*`` environment variable > the
default. ``ASSAY_TRACES_DIR`` (default ``traces``) names the folder; ``ASSAY_OTLP_ENDPOINT``
switches to OTLP.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter

from assay.errors import ConfigError
from assay.instrument._exporter import ParquetSpanExporter
from assay.instrument._processor import LosslessBatchSpanProcessor


@dataclass(frozen=True, slots=True)
class Configured:
    """What :func:`configure` set up."""

    provider: TracerProvider
    """The tracer provider spans go through (the user's own, if one was already set)."""
    processor: SpanProcessor
    """The span processor assay added to it."""
    exporter: SpanExporter
    """The exporter behind that processor."""
    installed_provider: bool
    """True if assay created and installed the global provider."""

    def flush(self, timeout_millis: int = 30000) -> bool:
        """Export and write every span finished so far."""
        # The batch processor hands its queue to the exporter but does not flush the exporter.
        exported = self.processor.force_flush(timeout_millis)
        return self.exporter.force_flush(timeout_millis) and exported

    def shutdown(self) -> None:
        """Flush and stop assay's processor (the provider itself is left to its owner)."""
        self.processor.shutdown()


def _otlp_exporter(endpoint: str, protocol: str) -> SpanExporter:
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(endpoint=endpoint, insecure=endpoint.startswith("http://"))
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HTTPSpanExporter,
        )

        url = (
            endpoint
            if endpoint.rstrip("/").endswith("/v1/traces")
            else (endpoint.rstrip("/") + "/v1/traces")
        )
        return HTTPSpanExporter(endpoint=url)
    raise ConfigError(f"otlp_protocol must be 'http/protobuf' or 'grpc' (got {protocol!r})")


def configure(
    path: str | os.PathLike[str] | None = None,
    *,
    otlp_endpoint: str | None = None,
    otlp_protocol: Literal["http/protobuf", "grpc"] = "http/protobuf",
    service_name: str | None = None,
    exporter: SpanExporter | None = None,
) -> Configured:
    """Send spans to a Parquet trace set (the default) or to an OTLP endpoint.

    If a ``TracerProvider`` from the OpenTelemetry SDK is already installed globally, assay adds
    its span processor to it and leaves everything else as it was; otherwise it installs a new
    provider with ``service.name`` set. Calling ``configure`` twice adds a second processor.

    Spans are batched like the SDK's ``BatchSpanProcessor`` (queue ``OTEL_BSP_MAX_QUEUE_SIZE``,
    default 2048), but a full queue is flushed before the next span is queued instead of
    dropping spans: an agent that ends spans faster than they are written waits, and loses
    nothing (docs/integrations.md).

    Args:
        path: Folder of the trace set (``ASSAY_TRACES_DIR``, default ``traces``).
        otlp_endpoint: Export over OTLP instead (``ASSAY_OTLP_ENDPOINT``), e.g.
            ``http://127.0.0.1:4318`` for the assay collector.
        otlp_protocol: ``http/protobuf`` (default) or ``grpc``.
        service_name: ``service.name`` of a newly installed provider (default ``assay-agent``,
            or ``OTEL_SERVICE_NAME``).
        exporter: Use this exporter instead (overrides ``path`` and ``otlp_endpoint``).

    Returns:
        A handle to flush or shut down what was added.
    """
    if exporter is None:
        endpoint = otlp_endpoint or os.environ.get("ASSAY_OTLP_ENDPOINT")
        if endpoint:
            exporter = _otlp_exporter(endpoint, otlp_protocol)
        else:
            exporter = ParquetSpanExporter(path or os.environ.get("ASSAY_TRACES_DIR") or "traces")
    current = trace.get_tracer_provider()
    installed = False
    if isinstance(current, TracerProvider):
        provider = current
    else:
        name = service_name or os.environ.get("OTEL_SERVICE_NAME") or "assay-agent"
        provider = TracerProvider(resource=Resource.create({"service.name": name}))
        trace.set_tracer_provider(provider)
        if trace.get_tracer_provider() is not provider:
            raise ConfigError("a non-SDK tracer provider is already installed; pass spans to it")
        installed = True
    # Never the SDK's plain BatchSpanProcessor: its full queue drops spans with only a log line.
    processor = LosslessBatchSpanProcessor(exporter)
    provider.add_span_processor(processor)
    return Configured(provider, processor, exporter, installed)

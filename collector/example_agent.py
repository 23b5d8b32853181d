"""A stand-in agent for docker-compose: records trials as OpenTelemetry spans over OTLP.

Configured entirely by the standard OpenTelemetry environment variables
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_SERVICE_NAME``), so the
same script runs against otelcol or straight against ``assay collect``.

    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 python collector/example_agent.py
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from opentelemetry.trace import Status, StatusCode


class CountingExporter(OTLPSpanExporter):
    """The OTLP/HTTP exporter, counting the spans the receiver accepted and those it did not."""

    sent = 0
    failed = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export as the SDK's exporter does; count the spans by its result."""
        result = super().export(spans)
        if result is SpanExportResult.SUCCESS:
            self.sent += len(spans)
        else:
            self.failed += len(spans)
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    provider = TracerProvider(resource=Resource.create({}))
    # The endpoint the OTel environment variables name, resolved here to say where spans went.
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or (
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318").rstrip("/")
        + "/v1/traces"
    )
    exporter = CountingExporter(endpoint=endpoint)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("assay.example_agent")
    for index in range(args.trials):
        with tracer.start_as_current_span(
            "trial",
            attributes={
                "assay.test.id": "refund-request",
                "assay.trial.index": index,
                "assay.agent.version": "1.0",
            },
        ) as trial:
            with tracer.start_as_current_span(
                "execute_tool lookup_order",
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
            ):
                pass
            passed = rng.random() < 0.85
            trial.set_attribute("assay.trial.outcome", "pass" if passed else "fail")
            if not passed:
                trial.set_status(Status(StatusCode.ERROR, "wrong refund amount"))
    provider.shutdown()
    # Say what happened: a run that printed nothing left the user guessing whether it worked.
    print(f"example_agent: {args.trials} trials, {exporter.sent} spans sent to {endpoint}")
    if exporter.failed:
        print(f"example_agent: {exporter.failed} spans not accepted (see above)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

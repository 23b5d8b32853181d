"""Evaluations from plain OpenTelemetry: ``gen_ai.evaluation.result`` as a span event and as a
log record, sent over OTLP/HTTP to an assay collector. No assay API and no ``assay.*`` attribute.

    assay collect --out eval-traces &
    python examples/otel_evaluations.py http://127.0.0.1:4318
    assay analyze eval-traces --test-attribute gen_ai.agent.name \\
        --pass-when "correctness.label == pass"

Each of 20 trials is one ``invoke_agent`` span of the (simulated) ``support-bot`` agent. Even
trials are judged while the span is open (a span event); odd ones later, as an evaluator in
another process would (a log record pointing at the span). Every fifth trial is judged ``fail``.
"""

from __future__ import annotations

import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

TRIALS = 20


def main(endpoint: str) -> None:
    resource = Resource.create({"service.name": "support-bot"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces"))
    )
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(
        BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"{endpoint}/v1/logs"))
    )
    tracer = tracer_provider.get_tracer("support-bot")
    evaluator = logger_provider.get_logger("my-evaluator")

    # --- an evaluation as a span event, on the span it judges ---------------------------------
    def judge_inline(span: trace.Span, passed: bool) -> None:
        span.add_event(
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.name": "correctness",
                "gen_ai.evaluation.score.label": "pass" if passed else "fail",
                "gen_ai.evaluation.score.value": 1.0 if passed else 0.0,
            },
        )

    # --- an evaluation as a log record, after the span ended ----------------------------------
    def judge_later(span: trace.Span, passed: bool) -> None:
        evaluator.emit(
            event_name="gen_ai.evaluation.result",
            context=trace.set_span_in_context(span),  # the trace and span it judges
            attributes={
                "gen_ai.evaluation.name": "correctness",
                "gen_ai.evaluation.score.label": "pass" if passed else "fail",
                "gen_ai.evaluation.score.value": 1.0 if passed else 0.0,
            },
        )

    for i in range(TRIALS):
        passed = i % 5 != 0
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support-bot"}
        with tracer.start_as_current_span(
            "invoke_agent support-bot", attributes=attributes
        ) as span:
            if i % 2 == 0:
                judge_inline(span, passed)
        if i % 2 == 1:
            judge_later(span, passed)

    tracer_provider.shutdown()  # flushes the spans
    logger_provider.shutdown()  # flushes the log records


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:4318")

"""Verdicts back into the user's own telemetry: OTLP spans with evaluation events, and metrics.

``assay analyze … --export-otlp ENDPOINT`` (and ``compare``, ``watch``) sends what it judged to
any OTLP/HTTP endpoint — the OpenTelemetry Collector of the user's stack, Tempo, Grafana, Langfuse,
Phoenix, or ``assay collect`` — so that verdicts sit on the dashboards the traces already feed.

Traces: one trace per analysis, a root span ``assay analyze`` and under it one span per
judgement (``assay.verdict {test}`` for a test, ``assay.suite_verdict {suite}`` for a suite and
``assay.comparison {suite}`` for a suite's paired comparison). Each carries the OTel GenAI
``gen_ai.evaluation.result`` event (``gen_ai.evaluation.name`` ``assay.pass_rate`` /
``assay.suite.pass_rate`` / ``assay.suite.difference``, ``gen_ai.evaluation.score.value`` the
figure, ``gen_ai.evaluation.score.label`` the verdict, ``gen_ai.evaluation.explanation`` the
reason) and the figures as ``assay.*`` attributes. A span per judgement, not events on the
user's agent spans: the judgement is about many traces, and a span is what every backend shows.

Metrics (gauges, unit ``1``): ``assay.test.pass_rate``, ``assay.test.pass_rate.lower`` /
``.upper`` (the interval the verdict rests on), ``assay.test.threshold``, ``assay.test.trials``
and ``assay.test.verdict`` (1 for the test's verdict, labelled ``assay.verdict``, as a
Prometheus state set), by ``assay.test.id``; ``assay.suite.pass_rate`` and its bounds by
``assay.suite``. Each export is one data point per series, at the time of the analysis.

The recording functions take a tracer and a meter, so tests read them with the SDK's in-memory
exporter and reader; :func:`export_otlp` wires them to OTLP/HTTP exporters and flushes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from assay.conventions import (
    EVALUATION_EVENT,
    EVALUATION_EXPLANATION,
    EVALUATION_LABEL,
    EVALUATION_NAME,
    EVALUATION_SCORE,
)
from assay.judge import AnalysisResult, SuiteResult, TestResult, Verdict
from assay.report._text import shown_interval
from assay.version import __version__

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter
    from opentelemetry.trace import Tracer
    from opentelemetry.util.types import AttributeValue

__all__ = ["EVALUATION_EVENT", "export_otlp", "otlp_url", "record_verdicts"]

"""The OTel GenAI evaluation event each judgement span carries."""
SCOPE = "assay"
"""The instrumentation scope of what assay exports."""


def _event(
    name: str, value: float | None, verdict: Verdict, reason: str
) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        EVALUATION_NAME: name,
        EVALUATION_LABEL: verdict.value,
        EVALUATION_EXPLANATION: reason,
    }
    if value is not None:
        attributes[EVALUATION_SCORE] = float(value)
    return attributes


def _test_span(tracer: Tracer, test: TestResult) -> None:
    interval = shown_interval(test)
    attributes: dict[str, AttributeValue] = {
        "assay.test.id": test.test_id,
        "assay.verdict": test.verdict.value,
        "assay.trials": test.trials,
        "assay.n": test.n,
        "assay.passed": test.passed,
        "assay.errors": test.errors,
        "assay.threshold": test.threshold,
    }
    if test.pass_rate is not None:
        attributes["assay.pass_rate"] = test.pass_rate
    if interval is not None:
        attributes["assay.pass_rate.lower"], attributes["assay.pass_rate.upper"] = interval
    with tracer.start_as_current_span(f"assay.verdict {test.test_id}", attributes=attributes) as s:
        event = _event("assay.pass_rate", test.pass_rate, test.verdict, test.verdict_reason)
        s.add_event(EVALUATION_EVENT, event)


def _suite_spans(tracer: Tracer, suite: SuiteResult) -> None:
    name = suite.suite if suite.suite is not None else "all cases"
    attributes: dict[str, AttributeValue] = {
        "assay.suite": name,
        "assay.verdict": suite.verdict.value,
        "assay.cases": suite.cases,
        "assay.trials": suite.trials,
        "assay.threshold": suite.threshold,
    }
    if suite.pass_rate is not None:
        attributes["assay.pass_rate"] = suite.pass_rate
    if suite.interval is not None:
        attributes["assay.pass_rate.lower"] = suite.interval.low
        attributes["assay.pass_rate.upper"] = suite.interval.high
    with tracer.start_as_current_span(f"assay.suite_verdict {name}", attributes=attributes) as s:
        event = _event("assay.suite.pass_rate", suite.pass_rate, suite.verdict, suite.reason)
        s.add_event(EVALUATION_EVENT, event)
    comparison = suite.comparison
    if comparison is None:
        return
    compared: dict[str, AttributeValue] = {
        "assay.suite": name,
        "assay.verdict": comparison.verdict.value,
        "assay.paired_cases": comparison.paired_cases,
    }
    if comparison.difference is not None:
        compared["assay.difference"] = comparison.difference
    if comparison.interval is not None:
        compared["assay.difference.lower"] = comparison.interval.low
        compared["assay.difference.upper"] = comparison.interval.high
    if comparison.p_value is not None:
        compared["assay.p_value"] = comparison.p_value
    with tracer.start_as_current_span(f"assay.comparison {name}", attributes=compared) as s:
        event = _event(
            "assay.suite.difference", comparison.difference, comparison.verdict, comparison.reason
        )
        s.add_event(EVALUATION_EVENT, event)


def _gauges(meter: Meter, result: AnalysisResult, suites: Sequence[SuiteResult]) -> None:
    rate = meter.create_gauge("assay.test.pass_rate", unit="1", description="Observed pass rate.")
    lower = meter.create_gauge(
        "assay.test.pass_rate.lower", unit="1", description="Lower end of the verdict's interval."
    )
    upper = meter.create_gauge(
        "assay.test.pass_rate.upper", unit="1", description="Upper end of the verdict's interval."
    )
    threshold = meter.create_gauge("assay.test.threshold", unit="1", description="Threshold.")
    trials = meter.create_gauge("assay.test.trials", unit="{trial}", description="Trials.")
    verdict = meter.create_gauge(
        "assay.test.verdict", unit="1", description="1 for the test's verdict (a state set)."
    )
    for test in result.tests:
        labels = {"assay.test.id": test.test_id}
        interval = shown_interval(test)
        if test.pass_rate is not None:
            rate.set(test.pass_rate, labels)
        if interval is not None:
            lower.set(interval[0], labels)
            upper.set(interval[1], labels)
        threshold.set(test.threshold, labels)
        trials.set(test.trials, labels)
        for state in Verdict:
            verdict.set(int(state is test.verdict), {**labels, "assay.verdict": state.value})
    suite_rate = meter.create_gauge(
        "assay.suite.pass_rate", unit="1", description="Mean pass rate over the suite's cases."
    )
    suite_lower = meter.create_gauge("assay.suite.pass_rate.lower", unit="1")
    suite_upper = meter.create_gauge("assay.suite.pass_rate.upper", unit="1")
    for suite in suites:
        labels = {"assay.suite": suite.suite if suite.suite is not None else "all cases"}
        if suite.pass_rate is not None:
            suite_rate.set(suite.pass_rate, labels)
        if suite.interval is not None:
            suite_lower.set(suite.interval.low, labels)
            suite_upper.set(suite.interval.high, labels)


def record_verdicts(result: AnalysisResult, tracer: Tracer, meter: Meter) -> None:
    """Record every test's and suite's verdict as spans (with evaluation events) and gauges.

    Args:
        result: The analysis result.
        tracer: Where the judgement spans go.
        meter: Where the gauges go.
    """
    suites = [s for s in result.suites if s.cases >= 2]  # a suite of one case is its case
    with tracer.start_as_current_span(
        "assay analyze", attributes={"assay.tests": len(result.tests)}
    ):
        for test in result.tests:
            _test_span(tracer, test)
        for suite in suites:
            _suite_spans(tracer, suite)
    _gauges(meter, result, suites)


def otlp_url(endpoint: str, signal: str) -> str:
    """The OTLP/HTTP URL of ``signal`` (``traces``, ``metrics``) at ``endpoint``.

    ``http://host:4318`` gets ``/v1/traces``; an endpoint already naming a signal path keeps its
    base (as ``OTEL_EXPORTER_OTLP_ENDPOINT`` is read by the SDK).
    """
    base = endpoint.rstrip("/")
    for known in ("/v1/traces", "/v1/metrics", "/v1/logs"):
        base = base.removesuffix(known)
    return f"{base}/v1/{signal}"


def export_otlp(result: AnalysisResult, endpoint: str, *, timeout_s: float = 10.0) -> str | None:
    """Send the verdicts to an OTLP/HTTP ``endpoint``: one request per signal.

    The spans and the metric points are recorded in memory first, then each signal goes in one
    export, which the SDK's exporter retries on transient errors (with backoff) within
    ``timeout_s``.

    Returns:
        None when both were accepted, else what was not (for a warning: the verdicts and the
        exit code stand either way, as a failed upload of a report does not change them).
    """
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricExportResult
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": "assay"})
    held = InMemorySpanExporter()
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(held))
    reader = InMemoryMetricReader()
    meters = MeterProvider(resource=resource, metric_readers=[reader])
    record_verdicts(
        result, provider.get_tracer(SCOPE, __version__), meters.get_meter(SCOPE, __version__)
    )
    data = reader.get_metrics_data()
    failed = []
    spans = OTLPSpanExporter(endpoint=otlp_url(endpoint, "traces"), timeout=timeout_s)
    # Releases before 1.40 of the exporter raise on a refused connection instead of
    # returning FAILURE: either way the signal was not accepted.
    try:
        sent = spans.export(held.get_finished_spans()) is SpanExportResult.SUCCESS
    except OSError:  # requests' ConnectionError is an OSError
        sent = False
    if not sent:
        failed.append("spans")
    spans.shutdown()  # type: ignore[no-untyped-call]
    metrics = OTLPMetricExporter(endpoint=otlp_url(endpoint, "metrics"), timeout=timeout_s)
    if data is not None:
        try:
            sent = metrics.export(data) is MetricExportResult.SUCCESS
        except OSError:
            sent = False
        if not sent:
            failed.append("metrics")
    metrics.shutdown()
    provider.shutdown()
    meters.shutdown()
    if failed:
        hint = "; `assay collect` takes traces, not metrics" if failed == ["metrics"] else ""
        return (
            f"{' and '.join(failed)} not accepted by {endpoint} (the exporter's log above says "
            f"why{hint})"
        )
    return None

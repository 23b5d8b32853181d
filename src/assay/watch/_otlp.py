"""``assay watch --export-otlp ENDPOINT``: the live verdicts as OTLP metrics and evaluation spans.

The same names as ``assay analyze --export-otlp`` (:mod:`assay.report._otlp`), so one dashboard
reads both. Gauges, set at every look and exported by the SDK's periodic reader (every
``OTEL_METRIC_EXPORT_INTERVAL`` ms, 60 s by default, as every OTel SDK does) and at shutdown:
``assay.test.pass_rate``, ``assay.test.pass_rate.lower`` / ``.upper`` (the anytime-valid
sequence), ``assay.test.threshold``, ``assay.test.trials``, ``assay.test.verdict`` (a state set)
and ``assay.test.drift_alarm``, by ``assay.test.id``. Each event of the watch (a verdict that
changed, a drift alarm raised or cleared) is a span ``assay.verdict {test}`` carrying the
``gen_ai.evaluation.result`` event, batched by the SDK's span processor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay.judge import Verdict
from assay.report import otlp_url
from assay.version import __version__

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter
    from opentelemetry.trace import Tracer
    from opentelemetry.util.types import AttributeValue

    from assay.watch._status import WatchStatus

__all__ = ["WatchExport", "record_watch_events", "set_watch_gauges"]


class _Gauges:
    def __init__(self, meter: Meter) -> None:
        self.rate = meter.create_gauge("assay.test.pass_rate", unit="1")
        self.lower = meter.create_gauge("assay.test.pass_rate.lower", unit="1")
        self.upper = meter.create_gauge("assay.test.pass_rate.upper", unit="1")
        self.threshold = meter.create_gauge("assay.test.threshold", unit="1")
        self.trials = meter.create_gauge("assay.test.trials", unit="{trial}")
        self.verdict = meter.create_gauge("assay.test.verdict", unit="1")
        self.alarm = meter.create_gauge("assay.test.drift_alarm", unit="1")


def set_watch_gauges(meter: Meter, status: WatchStatus, gauges: _Gauges | None = None) -> _Gauges:
    """Set every test's gauges to this look's figures; returns the gauges (pass them back)."""
    gauges = gauges if gauges is not None else _Gauges(meter)
    for test in status.tests:
        labels = {"assay.test.id": test.test_id}
        if test.pass_rate is not None:
            gauges.rate.set(test.pass_rate, labels)
        gauges.lower.set(test.low, labels)
        gauges.upper.set(test.high, labels)
        gauges.threshold.set(test.threshold, labels)
        gauges.trials.set(test.trials, labels)
        gauges.alarm.set(int(test.drift_alarm), labels)
        for state in Verdict:
            gauges.verdict.set(int(state is test.verdict), {**labels, "assay.verdict": state.value})
    return gauges


def record_watch_events(tracer: Tracer, events: list[dict[str, Any]]) -> None:
    """A span per watch event, with the ``gen_ai.evaluation.result`` event of its verdict."""
    for event in events:
        attributes: dict[str, AttributeValue] = {
            "assay.test.id": str(event["test"]),
            "assay.verdict": str(event["verdict"]),
            "assay.watch.event": str(event["event"]),
            "assay.trials": int(event["trials"]),
            "assay.threshold": float(event["threshold"]),
            "assay.drift_alarm": bool(event["drift_alarm"]),
        }
        low, high = event["interval"]
        attributes["assay.pass_rate.lower"], attributes["assay.pass_rate.upper"] = low, high
        rate = event.get("pass_rate")
        evaluation: dict[str, AttributeValue] = {
            "gen_ai.evaluation.name": "assay.pass_rate",
            "gen_ai.evaluation.score.label": str(event["verdict"]),
            "gen_ai.evaluation.explanation": _explanation(event),
        }
        if rate is not None:
            attributes["assay.pass_rate"] = float(rate)
            evaluation["gen_ai.evaluation.score.value"] = float(rate)
        with tracer.start_as_current_span(
            f"assay.verdict {event['test']}", attributes=attributes
        ) as span:
            span.add_event("gen_ai.evaluation.result", evaluation)


def _explanation(event: dict[str, Any]) -> str:
    kind = event["event"]
    if kind == "verdict_changed":
        return f"verdict changed from {event['previous_verdict']} to {event['verdict']}"
    if kind == "drift_alarm_raised":
        return f"drift alarm raised (since trial {event['since_trial']})"
    return "drift alarm cleared"


class WatchExport:
    """OTLP/HTTP exporters for a running watch: gauges every look, a span per event."""

    def __init__(self, endpoint: str) -> None:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create({"service.name": "assay-watch"})
        self._traces = TracerProvider(resource=resource)
        self._traces.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_url(endpoint, "traces")))
        )
        reader = PeriodicExportingMetricReader(
            OTLPMetricExporter(endpoint=otlp_url(endpoint, "metrics"))
        )
        self._metrics = MeterProvider(resource=resource, metric_readers=[reader])
        self._tracer = self._traces.get_tracer("assay", __version__)
        self._meter = self._metrics.get_meter("assay", __version__)
        self._gauges: _Gauges | None = None

    def publish(self, status: WatchStatus, events: list[dict[str, Any]]) -> None:
        """This look's gauges, and a span per event (sent in the background)."""
        self._gauges = set_watch_gauges(self._meter, status, self._gauges)
        record_watch_events(self._tracer, events)

    def close(self) -> None:
        """Send what is held (the last look's gauges, pending spans) and stop."""
        self._traces.shutdown()
        self._metrics.shutdown()

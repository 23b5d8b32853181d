"""``/metrics``: every test's status in the Prometheus text format (``prometheus_client``).

One series per test, labelled ``test``: ``assay_test_trials_total`` (a counter),
``assay_test_pass_rate`` and its anytime-valid interval ``assay_test_pass_rate_lower`` /
``_upper``, ``assay_test_verdict{verdict=...}`` (1 for the current verdict, 0 for the other
two) and ``assay_test_drift_alarm`` (0/1). A scrape reads the status of the latest look.
``assay_watch_expected_wrong_verdicts`` and ``assay_watch_expected_false_alarms`` bound the
chance errors over all tests watched (the per-test guarantees summed; from two tests).

The series are capped, as the OpenTelemetry SDK caps a metric's attribute sets (its
cardinality limit, 2,000 by default) and as Prometheus' ``sample_limit`` guards a scrape: a
test id taken from a session id once made 50,000 tests, a 24.6 MB scrape of 13 s, past
Prometheus' 10 s timeout (the target read as down). At most ``max_tests`` tests are exported
— the first seen, kept for the watch's life so that no series flaps — and the rest are
counted in ``assay_metrics_tests_dropped`` and named once on stderr; the console and
``--once`` still show every test (docs/monitoring.md).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from prometheus_client.registry import Collector

from assay.judge import Verdict
from assay.report import visible
from assay.watch._status import TestStatus, WatchStatus

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    from prometheus_client.metrics_core import Metric

__all__ = ["MAX_METRICS_TESTS", "MetricsServer"]

MAX_METRICS_TESTS = 2_000
"""Tests exported on ``/metrics`` at most (``--metrics-max-tests``), as OTel's default limit."""


class _StatusCollector(Collector):
    """A ``prometheus_client`` collector that renders the latest status at each scrape."""

    def __init__(self) -> None:
        self.status: WatchStatus | None = None
        self.dropped = 0

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        status = self.status  # one reference read: a look may replace it meanwhile
        tests = status.tests if status is not None else ()
        trials = CounterMetricFamily(
            "assay_test_trials", "Trials judged, per test.", labels=["test"]
        )
        rate = GaugeMetricFamily("assay_test_pass_rate", "Observed pass rate.", labels=["test"])
        lower = GaugeMetricFamily(
            "assay_test_pass_rate_lower",
            "Lower end of the pass rate's anytime-valid confidence sequence.",
            labels=["test"],
        )
        upper = GaugeMetricFamily(
            "assay_test_pass_rate_upper",
            "Upper end of the pass rate's anytime-valid confidence sequence.",
            labels=["test"],
        )
        verdict = GaugeMetricFamily(
            "assay_test_verdict",
            "1 for the test's current verdict (PASS, FAIL or INCONCLUSIVE), else 0.",
            labels=["test", "verdict"],
        )
        alarm = GaugeMetricFamily(
            "assay_test_drift_alarm",
            "1 while the drift alarm is raised (the pass rate dropped below its reference).",
            labels=["test"],
        )
        dropped = CounterMetricFamily(
            "assay_metrics_tests_dropped",
            "Tests not exported on /metrics: past --metrics-max-tests (the first seen are).",
        )
        dropped.add_metric([], self.dropped)
        yield dropped
        notes = CounterMetricFamily(
            "assay_watch_input_notes",
            "What the input showed, by kind (rejected_traces, duplicate_spans, "
            "judged_without_root, ...): traces, spans or files, summed over the watch.",
            labels=["kind"],
        )
        for note in status.notes if status is not None else ():
            notes.add_metric([note.kind], note.count)
        yield notes
        yield from _family(status)
        yield from _means(tests)
        for test in tests:
            trials.add_metric([test.test_id], test.trials)
            if test.pass_rate is not None:
                rate.add_metric([test.test_id], test.pass_rate)
            lower.add_metric([test.test_id], test.low)
            upper.add_metric([test.test_id], test.high)
            for value in Verdict:
                verdict.add_metric([test.test_id, value.value], float(test.verdict == value))
            alarm.add_metric([test.test_id], float(test.drift_alarm))
        yield from (trials, rate, lower, upper, verdict, alarm)


def _family(status: WatchStatus | None) -> Iterator[Metric]:
    """The family-wide bounds: each test's guarantee is per test, not over the set."""
    from prometheus_client.core import GaugeMetricFamily

    family = status.family if status is not None else None
    wrong = GaugeMetricFamily(
        "assay_watch_expected_wrong_verdicts",
        "Upper bound on the expected number of tests whose verdict is ever wrong by chance, "
        "over all tests watched: tests x (1 - confidence). Each verdict holds per test only; "
        "for the whole set, lower --confidence's error by the number of tests (Bonferroni).",
    )
    alarms = GaugeMetricFamily(
        "assay_watch_expected_false_alarms",
        "Upper bound on the expected number of tests with a false drift alarm, over all tests "
        "watched: tests x alpha. Each alarm's bound is per test only; for the whole set, "
        "divide --drift-alpha by the number of tests (Bonferroni).",
    )
    if family is not None:
        wrong.add_metric([], family.expected_wrong_verdicts)
        alarms.add_metric([], family.expected_false_alarms)
    yield from (wrong, alarms)


def _means(tests: tuple[TestStatus, ...]) -> Iterator[Metric]:
    """Scores' means and the cost per trial, each with its interval where one is valid."""
    from prometheus_client.core import GaugeMetricFamily

    labels = ["test", "score"]
    score = GaugeMetricFamily("assay_test_score_mean", "Mean score.", labels=labels)
    score_low = GaugeMetricFamily(
        "assay_test_score_mean_lower", "Lower end of the mean score's interval.", labels=labels
    )
    score_high = GaugeMetricFamily(
        "assay_test_score_mean_upper", "Upper end of the mean score's interval.", labels=labels
    )
    cost = GaugeMetricFamily(
        "assay_test_cost_per_trial_usd", "Mean cost per trial (USD).", labels=["test"]
    )
    cost_low = GaugeMetricFamily(
        "assay_test_cost_per_trial_usd_lower",
        "Lower end of the mean cost's interval (with --trial-cost-bound).",
        labels=["test"],
    )
    cost_high = GaugeMetricFamily(
        "assay_test_cost_per_trial_usd_upper",
        "Upper end of the mean cost's interval (with --trial-cost-bound).",
        labels=["test"],
    )
    for test in tests:
        for mean in test.scores:
            shown = [test.test_id, mean.name]
            for family, value in (
                (score, mean.mean),
                (score_low, mean.low),
                (score_high, mean.high),
            ):
                if value is not None:
                    family.add_metric(shown, value)
        if test.cost is not None:
            for family, value in (
                (cost, test.cost.mean),
                (cost_low, test.cost.low),
                (cost_high, test.cost.high),
            ):
                if value is not None:
                    family.add_metric([test.test_id], value)
    yield from (score, score_low, score_high, cost, cost_low, cost_high)


@dataclass(slots=True)
class MetricsServer:
    """An HTTP server for ``/metrics`` on ``host:port`` (port 0: any free port)."""

    port: int
    """The port to listen on (0 picks a free one; :attr:`port` then holds it)."""
    host: str = "127.0.0.1"
    """The address to listen on (0.0.0.0 for a Prometheus on another machine)."""
    max_tests: int = MAX_METRICS_TESTS
    """Tests exported at most; the first seen are kept for the watch's life."""
    _collector: _StatusCollector = field(default_factory=_StatusCollector)
    _kept: dict[str, None] = field(default_factory=dict)
    _warned: bool = False
    _server: WSGIServer | None = None
    _thread: threading.Thread | None = None

    def start(self) -> MetricsServer:
        """Listen, on a daemon thread; returns itself with the port bound."""
        from prometheus_client import CollectorRegistry, start_http_server

        registry = CollectorRegistry(auto_describe=False)
        registry.register(self._collector)
        self._server, self._thread = start_http_server(self.port, self.host, registry)
        self.port = self._server.server_port
        return self

    def publish(self, status: WatchStatus) -> None:
        """Serve ``status`` (its first ``max_tests`` tests seen) from the next scrape on."""
        for test in status.tests:
            if len(self._kept) >= self.max_tests:
                break
            self._kept.setdefault(test.test_id, None)
        shown = tuple(t for t in status.tests if t.test_id in self._kept)
        dropped = len(status.tests) - len(shown)
        if dropped and not self._warned:
            self._warned = True
            first = next(t.test_id for t in status.tests if t.test_id not in self._kept)
            print(
                f"assay watch: warning: /metrics exports {self.max_tests} tests at most "
                f"(--metrics-max-tests); {dropped} more are not exported (e.g. "
                f"{visible(first)}), counted in assay_metrics_tests_dropped",
                file=sys.stderr,
            )
        self._collector.dropped = dropped
        self._collector.status = replace(status, tests=shown) if dropped else status

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

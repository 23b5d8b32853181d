"""End to end: OTel SDK → real ``assay collect`` → ``assay watch`` → a real Prometheus scrape."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from collector_process import CollectorProcess
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from servers import Prometheus, start_watch, stop
from streams import send_trials

SERIES = (
    "assay_test_trials_total",
    "assay_test_pass_rate",
    "assay_test_pass_rate_lower",
    "assay_test_pass_rate_upper",
    "assay_test_verdict",
    "assay_test_drift_alarm",
)


def _values(prometheus: Prometheus, promql: str) -> dict[tuple[str, ...], float]:
    return {
        tuple(sorted(r["metric"].items())): float(r["value"][1])  # type: ignore[index,union-attr]
        for r in prometheus.query(promql)
    }


@pytest.mark.slow
def test_prometheus_scrapes_the_verdicts_of_trials_sent_to_the_collector(
    tmp_path: Path,
) -> None:
    collector = CollectorProcess(tmp_path / "traces", ["--roll-age", "0.5"]).start()
    url = f"{collector.url}/v1/traces"
    send_trials(OTLPSpanExporter(endpoint=url), [True] * 60, test="steady", batch=True)
    send_trials(OTLPSpanExporter(endpoint=url), [False] * 30, test="broken", batch=True)
    args = [str(collector.out), "--metrics-port", "0", "--poll-interval", "0.2", "--grace", "0.5"]
    watch, port = start_watch(args, tmp_path / "watch.log")
    assert port is not None
    prometheus = Prometheus(tmp_path / "prometheus", port).start()
    try:
        wanted = {
            'assay_test_verdict{test="steady",verdict="PASS"}': 1.0,
            'assay_test_verdict{test="broken",verdict="FAIL"}': 1.0,
            'assay_test_verdict{test="steady",verdict="FAIL"}': 0.0,
            'assay_test_trials_total{test="steady"}': 60.0,
            'assay_test_trials_total{test="broken"}': 30.0,
            'assay_test_pass_rate{test="broken"}': 0.0,
            'assay_test_drift_alarm{test="steady"}': 0.0,
        }
        seen: dict[str, float] = {}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            seen = {q: v for q in wanted for v in _values(prometheus, q).values()}
            if seen == wanted:
                break
            time.sleep(0.5)
        assert seen == wanted, (tmp_path / "watch.log").read_text()[-3000:]
        names = {r["metric"]["__name__"] for r in prometheus.query('{job="assay-watch"}')}  # type: ignore[index]
        assert set(SERIES) <= names
        low = _values(prometheus, 'assay_test_pass_rate_lower{test="steady"}')
        high = _values(prometheus, 'assay_test_pass_rate_upper{test="steady"}')
        assert 0.8 <= min(low.values()) < max(high.values()) == 1.0
    finally:
        prometheus.stop()
        assert stop(watch) == 0
        collector.kill()

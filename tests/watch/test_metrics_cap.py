"""``/metrics`` exports a bounded number of tests: the first seen, the rest counted and named."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from streams import write_trials

from assay.watch import MetricsServer, Watcher


def _scrape(port: int) -> dict[str, list[tuple[dict[str, str], float]]]:
    url = f"http://127.0.0.1:{port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:
        text = answer.read().decode()
    return {
        family.name: [(sample.labels, sample.value) for sample in family.samples]
        for family in text_string_to_metric_families(text)
    }


def test_past_the_cap_the_first_tests_stay_and_the_rest_are_counted_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(12):
        write_trials(tmp_path, [True, False], test=f"session-{i:02d}")
    watcher = Watcher((str(tmp_path),))
    status = watcher.look(final=True)
    server = MetricsServer(0, max_tests=5).start()
    try:
        server.publish(status)
        first = _scrape(server.port)
        shown = {labels["test"] for labels, _ in first["assay_test_trials"]}
        assert len(shown) == 5 and shown <= {t.test_id for t in status.tests}
        assert first["assay_metrics_tests_dropped"] == [({}, 7.0)]
        warning = capsys.readouterr().err
        assert "/metrics exports 5 tests at most" in warning and "7 more" in warning
        # more tests later: the series kept do not change, the count of the rest grows
        for i in range(12, 20):
            write_trials(tmp_path, [True], test=f"session-{i:02d}")
        server.publish(watcher.look(final=True))
        later = _scrape(server.port)
        assert {labels["test"] for labels, _ in later["assay_test_trials"]} == shown
        assert later["assay_metrics_tests_dropped"] == [({}, 15.0)]
        assert capsys.readouterr().err == ""  # warned once
    finally:
        server.stop()

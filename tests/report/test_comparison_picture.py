"""The HTML compare report leads with the comparison picture.

Each case's change, the suite's mean change with its interval, the cases that moved.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import assay
from assay.instrument import ParquetSpanExporter
from assay.report import render_html
from assay.report._comparison_chart import case_changes


def _record(folder: Path) -> None:
    """12 cases × 3 trials per version; v2 fails every trial of cases 0, 3, 6 and 9.

    Written by an SDK provider of its own, as any agent's instrumentation would write them.
    """
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ParquetSpanExporter(folder)))
    tracer = provider.get_tracer("agent")
    for version in ("v1", "v2"):
        for case in range(12):
            for index in range(3):
                broken = version == "v2" and case % 3 == 0
                passed = not broken and (case + index) % 7 != 0
                attributes = {
                    "assay.test.id": f"case-{case:02d}",
                    "assay.suite": "s",
                    "assay.agent.version": version,
                    "assay.trial.index": index,
                    "assay.trial.outcome": "pass" if passed else "fail",
                }
                with tracer.start_as_current_span("trial", attributes=attributes):
                    pass
    provider.shutdown()


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> assay.Analysis:
    folder = tmp_path_factory.mktemp("pair")
    _record(folder)
    return assay.analyze(folder, baseline_version="v1")


@pytest.mark.slow  # a page of charts: matplotlib draws for seconds
def test_the_page_leads_with_the_comparison_picture(compared: assay.Analysis) -> None:
    page = render_html(compared.result, trials=compared.trials.to_dicts())
    charts = re.findall(r'data-chart="([a-z-]+)"', page)
    assert charts[:2] == ["comparison", "pass-rates"]
    comparison = page[page.index('data-chart="comparison"') :].split("</svg>", 1)[0]
    (suite,) = compared.result.suites
    assert suite.comparison is not None
    # the suite's difference and the movers are drawn, by name
    assert "suite mean change −" in comparison and "against the baseline" in comparison
    for case, _ in suite.comparison.moved:
        assert case in comparison


def test_the_picture_draws_the_differences_the_suite_test_averages(
    compared: assay.Analysis,
) -> None:
    (suite,) = compared.result.suites
    comparison = suite.comparison
    assert comparison is not None and comparison.difference is not None
    changes = case_changes(suite, compared.result.tests)
    assert len(changes) == comparison.paired_cases == 12
    mean = sum(c.difference for c in changes) / len(changes)
    assert mean == pytest.approx(comparison.difference)
    moved = {c.case: c.difference for c in changes}
    assert all(moved[case] == pytest.approx(d) for case, d in comparison.moved)


def test_without_a_baseline_there_is_no_comparison_picture(tmp_path: Path) -> None:
    from assay.report._html import _Charts, _suites

    _record(tmp_path)
    alone = assay.analyze(tmp_path)
    (suite,) = alone.result.suites
    assert suite.comparison is None and case_changes(suite, alone.result.tests) == []
    assert 'data-chart="comparison"' not in _suites(alone.result, _Charts())


def test_the_settings_line_is_in_words(compared: assay.Analysis) -> None:
    from assay.report._html import settings_in_words

    given = {k: v for k, v in compared.result.options.items() if v is not None and v != ()}
    line = settings_in_words(given)
    assert "fixed-sample intervals and tests" in line
    assert "suite means with betting intervals" in line
    for raw in ("anytime False", "suite ci", "suite attribute assay.suite", "False", "True"):
        assert raw not in line

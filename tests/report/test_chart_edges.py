"""A pass rate of 100% (or 0%) is drawn whole, not cut in half by the chart's edge."""

from __future__ import annotations

from assay.judge import AnalysisResult
from assay.report import _charts as ch


def test_every_dot_and_whisker_of_the_overview_is_drawn_over_the_edge(
    result: AnalysisResult,
) -> None:
    fig = ch.overview_chart(result.tests)
    (ax,) = fig.axes
    assert ax.get_xlim() == (0, 1)
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(dots) == sum(t.pass_rate is not None for t in result.tests)
    assert any(line.get_xdata()[0] == 1.0 for line in dots)  # the sample has a 100% test
    assert not any(line.get_clip_on() for line in dots)

"""The comparison picture an HTML compare report leads with: the suite, version against version.

Two panels. On the left, the distribution of the per-case paired differences (each case's
current pass rate minus its baseline one: the values the suite's paired test averages), with
the suite's mean difference and its interval drawn above it, the line of no change and the
margin when one was asked for. On the right, the cases that moved most, each a line from its
baseline rate to its current one. A 300-case suite shows as one picture, where the pass-rate
chart shows 25 identical rows.

It draws what the result holds (:class:`assay.judge.SuiteComparison` and each case's
:class:`assay.judge.RegressionResult`); it computes no statistic.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from assay.judge import SuiteComparison, SuiteResult, TestResult
from assay.report._charts import COLOURS, FAIL_COLOUR, GREY, PASS_COLOUR, new_figure, style_axes
from assay.report._safe import visible

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["CaseChange", "case_changes", "comparison_chart"]

MOVED_SHOWN = 10
"""Cases drawn in the right panel (the comparison's ``moved``: the ten that moved most)."""


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One paired case: its pass rate in each version."""

    case: str
    """The case's id."""
    baseline: float
    """Its baseline pass rate."""
    current: float
    """Its current pass rate."""

    @property
    def difference(self) -> float:
        """Current minus baseline (negative: a drop)."""
        return self.current - self.baseline


def case_changes(suite: SuiteResult, tests: Sequence[TestResult]) -> list[CaseChange]:
    """The suite's paired cases with both versions' rates, from each case's regression counts."""
    cases = set(suite.case_ids)
    changes = []
    for test in tests:
        regression = test.regression
        if test.test_id not in cases or regression is None:
            continue
        if regression.baseline_n and regression.current_n:
            changes.append(
                CaseChange(
                    test.test_id,
                    regression.baseline_passed / regression.baseline_n,
                    regression.current_passed / regression.current_n,
                )
            )
    return changes


def comparison_chart(comparison: SuiteComparison, changes: Sequence[CaseChange]) -> Figure:
    """The two panels (see the module docstring)."""
    fig = new_figure(11, 3.6)
    left, right = fig.subplots(1, 2, width_ratios=[3, 2])
    _differences(left, comparison, changes)
    by_case = {c.case: c for c in changes}
    moved = [by_case[case] for case, _ in comparison.moved[:MOVED_SHOWN] if case in by_case]
    _moved(right, moved)
    return fig


def _points(value: float) -> str:
    return f"{100 * value:+.1f}".replace("-", "−")


def _differences(ax: Axes, comparison: SuiteComparison, changes: Sequence[CaseChange]) -> None:
    # Per-case rates are fractions of a few trials: their differences take few values, so a
    # bar per value (rounded to a tenth of a point) shows them exactly, with no binning.
    counts = Counter(round(100 * c.difference, 1) for c in changes)
    values = sorted(counts)
    colours = [FAIL_COLOUR if v < 0 else PASS_COLOUR if v > 0 else GREY for v in values]
    width = min(
        8.0, 0.8 * min((b - a for a, b in zip(values, values[1:], strict=False)), default=10)
    )
    ax.bar(values, [counts[v] for v in values], width=width, color=colours, alpha=0.85)
    top = max(counts.values(), default=1)
    ax.axvline(0, color="#24292f", linewidth=1)
    if comparison.margin is not None:
        ax.axvline(-100 * comparison.margin, color="#24292f", linestyle="--", linewidth=1)
        ax.annotate(
            f"margin −{100 * comparison.margin:g}",
            (-100 * comparison.margin, top * 1.02),
            fontsize=8,
            ha="right",
            color=GREY,
        )
    if comparison.difference is not None:
        mean, interval = 100 * comparison.difference, comparison.interval
        colour = COLOURS[comparison.verdict.value]
        y = top * 1.25
        if interval is not None:
            low, high = 100 * interval.low, 100 * interval.high
            # the interval as a band over the cases too: where the suite's mean may lie
            ax.axvspan(low, high, color=colour, alpha=0.15, linewidth=0)
            ax.errorbar(
                [mean], [y], xerr=[[mean - low], [high - mean]], color=colour, capsize=5, lw=2.5
            )
            shown = f"[{_points(interval.low)}, {_points(interval.high)}]"
        else:
            shown = ""
        ax.plot([mean], [y], "D", color=colour, markersize=8, zorder=3)
        ax.annotate(
            f"suite mean change {_points(comparison.difference)} points {shown}: "
            f"{comparison.verdict.value} against the baseline",
            (mean, y),
            xytext=(0, 9),
            textcoords="offset points",
            ha="center",
            fontsize=9,
            color=colour,
        )
        ax.set_ylim(0, top * 1.5)
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of cases
    ax.set_xlim(-105, 105)
    ax.set_xlabel("change in a case's pass rate, current − baseline (points)")
    ax.set_ylabel("cases")
    ax.set_title(
        f"{len(changes)} paired cases: each case's change, and the suite's mean with its interval",
        fontsize=10,
        loc="left",
    )
    style_axes(ax)


def _moved(ax: Axes, moved: Sequence[CaseChange]) -> None:
    if not moved:
        ax.axis("off")
        ax.annotate("no case's pass rate moved", (0.5, 0.5), ha="center", color=GREY)
        return
    for row, change in enumerate(reversed(moved)):
        colour = FAIL_COLOUR if change.difference < 0 else PASS_COLOUR
        ax.annotate(
            "",
            (change.current, row),
            xytext=(change.baseline, row),
            arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.8},
        )
        ax.plot([change.baseline], [row], "o", color=GREY, markersize=6, clip_on=False)
        ax.plot([change.current], [row], "o", color=colour, markersize=7, clip_on=False)
    ax.set_yticks(range(len(moved)), [visible(c.case)[:28] for c in reversed(moved)], fontsize=8)
    ax.set_ylim(-0.6, len(moved) - 0.4)
    ax.set_xlim(-0.02, 1.02)
    from matplotlib.ticker import PercentFormatter

    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.set_xlabel("pass rate: baseline (grey) → current")
    ax.set_title("the cases that moved most", fontsize=10, loc="left")
    style_axes(ax)

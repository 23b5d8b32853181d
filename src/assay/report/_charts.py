"""The HTML report's charts: matplotlib figures rendered to inline SVG (no JavaScript, no CDN).

matplotlib is imported here only, and only when a chart is drawn, so ``assay --help`` stays
fast. Figures are built with the object API (``Figure``), never ``pyplot``: no global state, no
GUI backend. Each SVG gets its own hash salt so that the ids of two inline charts never clash,
and no date, so that the same analysis renders the same bytes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from assay.judge import RegressionResult, TestResult
from assay.report._rows import VariantRow
from assay.report._safe import visible
from assay.report._text import passk_points, path_label, shown_interval
from assay.stats import Factor, ScoreSummary

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COLOURS = {"PASS": "#1a7f37", "FAIL": "#cf222e", "INCONCLUSIVE": "#bf8700"}
PASS_COLOUR, FAIL_COLOUR, GREY = "#2da44e", "#cf222e", "#57606a"


def new_figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return fig


def style_axes(ax: Axes) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=9)


def to_svg(fig: Figure, name: str, salt: str) -> str:
    """The figure as an inline ``<svg class="chart" data-chart=name>`` element."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)
    # matplotlib numbers ids per figure (figure_1, axes_1, ...): prefix them, and the
    # references to them, so that several charts can live in one document.
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{salt}-{m.group(1)}"', svg)
    svg = re.sub(
        r'(url\(#|href="#)([^)"]+)',
        lambda m: f"{m.group(1)}{salt}-{m.group(2)}" if m.group(2) in ids else m.group(0),
        svg,
    )
    return svg.replace("<svg", f'<svg class="chart" data-chart="{name}" role="img"', 1)


def _percent_axis(ax: Axes, axis: str = "x") -> None:
    from matplotlib.ticker import PercentFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(PercentFormatter(1.0, decimals=0))


def overview_chart(tests: Sequence[TestResult]) -> Figure:
    """Each test's pass rate (dot) and interval (whisker) against its threshold (red tick).

    The interval is the anytime-valid one for a sequential verdict, else the confidence one.
    """
    fig = new_figure(9, 0.45 * len(tests) + 1.1)
    ax = fig.add_subplot()
    labels = []
    for row, test in enumerate(reversed(tests)):
        labels.append(f"{visible(test.test_id)}  {test.verdict.value}")
        colour = COLOURS[test.verdict.value]
        shown, rate = shown_interval(test), test.pass_rate
        if shown is not None:
            ax.plot(list(shown), [row, row], color=colour, linewidth=3, alpha=0.6, clip_on=False)
            for end in shown:
                ax.plot(
                    [end, end], [row - 0.18, row + 0.18], color=colour, linewidth=1.5, clip_on=False
                )
        if rate is not None:
            # not clipped: a dot at 0% or 100% is drawn whole over the axis' edge
            ax.plot([rate], [row], "o", color=colour, markersize=8, clip_on=False, zorder=3)
            ax.annotate(
                f"{100 * rate:.1f}%  ({test.passed}/{test.n})",
                (1.03, row),
                xycoords=("axes fraction", "data"),
                va="center",
                fontsize=9,
                color=colour,
            )
        else:
            ax.annotate("no trials counted", (0.01, row), va="center", fontsize=9, color=GREY)
        ax.plot([test.threshold] * 2, [row - 0.4, row + 0.4], color="#24292f", linestyle="--")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.set_xlim(0, 1)
    _percent_axis(ax)
    ax.set_xlabel("pass rate with its confidence interval; dashed line = threshold")
    style_axes(ax)
    return fig


def score_chart(
    name: str,
    passing: Sequence[float],
    failing: Sequence[float],
    summary: ScoreSummary | None,
) -> Figure:
    """Histogram of one score, passing and failing trials stacked, with the mean's interval."""
    fig = new_figure(4.6, 2.8)
    ax = fig.add_subplot()
    values = [*passing, *failing]
    low, high = min(values), max(values)
    bins = 12 if high > low else 1
    ax.hist(
        [list(passing), list(failing)],
        bins=bins,
        range=(low, high) if high > low else (low - 0.5, high + 0.5),
        stacked=True,
        color=[PASS_COLOUR, FAIL_COLOUR],
        label=[f"passing ({len(passing)})", f"failing ({len(failing)})"],
    )
    if summary is not None:
        if summary.ci_low is not None and summary.ci_high is not None:
            ax.axvspan(summary.ci_low, summary.ci_high, color=GREY, alpha=0.2)
        ax.axvline(summary.mean, color="#24292f", linestyle="--", label="mean (and CI)")
    ax.set_title(f"score: {visible(name)}", fontsize=10, loc="left")
    ax.set_ylabel("trials")
    ax.legend(fontsize=8, frameon=False)
    style_axes(ax)
    return fig


def variants_chart(variants: Sequence[VariantRow], labels: Sequence[str]) -> Figure:
    """Tool-sequence variants: trials per variant, coloured by the variant's pass rate."""
    from matplotlib import colormaps

    cmap = colormaps["RdYlGn"]
    fig = new_figure(4.6, 0.42 * len(variants) + 1.0)
    ax = fig.add_subplot()
    rows = range(len(variants))[::-1]
    counts = [v.count for v in variants]
    colours = [cmap(0.1 + 0.8 * v.pass_rate) for v in variants]
    ax.barh(list(rows), counts, color=colours, edgecolor="#24292f", linewidth=0.5)
    for row, variant in zip(rows, variants, strict=True):
        ax.annotate(
            f" {variant.count}× · {100 * variant.pass_rate:.0f}% pass",
            (variant.count, row),
            va="center",
            fontsize=8,
        )
    ax.set_yticks(list(rows), [path_label(i) for i in range(len(variants))])
    ax.set_xlim(0, max(counts) * 1.45)
    ax.set_xlabel("trials (colour: pass rate, red 0% → green 100%)")
    style_axes(ax)
    return fig


def factors_chart(factors: Sequence[Factor]) -> Figure:
    """The flakiness factors, each in [0, 1] (0 = perfectly steady)."""
    fig = new_figure(4.6, 0.4 * len(factors) + 1.0)
    ax = fig.add_subplot()
    rows = range(len(factors))[::-1]
    values = [f.value for f in factors]
    ax.barh(list(rows), values, color="#8250df")
    ax.set_yticks(list(rows), [f.name.replace("_", " ") for f in factors])
    ax.set_xlim(0, 1)
    ax.set_xlabel("contribution (0 steady → 1 erratic)")
    ax.set_title("flakiness factors", fontsize=10, loc="left")
    style_axes(ax)
    return fig


def passk_chart(
    pass_at_k: Mapping[str, float | None] | None, pass_hat_k: Mapping[str, float | None] | None
) -> Figure:
    """pass@k (at least one of k succeeds) and pass^k (all k succeed) against k."""
    fig = new_figure(4.6, 2.8)
    ax = fig.add_subplot()
    for values, label, colour in (
        (pass_at_k, "pass@k (any of k)", PASS_COLOUR),
        (pass_hat_k, "pass^k (all of k)", FAIL_COLOUR),
    ):
        points = [(k, v) for k, v in passk_points(values) if v is not None]
        if points:
            ax.plot(*zip(*points, strict=True), "o-", color=colour, label=label)
    ax.set_ylim(0, 1.05)
    _percent_axis(ax, "y")
    ax.set_xlabel("k")
    ax.set_title("pass@k and pass^k", fontsize=10, loc="left")
    ax.legend(fontsize=8, frameon=False)
    style_axes(ax)
    return fig


def regression_chart(test: TestResult, regression: RegressionResult) -> Figure:
    """Baseline against current pass rate, the current interval, and the threshold."""
    fig = new_figure(4.6, 2.6)
    ax = fig.add_subplot()
    base = regression.baseline_passed / regression.baseline_n
    current = test.pass_rate or 0.0
    ax.barh([1, 0], [base, current], color=[GREY, COLOURS[test.verdict.value]])
    if test.interval is not None:
        ax.errorbar(
            [current],
            [0],
            xerr=[[current - test.interval.low], [test.interval.high - current]],
            color="#24292f",
            capsize=4,
            clip_on=False,
        )
    ax.axvline(test.threshold, color="#24292f", linestyle="--")
    ax.set_yticks(
        [1, 0],
        [
            f"baseline {regression.baseline_passed}/{regression.baseline_n}",
            f"current {test.passed}/{test.n}",
        ],
    )
    ax.set_xlim(0, 1)
    _percent_axis(ax)
    ax.set_title(f"vs baseline: regression {regression.verdict.value}", fontsize=10, loc="left")
    style_axes(ax)
    return fig

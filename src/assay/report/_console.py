"""The console report: verdicts, intervals against the threshold, and the reasons, for a terminal.

Nothing depends on colour: verdicts are words, and the one-line pass-rate bar uses distinct
glyphs (``━`` the interval, ``●`` the observed rate, ``┃`` the threshold), so the report reads
the same under ``NO_COLOR`` or in a CI log.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from rich.console import Console, Group
from rich.measure import Measurement
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from assay.judge import AnalysisResult, TestResult, Verdict
from assay.report import _text as tx
from assay.report._behaviour import behaviour_lines, cost_text
from assay.report._safe import visible
from assay.report._suites import (
    CaseListing,
    comparison_lines,
    figure_lines,
    listed_cases,
    shown_suites,
    suite_name,
    summary_lines,
)

VERDICT_STYLE = {"PASS": "bold green", "FAIL": "bold red", "INCONCLUSIVE": "bold yellow"}
BAR_WIDTH = 20
SPARK = "▁▂▃▄▅▆▇█"


def data_text(value: object, style: str = "") -> Text:
    r"""User-controlled text (ids, names, messages) as rich text: never markup, no raw control.

    ``Text`` keeps rich from reading ``[red]`` as markup; :func:`visible` shows control
    characters (``\x1b``, ``\r``) instead of letting the terminal act on them.
    """
    return Text(visible(value), style=style)


def pass_rate_bar(
    rate: float | None,
    low: float | None,
    high: float | None,
    threshold: float,
    width: int = BAR_WIDTH,
    style: str = "",
) -> Text:
    """The pass rate and its interval against the threshold, drawn on a 0–100% line.

    Args:
        rate: The observed pass rate (``●``), or None.
        low: Lower end of the interval (``━`` from here), or None.
        high: Upper end of the interval, or None.
        threshold: The required pass rate (``┃``).
        width: Characters between the ``0`` and ``100%`` labels.
        style: Style of the interval (e.g. the verdict's colour).

    Returns:
        ``0 ····━━━●━━┃━━······ 100%`` as rich text.
    """

    def cell(value: float) -> int:
        return min(width - 1, max(0, int(value * width)))

    glyphs = ["·"] * width
    styles = ["dim"] * width
    if low is not None and high is not None:
        for i in range(cell(low), cell(high) + 1):
            glyphs[i], styles[i] = "━", style
    if rate is not None:
        glyphs[cell(rate)], styles[cell(rate)] = "●", style
    t = cell(threshold) if threshold < 1 else width - 1
    glyphs[t], styles[t] = "┃", "bold"
    bar = Text("0 ", style="dim")
    for glyph, glyph_style in zip(glyphs, styles, strict=True):
        bar.append(glyph, style=glyph_style)
    bar.append(" 100%", style="dim")
    return bar


def sparkline(values: Sequence[float], bins: int = 10) -> str:
    """A histogram of ``values`` in one line of block characters (empty without values)."""
    finite = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if finite.size == 0:
        return ""
    low, high = float(finite.min()), float(finite.max())
    if low == high:
        return SPARK[-1]
    counts, _ = np.histogram(finite, bins=bins, range=(low, high))
    top = int(counts.max())
    return "".join(
        " " if c == 0 else SPARK[min(len(SPARK) - 1, int(c * len(SPARK) / (top + 1)))]
        for c in counts
    )


def _scores_by_test(
    trials: Sequence[Mapping[str, object]] | None,
) -> dict[str, dict[str, list[float]]]:
    """Test id → score name → values, from trials-table rows (for the sparklines)."""
    out: dict[str, dict[str, list[float]]] = {}
    for row in trials or ():
        per_name = out.setdefault(str(row["test_id"]), {})
        scores = row["scores"] if "scores" in row else None
        for score in scores if isinstance(scores, list) else ():
            if isinstance(score, Mapping) and score["value"] is not None:
                per_name.setdefault(str(score["name"]), []).append(float(score["value"]))
    return out


LEGEND = "bar: 0–100%, ━ interval (anytime-valid for a sequential verdict), ● rate, ┃ threshold"
_FIXED_COLUMNS = 95
"""Width of the table without the test column: 68 of text and borders, 27 for the bar."""

_INTERVAL_TEXT = 16
"""The interval text those 68 allow for (``[100.0%, 100.0%]``); ``anytime […]`` is wider."""


_TRIALS_COLUMN = 10
"""Width of the ``trials`` column of ``assay run`` (``60/60`` and its borders)."""


def _bar_fits(tests: Sequence[TestResult], width: int, with_trials: bool) -> bool:
    """Whether the bar column fits beside a readable test column."""
    longest = max((len(t.test_id) for t in tests), default=4)
    interval = max((len(tx.interval_label(t)) for t in tests), default=0)
    fixed = _FIXED_COLUMNS + max(0, interval - _INTERVAL_TEXT)
    fixed += _TRIALS_COLUMN if with_trials else 0
    return width - fixed >= min(longest, 20)


def verdict_table(
    tests: Sequence[TestResult], with_bar: bool, trials_of: Mapping[str, int] | None = None
) -> Table:
    """The verdict table: one row per test (and, for a run, the trials used of the maximum)."""
    table = Table(
        title="assay verdicts",
        title_justify="left",
        header_style="bold",
        caption=LEGEND if with_bar else None,
        caption_justify="left",
    )
    longest = max((len(t.test_id) for t in tests), default=4)
    table.add_column("test", overflow="fold", min_width=min(longest, 16), max_width=32)
    table.add_column("verdict", no_wrap=True)
    table.add_column("rate (passed/n)", justify="right", no_wrap=True)
    table.add_column(tx.interval_header(tests), justify="center", no_wrap=True)
    if with_bar:
        table.add_column("against the threshold", no_wrap=True)
    table.add_column("errors", justify="right", no_wrap=True)
    if trials_of is not None:
        table.add_column("trials", justify="right", no_wrap=True)
    for test in tests:
        style = VERDICT_STYLE[test.verdict.value]
        cells = [
            data_text(test.test_id),
            Text(test.verdict.value, style=style),
            Text(tx.rate_text(test)),
            Text(tx.interval_label(test)),
        ]
        if with_bar:
            cells.append(_bar(test))
        cells.append(Text(str(test.errors)))
        if trials_of is not None:
            cells.append(Text(f"{test.trials}/{trials_of.get(test.test_id, test.trials)}"))
        table.add_row(*cells)
    return table


def _bar(test: TestResult) -> Text:
    shown = tx.shown_interval(test)
    low, high = shown if shown is not None else (None, None)
    style = VERDICT_STYLE[test.verdict.value]
    return pass_rate_bar(test.pass_rate, low, high, test.threshold, style=style)


def _details(
    test: TestResult, scores: Mapping[str, list[float]], bar: bool, trace_url: str | None = None
) -> Group:
    style = VERDICT_STYLE[test.verdict.value]
    head = Text()
    head.append(f"{test.verdict.value:<12} ", style=style)
    head.append(visible(test.test_id), style="bold")
    head.append(visible(f" — {test.verdict_reason}"))
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    rows: list[tuple[str, str | Text]] = []
    sequential = tx.sequential_text(test)
    if sequential:
        rows.append(("interval", sequential))
    if bar:  # the table had no room for it
        rows.append(("pass rate", _bar(test).append("  (━ interval ● rate ┃ threshold)", "dim")))
    for ks, symbol in ((test.pass_at_k, "pass@"), (test.pass_hat_k, "pass^")):
        text = tx.passk_text(ks, symbol)
        if text:
            rows.append((symbol + "k", text))
    for name in list(test.scores) or list(scores):
        line = data_text(f"{name}: ")
        if name in test.scores:
            line.append(tx.score_text(test.scores[name]))
        values = scores.get(name, [])
        spark = sparkline(values)
        if spark:
            line.append(f"  {tx.num(min(values))} ", style="dim")
            line.append(spark, style="cyan")
            line.append(f" {tx.num(max(values))}", style="dim")
        rows.append(("score", line))
    tools = tx.work_unknown_text(test) or tx.tool_consistency_text(test.tool_consistency)
    if tools:
        rows.append(("tools", tools))
    headline = tx.flakiness_headline(test.flakiness)
    if headline:
        rows.append(("flakiness", headline))
        if test.verdict is not Verdict.PASS:  # a passing test's variation is detail, no reason
            reasons = tx.flakiness_reasons(test.flakiness, limit=4)
            rows.extend(("", f"• {reason}") for reason in reasons)
    for i, sentence in enumerate(tx.failure_explanations(test)):
        rows.append(("failures" if i == 0 else "", f"• {sentence}"))
    regression = tx.regression_text(test)
    if regression:
        rows.append(("baseline", regression))
    for i, said in enumerate(behaviour_lines(test.behaviour)):
        rows.append(("behaviour" if i == 0 else "", said.removeprefix("behaviour ")))
    spent = cost_text(test.cost)
    if spent:
        rows.append(("cost", spent.removeprefix("cost ")))
    failed_tools = tx.tool_errors_text(test, trace_url)
    if failed_tools:
        rows.append(("tool errors", failed_tools))
    rows.extend(("trials", line.removeprefix("trials ")) for line in tx.source_lines(test))
    if test.first_error:
        rows.append(("first error", test.first_error))
    rows.extend(("note", note) for note in test.notes)
    for label, value in rows:
        # Text, not str: a test's words (ids, details) are data, never rich markup.
        grid.add_row(Text(label), data_text(value) if isinstance(value, str) else value)
    return Group(head, Padding(grid, (0, 0, 0, 2))) if rows else Group(head)


_SUMMARY_CASES = 10
"""Cases needing a look that the summary box names when not every case is listed."""


def suite_block(result: AnalysisResult) -> list[Text]:
    """Each suite's answer, first in the report: its verdict and reason, figures, comparison."""
    out: list[Text] = []
    for suite in shown_suites(result):
        # ``suite NAME — VERDICT: reason``: the name bold, the verdict in its colour.
        head = Text("suite ", style="bold")
        head.append(visible(suite_name(suite)), style="bold")
        head.append(" — ")
        head.append(suite.verdict.value, style=VERDICT_STYLE[suite.verdict.value])
        head.append(visible(f": {suite.reason}"))
        out.append(head)
        if suite.interval is not None:
            bar = pass_rate_bar(
                suite.pass_rate,
                suite.interval.low,
                suite.interval.high,
                suite.threshold,
                style=VERDICT_STYLE[suite.verdict.value],
            )
            out.append(Text("  ").append_text(bar))
        for line in [*figure_lines(suite), *comparison_lines(suite), *suite.notes]:
            out.append(data_text(f"  {line}"))
    return out


def summary_panel(result: AnalysisResult, listing: CaseListing | None = None) -> Panel:
    """The summary box: the suites, counts per verdict, the tests needing attention, skips."""
    counts = result.counts
    lines: list[Text] = [data_text(line) for line in summary_lines(shown_suites(result))]
    line = Text(f"{tx.counted(len(result.tests), 'test')}: ")
    for i, verdict in enumerate(("PASS", "FAIL", "INCONCLUSIVE")):
        if i:
            line.append(" · ")
        line.append(f"{counts[verdict]} {verdict}", style=VERDICT_STYLE[verdict])
    lines.append(line)
    attention = [t for t in tx.by_severity(result.tests) if t.verdict is not Verdict.PASS]
    named = attention if listing is None or listing.in_full else attention[:_SUMMARY_CASES]
    for test in named:
        item = Text("  ")
        item.append(f"{test.verdict.value:<12}", style=VERDICT_STYLE[test.verdict.value])
        item.append(visible(f" {test.test_id}: {test.verdict_reason}"))
        if named is not attention:
            # Many cases: a line each, cut at the box's edge (the reasons are above and in JSON).
            item.no_wrap, item.overflow = True, "ellipsis"
        lines.append(item)
    if len(named) < len(attention):
        lines.append(Text(f"  … {len(attention) - len(named)} more not PASS (see above)"))
    if result.skipped_files:
        count = len(result.skipped_files)
        lines.append(Text(f"{count} unreadable file(s) skipped", style="yellow"))
    return Panel(Group(*lines), title="assay summary", title_align="left", expand=False)


def quality_lines(result: AnalysisResult) -> list[Text]:
    """One line per warning finding about the input (``data_quality``)."""
    return [
        data_text(f"warning: {finding.message}", style="yellow")
        for finding in result.data_quality.warnings
    ]


def diagnostics(result: AnalysisResult) -> list[str]:
    """The lines about the input rather than the verdicts: warning findings and skipped files.

    A command prints them to stderr, away from the report on stdout.
    """
    return [f"warning: {finding.message}" for finding in result.data_quality.warnings] + [
        f"warning: skipped {path}: {reason}" for path, reason in result.skipped_files
    ]


def render_console(
    result: AnalysisResult,
    console: Console,
    *,
    quiet: bool = False,
    trials: Sequence[Mapping[str, object]] | None = None,
    trials_of: Mapping[str, int] | None = None,
    with_diagnostics: bool = True,
    all_cases: bool = False,
    trace_url: str | None = None,
) -> None:
    """Print the verdicts, each test's figures and reasons, and a summary box.

    Args:
        result: The analysis result.
        console: Where to print (``Console(no_color=True)`` or ``NO_COLOR`` for plain text).
        quiet: Print the summary box (and data-quality warnings) only.
        trials: The trials table as rows (``Analysis.trials.to_dicts()``), for the score
            sparklines; optional.
        trials_of: Test id → the most trials it could have used (``assay run``): adds a
            ``trials`` column.
        with_diagnostics: Print the warnings about the input and the skipped files
            (:func:`diagnostics`); False when the caller prints them elsewhere (stderr).
        all_cases: List every case with its details, however many (by default a set of more
            than a dozen cases lists the ones needing a look and counts the rest).
        trace_url: A trace-viewer template (``{trace_id}``): a trial named is its URL.
    """
    listing = listed_cases(result, all_cases=all_cases)
    tests = list(listing.listed)
    warnings = quality_lines(result) if with_diagnostics else []
    if not quiet:
        suites = suite_block(result)
        for line in suites:
            console.print(line)
        if suites:
            console.print()
        with_bar = _bar_fits(tests, console.width, trials_of is not None)
        console.print(verdict_table(tests, with_bar, trials_of))
        more = listing.more_text()
        if more:
            console.print(Text(more))
        for line in warnings:
            console.print(line)
        scores = _scores_by_test(trials) if listing.in_full else {}
        for test in tests if listing.in_full else ():
            console.print()
            console.print(
                _details(test, scores.get(test.test_id, {}), bar=not with_bar, trace_url=trace_url)
            )
        console.print()
        for path, reason in result.skipped_files if with_diagnostics else ():
            console.print(data_text(f"skipped {path}: {reason}", style="yellow"))
        for note in result.notes:
            console.print(data_text(note))
    else:
        for line in warnings:
            console.print(line)
    print_summary(summary_panel(result, listing), console)


def print_summary(panel: Panel, console: Console) -> None:
    """Print the summary box; in a log (not a terminal) as wide as its longest line.

    A CI log has no width to fit: a reason wrapped inside the box there once left a percentage
    alone on its line. On a terminal the box fits the screen, as everything else does.
    """
    if console.is_terminal:
        console.print(panel)
        return
    widest = Measurement.get(console, console.options.update_width(10_000), panel).maximum
    width = console.width  # print(width=) only narrows: widen the console for the box alone
    console.width = max(width, widest)
    try:
        console.print(panel)
    finally:
        console.width = width

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
    decision_headline,
    decision_notes,
    figure_lines,
    listed_cases,
    shown_suites,
    suite_name,
    summary_lines,
    threshold_counts,
    threshold_label,
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


def _verdict_line(label: str, verdict: Verdict, reason: str) -> Text:
    """``LABEL — VERDICT: reason``: the label bold, the verdict in its colour."""
    head = Text(visible(label), style="bold")
    head.append(" — ")
    head.append(verdict.value, style=VERDICT_STYLE[verdict.value])
    head.append(visible(f": {reason}"))
    return head


def decision_block(result: AnalysisResult) -> list[Text]:
    """Line 1 with a baseline: the answer and what decided the exit code, then what it leaves out.

    Empty when every case's verdict decides (no baseline, or no suite of several cases).
    """
    headline = decision_headline(result)
    if headline is None:
        return []
    decision = result.decision
    line = Text("assay: ", style="bold")
    line.append(decision.verdict.value, style=VERDICT_STYLE[decision.verdict.value])
    line.append(visible(headline.removeprefix(decision.verdict.value)))
    return [line, *(data_text(f"  {note}") for note in decision_notes(decision))]


def suite_block(result: AnalysisResult) -> list[Text]:
    """Each suite's answer: the comparison with a baseline, then the threshold verdict.

    The verdict against the threshold is labelled as such, with its figures and notes.
    """
    out: list[Text] = []
    for suite in shown_suites(result):
        name = suite_name(suite)
        comparison = suite.comparison
        if comparison is not None:
            out.append(
                _verdict_line(
                    f"suite {name} against the baseline", comparison.verdict, comparison.reason
                )
            )
            out += [data_text(f"  {line}") for line in comparison_lines(suite)[1:]]
            out.append(_verdict_line(threshold_label(suite), suite.verdict, suite.reason))
        else:
            out.append(_verdict_line(f"suite {name}", suite.verdict, suite.reason))
        if suite.interval is not None:
            bar = pass_rate_bar(
                suite.pass_rate,
                suite.interval.low,
                suite.interval.high,
                suite.threshold,
                style=VERDICT_STYLE[suite.verdict.value],
            )
            out.append(Text("  ").append_text(bar))
        for line in [*figure_lines(suite), *suite.notes]:
            out.append(data_text(f"  {line}"))
    return out


def summary_panel(
    result: AnalysisResult, listing: CaseListing | None = None, *, quiet: bool = False
) -> Panel:
    """The summary box: the answer, the suites, counts per verdict, the cases needing a look.

    Args:
        result: The analysis result.
        listing: The cases the report lists (None: every case).
        quiet: Nothing was printed above the box (``-q``): no case is "above".
    """
    counts = result.counts
    lines: list[Text] = decision_block(result)[:1]
    lines += [data_text(line) for line in summary_lines(shown_suites(result))]
    tests = tx.counted(len(result.tests), "test")
    if lines and not threshold_counts(result):
        # Each case's own verdict: the worse of its threshold and unadjusted regression ones.
        tests += " per case (threshold and unadjusted drop; not counted)"
    line = Text(f"{tests}: ")
    for i, verdict in enumerate(("PASS", "FAIL", "INCONCLUSIVE")):
        if i:
            line.append(" · ")
        line.append(f"{counts[verdict]} {verdict}", style=VERDICT_STYLE[verdict])
    lines.append(line)
    attention = [t for t in tx.by_severity(result.tests) if t.verdict is not Verdict.PASS]
    named = attention if listing is None or listing.in_full else attention[:_SUMMARY_CASES]
    # A reason wraps beside its verdict (a hanging indent), never widening the box; with many
    # cases each is one line cut at the box's edge (the reasons are above and in the JSON).
    cut = named is not attention
    items = Table.grid(padding=(0, 1, 0, 0))
    items.add_column(no_wrap=True, min_width=len("INCONCLUSIVE"))
    items.add_column(ratio=1)
    for test in named:
        reason = data_text(f"{test.test_id}: {test.verdict_reason}")
        if cut:
            reason.no_wrap, reason.overflow = True, "ellipsis"
        items.add_row(Text(test.verdict.value, style=VERDICT_STYLE[test.verdict.value]), reason)
    parts: list[Text | Padding] = [*lines]
    if named:
        parts.append(Padding(items, (0, 0, 0, 2)))
    if len(named) < len(attention):
        parts.append(Text(f"  {_more_text(attention[len(named) :], listing, quiet)}"))
    if result.skipped_files:
        count = len(result.skipped_files)
        parts.append(Text(f"{count} unreadable file(s) skipped", style="yellow"))
    return Panel(Group(*parts), title="assay summary", title_align="left", expand=False)


def _more_text(rest: Sequence[TestResult], listing: CaseListing | None, quiet: bool) -> str:
    """``… 290 more not PASS: 10 listed above, 280 not listed (--all-cases lists every one)``.

    "Above" only for the cases the table above lists (none with ``-q``).
    """
    shown = set() if quiet or listing is None else {t.test_id for t in listing.listed}
    above = sum(1 for t in rest if t.test_id in shown)
    unlisted = len(rest) - above
    every = "(--all-cases lists every one)"
    if not unlisted:
        return f"… {len(rest)} more not PASS (listed above)"
    if not above:
        return f"… {len(rest)} more not PASS, not listed {every}"
    return f"… {len(rest)} more not PASS: {above} listed above, {unlisted} not listed {every}"


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
        suites = [*decision_block(result), *([Text()] if decision_block(result) else [])]
        suites += suite_block(result)
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
    print_summary(summary_panel(result, listing, quiet=quiet), console)


def print_summary(panel: Panel, console: Console) -> None:
    """Print the summary box, at most as wide as the console (120 columns in a log).

    A long line wraps inside the box rather than widening it: a log read in a CI page or a
    terminal of 120 columns shows the whole box (docs/cli.md, "Widths").
    """
    console.print(panel)

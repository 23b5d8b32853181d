"""The console report: verdicts, intervals against the threshold, and the reasons, for a terminal.

Nothing depends on colour: verdicts are words, and the one-line pass-rate bar uses distinct
glyphs (``━`` the interval, ``●`` the observed rate, ``┃`` the threshold), so the report reads
the same under ``NO_COLOR`` or in a CI log.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from assay.report import _text as tx
from assay.report._behaviour import behaviour_lines, cost_text
from assay.report._json import analysis_to_dict
from assay.verdict import AnalysisResult

VERDICT_STYLE = {"PASS": "bold green", "FAIL": "bold red", "INCONCLUSIVE": "bold yellow"}
BAR_WIDTH = 20
SPARK = "▁▂▃▄▅▆▇█"


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
    trials: Sequence[Mapping[str, Any]] | None,
) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    for row in trials or ():
        per_name = out.setdefault(str(row["test_id"]), {})
        for score in row.get("scores") or ():
            if score.get("value") is not None:
                per_name.setdefault(str(score["name"]), []).append(float(score["value"]))
    return out


LEGEND = "bar: 0–100%, ━ interval, ● observed rate, ┃ threshold"
_FIXED_COLUMNS = 95
"""Width of the table without the test column: 68 of text and borders, 27 for the bar."""


def _bar_fits(tests: Sequence[Mapping[str, Any]], width: int) -> bool:
    """Whether the bar column fits beside a readable test column."""
    longest = max((len(t["test_id"]) for t in tests), default=4)
    return width - _FIXED_COLUMNS >= min(longest, 20)


def _verdict_table(tests: Sequence[Mapping[str, Any]], confidence: Any, with_bar: bool) -> Table:
    level = f"{100 * confidence:g}% CI" if isinstance(confidence, int | float) else "CI"
    table = Table(
        title="assay verdicts",
        title_justify="left",
        header_style="bold",
        caption=LEGEND,
        caption_justify="left",
    )
    longest = max((len(t["test_id"]) for t in tests), default=4)
    table.add_column("test", overflow="fold", min_width=min(longest, 16), max_width=32)
    table.add_column("verdict", no_wrap=True)
    table.add_column("rate (passed/n)", justify="right", no_wrap=True)
    table.add_column(level, justify="center", no_wrap=True)
    if with_bar:
        table.add_column("against the threshold", no_wrap=True)
    table.add_column("errors", justify="right", no_wrap=True)
    for test in tests:
        ci = test["ci"]
        style = VERDICT_STYLE.get(test["verdict"], "")
        interval = "—" if ci["low"] is None else f"[{tx.pct(ci['low'])}, {tx.pct(ci['high'])}]"
        cells = [
            Text(test["test_id"]),
            Text(test["verdict"], style=style),
            Text(f"{tx.pct(test['pass_rate'])} ({test['passed']}/{test['n']})"),
            Text(interval),
            _bar(test),
            Text(str(test["errors"])),
        ]
        table.add_row(*(cells if with_bar else cells[:4] + cells[5:]))
    if not with_bar:
        table.caption = None
    return table


def _bar(test: Mapping[str, Any]) -> Text:
    ci, style = test["ci"], VERDICT_STYLE.get(test["verdict"], "")
    return pass_rate_bar(test["pass_rate"], ci["low"], ci["high"], test["threshold"], style=style)


def _details(test: Mapping[str, Any], scores: Mapping[str, list[float]], bar: bool) -> Group:
    style = VERDICT_STYLE.get(test["verdict"], "")
    head = Text()
    head.append(f"{test['verdict']:<12} ", style=style)
    head.append(test["test_id"], style="bold")
    head.append(f" — {tx.verdict_reason(test, with_regression=False).split(': ', 1)[-1]}")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column()
    rows: list[tuple[str, str | Text]] = []
    if bar:  # the table had no room for it
        rows.append(("pass rate", _bar(test).append("  (━ interval ● rate ┃ threshold)", "dim")))
    for key, symbol in (("pass_at_k", "pass@"), ("pass_hat_k", "pass^")):
        text = tx.passk_text(test.get(key), symbol)
        if text:
            rows.append((symbol + "k", text))
    summaries = tx.score_summaries(test)
    if list(summaries) == [""] and len(scores) == 1:  # an unnamed summary of the only score
        summaries = {next(iter(scores)): summaries[""]}
    names = list(summaries) or list(scores)
    for name in names:
        line = Text(f"{name}: " if name else "")
        if name in summaries:
            line.append(tx.score_text(summaries[name]))
        values = scores.get(name, [])
        spark = sparkline(values)
        if spark:
            line.append(f"  {tx.num(min(values))} ", style="dim")
            line.append(spark, style="cyan")
            line.append(f" {tx.num(max(values))}", style="dim")
        rows.append(("score", line))
    tools = tx.tool_consistency_text(test.get("tool_consistency"))
    if tools:
        rows.append(("tools", tools))
    headline = tx.flakiness_headline(test.get("flakiness"))
    if headline:
        rows.append(("flakiness", headline))
        if test["verdict"] != "PASS":  # a passing test's variation is detail, not a reason
            reasons = tx.flakiness_reasons(test["flakiness"], limit=4)
            rows.extend(("", f"• {reason}") for reason in reasons)
    for i, sentence in enumerate(tx.failure_explanations(test)):
        rows.append(("failures" if i == 0 else "", f"• {sentence}"))
    regression = tx.regression_text(test)
    if regression:
        rows.append(("baseline", regression))
    for i, said in enumerate(behaviour_lines(test)):
        rows.append(("behaviour" if i == 0 else "", said.removeprefix("behaviour ")))
    spent = cost_text(test)
    if spent:
        rows.append(("cost", spent.removeprefix("cost ")))
    rows.extend(("note", note) for note in test.get("notes") or ())
    for label, value in rows:
        # Text, not str: a test's words (ids, details) are data, never rich markup.
        grid.add_row(Text(label), Text(value) if isinstance(value, str) else value)
    return Group(head, Padding(grid, (0, 0, 0, 2))) if rows else Group(head)


def _summary(document: Mapping[str, Any], tests: Sequence[Mapping[str, Any]]) -> Panel:
    summary = document["summary"]
    line = Text(f"{summary['tests']} tests: ")
    for i, verdict in enumerate(("PASS", "FAIL", "INCONCLUSIVE")):
        if i:
            line.append(" · ")
        line.append(f"{summary.get(verdict, 0)} {verdict}", style=VERDICT_STYLE[verdict])
    lines: list[Text] = [line]
    for test in tests:
        if test["verdict"] != "PASS":
            item = Text("  ")
            item.append(f"{test['verdict']:<12}", style=VERDICT_STYLE.get(test["verdict"], ""))
            item.append(f" {test['test_id']}: {tx.rate_text(test)}, {tx.ci_text(test)}")
            lines.append(item)
    skipped = document.get("skipped_files") or []
    if skipped:
        lines.append(Text(f"{len(skipped)} unreadable file(s) skipped", style="yellow"))
    return Panel(Group(*lines), title="assay summary", title_align="left", expand=False)


def render_console(
    result: AnalysisResult,
    console: Console,
    *,
    quiet: bool = False,
    trials: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """Print the verdicts, each test's figures and reasons, and a summary box.

    Args:
        result: The analysis result.
        console: Where to print (``Console(no_color=True)`` or ``NO_COLOR`` for plain text).
        quiet: Print the summary box only.
        trials: The trials table as rows (``Analysis.trials.to_dicts()``), for the score
            sparklines; optional.
    """
    document = analysis_to_dict(result)
    tests = tx.by_severity(document["tests"])
    if not quiet:
        with_bar = _bar_fits(tests, console.width)
        confidence = document["options"].get("confidence")
        console.print(_verdict_table(tests, confidence, with_bar))
        scores = _scores_by_test(trials)
        for test in tests:
            console.print()
            console.print(_details(test, scores.get(test["test_id"], {}), bar=not with_bar))
        console.print()
        for path, reason in result.skipped_files:
            console.print(Text(f"skipped {path}: {reason}", style="yellow"))
        for note in result.notes:
            console.print(Text(note))
    console.print(_summary(document, tests))

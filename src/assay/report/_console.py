"""The console report: a verdict table a person reads in a terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from assay.verdict import AnalysisResult, Verdict

VERDICT_STYLE = {
    Verdict.PASS: "bold green",
    Verdict.FAIL: "bold red",
    Verdict.INCONCLUSIVE: "bold yellow",
}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def render_console(result: AnalysisResult, console: Console) -> None:
    """Print the verdict table and a summary line."""
    confidence = result.options.get("confidence", 0.95)
    table = Table(title="assay verdicts", title_justify="left", header_style="bold")
    table.add_column("test", no_wrap=True)
    table.add_column("passed", justify="right", no_wrap=True)
    table.add_column("rate", justify="right", no_wrap=True)
    table.add_column(f"{100 * confidence:g}% CI", justify="center", no_wrap=True)
    table.add_column("threshold", justify="right", no_wrap=True)
    table.add_column("errors", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for test in result.tests:
        ci = (
            f"[{_pct(test.interval.low)}, {_pct(test.interval.high)}]"
            if test.interval is not None
            else "—"
        )
        table.add_row(
            test.test_id,
            f"{test.passed}/{test.n}",
            _pct(test.pass_rate),
            ci,
            _pct(test.threshold),
            str(test.errors),
            Text(test.verdict.value, style=VERDICT_STYLE[test.verdict]),
        )
    console.print(table)
    for test in result.tests:
        for note in test.notes:
            console.print(f"  {test.test_id}: {note}")
    for path, reason in result.skipped_files:
        console.print(f"skipped {path}: {reason}", style="yellow")
    for note in result.notes:
        console.print(note)
    counts = result.counts
    summary = Text()
    summary.append(f"{len(result.tests)} tests: ")
    for i, verdict in enumerate(Verdict):
        if i:
            summary.append(", ")
        summary.append(f"{counts[verdict.value]} {verdict.value}", style=VERDICT_STYLE[verdict])
    console.print(summary)

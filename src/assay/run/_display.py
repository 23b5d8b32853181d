"""Console output of a run: the live progress display, the verdict table, the dry-run plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgressBar
from rich.table import Table
from rich.text import Text

from assay.run._budget import PriceTable
from assay.run._options import RunOptions, build_sequential, test_plan
from assay.run._results import RunResult
from assay.run._state import TestStatus
from assay.run._suite import TestCase
from assay.stats import operating_characteristics
from assay.verdict import Verdict

_STYLE = {
    "PASS": "bold green",
    "FAIL": "bold red",
    "INCONCLUSIVE": "bold yellow",
    "running": "cyan",
    "done": "cyan",
}


class RichProgress:
    """A progress bar per test: trials done, passes, current interval, decision."""

    def __init__(self, console: Console) -> None:
        self._progress = RichProgressBar(
            TextColumn("{task.description}", justify="left"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}

    def start(self, tests: Sequence[TestCase], max_runs: Sequence[int]) -> None:
        """Add one bar per test and start drawing."""
        width = max(len(t.id) for t in tests)
        for test, runs in zip(tests, max_runs, strict=True):
            self._tasks[test.id] = self._progress.add_task(
                test.id.ljust(width), total=runs, detail="[cyan]waiting"
            )
        self._progress.start()

    def update(self, status: TestStatus) -> None:
        """Redraw one test's bar."""
        style = _STYLE.get(status.decision, "yellow")
        detail = (
            f"{status.passed} pass, {status.done - status.passed} fail"
            f"{f' ({status.errors} err)' if status.errors else ''}  "
            f"[{status.low:.2f}, {status.high:.2f}]  [{style}]{status.decision}[/]"
        )
        self._progress.update(self._tasks[status.test_id], completed=status.done, detail=detail)

    def stop(self) -> None:
        """Stop drawing (the bars stay on screen)."""
        self._progress.stop()


_SEVERITY = {Verdict.FAIL: 0, Verdict.INCONCLUSIVE: 1, Verdict.PASS: 2}


def render_result(result: RunResult, console: Console) -> None:
    """Print the verdict table, each test's reason, the trials saved, and any stop reason.

    The table has the columns of ``assay analyze`` (and its pass-rate bar), plus the trials
    used against the maximum; the reason under each test is the runner's own — for an adaptive
    test the sequential decision, which the Wilson interval alone does not explain.
    """
    from assay.report import pass_rate_bar

    tests = sorted(result.tests, key=lambda t: _SEVERITY[t.verdict])
    level = next((t.interval.confidence for t in tests if t.interval), 0.95)
    table = Table(title="assay verdicts", title_justify="left", header_style="bold")
    longest = max((len(t.test_id) for t in tests), default=4)
    table.add_column("test", overflow="fold", min_width=min(longest, 16), max_width=32)
    table.add_column("verdict", no_wrap=True)
    table.add_column("rate (passed/n)", justify="right", no_wrap=True)
    table.add_column(f"{100 * level:g}% CI", justify="center", no_wrap=True)
    with_bar = console.width >= 120
    if with_bar:
        table.add_column("against the threshold", no_wrap=True)
    table.add_column("errors", justify="right", no_wrap=True)
    table.add_column("trials", justify="right", no_wrap=True)
    for t in tests:
        style = _STYLE[t.verdict.value]
        rate = "—" if t.pass_rate is None else f"{t.pass_rate:.1%} ({t.passed}/{t.n})"
        ci = "—" if t.interval is None else f"[{t.interval.low:.1%}, {t.interval.high:.1%}]"
        cells = [Text(t.test_id), Text(t.verdict.value, style=style), Text(rate), Text(ci)]
        if with_bar:
            low, high = (t.interval.low, t.interval.high) if t.interval else (None, None)
            cells.append(pass_rate_bar(t.pass_rate, low, high, t.threshold, style=style))
        cells += [Text(str(t.errors)), Text(f"{t.trials_run}/{t.max_runs}")]
        table.add_row(*cells)
    console.print(table)
    for t in tests:
        line = Text("  ")
        line.append(f"{t.verdict.value:<12}", style=_STYLE[t.verdict.value])
        line.append(f" {t.test_id}: {t.reason}")
        console.print(line)
        if t.first_error:
            console.print(Text(f"               first error, {t.first_error}"))
    counts = {v: sum(t.verdict is v for t in tests) for v in Verdict}
    summary = Text(f"{len(tests)} tests: ")
    for i, verdict in enumerate((Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE)):
        summary.append(" · " if i else "")
        summary.append(f"{counts[verdict]} {verdict.value}", style=_STYLE[verdict.value])
    console.print(summary)
    render_summary(result, console)


def render_summary(result: RunResult, console: Console) -> None:
    """Print the trials used and saved, the stop reason, and where the traces are."""
    used = len(result.trials)
    # Only tests the sequential test settled count as saved; a budget is not a saving.
    saved = sum(max(0, t.max_runs - t.n) for t in result.tests if t.decided_at is not None)
    line = f"{used} trials of at most {result.max_trials}"
    if saved > 0:
        line += f": adaptive stopping saved {saved} ({saved / result.max_trials:.0%})"
    line += f"; {result.elapsed_s:.1f} s"
    if result.tokens:
        line += f"; {result.tokens} tokens"
    if result.cost:
        line += f"; ${result.cost:.4f}"
    console.print(line)
    if result.stop_reason:
        console.print(f"stopped early: {result.stop_reason}", style="yellow")
    for warning in result.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))
    console.print(f"traces: {result.out} (run id {result.run_id})")


@dataclass(frozen=True, slots=True)
class PlanRow:
    """The plan for one test."""

    test_id: str
    """The test case."""
    max_runs: int
    """The most trials."""
    threshold: float
    """Required pass rate."""
    method: str
    """``sprt``, ``confidence-sequence`` or ``fixed``."""
    expected_at_p0: float
    """Expected trials if the true rate equals the threshold."""
    expected_at_p1: float
    """Expected trials if the true rate is ``threshold + delta``."""


def plan(tests: Sequence[TestCase], options: RunOptions) -> list[PlanRow]:
    """Maximum and expected trials per test, without running anything."""
    rows = []
    for test in tests:
        runs, threshold, _ = test_plan(test, options)
        seq = build_sequential(test, options)
        if seq is None:
            rows.append(PlanRow(test.id, runs, threshold, "fixed", runs, runs))
            continue
        at_p0 = operating_characteristics(seq, seq.p0).expected_trials
        at_p1 = operating_characteristics(seq, seq.p1).expected_trials
        rows.append(PlanRow(test.id, runs, threshold, seq.name, at_p0, at_p1))
    return rows


def render_plan(
    rows: Sequence[PlanRow],
    options: RunOptions,
    agent: str,
    console: Console,
    prices: PriceTable | None,
) -> None:
    """Print the dry-run plan: tests, maximum and expected trials, a cost estimate."""
    table = Table(title=f"assay run --dry-run: {len(rows)} test(s), agent {agent}")
    for column in ("test", "threshold", "method", "max trials", "expected trials"):
        table.add_column(column, justify="left" if column in ("test", "method") else "right")
    for r in rows:
        expected = (
            f"{r.expected_at_p0:.1f} - {r.expected_at_p1:.1f}"
            if r.method != "fixed"
            else str(r.max_runs)
        )
        table.add_row(r.test_id, f"{r.threshold:g}", r.method, str(r.max_runs), expected)
    console.print(table)
    total_max = sum(r.max_runs for r in rows)
    low = sum(min(r.expected_at_p0, r.expected_at_p1) for r in rows)
    high = sum(max(r.expected_at_p0, r.expected_at_p1) for r in rows)
    budget = options.budget.max_trials
    capped = f" (capped at {budget} by --max-trials)" if budget is not None else ""
    if budget is not None:
        low, high = min(low, budget), min(high, budget)
    console.print(f"maximum trials: {total_max}{capped}")
    if any(r.method != "fixed" for r in rows):
        console.print(
            f"expected trials under adaptive stopping: {low:.0f} to {high:.0f} "
            f"(true pass rate at the threshold .. threshold + {options.delta:g}; "
            "rates further away stop sooner)"
        )
    per_trial = prices.trial_cost_estimate() if prices is not None else None
    if per_trial is not None:
        most = per_trial * (total_max if budget is None else min(total_max, budget))
        if options.budget.max_cost is not None:
            most = min(most, options.budget.max_cost)
        if per_trial > 0:
            low, high = min(low, most / per_trial), min(high, most / per_trial)
        console.print(
            f"cost estimate: ${per_trial * low:.2f} - ${per_trial * high:.2f} expected, "
            f"${most:.2f} at most (${per_trial:.4f} per trial, plus trials in flight when a "
            "budget runs out)"
        )
    elif prices is not None:
        console.print("cost estimate: add `trial_tokens:` to the price table for one")
    timeout = "none" if options.timeout is None else f"{options.timeout:g} s"
    console.print(f"concurrency {options.concurrency}, timeout {timeout}, traces to {options.out}")

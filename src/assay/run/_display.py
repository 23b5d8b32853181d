"""Console output of ``assay run``: the live progress display, the run summary, the plan.

The verdicts of a run are rendered like any analysis (:func:`assay.report.render_console`,
with a ``trials`` column); this module adds what only a run has. It lives with the run, above
the reports, so that the reports import nothing of the run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgressBar
from rich.table import Table

from assay.analysis import PriceTable
from assay.report import VERDICT_STYLE, data_text, visible
from assay.run._budget import Budget
from assay.run._options import DEFAULT_DELTA, RunOptions, planned_out
from assay.run._plan import FIXED, PlanRow
from assay.run._results import RunResult
from assay.run._state import TestStatus
from assay.run._suite import TestCase

_STYLE = {**VERDICT_STYLE, "running": "cyan", "done": "cyan"}


class RichProgress:
    """A progress bar per test: trials done, passes, current interval, decision."""

    def __init__(self, console: Console) -> None:
        self._progress = RichProgressBar(
            # The description is a test id (data): shown as text, never read as markup.
            TextColumn("{task.description}", justify="left", markup=False),
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
        width = max(len(visible(t.id)) for t in tests)
        for test, runs in zip(tests, max_runs, strict=True):
            self._tasks[test.id] = self._progress.add_task(
                visible(test.id).ljust(width), total=runs, detail="[cyan]waiting"
            )
        self._progress.start()

    def update(self, status: TestStatus) -> None:
        """Redraw one test's bar."""
        style = _STYLE.get(status.label, "yellow")
        detail = (
            f"{status.passed} pass, {status.done - status.passed} fail"
            f"{f' ({status.errors} err)' if status.errors else ''}  "
            f"[{status.low:.2f}, {status.high:.2f}]  [{style}]{status.label}[/]"
        )
        self._progress.update(self._tasks[status.test_id], completed=status.done, detail=detail)

    def stop(self) -> None:
        """Stop drawing (the bars stay on screen)."""
        self._progress.stop()


HEARTBEAT_S = 10.0
"""Seconds between two heartbeat lines of :class:`LogProgress`."""


class LogProgress:
    """Progress for a log, not a terminal (a CI job, a pipe): plain lines on ``stream``.

    One line per test as soon as it settles (its decision, or done, or stopped), and a
    heartbeat every ``every`` seconds while the run goes on: trials done, tests still running,
    the time taken and, where the run has a budget, how much of it is used. A CI log then shows
    that a long run is alive, and which tests are already decided, before the final table.

    Args:
        stream: Where the lines go (stderr: stdout carries the results).
        budget: The run's budget, to report what is used of it.
        every: Seconds between heartbeats.
        clock: The time source (``time.monotonic``).
    """

    def __init__(
        self,
        stream: TextIO,
        budget: Budget | None = None,
        every: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._budget = budget or Budget()
        self._every = every
        self._clock = clock
        self._lock = threading.Lock()
        self._status: dict[str, TestStatus] = {}
        self._reported: set[str] = set()
        self._started = 0.0
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, tests: Sequence[TestCase], max_runs: Sequence[int]) -> None:
        """Note the tests and start the heartbeat."""
        self._started = self._clock()
        with self._lock:
            for test, runs in zip(tests, max_runs, strict=True):
                self._status[test.id] = TestStatus(test.id, 0, 0, 0, runs, 0.0, 1.0)
        self._write(f"assay run: {len(self._status)} test(s), at most {sum(max_runs)} trials")
        self._thread = threading.Thread(target=self._beat, name="assay-heartbeat", daemon=True)
        self._thread.start()

    def update(self, status: TestStatus) -> None:
        """Record a test's progress; print its line the first time it is settled."""
        with self._lock:
            self._status[status.test_id] = status
            if status.label == "running" or status.test_id in self._reported:
                return
            self._reported.add(status.test_id)
        failed = status.done - status.passed
        errors = f", {status.errors} error" if status.errors else ""
        self._write(
            f"{visible(status.test_id)}: {status.label} after {status.done} of "
            f"{status.max_runs} trials ({status.passed} pass, {failed} fail{errors})"
        )

    def stop(self) -> None:
        """Stop the heartbeat."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def heartbeat(self) -> str:
        """The heartbeat line for now."""
        with self._lock:
            statuses = list(self._status.values())
        done = sum(s.done for s in statuses)
        most = sum(s.max_runs for s in statuses)
        running = sum(s.label == "running" for s in statuses)
        elapsed = self._clock() - self._started
        parts = [
            f"{done} of at most {most} trials done",
            f"{running} of {len(statuses)} test(s) running",
            f"{elapsed:.0f} s",
        ]
        budget = self._budget
        if budget.max_trials is not None:
            parts.append(f"--max-trials {done}/{budget.max_trials} used")
        if budget.max_time is not None:
            parts.append(f"--max-time {elapsed:.0f}/{budget.max_time:g} s used")
        return "assay run: " + " · ".join(parts)

    def _beat(self) -> None:
        while not self._stopping.wait(self._every):
            self._write(self.heartbeat())

    def _write(self, line: str) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()


def render_run_summary(result: RunResult, console: Console) -> None:
    """Print the trials used and saved, the stop reason, and where the traces are."""
    used = len(result.trials)
    # Only tests the sequential test settled count as saved; a budget is not a saving.
    saved = sum(
        max(0, result.max_runs[t.test_id] - t.trials)
        for t in result.tests
        if t.sequential is not None and t.sequential.decided_at is not None
    )
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
        console.print(data_text(f"stopped early: {result.stop_reason}", style="yellow"))
    console.print(data_text(f"traces: {result.out} (run id {result.run_id})"))


def render_plan(
    rows: Sequence[PlanRow],
    options: RunOptions,
    agent: str,
    console: Console,
    prices: PriceTable | None,
) -> None:
    """Print the dry-run plan: tests, maximum and expected trials, a cost estimate."""
    table = Table(title=data_text(f"assay run --dry-run: {len(rows)} test(s), agent {agent}"))
    for column in ("test", "threshold", "method", "max trials", "expected trials"):
        table.add_column(column, justify="left" if column in ("test", "method") else "right")
    for r in rows:
        expected = (
            # a range, lowest first (the sequence stops sooner above the threshold, the SPRT
            # at it)
            f"{min(r.expected_at_p0, r.expected_at_p1):.1f} - "
            f"{max(r.expected_at_p0, r.expected_at_p1):.1f}"
            if r.method != FIXED
            else str(r.max_runs)
        )
        table.add_row(data_text(r.test_id), f"{r.threshold:g}", r.method, str(r.max_runs), expected)
    console.print(table)
    total_max = sum(r.max_runs for r in rows)
    low = sum(min(r.expected_at_p0, r.expected_at_p1) for r in rows)
    high = sum(max(r.expected_at_p0, r.expected_at_p1) for r in rows)
    budget = options.budget.max_trials
    capped = f" (capped at {budget} by --max-trials)" if budget is not None else ""
    if budget is not None:
        low, high = min(low, budget), min(high, budget)
    console.print(f"maximum trials: {total_max}{capped}")
    if any(r.method != FIXED for r in rows):
        console.print(
            f"expected trials under adaptive stopping: {low:.0f} to {high:.0f} "
            f"(true pass rate at the threshold .. threshold + {options.delta or DEFAULT_DELTA:g}; "
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
    console.print(
        data_text(
            f"concurrency {options.concurrency}, timeout {timeout}, "
            f"traces to {planned_out(options)}"
        )
    )

"""The console table of a watch: one row per test, and what the input showed."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from assay.analysis import columns as tc
from assay.judge import pct

# Test and score names and the notes come from the traces: escaped as every report escapes them.
from assay.report import visible
from assay.watch._status import MeanStatus, TestStatus, WatchStatus

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["event_line", "live_table", "mean_text", "status_table"]


def status_table(status: WatchStatus) -> str:
    """The status as plain text: a header, one row per test, then the notes."""
    level = f"{status.confidence:.0%}"
    sequence = f"{level} sequence"
    header = f"{'test':<28} {'trials':>7} {'pass rate':>9}  {sequence:<17} {'verdict':<12} drift"
    lines = [header, "-" * len(header)]
    for t in status.tests:
        rate = pct(t.pass_rate) if t.pass_rate is not None else "-"
        interval = f"[{pct(t.low)}, {pct(t.high)}]"
        drift = f"ALARM since trial {t.alarm_since}" if t.drift_alarm else "-"
        lines.append(
            f"{visible(t.test_id)[:28]:<28} {t.trials:>7} {rate:>9}  {interval:<17} "
            f"{t.verdict.value:<12} {drift}"
        )
        lines.extend(f"  {mean_text(m, note=m is not t.cost)}" for m in shown_means(t))
    if not status.tests:
        lines.append("(no trial yet)")
    lines.extend(_cost_notes(status))
    lines.append(
        f"{status.files_read} file(s), {status.spans_read} span(s) read; "
        f"{status.pending_traces} trace(s) waiting for their spans"
    )
    if status.family is not None:
        lines.append(f"family: {status.family.note}")
    return "\n".join(lines)


def notes_text(status: WatchStatus) -> str:
    """The notes of a look, one ``note: kind (count): message`` line each (for stderr)."""
    return "\n".join(f"note: {n.kind} ({n.count}): {visible(n.message)}" for n in status.notes)


def shown_means(test: TestStatus) -> tuple[MeanStatus, ...]:
    """The means a test's row is followed by: its scores, and its cost unless nothing was spent.

    A cost of 0 with no interval says nothing (an agent without LLM calls, or costs nobody
    recorded); JSON and ``/metrics`` still carry it.
    """
    cost = test.cost
    spent = cost is not None and (bool(cost.mean) or cost.low is not None)
    return (*test.scores, *([cost] if cost is not None and spent else []))


def _cost_notes(status: WatchStatus) -> list[str]:
    """Why the costs shown have no interval, said once for every test (not under each)."""
    notes = {
        t.cost.note
        for t in status.tests
        if t.cost is not None and t.cost.note and t.cost in shown_means(t)
    }
    return [f"cost per trial: {visible(note)}" for note in sorted(notes)]


def mean_text(mean: MeanStatus, *, note: bool = True) -> str:
    """``score quality: mean 0.742 [0.70, 0.78] over 120 trials`` (or why no interval).

    ``note=False`` leaves out why there is no interval (the table says it once for all).
    """
    what = "cost per trial (USD)" if mean.name == tc.COST_USD else f"score {visible(mean.name)}"
    shown = f"{mean.mean:.4g}" if mean.mean is not None else "—"
    if mean.low is None or mean.high is None:
        why = f" ({visible(mean.note)})" if note and mean.note else ""
        return f"{what}: mean {shown} over {mean.n} trials{why}"
    return f"{what}: mean {shown} [{mean.low:.4g}, {mean.high:.4g}] over {mean.n} trials"


def live_table(status: WatchStatus) -> Table:
    """The status as a ``rich`` table, for the live display on a terminal."""
    from rich.table import Table
    from rich.text import Text

    colour = {"PASS": "green", "FAIL": "bold red", "INCONCLUSIVE": "yellow"}
    table = Table(
        title=f"assay watch — {status.confidence:.0%} confidence sequences",
        # Text, never markup: a name or note from the traces holding "[red]" stays text.
        caption=Text(
            f"{status.files_read} file(s), {status.spans_read} span(s) read; "
            f"{status.pending_traces} trace(s) waiting for their spans"
            + "".join(f"\n{n.kind} ({n.count}): {visible(n.message)}" for n in status.notes)
            + (f"\nfamily: {status.family.note}" if status.family is not None else "")
        ),
        caption_justify="left",
    )
    for name, justify in (
        ("test", "left"),
        ("trials", "right"),
        ("pass rate", "right"),
        ("interval", "left"),
        ("threshold", "right"),
        ("verdict", "left"),
        ("drift", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for t in status.tests:
        verdict = t.verdict.value
        table.add_row(
            Text(visible(t.test_id)),
            str(t.trials),
            pct(t.pass_rate) if t.pass_rate is not None else "—",
            f"[{pct(t.low)}, {pct(t.high)}]",
            pct(t.threshold),
            f"[{colour[verdict]}]{verdict}[/]",
            f"[bold red]ALARM since trial {t.alarm_since}[/]" if t.drift_alarm else "—",
        )
        for mean in shown_means(t):
            table.add_row("", "", "", Text(mean_text(mean), style="dim"), "", "", "")
    return table


def event_line(event: dict[str, object]) -> str:
    """One line for an event (:func:`assay.watch.events_between`), with the counts behind it.

    ``… greeting: INCONCLUSIVE → PASS: 24 trials, pass rate 100.0%, sequence [80.1%, 100.0%]``:
    a log read later says what the verdict rested on, not only that it changed.
    """
    test, kind = visible(event["test"]), event["event"]
    if kind == "verdict_changed":
        what = f"{event['previous_verdict']} → {event['verdict']}"
    elif kind == "drift_alarm_raised":
        what = f"drift alarm raised (since trial {event['since_trial']})"
    else:
        what = "drift alarm cleared"
    return f"{event['time']} {test}: {what}: {_event_counts(event)}"


def _event_counts(event: dict[str, object]) -> str:
    rate = event.get("pass_rate")
    low, high = cast("list[float]", event.get("interval") or [0.0, 1.0])
    shown = pct(rate) if isinstance(rate, float) else "-"
    return f"{event.get('trials')} trials, pass rate {shown}, sequence [{pct(low)}, {pct(high)}]"

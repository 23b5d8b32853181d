"""The console table of a watch: one row per test, and what the input showed."""

from __future__ import annotations

from assay.judge import pct
from assay.watch._status import WatchStatus

__all__ = ["status_table"]


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
            f"{t.test_id[:28]:<28} {t.trials:>7} {rate:>9}  {interval:<17} "
            f"{t.verdict.value:<12} {drift}"
        )
    if not status.tests:
        lines.append("(no trial yet)")
    lines.append(
        f"{status.files_read} file(s), {status.spans_read} span(s) read; "
        f"{status.pending_traces} trace(s) waiting for their spans"
    )
    lines.extend(f"note: {n.kind} ({n.count}): {n.message}" for n in status.notes)
    return "\n".join(lines)

"""``assay watch``: follow a growing trace set and keep every test's anytime-valid verdict."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any

import typer

from assay._cli import _common as o
from assay._cli._analysis import analysis_options
from assay._stop_signal import StopSignal

if TYPE_CHECKING:
    from assay.judge import AnalyzeOptions
    from assay.watch import FileNotifier, Watcher, WatchStatus

_STOP_CHECK_S = 0.1
"""How often a look in progress checks for SIGINT / SIGTERM (a stop is answered within this)."""


WATCHED = frozenset(
    {"threshold", "confidence", "errors", "min_score", "test_attribute", "pass_when", "prices"}
)
"""The analysis options a watch honours (docs/monitoring.md); the rest are analyze's."""


@analysis_options(only=WATCHED)
def watch(
    paths: o.Paths,
    options: AnalyzeOptions,
    drift_alpha: Annotated[
        float | None,
        typer.Option(
            help="The drift alarm's bound on P(a false alarm, ever) on a steady stream "
            "(default 0.05)."
        ),
    ] = None,
    drift_margin: Annotated[
        float | None,
        typer.Option(
            help="The drift alarm's margin: it asks whether the pass rate fell more than this "
            "below its reference (default 0.02 = 2 points)."
        ),
    ] = None,
    baseline_version: o.BaselineVersion = None,
    poll_interval: Annotated[
        float,
        typer.Option(
            help="Seconds between looks at the trace set (a file landing starts a look at "
            "once where the system notifies it).",
            min=0.05,
        ),
    ] = 2.0,
    once: Annotated[
        bool, typer.Option("--once", help="Judge what is there now, print, exit (for cron).")
    ] = False,
    metrics_port: Annotated[
        int | None,
        typer.Option(help="Serve /metrics (Prometheus text format) on this port.", min=0),
    ] = None,
    webhook: Annotated[
        str | None,
        typer.Option(
            help="POST a JSON event here on every verdict change and drift alarm (retried, "
            "never blocking the watch)."
        ),
    ] = None,
    metrics_max_tests: Annotated[
        int | None,
        typer.Option(
            help="Tests exported on /metrics at most (the first seen; the rest counted in "
            "assay_metrics_tests_dropped, with a warning; default 2000).",
            min=1,
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="The address /metrics listens on (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    grace: Annotated[
        float,
        typer.Option(
            help="Seconds to wait after a trace's root span arrived before judging it, for "
            "its spans that other processes export later."
        ),
    ] = 1.0,
    trace_timeout: Annotated[
        float,
        typer.Option(help="Seconds after which a trace whose root span never came is judged."),
    ] = 60.0,
    trial_cost_bound: Annotated[
        float | None,
        typer.Option(
            help="A known upper bound on a trial's cost (USD): the mean cost per trial gets an "
            "anytime-valid interval (a trial above it voids the interval, and says so).",
            min=0,
        ),
    ] = None,
    max_seen_spans: Annotated[
        int | None,
        typer.Option(
            help="Spans remembered so that a span read twice (a copied file, a batch stored "
            "twice) counts once; at least the latest half are always remembered (~32 bytes "
            "each; default 4,000,000).",
            min=2,
        ),
    ] = None,
    score_range: Annotated[
        list[str] | None,
        typer.Option(
            help="A score's range, NAME=LOW:HIGH (or LOW:HIGH for every score), so that its "
            "mean gets an anytime-valid interval; e.g. quality=0:100 (default 0:1). "
            "Repeatable.",
        ),
    ] = None,
    inconclusive_ok: o.InconclusiveOk = False,
    skip_bad_files: o.SkipBadFiles = False,
    export_otlp: o.ExportOtlp = None,
) -> None:
    """Follow a growing trace set (e.g. `assay collect --out`) and judge every test live."""
    from assay.judge import check_range
    from assay.watch import Watcher, WatchOptions

    watching = WatchOptions(
        analysis=options,
        max_cost=trial_cost_bound,
        score_ranges=tuple(_score_range(text) for text in score_range or ()),
        baseline_version=baseline_version,
        grace=grace,
        trace_timeout=trace_timeout,
        skip_bad_files=skip_bad_files,
    )
    # what is not given keeps the library's default (one source: assay.watch.DriftRule)
    if drift_alpha is not None:
        check_range("drift_alpha", drift_alpha)  # named as the user spelt it
        watching = replace(watching, alpha=drift_alpha)
    if drift_margin is not None:
        check_range("drift_margin", drift_margin)
        watching = replace(watching, delta=drift_margin)
    if max_seen_spans is not None:
        watching = replace(watching, max_seen_spans=max_seen_spans)
    watcher = Watcher(tuple(paths), watching)
    for flag, url in (("--webhook", webhook), ("--export-otlp", export_otlp)):
        if url is not None and not url.startswith(("http://", "https://")):
            o.fail(f"{flag} must be an http:// or https:// URL (got {url!r})")
    if once:
        _once(watcher, inconclusive_ok, export_otlp)
    _follow(
        watcher, poll_interval, metrics_port, metrics_host, webhook, metrics_max_tests, export_otlp
    )


def _score_range(text: str) -> tuple[str, float, float]:
    """``quality=0:100`` as ``("quality", 0.0, 100.0)``; ``0:100`` as ``("*", 0.0, 100.0)``."""
    import math

    name, _, bounds = text.rpartition("=")
    low, colon, high = bounds.partition(":")
    try:
        values = float(low), float(high)
    except ValueError:
        values = (math.nan, math.nan)
    if not colon or not all(map(math.isfinite, values)) or not values[0] < values[1]:
        o.fail(f"--score-range {text!r}: give NAME=LOW:HIGH or LOW:HIGH, with LOW < HIGH")
    return name or "*", values[0], values[1]


def _once(watcher: Watcher, inconclusive_ok: bool, export_otlp: str | None = None) -> None:
    from assay.errors import InputError
    from assay.watch import WatchExport, notes_text, status_table

    status = watcher.look(final=True)
    if not status.tests:
        # Why, when the reader said (no span carries the attribute, only parent cycles do).
        why = next((f": {n.message}" for n in status.notes if n.kind == "spans_without_trial"), "")
        raise InputError(f"{', '.join(watcher.paths)}: no trial in the trace set yet{why}")
    print(status_table(status))
    if export_otlp is not None:
        export = WatchExport(export_otlp)
        export.publish(status, [])
        export.close()
    if status.notes:  # diagnostics go to stderr, as in every command
        print(notes_text(status), file=sys.stderr)
    raise SystemExit(status.exit_code(inconclusive_ok))


def _follow(
    watcher: Watcher,
    interval: float,
    port: int | None,
    host: str,
    webhook: str | None,
    max_tests: int | None = None,
    export_otlp: str | None = None,
) -> None:
    """Look every ``interval`` seconds until SIGINT or SIGTERM; serve, post and show each look."""
    from assay.watch import (
        FileNotifier,
        MetricsServer,
        WatchExport,
        WebhookSender,
        events_between,
    )

    with StopSignal() as stop:
        server = None
        if port is not None:
            server = MetricsServer(port, host)
            if max_tests is not None:
                server.max_tests = max_tests
            server.start()
        if server is not None:
            print(f"assay watch: /metrics on http://{host}:{server.port}/metrics", file=sys.stderr)
        sender = WebhookSender(webhook).start() if webhook is not None else None
        export = WatchExport(export_otlp) if export_otlp is not None else None
        notifier = FileNotifier(watcher.paths)
        if not notifier.active:
            print(
                f"assay watch: {notifier.why_not}: looking every {interval:g} s",
                file=sys.stderr,
            )
        show = _Display(sys.stdout.isatty())
        before = None
        interrupted = False
        try:
            while not stop.requested:
                if before is None:  # a restart's backlog can take a while: say what happens
                    print("assay watch: first look: reading the set as it is", file=sys.stderr)
                status = _look(watcher, stop)
                if status is None:  # stopped during a look
                    interrupted = True
                    break
                if server is not None:
                    server.publish(status)
                events: list[dict[str, Any]] = (
                    events_between(before, status) if before is not None else []
                )
                for event in events:
                    if sender is not None:
                        sender.send(event)
                if export is not None:
                    export.publish(status, events)
                show.update(status, events, first=before is None)
                before = status
                _pause(watcher, notifier, stop, interval)
        finally:
            notifier.close()
            show.close(before)
            if sender is not None:
                sender.stop()
            if export is not None:
                export.close()  # the last look's gauges and pending spans go out
            if server is not None:
                server.stop()
        if interrupted:
            # The look's reading threads (Polars, the bucket pool) cannot be cancelled and
            # the interpreter would wait for them at exit: leave at once, all output written.
            print(
                "assay watch: stopped during a look; what it was reading is not counted "
                "(a restart reads it again)",
                file=sys.stderr,
            )
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
    raise SystemExit(0)


_TICK_S = 0.05
"""How often the pause checks for a file landed (notifications are noted on another thread)."""


def _pause(watcher: Watcher, notifier: FileNotifier, stop: StopSignal, interval: float) -> None:
    """Wait until the next look is due.

    That is ``interval`` seconds at most; less when a file lands (where the system notifies
    it) or a held trace's grace ends.
    """
    until = time.monotonic() + interval
    due = watcher.due()
    if due is not None:
        until = min(until, due)
    while not stop.requested and not notifier.landed():
        left = until - time.monotonic()
        if left <= 0:
            return
        stop.wait(min(left, _TICK_S) if notifier.active else left)


def _look(watcher: Watcher, stop: StopSignal) -> WatchStatus | None:
    """One look, on a thread of its own; None when SIGINT or SIGTERM came first.

    A long look (a restart's backlog) is so ended within a second.
    """
    done: list[WatchStatus | BaseException] = []

    def work() -> None:
        try:
            done.append(watcher.look())
        except BaseException as exc:  # raised on the watch's thread, below
            done.append(exc)

    thread = threading.Thread(target=work, name="assay-watch-look", daemon=True)
    thread.start()
    while thread.is_alive():
        if stop.wait(_STOP_CHECK_S) is not None:
            return None
        thread.join(_STOP_CHECK_S)
    outcome = done[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


LOG_EVERY_S = 15.0
"""In a log, the table is printed again at most this often while trials keep arriving: the
staleness of a Prometheus scrape at its default interval, so a log lags /metrics no more than a
dashboard does."""


class _Display:
    """A live table on a terminal; in a log, one line per event and the table when it changed.

    A log (stdout not a terminal: systemd, a container, CI) once got the table at start only,
    "(no trial yet)", while /metrics counted 80 trials. Now it gets the table at the first look,
    again as soon as the first trials or a new test arrive, and otherwise at most every
    ``LOG_EVERY_S`` seconds while the counts change — as a collector logs its throughput
    periodically rather than per request; each table headed by the time it was taken. At
    shutdown the last look's table is printed once more, so a log ends with the counts /metrics
    served last (as pytest ends with its summary).
    """

    def __init__(self, terminal: bool, every: float = LOG_EVERY_S) -> None:
        self.noted: dict[str, int] = {}
        self.live = None
        self.every = every
        self.shown: tuple[tuple[str, int, str], ...] | None = None
        self.shown_at = 0.0
        if terminal:
            from rich.live import Live

            self.live = Live(auto_refresh=False, transient=False)
            self.live.start()

    def update(
        self,
        status: WatchStatus,
        events: list[dict[str, Any]],
        first: bool,
        now: float | None = None,
    ) -> None:
        import time

        from assay.watch import event_line, live_table, notes_text, status_table

        if self.live is not None:
            for event in events:
                self.live.console.print(event_line(event), highlight=False, markup=False)
            self.live.update(live_table(status), refresh=True)
            return
        for event in events:
            print(event_line(event), flush=True)
        clock = time.monotonic() if now is None else now
        counts = tuple((t.test_id, t.trials, t.verdict.value) for t in status.tests)
        before = self.shown
        new_test = before is not None and {c[0] for c in counts} - {c[0] for c in before}
        due = before is not None and counts != before and clock - self.shown_at >= self.every
        if first or before is None or new_test or due:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
            print(f"assay watch, {stamp}:\n{status_table(status)}", flush=True)
            self.shown, self.shown_at = counts, clock
        # every note that is new or grew since the last look (a rejected trace, repeats, ...)
        grown = [n for n in status.notes if self.noted.get(n.kind) != n.count]
        if grown:
            print(notes_text(replace(status, notes=tuple(grown))), file=sys.stderr, flush=True)
        self.noted = {n.kind: n.count for n in status.notes}

    def close(self, last: WatchStatus | None = None) -> None:
        """Stop the live display; in a log, end with ``last``'s table (the final counts)."""
        if self.live is not None:
            self.live.stop()
            return
        if last is not None:
            import time

            from assay.watch import status_table

            stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
            print(f"assay watch, stopped {stamp}:\n{status_table(last)}", flush=True)

"""The console: a live table on a terminal, the plain table in a log; a restart from the data."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from servers import ASSAY, FAULT_HANDLER, start_watch, stop, wait_for_log
from streams import write_trials

from assay.watch import Watcher, WatchOptions


@pytest.mark.slow
def test_on_a_terminal_the_table_is_live(tmp_path: Path) -> None:
    write_trials(tmp_path, [True] * 120, test="greeting")
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm", **FAULT_HANDLER}
    proc = subprocess.Popen(
        [ASSAY, "watch", str(tmp_path), "--poll-interval", "0.2", "--grace", "0"],
        stdout=slave,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    screen = b""
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and b"PASS" not in screen:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                screen += os.read(master, 65536)
        write_trials(tmp_path, [False] * 200, test="greeting", first_index=120)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and b"ALARM" not in screen:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                screen += os.read(master, 65536)
    finally:
        # A terminal keeps reading while the program stops: a full pty would block the last
        # redraws, and the program with them.
        tail: list[bytes] = []
        drain = threading.Thread(target=_drain, args=(master, tail), daemon=True)
        drain.start()
        code = stop(proc)  # aborted with every thread's stack printed if it hangs
        drain.join(timeout=5)
        os.close(master)
    last = b"".join(tail)[-4000:].decode(errors="replace")
    assert code == 0, f"assay watch ended with {code}; ALARM seen: {b'ALARM' in screen}\n{last}"
    text = screen.decode(errors="replace")
    assert "assay watch — 95% confidence sequences" in text and "greeting" in text
    assert "\x1b[" in text  # redrawn in place with terminal codes, not printed line by line
    assert "ALARM since trial" in text and "PASS → " in text


def _drain(master: int, tail: list[bytes]) -> None:
    """Read the terminal's output until the program has gone (or the pty is closed)."""
    try:
        while chunk := os.read(master, 65536):
            tail.append(chunk)
            del tail[:-8]  # the last redraws, and a traceback dumped on abort
    except OSError:
        pass


def test_in_a_log_the_table_is_printed_when_it_changed_then_the_events(tmp_path: Path) -> None:
    write_trials(tmp_path, [True] * 50)
    args = [str(tmp_path), "--poll-interval", "0.1", "--grace", "0"]
    watch, _ = start_watch(args, tmp_path / "watch.log")
    wait_for_log(tmp_path / "watch.log", "trials pass rate")
    time.sleep(1)  # ten more looks, nothing new: the table is not repeated
    assert (tmp_path / "watch.log").read_text().count("trials pass rate") == 1
    write_trials(tmp_path, [True] * 5, test="billing")  # a new test: shown at once
    wait_for_log(tmp_path / "watch.log", "billing")
    assert stop(watch) == 0
    log = (tmp_path / "watch.log").read_text()
    # and once more at shutdown: the log ends with the final counts
    assert log.count("trials pass rate") == 3 and "\x1b[" not in log
    assert re.search(r"assay watch, stopped [^\n]* UTC:\ntest ", log)
    # the first look is announced (stderr), then each table says when it was taken
    assert log.startswith("assay watch: first look: reading the set as it is\nassay watch, ")
    assert " UTC:\n" in log


def test_a_restart_rebuilds_the_same_state_from_the_data(tmp_path: Path) -> None:
    options = WatchOptions(grace=0.0)
    first = Watcher((str(tmp_path),), options)
    for i, rate in enumerate((1.0, 0.9, 0.8, 0.95)):
        outcomes = [j < 100 * rate for j in range(100)]
        write_trials(tmp_path, outcomes, test="a", first_index=100 * i)
        write_trials(tmp_path, outcomes[::-1], test="b", first_index=100 * i)
        running = first.look(now=float(i))
    restarted = Watcher((str(tmp_path),), options).look(now=0.0)
    # the same counts, intervals, verdicts and alarms; only when an alarm was first seen is
    # the look's (here "a"'s ten failures in a row raised it at the second look)
    assert [replace(t, alarm_since=None) for t in restarted.tests] == [
        replace(t, alarm_since=None) for t in running.tests
    ]
    assert running.tests[0].drift_alarm and running.tests[0].alarm_since == 200
    assert restarted.tests[0].alarm_since == 400
    assert restarted.files_read == running.files_read == 8


def test_a_log_that_began_before_any_trial_shows_them_when_they_come(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay._cli.watch import _Display

    watcher = Watcher((str(tmp_path),), WatchOptions(grace=0.0))
    show = _Display(terminal=False, every=60.0)
    show.update(watcher.look(now=0.0), [], first=True, now=0.0)
    assert "(no trial yet)" in capsys.readouterr().out
    write_trials(tmp_path, [True] * 80)
    show.update(watcher.look(now=1.0), [], first=False, now=1.0)
    shown = capsys.readouterr().out  # the first trials: at once, not a minute later
    assert "(no trial yet)" not in shown and re.search(r"^support +80 ", shown, re.M)
    write_trials(tmp_path, [True] * 10, first_index=80)
    show.update(watcher.look(now=30.0), [], first=False, now=30.0)
    assert capsys.readouterr().out == ""  # more trials: shown at most once a minute
    show.update(watcher.look(now=61.0), [], first=False, now=61.0)
    assert re.search(r"^support +90 ", capsys.readouterr().out, re.M)
    show.update(watcher.look(now=200.0), [], first=False, now=200.0)
    assert capsys.readouterr().out == ""  # nothing changed: nothing printed


def test_a_log_ends_with_the_counts_metrics_shows_and_events_carry_theirs(tmp_path: Path) -> None:
    import urllib.request

    write_trials(tmp_path, [True])
    args = [str(tmp_path), "--poll-interval", "0.1", "--grace", "0", "--metrics-port", "0"]
    watch, port = start_watch(args, tmp_path / "watch.log")
    wait_for_log(tmp_path / "watch.log", "trials pass rate")
    # trials keep arriving, faster than the table is reprinted (at most every 15 s)
    for first in range(1, 40, 13):
        write_trials(tmp_path, [True] * 13, first_index=first)
        time.sleep(0.3)
    metrics = ""
    deadline = time.monotonic() + 60
    while (
        time.monotonic() < deadline and 'assay_test_trials_total{test="support"} 40' not in metrics
    ):
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
        time.sleep(0.1)
    assert 'assay_test_trials_total{test="support"} 40' in metrics
    assert stop(watch) == 0
    log = (tmp_path / "watch.log").read_text()
    last_table = log.rsplit("assay watch, stopped", 1)[1]
    assert re.search(r"^support +40 +100\.0% ", last_table, re.M), log[-1500:]
    # the verdict changed on the way (INCONCLUSIVE → PASS): the event line says on what
    (event,) = [line for line in log.splitlines() if "→" in line]
    assert re.search(
        r"support: INCONCLUSIVE → PASS: \d+ trials, pass rate 100\.0%, sequence \[", event
    )

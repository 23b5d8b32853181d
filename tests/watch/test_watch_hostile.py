"""``assay watch`` on hostile trace sets: copies, a malformed trial, names that are escapes.

Each test runs the real command (a subprocess) on real Parquet files written by the OTel SDK,
and compares it with ``assay analyze`` on the same files where the two must agree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from servers import start_watch, stop, wait_for_log
from streams import write_trials

from assay import conventions as c
from assay.report import visible
from assay.watch import Watcher, WatchOptions

HOSTILE = "evil\x1b[2J\x07\r\n::error file=x.py::pwned"


def _assay(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_names_reach_watchs_output_escaped_exactly_as_analyze_escapes_them(
    tmp_path: Path,
) -> None:
    write_trials(tmp_path, [True] * 30, test=HOSTILE, scores=[0.9] * 30, score_name=HOSTILE)
    watched = _assay("watch", str(tmp_path), "--once")
    analyzed = _assay("analyze", str(tmp_path))
    assert watched.returncode in (0, 3), watched.stderr
    shown = visible(HOSTILE)
    for result in (watched, analyzed):
        output = result.stdout + result.stderr
        for unsafe in ("\x1b", "\x07", "\r"):
            assert unsafe not in output
        assert not any(line.startswith("::") for line in output.splitlines())
    # one escaping (assay.report.visible): the name as analyze shows it, in full
    assert shown in analyzed.stdout
    assert f"score {shown}" in watched.stdout
    assert shown[:28] in watched.stdout


def _trials(out: str) -> dict[str, int]:
    rows = [line.split() for line in out.splitlines()[2:] if line and line[0] != " "]
    return {row[0]: int(row[1]) for row in rows if len(row) > 2 and row[1].isdigit()}


def test_a_copied_file_and_a_later_hard_link_count_once_as_in_analyze(tmp_path: Path) -> None:
    write_trials(tmp_path, [True] * 10, test="t")
    (original,) = tmp_path.rglob("*.parquet")
    shutil.copy(original, tmp_path / "backup.parquet")
    analyzed = json.loads(_assay("analyze", str(tmp_path), "--format", "json").stdout)
    assert [t["n"] for t in analyzed["tests"]] == [10]
    once = _assay("watch", str(tmp_path), "--once")
    assert _trials(once.stdout) == {"t": 10}, once.stdout
    # analyze's reader names the copy (10 trials of two spans, read once)
    assert "duplicate_files (20)" in once.stderr
    # live: a hard link added after the first look, then a copy: still 10 trials
    watcher = Watcher((str(tmp_path),))
    assert [t.trials for t in watcher.look(final=True).tests] == [10]
    os.link(original, tmp_path / "linked.parquet")
    shutil.copy(original, tmp_path / "again.parquet")
    status = watcher.look(final=True)
    assert [t.trials for t in status.tests] == [10]
    kinds = {n.kind: n.count for n in status.notes}
    assert kinds["linked_files"] == 1
    # the backup, in the first look's backlog (analyze's reader), then the later copy
    assert kinds["duplicate_files"] == 20 and kinds["duplicate_spans"] == 20


def test_one_malformed_trial_is_named_and_skipped_never_its_look(tmp_path: Path) -> None:
    watcher = Watcher((str(tmp_path),))
    write_trials(tmp_path, [True] * 40, test="T")
    assert [t.trials for t in watcher.look(final=True).tests] == [40]
    write_trials(tmp_path, [True] * 200, test="T")
    write_trials(tmp_path, [True] * 200, test="V")
    write_trials(tmp_path, [True], test="U", extra={c.TRIAL_OUTCOME: False})
    status = watcher.look(final=True)
    assert {t.test_id: t.trials for t in status.tests} == {"T": 240, "V": 200}
    (note,) = [n for n in status.notes if n.kind == "rejected_traces"]
    assert note.count == 1
    assert "assay.trial.outcome" in note.message and "'false'" in note.message
    # --once on 80 good trials and the bad one: the 80 judged, the bad one named on stderr
    once_dir = tmp_path / "once"
    write_trials(once_dir, [True] * 80, test="T")
    write_trials(once_dir, [True], test="U", extra={c.TRIAL_OUTCOME: False})
    once = _assay("watch", str(once_dir), "--once")
    assert once.returncode in (0, 3), once.stderr
    assert _trials(once.stdout) == {"T": 80}
    assert "rejected_traces (1): trace " in once.stderr


@pytest.mark.slow
def test_a_live_watch_names_a_malformed_trial_on_stderr_and_in_metrics(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    write_trials(traces, [True] * 40, test="T")
    args = [str(traces), "--poll-interval", "0.2", "--grace", "0", "--metrics-port", "0"]
    watch, port = start_watch(args, tmp_path / "watch.log")
    try:
        wait_for_log(tmp_path / "watch.log", "pass rate")
        write_trials(traces, [True] * 200, test="T")
        write_trials(traces, [True] * 200, test="V")
        write_trials(traces, [True], test="U", extra={c.TRIAL_OUTCOME: False})
        log = wait_for_log(tmp_path / "watch.log", "note: rejected_traces (1): trace ")
        assert "left out, the rest counted" in log
        metrics = ""
        for _ in range(600):  # the look that logged the note is published right after it
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                metrics = r.read().decode()
            if 'test="V"} 200.0' in metrics:
                break
            time.sleep(0.1)
        assert 'assay_test_trials_total{test="T"} 240.0' in metrics
        assert 'assay_watch_input_notes_total{kind="rejected_traces"} 1.0' in metrics
    finally:
        assert stop(watch) == 0


def test_a_look_whose_only_trace_is_malformed_names_it_and_counts_nothing(tmp_path: Path) -> None:
    # The bad trial can arrive alone in a look (its file written between two looks): the look
    # then has nothing to count, and must still name it and go on.
    watcher = Watcher((str(tmp_path),), WatchOptions(grace=0.0))
    write_trials(tmp_path, [True] * 5, test="T")
    assert [t.trials for t in watcher.look(now=0.0).tests] == [5]
    write_trials(tmp_path, [True], test="U", extra={c.TRIAL_OUTCOME: False})
    status = watcher.look(now=1.0)
    assert [(t.test_id, t.trials) for t in status.tests] == [("T", 5)]
    assert "rejected_traces" in [n.kind for n in status.notes]
    write_trials(tmp_path, [True] * 3, test="T")
    assert [t.trials for t in watcher.look(now=2.0).tests] == [8]

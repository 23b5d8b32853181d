"""Progress where work takes long, where a person (or a CI log) watches it.

A pseudo-terminal (Python's ``pty``) stands in for a person's terminal: the commands run as real
processes with stderr on the pty and stdout on a pipe, as in ``assay analyze … | jq``.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from assay.run import Budget, LogProgress
from assay.run._state import TestStatus

ROOT = Path(__file__).resolve().parents[1]
ASSAY = str(Path(sys.executable).parent / "assay")
_ENV = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200"}


def _on_terminal(argv: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed)."""
    main, child = pty.openpty()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=child, stdin=subprocess.DEVNULL, env=_ENV, cwd=cwd
    )
    os.close(child)
    shown = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the process closed the terminal
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = proc.communicate(timeout=300)
    reader.join(timeout=10)
    os.close(main)
    return proc.returncode, out.decode(), shown.decode(errors="replace")


def _in_a_log(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, env=_ENV, cwd=cwd, timeout=300, check=False
    )


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_a_terminal_sees_progress_and_stdout_stays_clean(
    command: str, traces: Path, tmp_path: Path
) -> None:
    if command == "analyze":
        argv = [ASSAY, "analyze", str(traces), "--format", "json"]
    else:
        argv = [ASSAY, "report", str(traces), "-o", str(tmp_path / "r.html")]
    code, out, shown = _on_terminal(argv)
    assert code == 1, shown
    assert f"analysing {traces}" in shown
    if command == "analyze":
        assert json.loads(out)["schema"] == "assay.analysis/v1"  # nothing else on stdout


def test_compare_shows_progress_on_a_terminal(traces: Path) -> None:
    code, _, shown = _on_terminal([ASSAY, "compare", str(traces), str(traces), "-q"])
    assert code in (1, 3)
    assert "comparing" not in shown  # -q: none

    code, out, shown = _on_terminal([ASSAY, "compare", str(traces), str(traces)])
    assert f"comparing {traces} with" in shown
    assert "comparing" not in out


def test_no_progress_with_quiet_or_without_a_terminal(traces: Path) -> None:
    code, _, shown = _on_terminal([ASSAY, "analyze", str(traces), "-q"])
    assert code == 1
    assert "analysing" not in shown
    done = _in_a_log([ASSAY, "analyze", str(traces)])
    assert done.returncode == 1
    assert "analysing" not in done.stderr + done.stdout


def test_import_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    recorded = tmp_path / "spans.jsonl"
    span = {
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "name": "trial",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "assay.test.id", "value": {"stringValue": "t"}}],
    }
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    recorded.write_text(json.dumps(request) + "\n")
    code, out, shown = _on_terminal([ASSAY, "import", str(recorded), "--out", str(tmp_path / "o")])
    assert code == 0, shown
    assert f"importing {recorded} into" in shown
    assert out.startswith("imported 1 spans")


def _run_argv(out: Path, *extra: str) -> list[str]:
    suite = str(ROOT / "examples" / "suite.yaml")
    return [ASSAY, "run", suite, "--agent", "examples.agent:run", "--seed", "1", "--runs", "8",
            "--out", str(out), *extra]  # fmt: skip


@pytest.mark.slow
def test_assay_run_in_a_log_prints_a_line_per_settled_test(tmp_path: Path) -> None:
    done = _in_a_log(_run_argv(tmp_path / "a"), cwd=ROOT)
    assert done.returncode in (0, 1, 3), done.stderr
    lines = done.stderr.splitlines()
    assert "assay run: 4 test(s), at most 32 trials" in lines
    settled = [line for line in lines if re.match(r"^[\w-]+: \S+ after \d+ of 8 trials", line)]
    assert sorted(line.split(":")[0] for line in settled) == [
        "flight-rebooking",
        "greeting",
        "multi-step-research",
        "refund-policy",
    ]
    assert "━" not in done.stderr  # no bars drawn into a log
    quiet = _in_a_log(_run_argv(tmp_path / "b", "-q"), cwd=ROOT)
    assert "after" not in quiet.stderr and "assay run:" not in quiet.stderr


@pytest.mark.slow
def test_assay_run_on_a_terminal_draws_bars_not_log_lines(tmp_path: Path) -> None:
    _, _, shown = _on_terminal(_run_argv(tmp_path / "a"), cwd=ROOT)
    assert "━" in shown
    assert "assay run: 4 test(s)" not in shown


def test_the_heartbeat_reports_trials_tests_and_budget() -> None:
    stream = io.StringIO()
    now = [100.0]
    progress = LogProgress(stream, Budget(max_trials=50, max_time=600), every=0.02,
                           clock=lambda: now[0])  # fmt: skip

    class Case:
        def __init__(self, id: str) -> None:
            self.id = id

    progress.start([Case("a"), Case("b")], [30, 30])  # type: ignore[list-item]
    progress.update(TestStatus("a", 7, 6, 1, 30, 0.5, 0.9))
    now[0] = 112.0
    assert progress.heartbeat() == (
        "assay run: 7 of at most 60 trials done · 2 of 2 test(s) running · 12 s"
        " · --max-trials 7/50 used · --max-time 12/600 s used"
    )
    # the heartbeat thread writes it, again and again, until the run stops
    deadline = time.monotonic() + 10
    while stream.getvalue().count("trials done") < 2:
        assert time.monotonic() < deadline, stream.getvalue()
        time.sleep(0.01)
    progress.stop()
    beats = stream.getvalue().count("trials done")
    time.sleep(0.1)
    assert stream.getvalue().count("trials done") == beats
    # a settled test gets its line once, however often it is updated afterwards
    settled = TestStatus("a", 9, 8, 1, 30, 0.6, 0.95, finished=True)
    progress.update(settled)
    progress.update(settled)
    assert (
        stream.getvalue()
        .splitlines()
        .count("a: done after 9 of 30 trials (8 pass, 1 fail, 1 error)")
        == 1
    )
    assert "running" in progress.heartbeat() and "1 of 2 test(s) running" in progress.heartbeat()

"""``assay run`` under SIGTERM stops as under Ctrl-C, and takes a command's process group
(grandchildren included) with it; a command's timeout ends its grandchildren too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import assay
from assay.run._agents import CommandAgent
from proc_helpers import alive

# A command agent that leaves a grandchild behind (a `sleep` in the background, as a shell
# script or a tool server would) and records its pid; trials after the third one hang.
AGENT = textwrap.dedent(
    """
    import json, os, subprocess, sys, time
    folder = sys.argv[1]
    quiet = subprocess.DEVNULL
    grandchild = subprocess.Popen(["sleep", "300"], stdin=quiet, stdout=quiet, stderr=quiet)
    with open(os.path.join(folder, "pids"), "a") as handle:
        handle.write(f"{grandchild.pid}\\n")
    done = len(os.listdir(os.path.join(folder, "done")))
    if done >= 3:
        time.sleep(300)
    open(os.path.join(folder, "done", str(os.getpid())), "w").close()
    print(json.dumps({"output": "ok"}))
    """
)


def _wait_dead(pids: list[int], seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.mark.slow
def test_sigterm_stops_like_ctrl_c_and_kills_grandchildren(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    (tmp_path / "done").mkdir()
    suite = tmp_path / "s.yaml"
    suite.write_text("tests:\n  - {name: t, input: {}, variance: {runs: 50}}\n")
    out = tmp_path / "traces"
    command = f"{sys.executable} {agent} {tmp_path}"
    process = subprocess.Popen(
        [sys.executable, "-m", "assay", "run", str(suite), "--command", command, "--fixed"]
        + ["--concurrency", "1", "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    pids = tmp_path / "pids"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # three trials done, the fourth hangs
        if pids.exists() and len(pids.read_text().split()) == 4:
            break
        time.sleep(0.05)
    time.sleep(0.3)
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "stopped early: interrupted (SIGTERM) with 1 trial(s) in flight" in stdout
    analysis = assay.analyze(str(out))
    (test,) = analysis.result.tests
    assert test.n == 3 and test.passed == 3  # the finished trials, on disk and readable
    assert _wait_dead([int(p) for p in pids.read_text().split()]) == []


def test_a_command_timeout_kills_its_grandchildren(tmp_path: Path) -> None:
    script = tmp_path / "hang.py"
    script.write_text(
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen(['sh', '-c', 'sleep 300; touch {tmp_path / 'slept'}'])\n"
        f"open({str(tmp_path / 'pid')!r}, 'w').write(str(child.pid))\n"
        "time.sleep(300)\n"
    )
    agent = CommandAgent((sys.executable, str(script)))
    with pytest.raises(TimeoutError):
        agent.invoke({}, timeout=1.0, seed=None)
    assert _wait_dead([int((tmp_path / "pid").read_text())]) == []
    # killed, not waited for: held by the grandchild's open pipes, it would have slept it out
    assert not (tmp_path / "slept").exists()


# Prints its answer and exits while a background child keeps its stdout open: a shell's
# `tool &`, or (with setsid) a daemon of the user's that outlives the command.
LEAVES_STDOUT_OPEN = textwrap.dedent(
    """
    import json, subprocess, sys
    pid_file, own_session = sys.argv[1], sys.argv[2] == "daemon"
    child = subprocess.Popen(["sleep", "300"], start_new_session=own_session)
    open(pid_file, "w").write(str(child.pid))
    print(json.dumps({"answer": json.load(sys.stdin)["question"]}), flush=True)
    """
)


@pytest.mark.parametrize("child", ["background", "daemon"])
def test_a_command_is_done_when_it_exits_not_when_its_stdout_closes(
    tmp_path: Path, child: str
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(LEAVES_STDOUT_OPEN)
    pid_file = tmp_path / "pid"
    agent = CommandAgent((sys.executable, str(script), str(pid_file), child))
    # Once this waited for the child's stdout to close: "did not finish within 10 s", every trial.
    output = agent.invoke({"question": "q" * 200_000}, timeout=10.0, seed=None)
    pid = int(pid_file.read_text())
    try:
        assert output == {"answer": "q" * 200_000}  # more than a pipe holds, both ways
        if child == "background":  # in the command's process group: ended with it
            assert _wait_dead([pid]) == []
        else:  # its own session, the user's daemon: neither waited for nor killed
            assert alive(pid)
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)

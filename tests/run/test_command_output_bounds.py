"""A command agent's output is read within bounds: an endless stdout stops it, stderr is cut."""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import pytest

from assay.run._agents import AgentError, CommandAgent
from assay.run._processes import MAX_STDERR_BYTES, MAX_STDOUT_BYTES, run_command

MIB = 1024 * 1024


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_an_endless_stdout_stops_the_command_and_fails_the_trial_saying_why() -> None:
    before = _peak_mib()
    agent = CommandAgent(("cat", "/dev/zero"))
    with pytest.raises(AgentError, match="more than 16 MiB on stdout: stopped"):
        agent.invoke({"input": "x"}, timeout=300, seed=None)
    # at most the cap (and its copy) was held, never what the command could write
    assert _peak_mib() - before < 4 * MAX_STDOUT_BYTES / MIB


def test_200_mb_of_stderr_keeps_its_last_bytes_and_the_answer_is_read(tmp_path: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(
        "import sys, json\n"
        "sys.stdin.read()\n"
        "chunk = 'e' * (1 << 20) + '\\n'\n"
        "for _ in range(200):\n"
        "    sys.stderr.write(chunk)\n"
        "sys.stderr.write('the last line\\n')\n"
        "print(json.dumps({'output': 'done'}))\n"
    )
    before = _peak_mib()
    status, stdout, stderr = run_command((sys.executable, str(script)), "{}", {}, timeout=300)
    assert status == 0 and stdout.strip() == '{"output": "done"}'
    assert stderr.startswith("[first ") and "bytes of stderr dropped]" in stderr.splitlines()[0]
    assert stderr.splitlines()[-1] == "the last line"
    assert len(stderr.encode()) <= MAX_STDERR_BYTES + 100
    assert _peak_mib() - before < 100

"""``assay watch`` on hostile trace sets: copies, a malformed trial, names that are escapes.

Each test runs the real command (a subprocess) on real Parquet files written by the OTel SDK,
and compares it with ``assay analyze`` on the same files where the two must agree.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from streams import write_trials

from assay.report import visible

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

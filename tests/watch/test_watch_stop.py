"""SIGTERM during a long look (a restart's backlog) ends the watch at once, and says so."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synthetic import generate  # noqa: E402


@pytest.mark.slow
def test_sigterm_during_the_first_look_ends_the_watch_and_names_what_was_not_counted(
    tmp_path: Path,
) -> None:
    generate(tmp_path, trials=400_000, spans_per_trial=1, tests=20)
    watch = subprocess.Popen(
        [sys.executable, "-m", "assay", "watch", str(tmp_path), "--metrics-port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watch.stderr is not None
    # /metrics is announced before the first look starts; its backlog takes seconds to read
    assert "/metrics on http://127.0.0.1:" in watch.stderr.readline()
    # the first look has begun (a signal before it would stop the watch with nothing read)
    assert "first look" in watch.stderr.readline()
    watch.send_signal(signal.SIGTERM)
    out, err = watch.communicate(timeout=120)
    assert watch.returncode == 0
    assert "stopped during a look; what it was reading is not counted" in err
    assert out == ""  # no table: the look never finished, nothing half-counted was shown

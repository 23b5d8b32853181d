"""A trace set that changes while it is read: one line and exit 2, never a traceback or exit 1.

Every trial of the set passes, so a clean read ends in exit 0 (a file deleted while the folder
is listed is simply not in the set), a read that meets the churn in exit 2, and exit 1 — a FAIL
or a traceback — only from a bug. Before, 2 of 20 such runs ended in a traceback with exit 1.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_hostile_sets import _trials

from assay.cli import run
from assay.store import (
    READ_ERRORS,
    open_trace_set,
    read_failure,
    write_spans,
)

FILES, TRIALS = 40, 5


def _write(folder: Path, first: int) -> None:
    write_spans(_trials(first, TRIALS, passed=FILES * TRIALS), folder, partition_by=())


def _churn(files: list[Path], stop: threading.Event) -> None:
    """Delete, truncate or rewrite one file at a time, then put it back, as a copy would."""
    originals = {f: f.read_bytes() for f in files}
    step = 0
    while not stop.is_set():
        target = files[(step * 7) % len(files)]
        data = originals[target]
        action = step % 3
        if action == 0:
            target.unlink()
        elif action == 1:
            target.write_bytes(data[: len(data) // 2])
        else:
            target.write_bytes(data[::-1])  # rewritten in place, not atomically
        time.sleep(0.003 * (1 + step % 5))
        target.write_bytes(data)
        time.sleep(0.002 * (1 + step % 4))
        step += 1


@pytest.mark.parametrize("command", [["analyze", "--format", "json"], ["describe"]])
def test_files_changing_under_a_reader_give_exit_2_not_a_traceback(
    tmp_path: Path, command: list[str]
) -> None:
    folder = tmp_path / "traces"
    for k in range(FILES):
        _write(folder / f"part={k:02d}", k * TRIALS)
    files = sorted(folder.rglob("*.parquet"))
    assert len(files) == FILES and all(pq.read_metadata(f).num_rows == 2 * TRIALS for f in files)
    stop = threading.Event()
    churn = threading.Thread(target=_churn, args=(files, stop), daemon=True)
    churn.start()
    codes: list[int] = []
    try:
        for _ in range(20):
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                code = run([command[0], str(folder), *command[1:]])
            codes.append(code)
            err = stderr.getvalue().strip()
            assert code != 1, err
            if code == 2:
                assert err.count("\n") == 0 and "Traceback" not in err, err
                assert str(folder) in err, err
    finally:
        stop.set()
        churn.join()
    assert 2 in codes  # the churn was seen


def test_a_file_removed_or_rewritten_after_the_checks_is_a_read_failure(tmp_path: Path) -> None:
    """What the churn hits when it strikes after the footers were checked, made certain."""
    folder = tmp_path / "traces"
    for k in range(3):
        _write(folder / f"part={k}", k * TRIALS)
    first, second, _ = sorted(folder.rglob("*.parquet"))
    for damage in (first.unlink, lambda: second.write_bytes(second.read_bytes()[::-1])):
        trace_set = open_trace_set(folder)
        damage()
        with pytest.raises(READ_ERRORS) as caught:
            trace_set.scan().collect()
        message = str(read_failure(caught.value, trace_set.names))
        assert message.count("\n") == 0 and message.startswith(str(folder))

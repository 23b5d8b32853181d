"""The collector's own log never takes the disk from acknowledged spans, and stays bounded.

The disk is a real 4 MiB tmpfs (root only; elsewhere skipped, saying why) holding the output,
the write-ahead log and the collector's stderr, redirected to a file, with ``--verbose``: a
line for every request. Before, under load the log took the space a full disk got back.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from collector_process import CollectorFactory, CollectorProcess
from test_collect_disk_full import _send, _stored, _wait

from assay.cli import run
from assay.collect._logs import BURST, WINDOW_S, keep_free, open_log


def _free(path: Path) -> int:
    result = os.statvfs(path)
    return result.f_bavail * result.f_frsize


def _gets(port: int, count: int) -> None:
    """``count`` requests that store nothing but each log a line (``--verbose``)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(count):
            connection.request("GET", "/no-such-page")
            connection.getresponse().read()
    finally:
        connection.close()


@pytest.mark.slow
def test_a_nearly_full_disk_goes_to_the_spans_not_to_the_log(
    small_disk: Any, collector_factory: CollectorFactory
) -> None:
    out = small_disk.path / "traces"
    args = ["--roll-age", "0.3", "--workers", "0", "--verbose"]
    collector = collector_factory(out, args, process=True).start()
    assert isinstance(collector, CollectorProcess) and collector.log is not None
    assert collector.log.parent == small_disk.path  # its stderr: a file on the same disk
    acknowledged: list[str] = []
    assert _send(collector, acknowledged) == 200
    _wait(lambda: len(_stored(out)) == 200)
    filler = small_disk.fill()
    room = 300 * 1024  # enough for the next spans; under what the log leaves free
    os.truncate(filler, filler.stat().st_size - room)
    total = os.statvfs(small_disk.path).f_blocks * os.statvfs(small_disk.path).f_frsize
    assert _free(small_disk.path) < keep_free(total)
    log_size, free = collector.log.stat().st_size, _free(small_disk.path)
    _gets(collector.http_port, 4000)  # ~400 KB of log lines: more than the room left
    assert collector.log.stat().st_size - log_size < 1024  # the notice alone
    assert free - _free(small_disk.path) < 16 * 1024
    statuses = [_send(collector, acknowledged) for _ in range(5)]
    assert statuses == [200] * 5  # the room went to the spans
    metrics = collector.health()
    assert isinstance(metrics["log_lines_dropped"], int)
    assert metrics["log_lines_dropped"] >= 4000
    assert "log lines are dropped" in collector.output()
    filler.unlink()
    _gets(collector.http_port, 1)
    assert "log line(s) dropped over" in collector.output()
    _wait(lambda: len(_stored(out)) == len(acknowledged))
    assert collector.terminate() == 0
    assert sorted(_stored(out)) == sorted(acknowledged)


def _logger(handler: logging.Handler) -> logging.Logger:
    logger = logging.getLogger(f"assay.tests.log.{id(handler)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    return logger


def test_the_log_file_stays_within_its_budget(tmp_path: Path) -> None:
    path = tmp_path / "collector.log"
    budget = 64 * 1024
    handler = open_log(path, budget, verbose=True)  # every line: no rate limit
    try:
        logger = _logger(handler)
        for i in range(5000):  # ~400 KB of lines
            logger.info("request %d from 127.0.0.1 answered 200", i)
    finally:
        handler.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["collector.log", "collector.log.1"]
    sizes = [(tmp_path / name).stat().st_size for name in files]
    assert sum(sizes) <= budget + 200, sizes  # within one line
    assert "request 4999 " in path.read_text()  # the newest lines are kept


def test_repeated_lines_are_counted_not_written(tmp_path: Path) -> None:
    path = tmp_path / "collector.log"
    handler = open_log(path, 1024 * 1024, verbose=False)
    try:
        logger = _logger(handler)
        for i in range(1000):
            logger.warning("refused a request from %s", f"10.0.0.{i % 250}")
        logger.info("another message")
        handler._windows = {k: (v[0] - WINDOW_S, *v[1:]) for k, v in handler._windows.items()}
        logger.warning("refused a request from %s", "10.0.0.1")  # a new window
    finally:
        handler.close()
    lines = path.read_text().splitlines()
    refused = [line for line in lines if "refused a request" in line]
    assert len(refused) == BURST + 1 and handler.suppressed == 1000 - BURST
    assert f"[{1000 - BURST} more like this not logged" in refused[-1]
    assert any("another message" in line for line in lines)


def test_a_log_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "collector.log"
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = run(["collect", "--out", str(tmp_path / "t"), "--http-port", "0"]
                   + ["--grpc-port", "0", "--log-file", str(missing)])  # fmt: skip
    assert code == 2
    assert stderr.getvalue().strip() == (
        f"assay: error: --log-file {missing}: cannot write (No such file or directory)"
    )

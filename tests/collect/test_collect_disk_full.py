"""A full disk: refuse (503) while full, keep every acknowledged span, resume by itself.

The disk is a real 4 MiB tmpfs mounted for the test (root only; elsewhere the test is skipped
and says why), filled with a file and freed again while a real collector subprocess serves.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from collector_process import ASSAY, AnyCollector, CollectorFactory, CollectorProcess
from otlp_helpers import make_request, post

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def _send(collector: AnyCollector, acknowledged: list[str], spans: int = 200) -> int:
    request, ids = make_request(spans)  # ~20 KB: more than the page a segment may have free
    status, _, _ = post(collector.http_port, "/v1/traces", request.SerializeToString(), PROTOBUF)
    if status == 200:
        acknowledged.extend(ids)
    return status


def _wait(predicate: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def _stored(out: Path) -> list[str]:
    """Span ids in the visible files, read raw (no de-duplication), so a copy would show."""
    visible = [
        str(p)
        for p in out.rglob("*.parquet")
        if not any(part.startswith(("_", ".")) for part in p.relative_to(out).parts)
    ]
    if not visible:
        return []
    return pl.scan_parquet(visible).select("span_id").collect()["span_id"].to_list()


@pytest.mark.slow
@pytest.mark.parametrize("log_on", ["the full disk", "another disk"])
def test_full_disk_refuses_keeps_everything_and_resumes(
    tmp_path: Path, small_disk: Any, collector_factory: CollectorFactory, log_on: str
) -> None:
    out = small_disk.path / "traces"
    args = ["--roll-age", "0.3", "--workers", "0"]
    if log_on == "another disk":
        args += ["--wal-dir", str(tmp_path / "wal")]
    # a process: that it stays alive on a full disk is part of the point
    collector = collector_factory(out, args, process=True).start()
    acknowledged: list[str] = []
    assert _send(collector, acknowledged) == 200
    _wait(lambda: len(_stored(out)) == 200)
    filler = small_disk.fill()
    statuses = [_send(collector, acknowledged) for _ in range(5)]
    if log_on == "the full disk":
        assert statuses == [503] * 5  # nothing can be made durable: refused, retryable
    else:
        assert statuses == [200] * 5  # durable in the log; Parquet waits for room
    _wait(lambda: collector.health()["status"] == "disk_full")
    assert isinstance(collector, CollectorProcess)
    assert collector.proc is not None and collector.proc.poll() is None
    filler.unlink()
    # Health reflects the disk now: ok again before any request arrives (it once stayed
    # 503 with megabytes free until the next POST).
    _wait(lambda: collector.health()["status"] == "ok")
    _wait(lambda: _send(collector, acknowledged) == 200)
    _wait(lambda: len(_stored(out)) == len(acknowledged))
    assert collector.terminate() == 0
    stored = _stored(out)
    assert sorted(stored) == sorted(acknowledged)  # every acknowledged span, each once


@pytest.mark.slow
def test_recovery_onto_a_full_disk_is_one_line_and_keeps_the_log(
    small_disk: Any, collector_factory: CollectorFactory
) -> None:
    out = small_disk.path / "traces"
    args = ["--roll-age", "600", "--idle-flush", "0", "--workers", "0"]  # nothing converted
    collector = collector_factory(out, args, process=True).start()
    acknowledged: list[str] = []
    assert _send(collector, acknowledged) == 200
    collector.kill()  # kill -9: the spans are only in the log
    filler = small_disk.fill()
    result = subprocess.run(
        [ASSAY, "collect", "--out", str(out), "--http-port", "0", "--grpc-port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert "cannot convert the write-ahead log left by the last run" in last
    assert "Traceback" not in result.stderr
    filler.unlink()
    again = collector_factory(out, args).start()
    assert again.terminate() == 0
    assert sorted(_stored(out)) == sorted(acknowledged)

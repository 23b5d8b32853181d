"""Nothing acknowledged is lost: concurrent senders and SIGTERM, kill -9 and restart."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from collector_process import CollectorFactory
from otlp_helpers import make_request, post

from assay.store import open_trace_set, read_spans
from proc_helpers import alive

PROTOBUF = {"Content-Type": "application/x-protobuf"}


class Senders:
    """Threads that send batches until stopped or refused, recording what was acknowledged."""

    def __init__(self, port: int, count: int, batch: int) -> None:
        self.port = port
        self.batch = batch
        self.acknowledged: list[str] = []
        self.sent: list[str] = []
        self.statuses: list[int] = []
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(count)
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def wait_acknowledged(self, spans: int, timeout: float = 60) -> None:
        """Wait (on the condition, not a fixed time) until ``spans`` spans were acknowledged."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.acknowledged) >= spans:
                    return
                if self.statuses and not all(s == 200 for s in self.statuses):
                    raise AssertionError(f"a batch was refused: {self.statuses}")
            time.sleep(0.02)
        raise AssertionError(f"only {len(self.acknowledged)} of {spans} spans acknowledged")

    def join(self) -> None:
        for t in self.threads:
            t.join(timeout=60)
            assert not t.is_alive()

    def _run(self, index: int) -> None:
        while not self.stop.is_set():
            request, ids = make_request(self.batch, service=f"sender-{index % 3}", prefix=index)
            with self.lock:
                self.sent.extend(ids)
            try:
                status, _, _ = post(self.port, "/v1/traces", request.SerializeToString(), PROTOBUF)
            except OSError:
                return  # the collector is gone: this batch was never acknowledged
            with self.lock:
                self.statuses.append(status)
                if status == 200:
                    self.acknowledged.extend(ids)
            if status != 200:
                return


def _children(pid: int) -> list[int]:
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children.extend(int(c) for c in (task / "children").read_text().split())
        except FileNotFoundError:  # a thread that ended while we looked
            continue
    return children


@pytest.mark.slow
def test_concurrent_senders_then_sigterm(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    # a process with its decode workers: SIGTERM drains what the workers hold too
    collector = collector_factory(tmp_path / "traces", ["--roll-age", "0.5"], process=True).start()
    senders = Senders(collector.http_port, count=10, batch=50)
    senders.start()
    senders.wait_acknowledged(2 * 10 * 50)  # every sender had two batches acknowledged
    assert collector.terminate() == 0  # SIGTERM while the senders are still sending
    senders.stop.set()
    senders.join()
    assert len(senders.acknowledged) >= 10 * 50
    assert set(senders.statuses) <= {200, 503}
    spans = read_spans(collector.out)
    on_disk = spans["span_id"].to_list()
    assert len(on_disk) == len(set(on_disk)), "a span was written twice"
    assert sorted(on_disk) == sorted(senders.acknowledged)
    # a clean stop leaves nothing behind in the log or the staging folder
    assert not list((collector.out / "_wal").iterdir())
    assert not list((collector.out / "_staging").rglob("*.parquet"))


@pytest.mark.slow
def test_kill_9_mid_stream_then_restart_recovers_every_acknowledged_span(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    out = tmp_path / "traces"
    # a large roll age: at the kill, most acknowledged spans exist only in the log
    first = collector_factory(out, ["--roll-age", "1.5"], process=True).start()
    senders = Senders(first.http_port, count=6, batch=100)
    senders.start()
    senders.wait_acknowledged(2 * 6 * 100)  # mid stream, before most of it is rolled to Parquet
    assert first.proc is not None
    workers = _children(first.proc.pid)
    assert workers, "the collector decodes in worker processes"
    first.kill()  # SIGKILL: no drain, no flush
    senders.stop.set()
    senders.join()
    assert senders.acknowledged
    # A worker still starting when the collector died (spawn imports take seconds on a loaded
    # machine) notices only once its initializer runs: allow for that, then insist.
    deadline = time.monotonic() + 15
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(w) for w in workers), "decode workers outlived the collector"
    # whatever is visible after the crash is complete and readable
    if list(out.rglob("*.parquet")):
        trace_set = open_trace_set(out)
        assert not trace_set.skipped
    second = collector_factory(out, ["--roll-age", "0.5"])  # recovery needs no process
    second.http_port, second.grpc_port = first.http_port, first.grpc_port  # free again
    second.start()
    assert "recovered" in second.output() or not list((out / "_wal").glob("*.log"))
    assert second.terminate() == 0
    spans = read_spans(out)
    on_disk = spans["span_id"].to_list()
    assert len(on_disk) == len(set(on_disk)), "a span was written twice"
    assert set(senders.acknowledged) <= set(on_disk)
    assert set(on_disk) <= set(senders.sent)
    assert not list((out / "_wal").iterdir())


def test_torn_log_tail_is_ignored_and_an_interrupted_commit_is_finished(tmp_path: Path) -> None:
    from assay.collect import CollectorConfig, recover
    from assay.collect._wal import KIND_TRACES, WriteAheadLog

    out = tmp_path / "traces"
    config = CollectorConfig(out=out)
    sealed: list[int] = []
    wal = WriteAheadLog(
        config.wal_path, on_durable=lambda s, r: None, on_sealed=sealed.append, fsync=True
    )
    request, ids = make_request(5)
    wal.append(KIND_TRACES, request.SerializeToString())
    wal.close()
    (segment,) = config.wal_path.glob("wal-*.log")
    with segment.open("ab") as handle:  # a crash mid-append: a torn record
        handle.write(b"\x10\x00\x00\x00\x01\x00")
    assert recover(config) == 5
    assert sorted(read_spans(out)["span_id"].to_list()) == sorted(ids)
    assert not list(config.wal_path.iterdir())
    # a crash between the COMMIT marker and publishing: recovery finishes the publishing
    from assay.collect._converter import _commit, _Staged
    from assay.store import SpanWriter

    wal = WriteAheadLog(config.wal_path, on_durable=lambda s, r: None, on_sealed=sealed.append)
    request2, ids2 = make_request(4, service="second")
    wal.append(KIND_TRACES, request2.SerializeToString())
    wal.close()
    staged = _Staged()
    writer = SpanWriter(out / "_staging", partition_by=config.partition_by, on_roll=staged)
    from assay.ingest import traces_to_table

    writer.write(traces_to_table(request2).table)
    writer.flush()
    original_replace = os.replace
    calls = {"n": 0}

    def crash_on_publish(src: object, dst: object) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the marker's rename succeeds, the first publish "crashes"
            raise KeyboardInterrupt
        original_replace(src, dst)  # type: ignore[arg-type]

    os.replace = crash_on_publish  # type: ignore[assignment]
    try:
        with pytest.raises(KeyboardInterrupt):
            _commit(config, writer, staged, sealed[-1], None)
    finally:
        os.replace = original_replace
    assert (out / "_staging" / "COMMIT").exists()
    assert recover(config) == 0
    spans = read_spans(out)["span_id"].to_list()
    assert sorted(spans) == sorted(ids + ids2)
    assert not (out / "_staging" / "COMMIT").exists()


def test_two_collectors_cannot_share_one_log(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    import subprocess

    from collector_process import ASSAY

    collector_factory(tmp_path / "traces", []).start()
    result = subprocess.run(
        [ASSAY, "collect", "--out", str(tmp_path / "traces"), "--http-port", "0"]
        + ["--grpc-port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "another collector is using this output folder" in result.stderr
    assert "Traceback" not in result.stderr

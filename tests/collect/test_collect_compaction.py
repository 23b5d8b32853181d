"""A collector receiving sporadic requests keeps few files: it compacts what it committed."""

from __future__ import annotations

import time
from pathlib import Path

from collector_process import CollectorFactory, InProcessCollector
from otlp_helpers import make_request, post_protobuf

from assay.store import DUPLICATE_SPANS, open_trace_set


def _send_one_file_per_request(running: InProcessCollector, requests: int) -> list[str]:
    assert running.collector is not None
    counters = running.collector.counters
    sent: list[str] = []
    for _ in range(requests):
        request, ids = make_request(2)
        assert post_protobuf(running.http_port, request) == 200
        sent += ids
        deadline = time.monotonic() + 20
        while counters.snapshot()["spans_written"] < len(sent):
            assert time.monotonic() < deadline, "spans not written"
            time.sleep(0.01)
    return sent


def test_sporadic_requests_end_in_few_files_each_span_once(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    out = tmp_path / "traces"
    running = collector_factory(out, ["--idle-flush", "0.05", "--grpc-port", "-1"]).start()
    assert isinstance(running, InProcessCollector) and running.collector is not None
    sent = _send_one_file_per_request(running, 25)
    counters = running.collector.counters
    running.terminate()
    files = [p for p in out.rglob("*.parquet") if not p.name.startswith(".")]
    assert counters.snapshot()["files_written"] == 25
    assert counters.snapshot()["files_compacted"] >= 20
    assert len(files) < 10
    trace_set = open_trace_set(out)
    assert DUPLICATE_SPANS not in {f.kind for f in trace_set.quality.findings}
    read = trace_set.scan().select("span_id").collect()["span_id"].to_list()
    assert sorted(read) == sorted(sent)


def test_fanout_and_no_compact_are_honoured(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    """``--fanout 3`` merges every third file; ``--no-compact`` leaves each file as written."""
    for name, flags, most_files in (
        ("merged", ["--fanout", "3"], 3),
        ("kept", ["--no-compact"], 7),
    ):
        out = tmp_path / name
        running = collector_factory(out, ["--idle-flush", "0.05", "--grpc-port", "-1", *flags])
        started = running.start()
        assert isinstance(started, InProcessCollector) and started.collector is not None
        sent = _send_one_file_per_request(started, 7)
        compacted = started.collector.counters.snapshot()["files_compacted"]
        started.terminate()
        files = [p for p in out.rglob("*.parquet") if not p.name.startswith(".")]
        assert len(files) <= most_files, (name, files)
        assert (compacted > 0) == (name == "merged")
        read = open_trace_set(out).scan().select("span_id").collect()["span_id"].to_list()
        assert sorted(read) == sorted(sent)


def test_fanout_default_is_the_stores() -> None:
    """collect's and compact's ``--fanout`` default is the one the exporter uses."""
    import inspect

    from assay._cli.collect import collect
    from assay._cli.compact import compact
    from assay.store import DEFAULT_FANOUT

    for command in (collect, compact):
        assert inspect.signature(command).parameters["fanout"].default == DEFAULT_FANOUT

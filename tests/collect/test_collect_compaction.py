"""A collector receiving sporadic requests keeps few files: it compacts what it committed."""

from __future__ import annotations

import time
from pathlib import Path

from collector_process import CollectorFactory, InProcessCollector
from otlp_helpers import make_request, post_protobuf

from assay.store import DUPLICATE_SPANS, open_trace_set


def test_sporadic_requests_end_in_few_files_each_span_once(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    out = tmp_path / "traces"
    running = collector_factory(out, ["--idle-flush", "0.05", "--grpc-port", "-1"]).start()
    assert isinstance(running, InProcessCollector) and running.collector is not None
    counters = running.collector.counters
    sent: list[str] = []
    for _ in range(25):  # one visible file per request: each waits for the last to land
        request, ids = make_request(3)
        assert post_protobuf(running.http_port, request) == 200
        sent += ids
        deadline = time.monotonic() + 20
        while counters.snapshot()["spans_written"] < len(sent):
            assert time.monotonic() < deadline, "spans not written"
            time.sleep(0.01)
    running.terminate()
    files = [p for p in out.rglob("*.parquet") if not p.name.startswith(".")]
    assert counters.snapshot()["files_written"] == 25
    assert counters.snapshot()["files_compacted"] >= 20
    assert len(files) < 10
    trace_set = open_trace_set(out)
    assert DUPLICATE_SPANS not in {f.kind for f in trace_set.quality.findings}
    read = trace_set.scan().select("span_id").collect()["span_id"].to_list()
    assert sorted(read) == sorted(sent)

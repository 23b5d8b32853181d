"""Every writer (collector, ``assay import``, the exporter) can lay a trace set out by bucket."""

from __future__ import annotations

import time
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
from collector_process import CollectorFactory
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_helpers import make_request, post_protobuf

from assay.cli import run
from assay.instrument import ParquetSpanExporter
from assay.store import open_trace_set, read_spans
from assay.store._buckets import BUCKET_COUNT_KEY, bucket_folder, bucket_of, existing_buckets


def _assert_bucketed(root: Path, count: int, spans: int) -> None:
    files = open_trace_set(root).files
    assert existing_buckets(files) is not None
    for f in files:
        assert pq.read_schema(f).metadata[BUCKET_COUNT_KEY] == str(count).encode()
        ids = pl.Series(pq.read_table(f, columns=["trace_id"])["trace_id"])
        folders = {bucket_folder(b, count) for b in bucket_of(ids, count)}
        assert folders == {Path(f).parent.name}
    assert read_spans(root).height == spans


def test_collector_writes_buckets(tmp_path: Path, collector_factory: CollectorFactory) -> None:
    out = tmp_path / "traces"
    collector = collector_factory(out, ["--roll-age", "0.5", "--buckets", "4"]).start()
    request, _ = make_request(40)
    assert post_protobuf(collector.http_port, request) == 200
    assert collector.terminate() == 0
    _assert_bucketed(out, 4, 40)


def test_import_writes_buckets(tmp_path: Path) -> None:
    request, _ = make_request(30)
    (tmp_path / "in.pb").write_bytes(request.SerializeToString())
    out = tmp_path / "out"
    assert run(["import", str(tmp_path / "in.pb"), "--out", str(out), "--buckets", "3"]) == 0
    _assert_bucketed(out, 3, 30)


def test_bad_bucket_count_is_exit_2(tmp_path: Path, capsys) -> None:
    request, _ = make_request(3)
    (tmp_path / "in.pb").write_bytes(request.SerializeToString())
    code = run(["import", str(tmp_path / "in.pb"), "--out", str(tmp_path), "--buckets", "0"])
    assert code == 2
    assert "buckets must be between 1 and 4096" in capsys.readouterr().err


def test_exporter_writes_buckets(
    tmp_path: Path, memory_spans: InMemorySpanExporter, tracer
) -> None:
    for i in range(12):
        with tracer.start_as_current_span(f"trial-{i}"), tracer.start_as_current_span("work"):
            time.sleep(0)
    exporter = ParquetSpanExporter(tmp_path / "traces", buckets=5)
    exporter.export(memory_spans.get_finished_spans())
    exporter.shutdown()
    _assert_bucketed(tmp_path / "traces", 5, 24)

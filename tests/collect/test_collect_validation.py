"""OTLP records are validated before they are acknowledged, by the rule the converter decodes by.

A span beyond the int64 nanosecond range (year 2300) was acknowledged with 200, then killed the
converter: the good spans of its batch were never written and the collector could not restart.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import grpc
import pytest
from collector_process import AnyCollector, CollectorFactory
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from otlp_helpers import make_request, post

from assay.cli import run
from assay.collect import WriteAheadLog
from assay.collect._wal import KIND_TRACES
from assay.store import read_spans

PROTOBUF = {"Content-Type": "application/x-protobuf"}
TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
YEAR_2300 = 10_413_792_000 * 10**9  # ns since the epoch: valid fixed64, beyond int64


def _with_far_future_span(good: int) -> tuple[ExportTraceServiceRequest, list[str], str]:
    """``good`` valid spans and one that starts in the year 2300; its span id last."""
    request, ids = make_request(good + 1)
    far = request.resource_spans[0].scope_spans[0].spans[good]
    far.start_time_unix_nano = YEAR_2300
    far.end_time_unix_nano = YEAR_2300 + 1
    return request, ids[:good], far.span_id.hex()


def test_http_refuses_the_span_by_name_and_stores_its_batch(collector: AnyCollector) -> None:
    request, good, bad = _with_far_future_span(3)
    status, _, reply = post(
        collector.http_port, "/v1/traces", request.SerializeToString(), PROTOBUF
    )
    assert status == 200
    partial = ExportTraceServiceResponse.FromString(reply).partial_success
    assert partial.rejected_spans == 1
    assert bad in partial.error_message and "int64" in partial.error_message
    only_bad, _, bad_alone = _with_far_future_span(0)
    status, _, reply = post(
        collector.http_port, "/v1/traces", only_bad.SerializeToString(), PROTOBUF
    )
    assert status == 400
    assert bad_alone in status_pb2.Status.FromString(reply).message
    assert collector.health()["status"] == "ok"
    assert collector.terminate() == 0
    assert sorted(read_spans(collector.out)["span_id"].to_list()) == sorted(good)


def test_grpc_refuses_the_span_by_name_and_stores_its_batch(collector: AnyCollector) -> None:
    request, good, bad = _with_far_future_span(3)
    with grpc.insecure_channel(f"127.0.0.1:{collector.grpc_port}") as channel:
        export = channel.unary_unary(TRACES)
        reply = export(request.SerializeToString(), timeout=10)
        partial = ExportTraceServiceResponse.FromString(reply).partial_success
        assert partial.rejected_spans == 1 and bad in partial.error_message
        only_bad, _, bad_alone = _with_far_future_span(0)
        with pytest.raises(grpc.RpcError) as caught:
            export(only_bad.SerializeToString(), timeout=10)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert bad_alone in str(caught.value.details())
    assert collector.terminate() == 0
    assert sorted(read_spans(collector.out)["span_id"].to_list()) == sorted(good)


def test_a_log_holding_such_a_span_is_recovered_at_restart(
    tmp_path: Path, collector_factory: CollectorFactory
) -> None:
    """As an earlier version acknowledged it: the record's good spans are stored."""
    out = tmp_path / "traces"
    request, good, _ = _with_far_future_span(5)
    wal = WriteAheadLog(out / "_wal", on_durable=lambda *_: None, on_sealed=lambda _: None)
    wal.append(KIND_TRACES, request.SerializeToString())
    wal.close()
    collector = collector_factory(out, ["--roll-age", "0.5"]).start()
    assert collector.terminate() == 0
    assert sorted(read_spans(out)["span_id"].to_list()) == sorted(good)
    assert "the table cannot hold" in collector.output()


def test_import_of_such_a_span_is_one_line_and_exit_2(tmp_path: Path) -> None:
    request, _, bad = _with_far_future_span(3)
    source = tmp_path / "export.pb"
    source.write_bytes(request.SerializeToString())
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        code = run(["import", str(source), "--out", str(tmp_path / "traces")])
    err = stderr.getvalue().strip()
    assert code == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err
    assert str(source) in err and bad in err and "int64" in err
    assert not list(tmp_path.rglob("*.parquet"))  # all or nothing

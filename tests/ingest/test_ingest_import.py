"""``assay import``: recorded OTLP files (JSON lines, protobuf; plain, gzip, zstd)."""

from __future__ import annotations

import base64
import contextlib
import gzip
import io
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from assay.cli import run
from assay.store import open_trace_set, read_spans


def _request(first: int, n: int, service: str = "imported") -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(
        KeyValue(key="service.name", value=AnyValue(string_value=service))
    )
    scope = resource.scope_spans.add()
    for i in range(first, first + n):
        span = scope.spans.add()
        span.trace_id = i.to_bytes(16, "big")
        span.span_id = i.to_bytes(8, "big")
        span.name = "s"
        span.start_time_unix_nano = 1_764_000_000_000_000_000 + i
        span.end_time_unix_nano = span.start_time_unix_nano + 1
        span.attributes.append(KeyValue(key="assay.test.id", value=AnyValue(string_value="t")))
    return request


def _json_line(request: ExportTraceServiceRequest) -> str:
    """One line as the otelcol file exporter writes it: OTLP/JSON with hex IDs."""
    document = json_format.MessageToDict(request)  # protobuf's mapping: base64 IDs
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["traceId"] = base64.b64decode(span["traceId"]).hex()
                span["spanId"] = base64.b64decode(span["spanId"]).hex()
    return json.dumps(document)


@dataclass(frozen=True)
class _Result:
    returncode: int
    stdout: str
    stderr: str


def _run(*args: str) -> _Result:
    """``assay import`` in process (the console script itself is tested in test_cli.py)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run(["import", *args])
    return _Result(code, stdout.getvalue(), stderr.getvalue())


def _write_zstd(path: Path, data: bytes) -> None:
    with pa.output_stream(str(path), compression="zstd") as stream:
        stream.write(data)


def test_import_json_lines_plain_gzip_zstd_and_protobuf(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    lines = "\n".join(_json_line(_request(i * 10 + 1, 10)) for i in range(3)) + "\n"
    lines += '{"resourceMetrics": []}\n'  # the file exporter may mix signals: skipped
    (inputs / "plain.jsonl").write_text(lines)
    (inputs / "compressed.json.gz").write_bytes(
        gzip.compress(_json_line(_request(100, 5)).encode())
    )
    _write_zstd(inputs / "compressed.json.zst", (_json_line(_request(200, 5)) + "\n").encode())
    (inputs / "single.pb").write_bytes(_request(300, 4).SerializeToString())
    framed = b"".join(
        struct.pack(">I", len(m)) + m
        for m in (_request(400, 3).SerializeToString(), _request(500, 3).SerializeToString())
    )
    _write_zstd(inputs / "framed.pb.zst", framed)
    result = _run(str(inputs), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert "imported 50 spans from 5 file(s)" in result.stdout
    spans = read_spans(tmp_path / "out")
    assert spans.height == 50
    assert spans["span_id"].n_unique() == 50
    assert set(spans["assay_test_id"].to_list()) == {"t"}
    assert set(spans["service_name"].to_list()) == {"imported"}
    assert not open_trace_set(tmp_path / "out").skipped
    assert all("service=imported" in f for f in open_trace_set(tmp_path / "out").files)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"resourceSpans": []}\n{broken\n', "bad.jsonl:2: not valid JSON"),
        (b"\x1f\x8b\x08\x00garbage", "bad.jsonl: cannot decompress gzip"),
        (b"\xff\xfe\xfd", "bad.jsonl: neither OTLP JSON lines nor OTLP protobuf"),
    ],
)
def test_import_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    result = _run(str(bad), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert not list((tmp_path).rglob("*.parquet"))


def test_import_missing_path_is_exit_2(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "no such file or folder" in result.stderr


def test_import_evaluation_logs_become_child_spans(tmp_path: Path) -> None:
    trace_id, span_id = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"
    record = {
        "timeUnixNano": "1764000002000000000",
        "eventName": "gen_ai.evaluation.result",
        "traceId": trace_id,
        "spanId": span_id,
        "attributes": [{"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": 0.5}}],
    }
    document = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
    (tmp_path / "logs.jsonl").write_text(json.dumps(document) + "\n")
    result = _run(str(tmp_path / "logs.jsonl"), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    (row,) = read_spans(tmp_path / "out").to_dicts()
    assert (row["trace_id"], row["parent_span_id"]) == (trace_id, span_id)
    assert row["events"][0]["name"] == "gen_ai.evaluation.result"


def test_import_json_that_is_not_otlp_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"hello": "world"}\n')
    result = _run(str(tmp_path / "other.json"), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert "other.json:1: not an OTLP/JSON request" in result.stderr

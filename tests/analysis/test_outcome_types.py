"""An ``assay.trial.outcome`` assay cannot read is named and refused — never a pass.

Each case records 20 trials, 16 passing and 4 whose outcome is written the wrong way (a bool,
a list) or hidden (a promoted column nulled while the attribute list keeps the truth). Before
the one type rule, every such set read 20/20 PASS, exit 0, with no finding.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from google.protobuf import json_format
from opentelemetry import context
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue

import assay
from assay import conventions as c
from assay.cli import run
from assay.errors import SchemaError
from assay.store import encode_attributes, open_trace_set
from assay.store._coercion import coerce

N, BAD = 20, 4


def _analyze_cli(path: Path) -> tuple[int, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run(["analyze", str(path)])
    return code, stderr.getvalue().strip()


def _refused(path: Path, shown: str) -> None:
    code, err = _analyze_cli(path)
    assert code == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err
    assert c.TRIAL_OUTCOME in err and shown in err


def test_a_bool_outcome_through_the_sdk_exporter_is_refused(parquet_sink, tracer) -> None:
    _record(tracer, [False if i < BAD else "pass" for i in range(N)])
    path = parquet_sink.flush()
    with pytest.raises(SchemaError, match=r"found 'false' in 4 trial\(s\)"):
        assay.analyze(path)
    _refused(Path(path), "'false'")


def _otlp_line(values: list[AnyValue]) -> str:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for i, value in enumerate(values):
        span = scope.spans.add()
        span.trace_id = (i + 1).to_bytes(16, "big")
        span.span_id = (i + 1).to_bytes(8, "big")
        span.name = "trial"
        span.start_time_unix_nano = 1_764_000_000_000_000_000 + i
        span.end_time_unix_nano = span.start_time_unix_nano + 1
        span.attributes.append(KeyValue(key=c.TEST_ID, value=AnyValue(string_value="t")))
        span.attributes.append(KeyValue(key=c.TRIAL_OUTCOME, value=value))
    document = json_format.MessageToDict(request)
    for resource in document["resourceSpans"]:
        for s in resource["scopeSpans"][0]["spans"]:
            s["traceId"] = base64.b64decode(s["traceId"]).hex()
            s["spanId"] = base64.b64decode(s["spanId"]).hex()
    return json.dumps(document)


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        (AnyValue(bool_value=False), "'false'"),
        (AnyValue(array_value=ArrayValue(values=[AnyValue(string_value="fail")])), "fail"),
    ],
    ids=["bool", "list"],
)
def test_a_bool_or_list_outcome_through_otlp_import_is_refused(
    tmp_path: Path, bad: AnyValue, shown: str
) -> None:
    values = [bad if i < BAD else AnyValue(string_value="pass") for i in range(N)]
    (tmp_path / "in.jsonl").write_text(_otlp_line(values) + "\n")
    assert run(["import", str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "traces")]) == 0
    _refused(tmp_path / "traces", shown)


def _record(tracer, outcomes: list[object]) -> None:
    for i, outcome in enumerate(outcomes):
        attributes = {c.TEST_ID: "t", c.TRIAL_INDEX: i, c.TRIAL_OUTCOME: outcome}
        with tracer.start_as_current_span(
            "trial", context=context.Context(), attributes=attributes
        ):
            pass


def _honest(parquet_sink, tracer) -> Path:
    _record(tracer, ["fail" if i < BAD else "pass" for i in range(N)])
    (path,) = Path(parquet_sink.flush()).rglob("*.parquet")
    return path


def test_a_promoted_outcome_column_nulled_is_read_from_the_attributes(parquet_sink, tracer) -> None:
    path = _honest(parquet_sink, tracer)
    table = pq.read_table(path)
    index = table.schema.get_field_index("assay_trial_outcome")
    table = table.set_column(index, table.schema.field(index), pa.nulls(N, pa.string()))
    pq.write_table(table, path)
    (test,) = assay.analyze(str(path)).result.tests
    assert (test.n, test.passed) == (N, N - BAD)  # not 20/20 from a null column


def test_a_file_of_an_older_writer_is_read_from_the_attributes(parquet_sink, tracer) -> None:
    """Written by promotion rule 1 (no ``assay.promotion`` key): a bool outcome left null."""
    path = _honest(parquet_sink, tracer)
    table = pq.read_table(path)
    attributes = table["attributes"].to_pylist()
    for row in attributes[:BAD]:
        for a in row:
            if a["key"] == c.TRIAL_OUTCOME:
                a.update(type="bool", string_value=None, bool_value=False)
    index = table.schema.get_field_index("attributes")
    table = table.set_column(
        index, "attributes", pa.array(attributes, table.schema.field(index).type)
    )
    outcome = table.schema.get_field_index("assay_trial_outcome")
    values = [None] * BAD + ["pass"] * (N - BAD)
    table = table.set_column(outcome, "assay_trial_outcome", pa.array(values, pa.string()))
    metadata = {k: v for k, v in table.schema.metadata.items() if k != b"assay.promotion"}
    metadata[b"assay.attribute.families"] = b""
    pq.write_table(table.replace_schema_metadata(metadata), path)
    assert not open_trace_set(path).quality.findings
    with pytest.raises(SchemaError, match=r"found 'false' in 4 trial\(s\)"):
        assay.analyze(str(path))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("pass", "pass"),
        (False, "false"),
        (True, "true"),
        (3, "3"),
        (2.5, "2.5"),
        (["fail"], '["fail"]'),
        (b"\x00\x01", "AAE="),
        (None, None),
    ],
)
def test_the_string_rule_keeps_every_value_but_an_empty_one(
    value: object, text: str | None
) -> None:
    (attribute,) = encode_attributes({"k": value})
    assert coerce(attribute, pa.string()) == text

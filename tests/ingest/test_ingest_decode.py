"""OTLP decoding: the fast builder fills the spans table exactly as ``SpanRows`` does."""

from __future__ import annotations

import base64
import json

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from assay.errors import InputError
from assay.ingest import parse_traces_json, parse_traces_protobuf, traces_to_table
from assay.store import SPANS_SCHEMA, SpanRows, encode_attributes, encode_value

KINDS = {
    SpanKind.INTERNAL: "INTERNAL",
    SpanKind.SERVER: "SERVER",
    SpanKind.CLIENT: "CLIENT",
    SpanKind.PRODUCER: "PRODUCER",
    SpanKind.CONSUMER: "CONSUMER",
}


def _sdk_spans():  # type: ignore[no-untyped-def]
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "decode"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("scope", "9")
    with tracer.start_as_current_span(
        "trial",
        kind=SpanKind.CLIENT,
        attributes={
            "assay.test.id": "t",
            "assay.trial.index": "12",  # a string for an int column: coerced
            "gen_ai.usage.input_tokens": 3.0,  # an integral float: coerced
            "gen_ai.request.model": 5,  # an int for a string column: coerced
            "gen_ai.usage.output_tokens": True,  # a bool for an int column: null
            "floats": [0.5, 1.5],
            "bools": [True],
            "empty": [],
        },
    ) as trial:
        trial.add_event("e", {"k": "v", "n": 1}, timestamp=5)
        with tracer.start_as_current_span(
            "child", kind=SpanKind.CONSUMER, links=[Link(trial.get_span_context(), {"l": 1})]
        ) as child:
            child.set_status(Status(StatusCode.ERROR, "bad"))
    provider.shutdown()
    return exporter.get_finished_spans()


def test_fast_builder_matches_span_rows() -> None:
    spans = _sdk_spans()
    decoded = traces_to_table(encode_spans(spans))
    assert decoded.rejected == 0
    assert decoded.table.schema.equals(SPANS_SCHEMA, check_metadata=True)
    rows = SpanRows()
    for span in spans:
        context = span.get_span_context()
        rows.append(
            trace_id=format(context.trace_id, "032x"),
            span_id=format(context.span_id, "016x"),
            parent_span_id=format(span.parent.span_id, "016x") if span.parent else None,
            name=span.name,
            kind=KINDS[span.kind],
            start_time=span.start_time,
            end_time=span.end_time,
            status_code=span.status.status_code.name,
            status_message=span.status.description,
            service_name="decode",
            scope_name="scope",
            scope_version="9",
            attributes=encode_attributes(span.attributes),
            resource_attributes=encode_attributes(span.resource.attributes),
            events=[
                {
                    "time_unix_nano": e.timestamp,
                    "name": e.name,
                    "attributes": encode_attributes(e.attributes),
                }
                for e in span.events
            ],
            links=[
                {
                    "trace_id": format(link.context.trace_id, "032x"),
                    "span_id": format(link.context.span_id, "016x"),
                    "trace_state": None,
                    "attributes": encode_attributes(link.attributes),
                }
                for link in span.links
            ],
        )
    expected = rows.to_table()
    assert decoded.table.to_pylist() == expected.to_pylist()
    (trial,) = [r for r in decoded.table.to_pylist() if r["name"] == "trial"]
    assert trial["assay_trial_index"] == 12
    assert trial["gen_ai_usage_input_tokens"] == 3
    assert trial["gen_ai_request_model"] == "5"
    assert trial["gen_ai_usage_output_tokens"] is None


def test_nested_values_encode_like_the_store() -> None:
    request = encode_spans(_sdk_spans())
    span = request.resource_spans[0].scope_spans[0].spans[0]
    del span.attributes[:]
    nested = AnyValue(
        kvlist_value=KeyValueList(
            values=[
                KeyValue(key="a", value=AnyValue(int_value=1)),
                KeyValue(
                    key="b",
                    value=AnyValue(
                        array_value=ArrayValue(
                            values=[AnyValue(string_value="x"), AnyValue(bool_value=False)]
                        )
                    ),
                ),
            ]
        )
    )
    span.attributes.append(KeyValue(key="nested", value=nested))
    span.attributes.append(KeyValue(key="blob", value=AnyValue(bytes_value=b"\x00\x01")))
    span.attributes.append(KeyValue(key="nothing", value=AnyValue()))
    (row,) = [
        r for r in traces_to_table(request).table.to_pylist() if r["span_id"] == span.span_id.hex()
    ]
    assert row["attributes"] == [
        encode_value("nested", {"a": 1, "b": ["x", False]}),
        encode_value("blob", b"\x00\x01"),
        encode_value("nothing", None),
    ]


def test_json_with_hex_or_base64_ids_equals_protobuf() -> None:
    request = encode_spans(_sdk_spans())
    base64_document = json_format.MessageToDict(request)  # protobuf's mapping: base64 IDs
    hex_document = json.loads(json.dumps(base64_document))
    for resource in hex_document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    expected = traces_to_table(request).table
    assert traces_to_table(parse_traces_json(json.dumps(hex_document))).table.equals(expected)
    assert traces_to_table(parse_traces_json(json.dumps(base64_document))).table.equals(expected)


def test_invalid_ids_are_rejected_not_stored() -> None:
    request = encode_spans(_sdk_spans())
    spans = request.resource_spans[0].scope_spans[0].spans
    spans[0].trace_id = b"\x00" * 16
    spans[1].span_id = b"\x01\x02"
    decoded = traces_to_table(request)
    assert decoded.rejected == 2
    assert decoded.table.num_rows == 0


@pytest.mark.parametrize("data", [b"\xff\xff", b"\x0a\x05abc", b"\x08"])
def test_malformed_protobuf_is_an_input_error(data: bytes) -> None:
    with pytest.raises(InputError, match="not an OTLP protobuf"):
        parse_traces_protobuf(data)


@pytest.mark.parametrize(
    "text",
    [
        "{",
        "[]",
        '{"resourceSpans": 3}',
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "xyz"}]}]}]}',
    ],
)
def test_malformed_json_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError):
        parse_traces_json(text)


def test_deeply_nested_json_is_an_input_error_not_a_crash() -> None:
    with pytest.raises(InputError):
        parse_traces_json("[" * 100_000)


def test_duplicate_and_cross_typed_promoted_keys_follow_span_rows() -> None:
    request = encode_spans(_sdk_spans())
    span = request.resource_spans[0].scope_spans[0].spans[0]
    del span.attributes[:]
    pairs = [
        ("assay.trial.index", AnyValue(int_value=1)),
        ("assay.trial.index", AnyValue(string_value="x")),  # last wins: not an int → null
        ("assay.test.id", AnyValue(double_value=2.5)),
        ("gen_ai.usage.input_tokens", AnyValue(int_value=3)),
        ("gen_ai.usage.input_tokens", AnyValue(int_value=4)),
        ("gen_ai.agent.name", AnyValue(bool_value=True)),
        ("gen_ai.tool.name", AnyValue(array_value=ArrayValue(values=[AnyValue(string_value="a")]))),
    ]
    for key, value in pairs:
        span.attributes.append(KeyValue(key=key, value=value))
    (row,) = [
        r for r in traces_to_table(request).table.to_pylist() if r["span_id"] == span.span_id.hex()
    ]
    rows = SpanRows()
    rows.append(
        trace_id="0" * 31 + "1",
        span_id="0" * 15 + "1",
        name="x",
        start_time=0,
        end_time=0,
        attributes=[encode_value(k, v) for k, v in [(k, _py(v)) for k, v in pairs]],
    )
    (expected,) = rows.to_table().to_pylist()
    for column in (
        "assay_trial_index",
        "assay_test_id",
        "gen_ai_usage_input_tokens",
        "gen_ai_agent_name",
        "gen_ai_tool_name",
    ):
        assert row[column] == expected[column], column
    # A string column holds the text of every value (assay.store._coercion), an int column
    # only what is an integer.
    assert row["gen_ai_agent_name"] == "true"
    assert row["gen_ai_tool_name"] == '["a"]'
    assert row["assay_trial_index"] is None
    assert row["assay_test_id"] == "2.5"
    assert row["gen_ai_usage_input_tokens"] == 4


def test_an_integer_beyond_int64_in_an_int_column_is_null_not_a_crash() -> None:
    request = encode_spans(_sdk_spans())
    span = request.resource_spans[0].scope_spans[0].spans[0]
    del span.attributes[:]
    span.attributes.append(KeyValue(key="assay.trial.index", value=AnyValue(string_value="9" * 30)))
    span.attributes.append(
        KeyValue(key="gen_ai.usage.input_tokens", value=AnyValue(double_value=1e30))
    )
    table = traces_to_table(request).table
    (row,) = [r for r in table.to_pylist() if r["span_id"] == span.span_id.hex()]
    assert row["assay_trial_index"] is None and row["gen_ai_usage_input_tokens"] is None


def _py(value: AnyValue) -> object:
    from assay.ingest import any_value_to_python

    return any_value_to_python(value)

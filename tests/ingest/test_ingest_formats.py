"""``assay import`` of other tools' exports: Jaeger, Tempo, Zipkin, MLflow.

The fixtures in ``formats/`` hold one agent's runs, written by ``formats/make_fixtures.py`` from
the real OpenTelemetry SDK's spans (Zipkin by the OpenTelemetry Zipkin exporter's encoder) and
played again with MLflow's own tracing. Each export must give the trials the agent recorded
(``truth.json``) and the same analysis, verdicts and figures, as the agent's OTLP spans read by
the collector's decoder.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import assay
from assay.analysis import columns as tc
from assay.cli import run
from assay.ingest import FORMAT_ATTRIBUTE, import_files
from assay.store import open_trace_set

FIXTURES = Path(__file__).parent / "formats"
TRUTH: dict[str, dict[str, Any]] = json.loads((FIXTURES / "truth.json").read_text())
MLFLOW_TRUTH: dict[str, dict[str, Any]] = json.loads((FIXTURES / "mlflow-truth.json").read_text())
EXPORTS = {
    "zipkin.json": "Zipkin v2 JSON",
    "zipkin-traces.json": "Zipkin v2 JSON",
    "jaeger.json": "Jaeger JSON",
    "tempo-v1.json": "Tempo trace query result",
    "tempo-v2.json": "Tempo trace query result",
    "mlflow.jsonl": "MLflow 3 traces",
    "phoenix": "Arize Phoenix trace dataset",  # a folder: the dataset and its evaluations
    "langfuse": "Langfuse blob-storage export",  # observations_v2/ (JSONL, gzip), scores/
    "langfuse-legacy": "Langfuse blob-storage export",  # CSV: traces/, observations/, scores/
}


def _truth(name: str) -> dict[str, dict[str, Any]]:
    """The runs by trace id: MLflow made its own trace ids for the same runs."""
    return MLFLOW_TRUTH if name.startswith("mlflow") else TRUTH


def _same_ids(text: str, name: str) -> str:
    """``text`` with an export's trace ids replaced by the OTLP recording's (same runs, order)."""
    for theirs, ours in zip(_truth(name), TRUTH, strict=True):
        text = text.replace(theirs, ours)
    return text


OPTIONS = assay.AnalyzeOptions(
    test_attribute="gen_ai.agent.name", pass_when="correctness.label == pass"
)


def _cli(*args: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = run(list(args))
    return code, stdout.getvalue(), stderr.getvalue()


def _imported(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    code, stdout, stderr = _cli("import", str(FIXTURES / name), "--out", str(out))
    assert code == 0, stderr
    return out


def _analysis(path: Path, name: str = "otlp.jsonl") -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_same_ids(assay.analyze(path, OPTIONS).to_json(), name))
    return result


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_an_export_gives_the_analysis_of_the_same_spans_in_otlp(tmp_path: Path, name: str) -> None:
    reference = _analysis(_imported(tmp_path, "otlp.jsonl"))
    assert _analysis(_imported(tmp_path, name), name) == reference
    verdicts = {t["test_id"]: t["verdict"] for t in reference["tests"]}
    assert set(verdicts) == {"refund", "lookup"}


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_an_exports_trials_are_what_the_agent_did(tmp_path: Path, name: str) -> None:
    trials = assay.analyze(_imported(tmp_path, name), OPTIONS).trials
    assert trials.height == len(TRUTH)
    for row in trials.to_dicts():
        truth = _truth(name)[row[tc.TRACE_ID]]
        got = {
            "test_id": row[tc.TEST_ID],
            "tools": row[tc.TOOL_SEQUENCE],
            "tool_errors": row[tc.TOOL_ERRORS],
            "llm_calls": row[tc.LLM_CALLS],
            "input_tokens": row[tc.INPUT_TOKENS],
            "output_tokens": row[tc.OUTPUT_TOKENS],
            "outcome": row[tc.OUTCOME],
            "duration_ns": round(row[tc.DURATION_S] * 1e9),
        }
        assert got == truth, row[tc.TRACE_ID]


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_import_names_the_format_it_read_and_what_it_cannot_tell(tmp_path: Path, name: str) -> None:
    code, stdout, _ = _cli("import", str(FIXTURES / name), "--out", str(tmp_path / "out"))
    assert code == 0
    spans = sum(len(t["tools"]) + t["llm_calls"] + 1 for t in TRUTH.values())
    if name.startswith("langfuse"):  # each score is a span of its own (as the collector's logs)
        spans += sum(t["outcome"] != "error" for t in TRUTH.values())
    assert f"{spans} spans read as {EXPORTS[name]}" in stdout
    if name.startswith("zipkin"):
        assert "does not record span links" in stdout  # said, not filled in
    spans = open_trace_set(tmp_path / "out").scan().select("resource_attributes").collect()
    keys = spans.explode("resource_attributes").unnest("resource_attributes")
    marked = keys.filter(pl.col("key") == FORMAT_ATTRIBUTE)["string_value"].unique().to_list()
    assert marked == [name.split("-")[0].split(".")[0]]
    if name.startswith("mlflow"):  # what the import derived is said
        assert "mapped tool, LLM, agent and embedding spans from mlflow.spanType" in stdout


def test_one_jaeger_trace_object_is_read_too(tmp_path: Path) -> None:
    out = _imported(tmp_path, "jaeger-trace.json")
    trials = assay.analyze(out, OPTIONS).trials
    (row,) = trials.to_dicts()
    truth = TRUTH[row[tc.TRACE_ID]]
    assert row[tc.TOOL_SEQUENCE] == truth["tools"]
    assert row[tc.OUTCOME] == truth["outcome"]


def _spans(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = (
        open_trace_set(path).scan().sort("start_time_unix_nano").collect().to_dicts()
    )
    return rows


def _attributes(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for a in row["attributes"]:
        out[a["key"]] = next(
            (
                a[f]
                for f in ("string_value", "int_value", "double_value", "bool_value", "bytes_value")
                if a[f] is not None
            ),
            None,
        )
    return out


def test_jaeger_references_64_bit_ids_and_tag_types(tmp_path: Path) -> None:
    span = {
        "traceID": "7b",  # a 64-bit id with its leading zeros dropped
        "spanID": "0000000000000002",
        "operationName": "step",
        "references": [
            {"refType": "CHILD_OF", "traceID": "7b", "spanID": "0000000000000001"},
            {"refType": "FOLLOWS_FROM", "traceID": "7b", "spanID": "0000000000000009"},
        ],
        "startTime": 1_764_000_000_000_123,
        "duration": 250,
        "tags": [
            {"key": "n", "type": "int64", "value": 3},
            {"key": "x", "type": "float64", "value": 0.5},
            {"key": "ok", "type": "bool", "value": False},
            {"key": "raw", "type": "binary", "value": "AAE="},
            {"key": "span.kind", "type": "string", "value": "client"},
            {"key": "error", "type": "bool", "value": True},
        ],
        "logs": [
            {
                "timestamp": 1_764_000_000_000_200,
                "fields": [{"key": "message", "type": "string", "value": "hi"}],
            }
        ],
        "process": {
            "serviceName": "svc",
            "tags": [{"key": "host", "type": "string", "value": "h1"}],
        },
    }
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceID": "7b", "spans": [span]}))
    import_files([path], tmp_path / "out")
    (row,) = _spans(tmp_path / "out")
    assert row["trace_id"] == "0" * 30 + "7b"
    assert row["parent_span_id"] == "0000000000000001"
    assert [(link["span_id"], link["attributes"][0]["string_value"]) for link in row["links"]] == [
        ("0000000000000009", "follows_from")
    ]
    assert row["start_time_unix_nano"] == 1_764_000_000_000_123_000
    assert row["end_time_unix_nano"] - row["start_time_unix_nano"] == 250_000
    assert row["kind"] == "CLIENT" and row["status_code"] == "ERROR"
    assert _attributes(row) == {"n": 3, "x": 0.5, "ok": False, "raw": b"\x00\x01"}
    (event,) = row["events"]
    assert event["name"] == "" and event["time_unix_nano"] == 1_764_000_000_000_200_000
    assert row["service_name"] == "svc"


def test_zipkin_plain_annotations_error_tag_and_remote_endpoint(tmp_path: Path) -> None:
    span = {
        "traceId": "00000000000000a1",
        "id": "b2",
        "name": "get /x",
        "kind": "CLIENT",
        "timestamp": 1_764_000_000_000_000,
        "duration": 12,
        "localEndpoint": {"serviceName": "web"},
        "remoteEndpoint": {"serviceName": "db", "ipv4": "10.1.1.1", "port": 5432},
        "annotations": [{"timestamp": 1_764_000_000_000_005, "value": "ws"}],
        "tags": {"error": "connection reset", "http.status_code": "500"},
    }
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([span]))
    import_files([path], tmp_path / "out")
    (row,) = _spans(tmp_path / "out")
    assert row["trace_id"] == "0" * 30 + "a1" and row["span_id"] == "00000000000000b2"
    assert (row["status_code"], row["status_message"]) == ("ERROR", "connection reset")
    assert _attributes(row) == {
        "http.status_code": "500",
        "peer.service": "db",
        "network.peer.address": "10.1.1.1",
        "network.peer.port": 5432,
    }
    assert [e["name"] for e in row["events"]] == ["ws"]
    assert row["service_name"] == "web"


def test_tempo_with_instrumentation_library_spans(tmp_path: Path) -> None:
    document = {
        "batches": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "api"}}]
                },
                "instrumentationLibrarySpans": [
                    {
                        "instrumentationLibrary": {"name": "lib", "version": "0.1"},
                        "spans": [
                            {
                                "traceId": "AAAAAAAAAAAAAAAAAAAAAQ==",
                                "spanId": "AAAAAAAAAAI=",
                                "name": "op",
                                "kind": "SPAN_KIND_SERVER",
                                "startTimeUnixNano": "1764000000000000000",
                                "endTimeUnixNano": "1764000000000000500",
                                "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},
                            }
                        ],
                    }
                ],
            }
        ]
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    import_files([path], tmp_path / "out")
    (row,) = _spans(tmp_path / "out")
    assert (row["trace_id"], row["span_id"]) == ("0" * 31 + "1", "0" * 15 + "2")
    assert (row["scope_name"], row["scope_version"]) == ("lib", "0.1")
    assert (row["kind"], row["status_code"], row["status_message"]) == ("SERVER", "ERROR", "boom")


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"data": [{"traceID": "zz", "spans": []}]}, "data[0].traceID 'zz' is not an id"),
        (
            {"traceID": "1", "spans": [{"spanID": "2", "startTime": -5}]},
            "trace.spans[0].startTime -5 is not a whole number of microseconds",
        ),
        ([{"traceId": "1", "id": "2", "name": "x"}], "[0].timestamp is missing"),
        (
            [{"traceId": "1", "id": "2", "timestamp": 1, "tags": ["a"]}],
            "[0].tags is not a JSON object",
        ),
        ({"something": "else"}, "not an OTLP/JSON request nor another trace format"),
    ],
)
def test_a_bad_export_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, document: object, message: str
) -> None:
    good = FIXTURES / "zipkin.json"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document, indent=1))  # pretty-printed, as exports are
    out = tmp_path / "out"
    code, _, stderr = _cli("import", str(good), str(bad), "--out", str(out))
    assert code == 2
    assert stderr.count("\n") == 1 and "Traceback" not in stderr
    assert f"{bad}:" in stderr and message in stderr, stderr
    assert not out.exists() or not any(out.rglob("*.parquet"))


def test_a_pretty_printed_export_over_the_message_limit_says_so(tmp_path: Path) -> None:
    spans = json.loads((FIXTURES / "zipkin.json").read_text())
    big = tmp_path / "big.json"
    big.write_text(json.dumps(spans * 30, indent=1))  # about 1.3 MB
    code, _, stderr = _cli(
        "import", str(big), "--out", str(tmp_path / "o"), "--max-message-mb", "1"
    )
    assert code == 2
    assert "one JSON document larger than 1 MB" in stderr and "--max-message-mb" in stderr


def test_describe_says_which_format_the_traces_came_from(tmp_path: Path) -> None:
    out = _imported(tmp_path, "zipkin.json")
    code, stdout, _ = _cli("describe", str(out))
    assert code == 0
    assert f"imported from Zipkin v2 JSON: {len(TRUTH)} traces" in stdout
    assert "it does not record span links" in stdout
    code, stdout, _ = _cli("describe", str(_imported(tmp_path, "otlp.jsonl")), "--format", "json")
    assert code == 0 and json.loads(stdout)["sources"] == []


def test_one_mlflow_trace_object_is_read_too(tmp_path: Path) -> None:
    trials = assay.analyze(_imported(tmp_path, "mlflow-trace.json"), OPTIONS).trials
    (row,) = trials.to_dicts()
    truth = MLFLOW_TRUTH[row[tc.TRACE_ID]]
    assert (row[tc.TOOL_SEQUENCE], row[tc.OUTCOME]) == (truth["tools"], truth["outcome"])


def _mlflow_span(span_id: str, parent: str | None, span_type: str, **attributes: Any) -> dict:
    return {
        "trace_id": "AAAAAAAAAAAAAAAAAAAAAQ==",
        "span_id": span_id,
        "parent_span_id": parent,
        "name": f"{span_type.lower()} span",
        "kind": "SPAN_KIND_INTERNAL",
        "start_time_unix_nano": 1_764_000_000_000_000_000,
        "end_time_unix_nano": 1_764_000_000_100_000_000,
        "events": [],
        "status": {"code": "STATUS_CODE_OK", "message": ""},
        "attributes": {"mlflow.spanType": json.dumps(span_type), **attributes},
    }


def test_mlflow_attributes_span_types_and_assessments(tmp_path: Path) -> None:
    root, llm, own = "AAAAAAAAAAE=", "AAAAAAAAAAI=", "AAAAAAAAAAM="
    trace = {
        "info": {
            "trace_id": "tr-1",
            "tags": {"suite": "nightly", "mlflow.traceName": "agent span"},
            "trace_metadata": {"mlflow.trace_schema.version": "3"},
            "assessments": [
                {  # a boolean feedback on a named span: a label and a score
                    "assessment_name": "grounded",
                    "span_id": "0000000000000002",
                    "create_time": "2025-11-24T16:00:01.500Z",
                    "feedback": {"value": True},
                    "rationale": "cites the order",
                    "source": {"source_type": "HUMAN", "source_id": "ana"},
                    "valid": True,
                },
                {  # superseded by a later one: not an evaluation any more
                    "assessment_name": "grounded",
                    "create_time": "2025-11-24T16:00:01Z",
                    "feedback": {"value": False},
                    "valid": False,
                },
                {  # ground truth, not a judgement
                    "assessment_name": "expected",
                    "create_time": "2025-11-24T16:00:01Z",
                    "expectation": {"value": "refund"},
                },
                {
                    "assessment_name": "quality",
                    "create_time": "2025-11-24T16:00:02Z",
                    "feedback": {"value": 0.25},
                },
            ],
        },
        "data": {
            "spans": [
                _mlflow_span(root, None, "AGENT"),
                _mlflow_span(
                    llm,
                    root,
                    "CHAT_MODEL",
                    **{
                        "mlflow.chat.tokenUsage": json.dumps(
                            {"input_tokens": 7, "output_tokens": 2}
                        ),
                        "mlflow.llm.model": json.dumps("m-1"),
                        "mlflow.spanInputs": json.dumps({"q": "x"}),
                    },
                ),
                _mlflow_span(own, root, "TOOL", **{"gen_ai.operation.name": json.dumps("chat")}),
            ]
        },
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    import_files([path], tmp_path / "out")
    rows = {r["span_id"]: r for r in _spans(tmp_path / "out")}
    top, chat, tool = (rows[f"{i:016x}"] for i in (1, 2, 3))
    assert _attributes(top)["suite"] == "nightly"  # the trace's tags on its root
    assert _attributes(top)["gen_ai.agent.name"] == "agent span"
    chat_attributes = _attributes(chat)
    assert chat_attributes["gen_ai.usage.input_tokens"] == 7
    assert chat_attributes["gen_ai.usage.output_tokens"] == 2
    assert chat_attributes["gen_ai.request.model"] == "m-1"
    assert chat_attributes["mlflow.spanType"] == "CHAT_MODEL"
    assert chat_attributes["mlflow.spanInputs"] == '{"q": "x"}'  # objects stay JSON text
    assert _attributes(tool)["gen_ai.operation.name"] == "chat"  # its own, not the type's
    (grounded,) = chat["events"]
    assert grounded["time_unix_nano"] == 1_764_000_001_500_000_000
    assert {a["key"]: a["string_value"] or a["double_value"] for a in grounded["attributes"]} == {
        "gen_ai.evaluation.name": "grounded",
        "gen_ai.evaluation.score.label": "true",
        "gen_ai.evaluation.score.value": 1.0,
        "gen_ai.evaluation.explanation": "cites the order",
        "mlflow.assessment.source_type": "HUMAN",
        "mlflow.assessment.source_id": "ana",
        # a person's feedback: a label of the judge (--labels traces), not the judge's record
        "assay.evaluation.source": "human",
        "assay.evaluation.labeller": "ana",
    }
    (quality,) = top["events"]
    assert [a["double_value"] for a in quality["attributes"] if a["key"].endswith("value")] == [
        0.25
    ]


def test_phoenix_evaluations_without_their_dataset_are_refused(tmp_path: Path) -> None:
    (evaluations,) = (FIXTURES / "phoenix").glob("evaluations-*.parquet")
    alone = tmp_path / evaluations.name
    alone.write_bytes(evaluations.read_bytes())
    code, _, stderr = _cli("import", str(alone), "--out", str(tmp_path / "out"))
    assert code == 2 and stderr.count("\n") == 1
    assert "read with the trace dataset that names them" in stderr


def test_a_parquet_file_that_is_not_phoenix_is_refused_naming_it(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"x": [1]}), other)
    code, _, stderr = _cli("import", str(other), "--out", str(tmp_path / "out"))
    assert code == 2 and f"{other}: a Parquet file that is neither" in stderr


def test_phoenix_rows_over_the_message_limit_stop(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (dataset,) = (FIXTURES / "phoenix").glob("trace_dataset-*.parquet")
    table = pq.read_table(dataset)
    table = pa.concat_tables([table] * 40)  # 2080 rows, each with a 2 KB input: 2 MB a batch
    table = table.append_column("attributes.input.value", pa.array(["x" * 2048] * len(table)))
    big = tmp_path / dataset.name
    pq.write_table(table.replace_schema_metadata({}), big)
    code, _, stderr = _cli(
        "import", str(big), "--out", str(tmp_path / "out"), "--max-message-mb", "1"
    )
    assert code == 2 and "rows 0-1023 hold 2 MB, over the 1 MB limit" in stderr, stderr


def test_langfuse_legacy_trace_rows_go_onto_the_root_observations(tmp_path: Path) -> None:
    rows = _spans(_imported(tmp_path, "langfuse-legacy"))
    roots = [r for r in rows if r["parent_span_id"] is None]
    assert len(roots) == len(TRUTH)
    for root in roots:
        attributes = _attributes(root)
        assert attributes["langfuse.trace.name"] == TRUTH[root["trace_id"]]["test_id"]
        assert attributes["langfuse.release"] == "1.2.0"


def _langfuse_observation(**fields: Any) -> dict[str, Any]:
    return {
        "id": "obs-1",  # not an OpenTelemetry id: hashed, the same in every file
        "trace_id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301",  # a UUID: its 32 hex digits
        "type": "GENERATION",
        "parent_observation_id": None,
        "start_time": "2024-05-29 13:46:19.963000",
        "end_time": "2024-05-29 13:46:20.000500",
        "name": "llm",
        "level": "DEFAULT",
        "provided_model_name": "gpt-4o",
        "usage_details": {"input": 500, "output": 120, "total": 620},
        "model_id": "m-gpt-4o",
        "total_cost": 0.0042,
        **fields,
    }


def test_langfuse_ids_times_usage_cost_and_scores(tmp_path: Path) -> None:
    observation = _langfuse_observation()
    tool = _langfuse_observation(
        id="obs-2",
        type="TOOL",
        name="search",
        parent_observation_id="obs-1",
        level="ERROR",
        status_message="boom",
        usage_details={},
        model_id="",
        provided_model_name="",
    )
    scores = [
        {
            "id": "s1",
            "timestamp": "2024-05-29 13:47:00.000000",
            "trace_id": observation["trace_id"],
            "observation_id": "obs-2",
            "name": "ok",
            "value": 1,
            "data_type": "BOOLEAN",
            "source": "ANNOTATION",
            "comment": None,
            "string_value": None,
        },
        {
            "id": "s2",
            "timestamp": "2024-05-29 13:47:00.000000",
            "trace_id": None,
            "observation_id": None,
            "session_id": "sess",
            "name": "mood",
            "value": 3,
            "data_type": "NUMERIC",
            "source": "API",
            "comment": None,
            "string_value": None,
        },
    ]
    path = tmp_path / "export.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [observation, tool, *scores]))
    code, _, stderr = _cli("import", str(path), "--out", str(tmp_path / "out"))
    assert code == 0
    assert "1 Langfuse score(s) judge a session" in stderr  # said, not imported
    rows = {r["name"]: r for r in _spans(tmp_path / "out")}
    llm, search, ok = rows["llm"], rows["search"], rows["gen_ai.evaluation.result"]
    assert llm["trace_id"] == "3f2504e04f8911d39a0c0305e82c3301"
    assert search["parent_span_id"] == llm["span_id"] and ok["parent_span_id"] == search["span_id"]
    assert llm["start_time_unix_nano"] == 1_716_990_379_963_000_000
    assert llm["end_time_unix_nano"] - llm["start_time_unix_nano"] == 37_500_000
    attributes = _attributes(llm)
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (
        500,
        120,
    )
    assert attributes["gen_ai.usage.cost"] == 0.0042  # priced by Langfuse (model_id matched)
    assert "gen_ai.usage.cost" not in _attributes(search)
    assert (search["status_code"], search["status_message"]) == ("ERROR", "boom")
    assert _attributes(search)["gen_ai.tool.name"] == "search"
    (event,) = ok["events"]
    values = {a["key"]: a["string_value"] or a["double_value"] for a in event["attributes"]}
    assert values["gen_ai.evaluation.score.label"] == "true"
    assert values["gen_ai.evaluation.score.value"] == 1.0
    assert values["assay.evaluation.source"] == "human"  # an ANNOTATION: a person's label


def test_a_langfuse_row_with_a_bad_time_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "obs.jsonl"
    path.write_text(json.dumps(_langfuse_observation(start_time="yesterday")) + "\n")
    code, _, stderr = _cli("import", str(path), "--out", str(tmp_path / "out"))
    assert code == 2 and stderr.count("\n") == 1
    assert "start_time 'yesterday' is not a time" in stderr, stderr

"""Traces assay did not frame: mapped trials, outcomes without assay attributes, findings."""

from __future__ import annotations

import math

import polars as pl
import pytest
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

from assay import conventions as c
from assay.analysis import columns as tc
from assay.analysis import parse_pass_when, read_trials
from assay.cli import run
from assay.errors import ConfigError, SchemaError
from assay.store import open_trace_set

AGENT = c.GENAI_AGENT_NAME


def _read(sink, **options):
    return read_trials(open_trace_set(sink.flush()).scan(), **options)


def _kinds(result) -> set[str]:
    return {f.kind for f in result.data_quality.findings}


def _agent_run(tracer, name: str, tools: list[tuple[str, bool]], *, crash: bool = False) -> None:
    """A pydantic-ai-shaped run: the agent name is copied onto every child span."""
    with tracer.start_as_current_span(
        f"invoke_agent {name}", attributes={c.GENAI_OPERATION: "invoke_agent", AGENT: name}
    ) as root:
        for tool, fails in tools:
            with tracer.start_as_current_span(
                "chat", attributes={c.GENAI_OPERATION: "chat", AGENT: name, c.GENAI_INPUT_TOKENS: 5}
            ):
                pass
            span = tracer.start_span(
                f"execute_tool {tool}",
                attributes={
                    c.GENAI_OPERATION: "execute_tool",
                    c.GENAI_TOOL_NAME: tool,
                    AGENT: name,
                },
            )
            if fails:
                span.set_status(Status(StatusCode.ERROR, f"{tool} said no"))
            span.end()
        if crash:
            root.set_status(Status(StatusCode.ERROR, "RuntimeError: crash"))


def test_a_mapped_trial_is_the_top_most_span_carrying_the_attribute(parquet_sink, tracer) -> None:
    _agent_run(tracer, "support", [("lookup", False), ("flaky", True), ("flaky", False)])
    _agent_run(tracer, "support", [("lookup", False)])
    result = _read(parquet_sink, test_attribute=AGENT)
    table = result.table.sort(tc.TOOL_CALLS, descending=True)
    assert table.height == 2
    first = table.row(0, named=True)
    assert first[tc.TOOL_SEQUENCE] == ["lookup", "flaky", "flaky"]
    assert (first[tc.LLM_CALLS], first[tc.INPUT_TOKENS]) == (3, 15)
    # the failed tool was retried and the agent recovered: not an error trial
    assert first[tc.OUTCOME] == c.OUTCOME_PASS
    assert (first[tc.TOOL_ERRORS], first[tc.RETRIES], first[tc.ERROR_SPANS]) == (1, 1, 1)
    assert first[tc.TOOL_ERROR_MESSAGES] == ["flaky said no"]
    assert first[tc.AGENTS] == ["support"]
    nesting = [f for f in result.data_quality.findings if f.kind == "nested_mapping"]
    assert nesting and nesting[0].count == 8 and nesting[0].severity == "info"


def test_an_exception_escaping_an_agent_makes_an_error_trial(parquet_sink, tracer) -> None:
    with tracer.start_as_current_span("workflow", attributes={c.OPENAI_AGENTS_WORKFLOW: "wf"}):
        with tracer.start_as_current_span(
            "agent: triage",
            attributes={c.OPENAI_AGENTS_SPAN_TYPE: "agent", c.AGENT_NAME: "triage"},
        ) as agent:
            agent.set_status(Status(StatusCode.ERROR, "Error in agent run"))
    (row,) = _read(parquet_sink, test_attribute=c.OPENAI_AGENTS_WORKFLOW).table.to_dicts()
    assert row[tc.OUTCOME] == c.OUTCOME_ERROR
    assert row[tc.STATUS_MESSAGE] == "Error in agent run"
    assert row[tc.AGENTS] == ["triage"]


def test_disjoint_subtrees_are_separate_trials_and_spans_above_them_are_no_ones(
    parquet_sink, tracer
) -> None:
    with tracer.start_as_current_span("server"):
        with tracer.start_as_current_span(
            "tool", attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "outside"}
        ):
            pass
        for name in ("a", "b"):
            _agent_run(tracer, name, [(f"t{name}", False)])
    result = _read(parquet_sink, test_attribute=AGENT)
    rows = {r[tc.TEST_ID]: r for r in result.table.to_dicts()}
    assert sorted(rows) == ["a", "b"]
    assert rows["a"][tc.TOOL_SEQUENCE] == ["ta"] and rows["b"][tc.TOOL_SEQUENCE] == ["tb"]


def test_a_nested_carrier_with_another_value_is_work_and_is_reported(parquet_sink, tracer) -> None:
    with tracer.start_as_current_span("triage", attributes={AGENT: "triage"}):
        _agent_run(tracer, "fact_checker", [("search", False)])
    result = _read(parquet_sink, test_attribute=AGENT)
    assert result.table[tc.TEST_ID].to_list() == ["triage"]
    assert result.table[tc.TOOL_SEQUENCE].to_list() == [["search"]]
    (finding,) = [f for f in result.data_quality.findings if f.kind == "nested_mapping_values"]
    assert finding.severity == "warning" and "fact_checker" in finding.message


def test_handoffs_are_agent_transitions_under_both_bridges(parquet_sink, tracer) -> None:
    for bridge in ("openinference", "otel"):
        kind = (
            {c.OPENINFERENCE_KIND: "AGENT"}
            if bridge == "openinference"
            else {c.OPENAI_AGENTS_SPAN_TYPE: "agent"}
        )
        with tracer.start_as_current_span("run", attributes={c.OPENINFERENCE_SESSION_ID: bridge}):
            with tracer.start_as_current_span(
                "triage", attributes={**kind, c.AGENT_NAME: "triage"}
            ):
                with tracer.start_as_current_span(
                    "search",
                    attributes={c.OPENINFERENCE_KIND: "TOOL", c.OPENINFERENCE_TOOL_NAME: "s"},
                ):
                    pass
                if bridge == "openinference":
                    attributes = {c.OPENINFERENCE_KIND: "TOOL"}
                    name = "handoff to fact_checker"
                else:
                    # this bridge records the handoff when it starts, before the target is known
                    attributes = {
                        c.OPENAI_AGENTS_SPAN_TYPE: "handoff",
                        c.OPENAI_AGENTS_HANDOFF_TO: "unknown",
                    }
                    name = "handoff: triage -> unknown"
                with tracer.start_as_current_span(name, attributes=attributes):
                    pass
            with tracer.start_as_current_span(
                "fc", attributes={**kind, c.AGENT_NAME: "fact_checker"}
            ):
                pass
    table = _read(parquet_sink, test_attribute=c.OPENINFERENCE_SESSION_ID).table
    assert table[tc.TOOL_SEQUENCE].to_list() == [["s"], ["s"]]
    assert table[tc.HANDOFFS].to_list() == [["fact_checker"], ["fact_checker"]]
    assert table[tc.AGENTS].to_list() == [["triage", "fact_checker"]] * 2


def test_traces_with_missing_parents_are_reported(parquet_sink, tracer) -> None:
    with tracer.start_as_current_span("root", attributes={AGENT: "a"}) as root:
        trace_id = root.get_span_context().trace_id
    missing = SpanContext(trace_id, 0xDEAD, is_remote=False, trace_flags=TraceFlags(1))
    orphan = tracer.start_span(
        "orphan",
        context=trace.set_span_in_context(NonRecordingSpan(missing)),
        attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "late"},
    )
    orphan.end()
    result = _read(parquet_sink, test_attribute=AGENT)
    (finding,) = [f for f in result.data_quality.findings if f.kind == "incomplete_traces"]
    assert finding.count == 1 and "1 span whose parent" in finding.message
    assert finding.examples == (format(trace_id, "032x"),)


def test_trials_without_work_and_traces_without_trials_are_reported(parquet_sink, tracer) -> None:
    with tracer.start_as_current_span("server"):
        with tracer.start_as_current_span("tag", attributes={AGENT: "a"}):
            pass
        _agent_run(tracer, "b", [("t", False)])
    with tracer.start_as_current_span(
        "lonely", attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "x"}
    ):
        pass
    result = _read(parquet_sink, test_attribute=AGENT)
    kinds = _kinds(result)
    assert {"trials_without_work", "traces_without_trials"} <= kinds


def test_nan_scores_fail_min_score_and_are_reported(parquet_sink, tracer) -> None:
    for value in (math.nan, 0.9):
        with tracer.start_as_current_span("run", attributes={AGENT: "a"}) as span:
            span.add_event(
                c.EVALUATION_EVENT, {c.EVALUATION_NAME: "quality", c.EVALUATION_SCORE: value}
            )
    result = _read(parquet_sink, test_attribute=AGENT, min_score=0.5)
    assert sorted(result.table[tc.OUTCOME].to_list()) == ["fail", "pass"]
    (finding,) = [f for f in result.data_quality.findings if f.kind == "nan_scores"]
    assert finding.count == 1 and "--min-score 0.5" in finding.message


def test_a_trial_that_ends_before_it_starts_has_no_duration(parquet_sink, tracer) -> None:
    span = tracer.start_span("run", attributes={AGENT: "a"}, start_time=2_000_000_000)
    span.end(end_time=1_000_000_000)
    result = _read(parquet_sink, test_attribute=AGENT)
    assert result.table[tc.DURATION_S].to_list() == [None]
    assert "negative_durations" in _kinds(result)


def test_trials_in_milliseconds_are_said_to_start_before_2000(parquet_sink, tracer) -> None:
    now_ms = 1_765_000_000_000  # December 2025 in milliseconds, written where OTLP wants ns
    for start in (now_ms, now_ms + 5_000):
        span = tracer.start_span("run", attributes={AGENT: "a"}, start_time=start)
        span.end(end_time=start + 2_500)  # a 2.5 s trial, read as 2.5 µs
    span = tracer.start_span("run", attributes={AGENT: "a"}, start_time=now_ms * 1_000_000)
    span.end(end_time=now_ms * 1_000_000 + 2_500_000_000)
    result = _read(parquet_sink, test_attribute=AGENT)
    (finding,) = [f for f in result.data_quality.findings if f.kind == "times_before_2000"]
    assert finding.count == 2
    assert "(the earliest 1970-01-01 00:29:25 UTC)" in finding.message
    assert "another unit" in finding.message


def test_trials_after_2000_raise_no_time_finding(parquet_sink, tracer) -> None:
    start = 946_684_800 * 10**9  # 2000-01-01 exactly
    span = tracer.start_span("run", attributes={AGENT: "a"}, start_time=start)
    span.end(end_time=start + 10**9)
    assert "times_before_2000" not in _kinds(_read(parquet_sink, test_attribute=AGENT))


def _evaluated(tracer, label: str | None, score: float | None) -> None:
    with tracer.start_as_current_span("run", attributes={AGENT: "a"}):
        with tracer.start_as_current_span("judge") as judge:
            attributes: dict[str, str | float] = {c.EVALUATION_NAME: "correctness"}
            if label is not None:
                attributes[c.EVALUATION_LABEL] = label
            if score is not None:
                attributes[c.EVALUATION_SCORE] = score
            judge.add_event(c.EVALUATION_EVENT, attributes)


def test_pass_when_reads_labels_and_scores_on_any_span(parquet_sink, tracer) -> None:
    _evaluated(tracer, "pass", 0.9)
    _evaluated(tracer, "fail", 0.8)
    _evaluated(tracer, "pass", 0.2)
    with tracer.start_as_current_span("run", attributes={AGENT: "a"}):
        pass  # no evaluation: fails the rule, and is reported
    by_label = _read(parquet_sink, test_attribute=AGENT, pass_when="correctness.label == pass")
    assert by_label.table[tc.PASSED].sum() == 2
    (finding,) = [f for f in by_label.data_quality.findings if f.kind == "pass_when_unrecorded"]
    assert finding.count == 1
    both = _read(
        parquet_sink,
        test_attribute=AGENT,
        pass_when="correctness.label == pass and correctness >= 0.7",
    )
    assert both.table[tc.PASSED].sum() == 1


def test_no_rule_and_no_evaluation_says_pass_rates_only_reflect_errors(
    parquet_sink, tracer
) -> None:
    _agent_run(tracer, "a", [("t", False)])
    assert "outcome_from_errors_only" in _kinds(_read(parquet_sink, test_attribute=AGENT))


@pytest.mark.parametrize(
    ("text", "clause"),
    [
        ("correctness.label == pass", ("correctness", "label", "==", "pass")),
        ("quality >= 0.7", ("quality", "score", ">=", 0.7)),
        ("has_answer == true", ("has_answer", "passed", "==", True)),
        ('tone == "very polite"', ("tone", "label", "==", "very polite")),
        ("rel.score < 2", ("rel", "score", "<", 2.0)),
    ],
)
def test_pass_when_grammar(text: str, clause: tuple[object, ...]) -> None:
    (parsed,) = parse_pass_when(text).clauses
    assert (parsed.name, parsed.field, parsed.op, parsed.value) == clause


@pytest.mark.parametrize("text", ["quality", "x.label >= pass", "x.passed == maybe", "a == b c"])
def test_a_bad_pass_when_rule_names_the_clause(text: str) -> None:
    with pytest.raises(ConfigError, match="--pass-when"):
        parse_pass_when(text)


def test_a_bad_pass_when_flag_exits_2(parquet_sink, tracer, capsys) -> None:
    _agent_run(tracer, "a", [])
    code = run(["analyze", str(parquet_sink.flush()), "--pass-when", "quality ~ 3"])
    assert code == 2
    assert "--pass-when" in capsys.readouterr().err


def test_nothing_mapped_names_the_root_attributes_that_would(parquet_sink, tracer) -> None:
    for _ in range(3):
        _agent_run(tracer, "a", [])
    with pytest.raises(SchemaError, match=r"gen_ai\.agent\.name \(1 value in 3 traces: one test\)"):
        _read(parquet_sink, test_attribute="nowhere")


def test_the_hint_ranks_test_like_attributes_before_constants_and_ids(parquet_sink, tracer) -> None:
    for i in range(12):
        attributes = {
            "ai.model.id": "gpt",  # a constant
            "ai.prompt": f"prompt {i}",  # a value per trace
            c.AI_SDK_FUNCTION_ID: ("weather", "trip")[i % 2],
        }
        with tracer.start_as_current_span("ai.generateText", attributes=attributes):
            pass
    with pytest.raises(SchemaError) as caught:
        _read(parquet_sink, test_attribute="nowhere")
    hint = str(caught.value).split("root spans carry ", 1)[1]
    assert hint.startswith("ai.telemetry.functionId (2 values in 12 traces), ai.prompt (12 values")
    assert hint.index("ai.model.id (1 value in 12 traces: one test)") > hint.index("ai.prompt")


def test_assay_trials_keep_their_nearest_ownership(parquet_sink, tracer) -> None:
    with tracer.start_as_current_span("outer", attributes={c.TEST_ID: "outer"}):
        with tracer.start_as_current_span("inner", attributes={c.TEST_ID: "inner"}):
            with tracer.start_as_current_span(
                "t", attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "x"}
            ):
                pass
    table = _read(parquet_sink).table
    assert dict(zip(table[tc.TEST_ID], table[tc.TOOL_CALLS], strict=True)) == {
        "inner": 1,
        "outer": 0,
    }
    assert table.schema[tc.HANDOFFS] == pl.List(pl.String)


def test_findings_reach_the_json_and_the_console(parquet_sink, tracer, capsys) -> None:
    import json

    _agent_run(tracer, "a", [("t", False)])
    path = str(parquet_sink.flush())
    run(["analyze", path, "--test-attribute", AGENT, "--format", "json", "--inconclusive-ok"])
    document = json.loads(capsys.readouterr().out)
    kinds = {f["kind"] for f in document["data_quality"]["findings"]}
    assert {"nested_mapping", "outcome_from_errors_only"} <= kinds
    run(["analyze", path, "--test-attribute", AGENT, "--inconclusive-ok"])
    out, err = capsys.readouterr()  # a warning: on stderr, beside the console report
    assert "pass rates only reflect errors" in " ".join(err.split())
    assert "pass rates only reflect errors" not in " ".join(out.split())

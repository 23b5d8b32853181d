"""Which spans are calls: chains of one model call, calls that sent nothing, summary tool spans,
unknown usage and runs whose root span never ended (the shapes LlamaIndex, Google ADK and
smolagents record; tests/integrations runs the frameworks themselves)."""

from __future__ import annotations

import polars as pl
from opentelemetry.trace import Status, StatusCode

import assay
import assay.instrument as ai
from assay import conventions as c
from assay.analysis import _columns as work
from assay.analysis import columns as tc
from assay.analysis._calls import settle_calls, work_per_trace
from assay.analysis._work import (
    CALL_SCREEN,
    WorkShape,
    aggregate_work,
    list_models,
    with_work_columns,
    work_columns_read,
)
from assay.store import scan_spans

_SENT = "llm.input_messages.0.message.role"


def _oi_llm(tracer, name: str, tokens: tuple[int, int] | None, sent: bool = True, inner=None):
    """An OpenInference LLM span (optionally with an LLM span inside it, ``inner``)."""
    attributes: dict[str, object] = {c.OPENINFERENCE_KIND: "LLM", c.OPENINFERENCE_MODEL: "m"}
    if sent:
        attributes[_SENT] = "user"
    if tokens is not None:
        attributes[c.OPENINFERENCE_PROMPT_TOKENS] = tokens[0]
        attributes[c.OPENINFERENCE_COMPLETION_TOKENS] = tokens[1]
    with tracer.start_as_current_span(name, attributes=attributes):
        if inner is not None:
            inner()


def _llama_index_turn(tracer, tokens: tuple[int, int] | None) -> None:
    """One model call as LlamaIndex's instrumentation records it: three LLM spans."""
    _oi_llm(tracer, "OpenAILike._prepare_chat_with_tools", None, sent=False)
    _oi_llm(
        tracer,
        "OpenAILike.achat",
        None,
        sent=False,
        inner=lambda: _oi_llm(tracer, "OpenAILike.achat", tokens),
    )


def test_a_chain_of_spans_of_one_call_is_one_call_with_the_innermost_usage(
    parquet_sink, tracer
) -> None:
    with ai.trial("chained"):
        _llama_index_turn(tracer, (11, 7))
        _llama_index_turn(tracer, (13, 5))
    result = assay.analyze(parquet_sink.flush())
    (row,) = result.trials.to_dicts()
    assert (row[tc.LLM_CALLS], row[tc.INPUT_TOKENS], row[tc.OUTPUT_TOKENS]) == (2, 24, 12)
    assert "usage_unknown" not in {f.kind for f in result.result.data_quality.findings}


def test_the_usage_of_the_span_around_the_innermost_is_the_calls(parquet_sink, tracer) -> None:
    with ai.trial("outer usage"):
        _oi_llm(tracer, "outer", (30, 3), inner=lambda: _oi_llm(tracer, "inner", None))
    (row,) = assay.analyze(parquet_sink.flush()).trials.to_dicts()
    assert (row[tc.LLM_CALLS], row[tc.INPUT_TOKENS], row[tc.OUTPUT_TOKENS]) == (1, 30, 3)


def test_calls_without_usage_have_unknown_tokens_and_say_so(parquet_sink, tracer) -> None:
    with ai.trial("streamed"):
        _llama_index_turn(tracer, None)
    with ai.trial("counted"):
        _llama_index_turn(tracer, (11, 7))
    with ai.trial("no calls"):
        pass
    result = assay.analyze(parquet_sink.flush())
    rows = {r[tc.TEST_ID]: r for r in result.trials.to_dicts()}
    assert rows["streamed"][tc.LLM_CALLS] == 1
    assert rows["streamed"][tc.INPUT_TOKENS] is None
    assert rows["streamed"][tc.OUTPUT_TOKENS] is None
    assert (rows["counted"][tc.INPUT_TOKENS], rows["counted"][tc.OUTPUT_TOKENS]) == (11, 7)
    assert (rows["no calls"][tc.INPUT_TOKENS], rows["no calls"][tc.LLM_CALLS]) == (0, 0)
    (finding,) = [f for f in result.result.data_quality.findings if f.kind == "usage_unknown"]
    assert finding.count == 1
    assert "streamed" in finding.message and "null, not 0" in finding.message


def test_a_span_summing_up_a_turns_tool_calls_is_not_a_tool_call(parquet_sink, tracer) -> None:
    def tool(name: str, span: str | None = None) -> None:
        attributes = {c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: name}
        with tracer.start_as_current_span(span or f"execute_tool {name}", attributes=attributes):
            pass

    with ai.trial("merged"):
        tool("weather")
        tool("search")
        tool("(merged tools)", "execute_tool (merged)")
        tool("calc")
    (row,) = assay.analyze(parquet_sink.flush()).trials.to_dicts()
    assert row[tc.TOOL_SEQUENCE] == ["weather", "search", "calc"]


def test_a_trace_whose_root_never_ended_is_one_trial_and_says_so(parquet_sink, tracer) -> None:
    session = {c.OPENINFERENCE_SESSION_ID: "crashy"}
    # A run that completes: its root ends.
    with tracer.start_as_current_span("agent.run", attributes=session):
        with tracer.start_as_current_span("Step 1", attributes=session):
            _oi_llm(tracer, "model", (11, 7))
    # A run that crashes and whose agent span is never ended (never exported).
    root = tracer.start_span("agent.run", attributes=session)
    from opentelemetry import trace

    with trace.use_span(root, end_on_exit=False):
        with tracer.start_as_current_span("Step 1", attributes=session):
            _oi_llm(tracer, "model", (11, 7))
        with tracer.start_as_current_span("Step 2", attributes=session) as step:
            _oi_llm(tracer, "model", (12, 8))
            step.set_status(Status(StatusCode.ERROR, "model call failed"))
    options = assay.AnalyzeOptions(test_attribute=c.OPENINFERENCE_SESSION_ID)
    result = assay.analyze(parquet_sink.flush(), options)
    rows = result.trials.sort(tc.START_TIME).to_dicts()
    assert len(rows) == 2
    crashed = rows[1]
    assert crashed[tc.OUTCOME] == "error"
    assert (crashed[tc.LLM_CALLS], crashed[tc.INPUT_TOKENS], crashed[tc.OUTPUT_TOKENS]) == (
        2,
        23,
        15,
    )
    assert rows[0][tc.OUTCOME] == "pass"
    kinds = {f.kind: f for f in result.result.data_quality.findings}
    assert kinds["unended_roots"].count == 1
    assert "never ended" in kinds["unended_roots"].message
    assert "may be short" not in kinds["unended_roots"].message
    assert "incomplete_traces" not in kinds
    # The stand-in trial lasts from its first step's start to its last step's end.
    assert crashed[tc.DURATION_S] > 0
    root.end()


def test_root_less_traces_of_several_tests_are_not_merged(parquet_sink, tracer) -> None:
    from opentelemetry import trace

    root = tracer.start_span("run")
    with trace.use_span(root, end_on_exit=False):
        for test in ("a", "b"):
            with tracer.start_as_current_span("step", attributes={c.GENAI_AGENT_NAME: test}):
                pass
    options = assay.AnalyzeOptions(test_attribute=c.GENAI_AGENT_NAME)
    trials = assay.analyze(parquet_sink.flush(), options).trials
    assert sorted(trials[tc.TEST_ID].to_list()) == ["a", "b"]
    assert trials.filter(pl.col(tc.OUTCOME) == "error").height == 0
    root.end()


def test_a_failed_call_without_usage_leaves_the_tokens_known(parquet_sink, tracer) -> None:
    with ai.trial("failed call"):
        _oi_llm(tracer, "model", (11, 7))
        with tracer.start_as_current_span(
            "model", attributes={c.OPENINFERENCE_KIND: "LLM", _SENT: "user"}
        ) as span:
            span.set_status(Status(StatusCode.ERROR, "HTTP 500"))
    result = assay.analyze(parquet_sink.flush())
    (row,) = result.trials.to_dicts()
    assert (row[tc.LLM_CALLS], row[tc.INPUT_TOKENS], row[tc.OUTPUT_TOKENS]) == (2, 11, 7)
    assert "usage_unknown" not in {f.kind for f in result.result.data_quality.findings}


def test_a_step_named_like_a_tool_is_not_unclaimed_work(parquet_sink, tracer) -> None:
    from assay.analysis import describe_spans
    from assay.store import open_trace_set

    chain = {c.OPENINFERENCE_KIND: "CHAIN"}
    tool = {c.OPENINFERENCE_KIND: "TOOL", c.OPENINFERENCE_TOOL_NAME: "weather"}
    with ai.trial("steps"):
        with tracer.start_as_current_span("BaseWorkflowAgent.call_tool", attributes=chain):
            with tracer.start_as_current_span("FunctionTool.acall", attributes=tool):
                pass
        with tracer.start_as_current_span(
            "BaseWorkflowAgent.aggregate_tool_results", attributes=chain
        ):
            pass
        # Without a convention's word, a span named like a tool is still suspect.
        with tracer.start_as_current_span("my_tool_call"):
            pass
    unclaimed = describe_spans(open_trace_set(parquet_sink.flush()).scan()).unclaimed
    assert unclaimed is not None
    assert unclaimed.names == (("my_tool_call", 1),)


def test_a_root_carrying_no_attribute_is_a_root_all_the_same(parquet_sink, tracer) -> None:
    agent = {c.GENAI_AGENT_NAME: "helper"}
    with tracer.start_as_current_span("my run"):  # the user's span, above the framework's
        with tracer.start_as_current_span("invoke_agent", attributes=agent):
            pass
        with tracer.start_as_current_span("invoke_agent", attributes=agent):
            pass
    options = assay.AnalyzeOptions(test_attribute=c.GENAI_AGENT_NAME)
    result = assay.analyze(parquet_sink.flush(), options)
    assert result.trials.height == 2  # two runs under one root: two trials, as before
    assert "unended_roots" not in {f.kind for f in result.result.data_quality.findings}


def test_a_tests_token_total_is_unknown_in_the_json_when_a_trials_is(parquet_sink, tracer) -> None:
    for _ in range(2):
        with ai.trial("streamed"):
            _llama_index_turn(tracer, None)
    with ai.trial("streamed"):
        _llama_index_turn(tracer, (11, 7))
    with ai.trial("counted"):
        _llama_index_turn(tracer, (11, 7))
    analysis = assay.analyze(parquet_sink.flush())
    usage = {t["test_id"]: t["usage"] for t in analysis.to_dict()["tests"]}
    assert usage["streamed"] == {"llm_calls": 3, "input_tokens": None, "output_tokens": None}
    assert usage["counted"] == {"llm_calls": 1, "input_tokens": 11, "output_tokens": 7}
    findings = analysis.to_dict()["data_quality"]["findings"]
    assert [f["count"] for f in findings if f["kind"] == "usage_unknown"] == [2]


def _settled(path) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The spans of ``path`` with their work columns, before and after ``settle_calls``."""
    spans = scan_spans(path)
    worked = with_work_columns(work_columns_read(spans, None, computed=set()))
    return worked, settle_calls(worked, spans)


def test_calls_one_span_each_with_usage_are_left_as_read_after_the_screen(
    parquet_sink, tracer
) -> None:
    # Calls side by side under one span and one inside a tool: none inside another call.
    with ai.trial("plain"):
        for _ in range(3):
            with ai.llm("m") as call:
                call.usage(5, 2)
        with ai.tool("search"), ai.llm("m") as call:
            call.usage(1, 1)
    worked, settled = _settled(parquet_sink.flush())
    assert settled is worked


def test_a_chain_among_plain_calls_is_found_by_the_screen(parquet_sink, tracer) -> None:
    for index in range(20):
        with ai.trial(f"plain {index}"), ai.llm("m") as call:
            call.usage(5, 2)
    with ai.trial("chained"):
        _oi_llm(tracer, "outer", (30, 3), inner=lambda: _oi_llm(tracer, "inner", None))
    worked, settled = _settled(parquet_sink.flush())
    assert settled is not worked
    calls = settled.select(pl.col(work.IS_LLM).sum()).collect().item()
    assert calls == 21  # the chain is one call


def test_each_traces_work_is_the_same_as_settling_every_span_first(parquet_sink, tracer) -> None:
    # Traces the per-trace screen passes (calls under the trial span, usage recorded) beside
    # every kind it must send on: a chain under the trial, a root that is a call with a call
    # inside, a call without usage alone, calls under a tool.
    for index in range(5):
        with ai.trial(f"plain {index}"):
            for _ in range(2):
                with ai.llm("m") as call:
                    call.usage(5, 2)
    with ai.trial("chained"):
        _llama_index_turn(tracer, (11, 7))
    _oi_llm(tracer, "root call", (30, 3), inner=lambda: _oi_llm(tracer, "inner", None))
    with ai.trial("unsent"):
        _oi_llm(tracer, "prepare", None, sent=False)
    with ai.trial("under a tool"), ai.tool("search"), ai.llm("m") as call:
        call.usage(1, 1)
    agent = {c.GENAI_OPERATION: "invoke_agent", c.GENAI_AGENT_NAME: "a"}
    with ai.trial("under an agent"), tracer.start_as_current_span("agent", attributes=agent):
        for _ in range(2):
            with ai.llm("m") as call:
                call.usage(2, 2)
    with ai.trial("chain under an agent"), tracer.start_as_current_span("agent", attributes=agent):
        _oi_llm(tracer, "outer", (4, 4), inner=lambda: _oi_llm(tracer, "inner", None))
    with ai.trial("counted chain"), tracer.start_as_current_span("agent", attributes=agent):
        # Every span with its usage: only the parents tell the chain.
        _oi_llm(tracer, "outer", (4, 4), inner=lambda: _oi_llm(tracer, "inner", (3, 3)))
    path = parquet_sink.flush()
    spans = scan_spans(path)
    worked = with_work_columns(work_columns_read(spans, None, computed=set()))
    shape = WorkShape()
    first = settle_calls(worked, spans)
    expected = list_models(
        first, aggregate_work(first, ["trace_id"], shape).collect(), ["trace_id"]
    )
    got = work_per_trace(worked, spans, shape)
    assert got.sort("trace_id").equals(expected.drop(CALL_SCREEN).sort("trace_id"))
    # Plain, the LlamaIndex turn (one call), the root chain, the unsent span, under the tool,
    # under the agents.
    assert got[tc.LLM_CALLS].sum() == 5 * 2 + 1 + 1 + 0 + 1 + 2 + 1 + 1

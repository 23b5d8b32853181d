from __future__ import annotations

import random

import polars as pl
import pytest
from opentelemetry.trace import Status, StatusCode

import assay
import assay.instrument as ai
from assay import conventions as c
from assay.analysis import columns as tc
from assay.errors import SchemaError


def _trials(sink) -> pl.DataFrame:
    return assay.analyze(sink.flush()).trials


def test_tool_calls_in_all_three_conventions(parquet_sink, tracer) -> None:
    with ai.trial("conventions"):
        with tracer.start_as_current_span(
            "genai", attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "search"}
        ):
            pass
        with tracer.start_as_current_span(
            "oi", attributes={c.OPENINFERENCE_KIND: "TOOL", c.OPENINFERENCE_TOOL_NAME: "lookup"}
        ):
            pass
        with tracer.start_as_current_span(
            "tl", attributes={c.TRACELOOP_KIND: "tool", c.TRACELOOP_ENTITY: "calculator"}
        ):
            pass
        with tracer.start_as_current_span("not a tool", attributes={c.TRACELOOP_KIND: "task"}):
            pass
    (row,) = _trials(parquet_sink).to_dicts()
    assert row[tc.TOOL_SEQUENCE] == ["search", "lookup", "calculator"]
    assert row[tc.TOOL_CALLS] == 3


def test_llm_calls_and_tokens_in_all_three_conventions(parquet_sink, tracer) -> None:
    with ai.trial("llm"):
        with tracer.start_as_current_span(
            "chat",
            attributes={
                c.GENAI_OPERATION: "chat",
                c.GENAI_REQUEST_MODEL: "m-a",
                c.GENAI_INPUT_TOKENS: 10,
                c.GENAI_OUTPUT_TOKENS: 1,
            },
        ):
            pass
        with tracer.start_as_current_span(
            "oi-llm",
            attributes={
                c.OPENINFERENCE_KIND: "LLM",
                c.OPENINFERENCE_MODEL: "m-b",
                c.OPENINFERENCE_PROMPT_TOKENS: 20,
                c.OPENINFERENCE_COMPLETION_TOKENS: 2,
            },
        ):
            pass
        with tracer.start_as_current_span(
            "openai.chat",
            attributes={
                c.LLM_REQUEST_TYPE: "chat",
                c.GENAI_RESPONSE_MODEL: "m-c",
                c.LEGACY_PROMPT_TOKENS: 30,
                c.LEGACY_COMPLETION_TOKENS: 3,
            },
        ):
            pass
    (row,) = _trials(parquet_sink).to_dicts()
    assert (row[tc.LLM_CALLS], row[tc.INPUT_TOKENS], row[tc.OUTPUT_TOKENS]) == (3, 60, 6)
    assert row[tc.MODELS] == ["m-a", "m-b", "m-c"]


def test_models_listed_once_each_in_call_order(parquet_sink, tracer) -> None:
    calls = {"several": ["m-z", "m-a", "m-z", "m-b"], "one": ["m-q", "m-q"], "none": []}
    for test, models in calls.items():
        with ai.trial(test):
            for model in models:
                attributes = {c.GENAI_OPERATION: "chat", c.GENAI_REQUEST_MODEL: model}
                with tracer.start_as_current_span("chat", attributes=attributes):
                    pass
    listed = dict(_trials(parquet_sink).select(tc.TEST_ID, tc.MODELS).rows())
    assert listed == {"several": ["m-z", "m-a", "m-b"], "one": ["m-q"], "none": []}


def test_tool_sequence_follows_start_time_not_end_time(parquet_sink) -> None:
    with ai.trial("order"):
        with ai.tool("outer"):
            with ai.tool("inner"):
                pass
        with ai.tool("last"):
            pass
    (row,) = _trials(parquet_sink).to_dicts()
    assert row[tc.TOOL_SEQUENCE] == ["outer", "inner", "last"]


def test_trials_nested_under_a_run_span(parquet_sink, tracer) -> None:
    with tracer.start_as_current_span("ci run"):
        for i in range(3):
            with ai.trial("nested", new_trace=False, index=i) as t:
                with tracer.start_as_current_span("step"), ai.tool(f"tool{i}"):
                    pass
                t.check("ok", i != 1)
        with ai.tool("outside any trial"):
            pass
    trials = _trials(parquet_sink).sort(tc.TRIAL_INDEX)
    assert trials[tc.TOOL_SEQUENCE].to_list() == [["tool0"], ["tool1"], ["tool2"]]
    assert trials[tc.OUTCOME].to_list() == ["pass", "fail", "pass"]
    assert trials[tc.SPAN_COUNT].to_list() == [3, 3, 3]


def test_trace_with_thousands_of_spans(parquet_sink, tracer) -> None:
    with ai.trial("big"):
        for i in range(3000):
            with ai.tool(f"t{i % 7}"):
                pass
    (row,) = _trials(parquet_sink).to_dicts()
    assert row[tc.TOOL_CALLS] == 3000 and row[tc.SPAN_COUNT] == 3001


def test_deep_chain_of_spans_resolves_to_its_nested_trial(parquet_sink, tracer) -> None:
    from opentelemetry import trace

    with tracer.start_as_current_span("run"), ai.trial("deep", new_trace=False):
        stack = []
        for i in range(300):
            span = tracer.start_span(f"level{i}")
            token = trace.use_span(span, end_on_exit=False)
            token.__enter__()
            stack.append((span, token))
        with ai.tool("bottom"):
            pass
        # Leave every level again: a span left current would parent the next tests' spans.
        for span, token in reversed(stack):
            token.__exit__(None, None, None)
            span.end()
    (row,) = _trials(parquet_sink).to_dicts()
    assert row[tc.TOOL_SEQUENCE] == ["bottom"]
    assert row[tc.SPAN_COUNT] == 302


def _record_with_helpers(seed: int) -> None:
    rng = random.Random(seed)
    for test_id, rate in (("a", 0.95), ("b", 0.5)):
        for i in range(20):
            with ai.trial(test_id, index=i, run_id="r1") as t:
                with ai.tool("search"):
                    pass
                t.score("quality", round(rng.uniform(0, 100), 2))
                t.check("correct", rng.random() < rate)


def _record_with_plain_sdk(seed: int, tracer) -> None:
    rng = random.Random(seed)
    for test_id, rate in (("a", 0.95), ("b", 0.5)):
        for i in range(20):
            attrs = {c.TEST_ID: test_id, c.TRIAL_INDEX: i, c.RUN_ID: "r1"}
            from opentelemetry import context

            with tracer.start_as_current_span(
                "trial", context=context.Context(), attributes=attrs
            ) as span:
                with tracer.start_as_current_span(
                    "tool",
                    attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "search"},
                ):
                    pass
                span.add_event(
                    c.SCORE_EVENT,
                    {c.SCORE_NAME: "quality", c.SCORE_VALUE: round(rng.uniform(0, 100), 2)},
                )
                passed = rng.random() < rate
                span.add_event(c.CHECK_EVENT, {c.CHECK_NAME: "correct", c.CHECK_PASSED: passed})
                # no outcome attribute: the analysis decides from the checks


def test_plain_sdk_traces_give_the_same_verdicts_as_helpers(
    parquet_sink, tracer, switch_sink
) -> None:
    _record_with_helpers(3)
    helpers = assay.analyze(parquet_sink.flush())
    plain_sink = switch_sink("plain")
    _record_with_plain_sdk(3, tracer)
    plain = assay.analyze(plain_sink.flush())
    assert helpers.tests.equals(plain.tests)
    columns = [tc.TEST_ID, tc.TRIAL_INDEX, tc.PASSED, tc.TOOL_SEQUENCE, tc.SCORES]
    assert helpers.trials.select(columns).equals(plain.trials.select(columns))


def test_status_error_without_outcome_is_an_error_trial(parquet_sink, tracer) -> None:
    from opentelemetry import context

    with tracer.start_as_current_span(
        "trial", context=context.Context(), attributes={c.TEST_ID: "t"}
    ) as span:
        span.set_status(Status(StatusCode.ERROR, "harness broke"))
    analysis = assay.analyze(parquet_sink.flush())
    (row,) = analysis.trials.to_dicts()
    assert (row[tc.OUTCOME], row[tc.ERROR], row[tc.STATUS_MESSAGE]) == (
        "error",
        True,
        "harness broke",
    )
    assert analysis.result.tests[0].errors == 1


def test_errors_count_or_excluded(parquet_sink) -> None:
    for i in range(10):
        with ai.trial("t", suppress_errors=True) as t:
            if i < 3:
                raise RuntimeError("flaky dependency")
            t.passed()
    path = parquet_sink.flush()
    counted = assay.analyze(path).result.tests[0]
    excluded = assay.analyze(path, assay.AnalyzeOptions(errors="exclude")).result.tests[0]
    assert (counted.n, counted.passed, counted.errors) == (10, 7, 3)
    assert (excluded.n, excluded.passed, excluded.errors) == (7, 7, 3)


def test_evaluation_events_are_scores(parquet_sink, tracer) -> None:
    with ai.trial("t"), tracer.start_as_current_span("judge") as span:
        span.add_event(
            c.EVALUATION_EVENT, {c.EVALUATION_NAME: "relevance", c.EVALUATION_SCORE: 0.75}
        )
    (row,) = _trials(parquet_sink).to_dicts()
    assert row[tc.SCORES] == [{"name": "relevance", "value": 0.75}]


def test_min_score_decides_trials_without_outcome(parquet_sink, tracer) -> None:
    from opentelemetry import context

    for value in (10.0, 90.0):
        with tracer.start_as_current_span(
            "trial", context=context.Context(), attributes={c.TEST_ID: "t"}
        ) as span:
            span.add_event(c.SCORE_EVENT, {c.SCORE_NAME: "q", c.SCORE_VALUE: value})
    path = parquet_sink.flush()
    assert assay.analyze(path).trials[tc.PASSED].to_list() == [True, True]
    assert sorted(
        assay.analyze(path, assay.AnalyzeOptions(min_score=50)).trials[tc.PASSED].to_list()
    ) == [False, True]


def test_non_numeric_score_is_a_schema_error(parquet_sink, tracer) -> None:
    from opentelemetry import context

    with tracer.start_as_current_span(
        "trial", context=context.Context(), attributes={c.TEST_ID: "t"}
    ) as span:
        span.add_event(c.SCORE_EVENT, {c.SCORE_NAME: "q", c.SCORE_VALUE: "excellent"})
    with pytest.raises(SchemaError, match="non-numeric assay.score.value .*'excellent'"):
        assay.analyze(parquet_sink.flush())


def test_unknown_outcome_is_a_schema_error(parquet_sink, tracer) -> None:
    from opentelemetry import context

    with tracer.start_as_current_span(
        "trial", context=context.Context(), attributes={c.TEST_ID: "t", c.TRIAL_OUTCOME: "passed"}
    ):
        pass
    with pytest.raises(SchemaError, match="found 'passed'"):
        assay.analyze(parquet_sink.flush())


def test_trace_set_without_trials_is_a_schema_error(parquet_sink, tracer) -> None:
    with tracer.start_as_current_span("production request"):
        pass
    with pytest.raises(SchemaError, match="no trial spans"):
        assay.analyze(parquet_sink.flush())


def test_production_traces_through_a_test_attribute_mapping(parquet_sink, tracer) -> None:
    from opentelemetry import context

    for i in range(6):
        with tracer.start_as_current_span(
            "invoke_agent", context=context.Context(), attributes={c.GENAI_AGENT_NAME: "triage"}
        ) as span:
            with tracer.start_as_current_span(
                "t", attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "route"}
            ):
                pass
            if i == 0:
                span.set_status(Status(StatusCode.ERROR, "upstream timeout"))
        with tracer.start_as_current_span(
            "request", context=context.Context(), attributes={"app.route": "/chat", "app.n": i}
        ):
            pass
    path = parquet_sink.flush()
    with pytest.raises(SchemaError, match="no trial spans"):
        assay.analyze(path)
    by_agent = assay.analyze(path, assay.AnalyzeOptions(test_attribute=c.GENAI_AGENT_NAME))
    (test,) = by_agent.result.tests
    assert (test.test_id, test.n, test.passed, test.errors) == ("triage", 6, 5, 1)
    # Production traces carry no trial index: the first error names the trace to open.
    (errored,) = by_agent.trials.filter(pl.col(tc.ERROR))[tc.TRACE_ID].to_list()
    assert test.first_error is not None and test.first_error.startswith(f"trace {errored}: ")
    assert by_agent.trials[tc.TOOL_SEQUENCE].to_list() == [["route"]] * 6
    by_route = assay.analyze(
        path, assay.AnalyzeOptions(test_attribute="app.route")
    )  # not a promoted column
    assert [(t.test_id, t.n) for t in by_route.result.tests] == [("/chat", 6)]

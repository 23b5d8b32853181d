from __future__ import annotations

import asyncio

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import assay.instrument as ai
from assay import conventions as c
from assay.errors import ConfigError


def _trial_spans(spans: InMemorySpanExporter) -> list:
    return [s for s in spans.get_finished_spans() if s.attributes and c.TEST_ID in s.attributes]


def test_outcome_from_checks(memory_spans: InMemorySpanExporter) -> None:
    with ai.trial("t", index=0):
        ai.check("a", True)
    with ai.trial("t", index=1):
        ai.check("a", True)
        ai.check("b", False)
    outcomes = [s.attributes[c.TRIAL_OUTCOME] for s in _trial_spans(memory_spans)]
    assert outcomes == ["pass", "fail"]


def test_explicit_outcome_wins_over_checks(memory_spans: InMemorySpanExporter) -> None:
    with ai.trial("t") as t:
        t.check("a", False)
        t.passed()
    (span,) = _trial_spans(memory_spans)
    assert span.attributes[c.TRIAL_OUTCOME] == "pass"


def test_exception_is_an_error_trial_recorded_on_the_span(
    memory_spans: InMemorySpanExporter,
) -> None:
    with pytest.raises(RuntimeError), ai.trial("t"):
        raise RuntimeError("dependency down")
    with ai.trial("t", suppress_errors=True):
        raise RuntimeError("swallowed")
    spans = _trial_spans(memory_spans)
    assert [s.attributes[c.TRIAL_OUTCOME] for s in spans] == ["error", "error"]
    assert all(s.status.status_code is StatusCode.ERROR for s in spans)
    assert spans[0].events[-1].name == "exception"


def test_min_score_fails_a_trial(memory_spans: InMemorySpanExporter) -> None:
    with ai.trial("t", min_score=50):
        ai.score("quality", 40)
    with ai.trial("t", min_score=50):
        ai.score("quality", 60)
    assert [s.attributes[c.TRIAL_OUTCOME] for s in _trial_spans(memory_spans)] == ["fail", "pass"]


def test_trial_attributes_and_new_trace(memory_spans: InMemorySpanExporter, tracer) -> None:
    with tracer.start_as_current_span("outer"):
        with ai.trial(
            "t", suite="s", run_id="r", agent_version="v2", tags=["x"], difficulty="hard"
        ):
            with ai.tool("search"):
                pass
    spans = {s.name: s for s in memory_spans.get_finished_spans()}
    trial_span = spans["trial t"]
    assert trial_span.parent is None  # a new trace by default
    assert trial_span.context.trace_id != spans["outer"].context.trace_id
    assert spans["execute_tool search"].parent.span_id == trial_span.context.span_id
    attrs = trial_span.attributes
    assert (attrs[c.SUITE], attrs[c.RUN_ID], attrs[c.AGENT_VERSION]) == ("s", "r", "v2")
    assert tuple(attrs[c.TEST_TAGS]) == ("x",) and attrs[c.TEST_DIFFICULTY] == "hard"
    tool_attrs = spans["execute_tool search"].attributes
    assert tool_attrs[c.GENAI_OPERATION] == "execute_tool"
    assert tool_attrs[c.GENAI_TOOL_NAME] == "search"


def test_nested_trial_keeps_its_parent(memory_spans: InMemorySpanExporter, tracer) -> None:
    with tracer.start_as_current_span("run") as run, ai.trial("t", new_trace=False):
        pass
    trial_span = next(s for s in memory_spans.get_finished_spans() if s.name == "trial t")
    assert trial_span.parent.span_id == run.get_span_context().span_id


def test_decorator_sync_and_async(memory_spans: InMemorySpanExporter) -> None:
    @ai.trial("deco")
    def sync_agent(x: int) -> int:
        ai.check("positive", x > 0)
        return x

    @ai.trial("deco-async")
    async def async_agent(x: int) -> int:
        ai.check("positive", x > 0)
        return x

    assert sync_agent(1) == 1 and sync_agent(-1) == -1
    assert asyncio.run(async_agent(2)) == 2
    spans = _trial_spans(memory_spans)
    assert [(s.attributes[c.TEST_ID], s.attributes[c.TRIAL_OUTCOME]) for s in spans] == [
        ("deco", "pass"),
        ("deco", "fail"),
        ("deco-async", "pass"),
    ]
    assert [s.attributes[c.TRIAL_INDEX] for s in spans[:2]] == [0, 1]


def test_bad_calls_raise_config_errors(memory_spans: InMemorySpanExporter) -> None:
    with pytest.raises(ConfigError, match="no trial is running"):
        ai.score("q", 1.0)
    with ai.trial("t") as t:
        with pytest.raises(ConfigError, match="finite number"):
            t.score("q", "high")  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="outcome must be one of"):
            t.outcome("passed")
    with pytest.raises(ConfigError):
        ai.trial("")


def test_llm_records_usage(memory_spans: InMemorySpanExporter) -> None:
    with ai.trial("t"), ai.llm("m-1", provider="openai") as call:
        call.usage(10, 3)
    span = next(s for s in memory_spans.get_finished_spans() if s.name == "chat m-1")
    assert span.attributes[c.GENAI_INPUT_TOKENS] == 10
    assert span.attributes[c.GENAI_OUTPUT_TOKENS] == 3


def test_concurrent_decorated_calls_are_separate_trials(memory_spans: InMemorySpanExporter) -> None:
    @ai.trial("concurrent")
    async def agent(x: int) -> int:
        await asyncio.sleep(0.01 * x)  # the first started finishes first (not last-in-first-out)
        ai.check("even", x % 2 == 0)
        return x

    async def main() -> list[int]:
        return await asyncio.gather(*(agent(i) for i in range(5)))

    assert asyncio.run(main()) == [0, 1, 2, 3, 4]
    spans = _trial_spans(memory_spans)
    assert len(spans) == 5
    outcomes = sorted(s.attributes[c.TRIAL_OUTCOME] for s in spans)
    assert outcomes == ["fail", "fail", "pass", "pass", "pass"]
    assert len({s.context.trace_id for s in spans}) == 5

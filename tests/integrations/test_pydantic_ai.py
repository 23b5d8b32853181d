"""pydantic-ai, through its built-in OpenTelemetry GenAI instrumentation, mapped by agent name.

Offline: a ``FunctionModel`` plays the model from a seeded plan. Tools choose at random, one
raises ``ModelRetry`` (the agent recovers: not an error), one run crashes (an error).
"""

from __future__ import annotations

import random

import pytest

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

pydantic_ai = pytest.importorskip("pydantic_ai", reason="the frameworks extra is not installed")

from pydantic_ai import Agent, ModelRetry  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402
from pydantic_ai.usage import RequestUsage  # noqa: E402
from recording import Recorder, Truth, assert_trials_match  # noqa: E402

from assay import conventions as c  # noqa: E402

RUNS_PER_CASE = 10
CASES = ("support", "billing")


def _plan(rng: random.Random, crash: bool) -> list[str]:
    """The tools the model will call, in order (a ModelRetry repeats ``flaky``)."""
    plan = ["search"] + rng.choice([[], ["search"], ["fetch"]])
    if rng.random() < 0.4:
        plan += ["flaky", "flaky"]  # the first call raises ModelRetry, the model retries
    if crash:
        plan.append("explode")
    return plan


def _agent(case: str, truth: Truth, plan: list[str]) -> Agent:
    """An agent whose model follows ``plan`` and whose tools write ``truth``."""
    steps = iter(plan)
    flaky_calls = [0]

    def model(messages, info) -> ModelResponse:
        truth.mark()
        truth.llm_calls += 1
        usage = RequestUsage(input_tokens=10 + truth.llm_calls, output_tokens=3)
        truth.input_tokens += usage.input_tokens
        truth.output_tokens += usage.output_tokens
        tool = next(steps, None)
        part = ToolCallPart(tool, {}) if tool else TextPart("done")
        truth.mark()
        return ModelResponse(parts=[part], usage=usage)

    agent = Agent(FunctionModel(model), name=case)

    @agent.tool_plain
    def search() -> str:
        truth.tools.append("search")
        return "found"

    @agent.tool_plain
    def fetch() -> str:
        truth.tools.append("fetch")
        return "page"

    @agent.tool_plain(retries=2)
    def flaky() -> str:
        truth.tools.append("flaky")
        flaky_calls[0] += 1
        if flaky_calls[0] == 1:
            raise ModelRetry("not yet")
        return "ok"

    @agent.tool_plain
    def explode() -> str:
        truth.tools.append("explode")
        raise RuntimeError("the tool crashed")

    return agent


def _runs(recorder: Recorder, api: bool) -> None:
    rng = random.Random(7)
    Agent.instrument_all(True)
    for i in range(RUNS_PER_CASE * len(CASES)):
        case = CASES[i % 2]
        truth = Truth(test_id=case)
        agent = _agent(case, truth, _plan(rng, crash=(i == 5)))
        recorder.run(truth, api, lambda t, agent=agent: agent.run_sync("help"))
    Agent.instrument_all(False)


@pytest.fixture(scope="module")
def recording(record):
    return record("pydantic_ai", _runs)


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_bare_runs_mapped_by_agent_name_equal_ground_truth(recording, source) -> None:
    trials = recording.trials(source, api=False, test_attribute=c.GENAI_AGENT_NAME)
    assert_trials_match(trials, recording.raw)
    assert sorted(set(trials["outcome"])) == ["error", "pass"]
    assert trials.filter(trials["retries"] > 0).height == sum(
        t.tools.count("flaky") == 2 for t in recording.raw
    )


@pytest.mark.parametrize("source", ["parquet", "collector"])
def test_runs_framed_by_the_assay_api_equal_ground_truth(recording, source) -> None:
    assert_trials_match(recording.trials(source, api=True), recording.api)


def test_the_mapping_is_reported_as_nesting_not_analysed_in_silence(recording) -> None:
    import assay

    analysis = assay.analyze(recording.parquet_raw, test_attribute=c.GENAI_AGENT_NAME)
    kinds = {f.kind for f in analysis.result.data_quality.findings}
    assert "nested_mapping" in kinds and "outcome_from_errors_only" in kinds

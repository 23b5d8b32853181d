"""The OpenAI Agents SDK under both OpenTelemetry bridges, against a fake OpenAI server.

``openai-agents-opentelemetry`` is mapped by ``agent.workflow.name`` (``RunConfig``), the
OpenInference bridge by ``session.id`` (``using_session``). Runs choose tools and handoffs at
random; a tool failure the model recovers from is not an error; one run crashes.
"""

from __future__ import annotations

import asyncio
import random

import pytest

pytestmark = pytest.mark.slow  # importing the framework alone takes seconds

agents = pytest.importorskip("agents", reason="the frameworks extra is not installed")

from agents import (  # noqa: E402
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    function_tool,
    set_trace_processors,
)
from fake_openai import FakeOpenAI, Turn  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from recording import Recorder, Truth, assert_trials_match  # noqa: E402

from assay import conventions as c  # noqa: E402
from assay.analysis import columns as tc  # noqa: E402

CASES = ("refund", "facts")
RUNS_PER_CASE = 5
HANDOFF_TOOL = "transfer_to_fact_checker"


def _plan(rng: random.Random, crash: bool) -> list[Turn]:
    """The fake model's answers for one run."""
    turns = [
        Turn(tool_calls=(("lookup", {}),), input_tokens=20 + i) for i in range(rng.randint(1, 2))
    ]
    if crash:
        return [*turns, Turn(tool_calls=(("explode", {}),))]
    if rng.random() < 0.6:
        turns.append(Turn(tool_calls=((HANDOFF_TOOL, {}),), input_tokens=30))
        turns += [Turn(tool_calls=(("verify", {}),), output_tokens=9)] * rng.randint(1, 2)
    return [*turns, Turn(text="done", output_tokens=4)]


def _agents(model: OpenAIChatCompletionsModel, truth_of) -> Agent:
    @function_tool
    def lookup() -> str:
        truth_of().tools.append("lookup")
        return "record"

    @function_tool
    def verify() -> str:
        # Fails on first use; the SDK hands the error to the model, which carries on.
        truth = truth_of()
        truth.tools.append("verify")
        if truth.tools.count("verify") == 1:
            raise ValueError("source unreachable")
        return "verified"

    @function_tool(failure_error_function=None)
    def explode() -> str:
        truth_of().tools.append("explode")
        raise RuntimeError("the tool crashed")

    checker = Agent(name="fact_checker", model=model, tools=[verify])
    return Agent(name="triage", model=model, tools=[lookup, explode], handoffs=[checker])


def _player(bridge: str, fake: FakeOpenAI):
    def runs(recorder: Recorder, api: bool) -> None:
        from openinference.instrumentation import using_session

        rng = random.Random(11)
        for i in range(RUNS_PER_CASE * len(CASES)):
            case = CASES[i % 2]
            truth = Truth(test_id=case)
            turns = iter(_plan(rng, crash=(i == 3)))

            def script(body, truth=truth, turns=turns) -> Turn:
                truth.mark()  # the server answers inside the run's span
                turn = next(turns)
                truth.llm_calls += 1
                truth.input_tokens += turn.input_tokens
                truth.output_tokens += turn.output_tokens
                if turn.tool_calls and turn.tool_calls[0][0] == HANDOFF_TOOL:
                    truth.handoffs.append("fact_checker")
                return turn

            fake.script = script

            async def run_once(truth: Truth, case: str) -> None:
                # One client per run, closed inside its event loop (no loop outlives a run).
                async with AsyncOpenAI(base_url=fake.base_url, api_key="x") as client:
                    model = OpenAIChatCompletionsModel(model="fake-model", openai_client=client)
                    triage = _agents(model, lambda: truth)
                    await Runner.run(triage, "help", run_config=RunConfig(workflow_name=case))

            def play(truth: Truth, case: str = case) -> None:
                if bridge == "openinference":
                    with using_session(case):
                        asyncio.run(run_once(truth, case))
                else:
                    asyncio.run(run_once(truth, case))

            recorder.run(truth, api, play)

    return runs


@pytest.fixture(scope="module")
def fake():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def otel_bridge(record, fake):
    from openai_agents_opentelemetry import OpenTelemetryTracingProcessor

    set_trace_processors([OpenTelemetryTracingProcessor()])
    try:
        return record("openai_agents_otel", _player("otel", fake))
    finally:
        set_trace_processors([])


@pytest.fixture(scope="module")
def openinference_bridge(record, fake, provider):
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        return record("openai_agents_openinference", _player("openinference", fake))
    finally:
        instrumentor.uninstrument()
        set_trace_processors([])


BRIDGES = {
    "otel": ("otel_bridge", c.OPENAI_AGENTS_WORKFLOW),
    "openinference": ("openinference_bridge", c.OPENINFERENCE_SESSION_ID),
}


@pytest.mark.parametrize("source", ["parquet", "collector"])
@pytest.mark.parametrize("bridge", sorted(BRIDGES))
def test_bare_runs_mapped_by_the_natural_attribute_equal_ground_truth(
    request, bridge, source
) -> None:
    fixture, attribute = BRIDGES[bridge]
    recording = request.getfixturevalue(fixture)
    trials = recording.trials(source, api=False, test_attribute=attribute)
    assert_trials_match(trials, recording.raw, handoffs=True)
    # the crashed run is an error although the workflow root span is OK
    assert trials.filter(trials[tc.OUTCOME] == "error").height == 1


@pytest.mark.parametrize("source", ["parquet", "collector"])
@pytest.mark.parametrize("bridge", sorted(BRIDGES))
def test_runs_framed_by_the_assay_api_equal_ground_truth(request, bridge, source) -> None:
    recording = request.getfixturevalue(BRIDGES[bridge][0])
    assert_trials_match(recording.trials(source, api=True), recording.api, handoffs=True)


def test_a_handoff_run_has_one_path_under_both_bridges(otel_bridge, openinference_bridge) -> None:
    columns = [tc.TOOL_SEQUENCE, tc.HANDOFFS, tc.AGENTS, tc.TOOL_ERRORS]
    otel = otel_bridge.trials("parquet", api=True).sort(tc.START_TIME).select(columns)
    oi = openinference_bridge.trials("parquet", api=True).sort(tc.START_TIME).select(columns)
    assert otel.to_dicts() == oi.to_dicts()
    assert any(h for h in otel[tc.HANDOFFS].to_list())

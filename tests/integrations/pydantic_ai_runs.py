"""pydantic-ai runs for ``test_pydantic_ai.py`` (imported by its fixture: importing the
framework takes seconds, paid only by the test process that records it)."""

from __future__ import annotations

import asyncio
import random

from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import RequestUsage
from recording import Recorder, Truth

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


def runs(recorder: Recorder, api: bool) -> None:
    """Every run of both cases, with the assay API (``api``) or bare."""
    rng = random.Random(7)
    Agent.instrument_all(True)
    # run_sync runs on the thread's event loop, makes one if none is set, and leaves it set: give
    # it one and close it after, or whichever later test drops it fails on its ResourceWarning.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        for i in range(RUNS_PER_CASE * len(CASES)):
            case = CASES[i % 2]
            truth = Truth(test_id=case)
            agent = _agent(case, truth, _plan(rng, crash=(i == 5)))
            recorder.run(truth, api, lambda t, agent=agent: agent.run_sync("help"))
    finally:
        asyncio.set_event_loop(None)
        loop.close()
        Agent.instrument_all(False)

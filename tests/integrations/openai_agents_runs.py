"""OpenAI Agents SDK runs for ``test_openai_agents.py`` (imported by its fixtures: importing the
framework takes seconds, paid only by the test process that records it)."""

from __future__ import annotations

import asyncio
import random

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from fake_openai import FakeOpenAI, Turn
from openai import AsyncOpenAI
from recording import Recorder, Truth

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


def player(bridge: str, fake: FakeOpenAI):
    """``runs(recorder, api)``: every run of both cases, the model played by ``fake``."""

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

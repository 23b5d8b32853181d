"""smolagents runs for ``test_smolagents.py`` (imported by its fixture: importing the framework
takes seconds, paid only by the test process that records it)."""

from __future__ import annotations

from typing import Any

from openinference.instrumentation import using_session
from recording import Recorder, Truth
from scripted import ScriptedServer, checker, plans, tools
from smolagents import OpenAIServerModel, ToolCallingAgent, tool

CASES = ("forecast", "lookup")
RUNS_PER_CASE = 5


def runs(recorder: Recorder, api: bool, server: ScriptedServer) -> None:
    """Every run of both cases, with the assay API (``api``) or bare."""
    # No retries: the server's HTTP 500 must reach the agent (the run crashes).
    model = OpenAIServerModel(
        model_id="fake", api_base=server.base_url, api_key="x", client_kwargs={"max_retries": 0}
    )
    for case, plan in plans(CASES, RUNS_PER_CASE, seed=11):
        plan.final_tool = "final_answer"
        truth = Truth(test_id=case)
        server.begin(plan, truth)
        agent = ToolCallingAgent(
            tools=[tool(f) for f in tools(truth)], model=model, max_steps=6, verbosity_level=0
        )

        def play(truth: Truth, case: str = case, agent: Any = agent, plan: Any = plan) -> None:
            with using_session(case):
                truth.answer = str(agent.run("What is the weather?"))
            # final_answer is a tool smolagents runs: the model called it.
            truth.tools.append("final_answer")

        recorder.run(truth, api, play, checker)

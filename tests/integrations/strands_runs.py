"""Strands Agents runs for ``test_strands.py`` (imported by its fixture: importing the framework
takes seconds, paid only by the test process that records it)."""

from __future__ import annotations

from typing import Any

from recording import Recorder, Truth
from scripted import ScriptedServer, checker, plans, tools
from strands import Agent, tool
from strands.models.openai import OpenAIModel

CASES = ("forecaster", "researcher")
"""The agents' names: ``gen_ai.agent.name`` on Strands' ``invoke_agent`` root, the tests."""
RUNS_PER_CASE = 5


def runs(recorder: Recorder, api: bool, server: ScriptedServer) -> None:
    """Every run of both cases, with the assay API (``api``) or bare."""
    # No retries: the server's HTTP 500 must reach the agent (the run crashes).
    model = OpenAIModel(
        client_args={"base_url": server.base_url, "api_key": "x", "max_retries": 0},
        model_id="fake",
    )
    for case, plan in plans(CASES, RUNS_PER_CASE, seed=13):
        truth = Truth(test_id=case)
        server.begin(plan, truth)
        agent = Agent(
            model=model, tools=[tool(f) for f in tools(truth)], name=case, callback_handler=None
        )

        def play(truth: Truth, agent: Any = agent) -> None:
            truth.answer = str(agent("What is the weather?"))

        recorder.run(truth, api, play, checker)

"""LlamaIndex runs for ``test_llama_index.py`` (imported by its fixture: importing the framework
takes seconds, paid only by the test process that records it)."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai_like import OpenAILike
from openinference.instrumentation import using_session
from recording import Recorder, Truth
from scripted import ScriptedServer, checker, plans, tools

CASES = ("answer", "streamed")
"""``streamed``: FunctionAgent's default streaming call, without usage (tokens unknown)."""
RUNS_PER_CASE = 5


def runs(recorder: Recorder, api: bool, server: ScriptedServer) -> None:
    """Every run of both cases, with the assay API (``api``) or bare."""
    llm = OpenAILike(
        model="fake",
        api_base=server.base_url,
        api_key="x",
        is_chat_model=True,
        is_function_calling_model=True,
        max_retries=0,
    )
    for case, plan in plans(CASES, RUNS_PER_CASE, seed=5):
        truth = Truth(test_id=case)
        streaming = case == "streamed"
        server.begin(plan, truth, usage_reported=not streaming)
        agent = FunctionAgent(
            tools=[FunctionTool.from_defaults(f) for f in tools(truth)],
            llm=llm,
            name="helper",
            streaming=streaming,
        )

        def play(truth: Truth, case: str = case, agent: Any = agent) -> None:
            async def run() -> Any:
                with using_session(case):
                    return await agent.run("What is the weather?")

            truth.answer = str(asyncio.run(run()))

        recorder.run(truth, api, play, checker)

"""LangGraph runs for ``test_langchain.py`` (imported by its fixture: importing the framework
takes seconds, paid only by the test process that records it)."""

from __future__ import annotations

import random
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import ToolException, tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from openinference.instrumentation import using_session
from recording import Recorder, Truth

CASES = ("search", "answer")
RUNS_PER_CASE = 10


class PlannedChatModel(BaseChatModel):
    """A chat model that calls the planned tools in turn, then answers."""

    plan: list[str]
    truth: Any

    @property
    def _llm_type(self) -> str:
        return "planned"

    def bind_tools(self, tools: Any, **kwargs: Any) -> PlannedChatModel:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any):
        self.truth.mark()
        step = self.truth.llm_calls
        self.truth.llm_calls += 1
        usage = {"input_tokens": 20 + step, "output_tokens": 4, "total_tokens": 24 + step}
        self.truth.input_tokens += usage["input_tokens"]
        self.truth.output_tokens += usage["output_tokens"]
        name = self.plan[step] if step < len(self.plan) else None
        calls = [{"name": name, "args": {}, "id": f"call-{step}"}] if name else []
        message = AIMessage(content="" if name else "done", tool_calls=calls, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


def _graph(truth: Truth, plan: list[str]):
    @tool
    def search() -> str:
        """Search the web."""
        truth.tools.append("search")
        return "found"

    @tool
    def calculator() -> str:
        """Do sums."""
        truth.tools.append("calculator")
        return "42"

    @tool
    def flaky() -> str:
        """Fails, handled: the model sees the error and carries on."""
        truth.tools.append("flaky")
        raise ToolException("not yet")

    flaky.handle_tool_error = True

    @tool
    def explode() -> str:
        """Crashes the run."""
        truth.tools.append("explode")
        raise RuntimeError("the tool crashed")

    tools = [search, calculator, flaky, explode]
    model = PlannedChatModel(plan=plan, truth=truth).bind_tools(tools)
    graph = StateGraph(MessagesState)
    graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(name="assistant")


def runs(recorder: Recorder, api: bool) -> None:
    """Every run of both cases, with the assay API (``api``) or bare."""
    rng = random.Random(3)
    for i in range(RUNS_PER_CASE * len(CASES)):
        case = CASES[i % 2]
        plan = rng.choice([["search"], ["search", "calculator"], ["calculator"]])
        if rng.random() < 0.3:
            plan.insert(0, "flaky")
        if i == 7:
            plan.append("explode")
        truth = Truth(test_id=case)
        graph = _graph(truth, plan)

        def play(truth: Truth, case: str = case, graph: Any = graph) -> None:
            with using_session(case):
                graph.invoke({"messages": [("user", "help")]})

        recorder.run(truth, api, play)

"""Small agents for the runner's tests (importable as ``assay_test_agents:<name>``)."""

from __future__ import annotations

import asyncio
import itertools
import random
import threading
import time
from typing import Any

from opentelemetry import trace

import assay.instrument as ai
from assay.run import mocked_result

_tracer = trace.get_tracer("assay-tests-agents")
_lock = threading.Lock()
calls = 0


def echo(input: dict[str, Any]) -> dict[str, Any]:
    """Call the tools in ``input["tools"]`` (GenAI spans), answer ``input["answer"]``."""
    global calls
    with _lock:
        calls += 1
    for name in input.get("tools", []):
        with ai.tool(name):
            pass
    return {"answer": input.get("answer", "ok")}


async def async_echo(input: dict[str, Any]) -> dict[str, Any]:
    """The same, as a coroutine function."""
    await asyncio.sleep(0)
    return echo(input)


def bernoulli(input: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    """Pass (answer "yes") with probability ``input["p"]``; seeded per trial if a seed is given."""
    rng = random.Random(seed)
    return {"answer": "yes" if rng.random() < input["p"] else "no"}


def raises(input: Any) -> Any:
    """Always raise."""
    raise RuntimeError("the agent broke")


def sometimes_raises(input: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    """As :func:`bernoulli`, but raise on about one trial in five (seeded per trial)."""
    if random.Random(f"raise-{seed}").random() < 0.2:
        raise RuntimeError("the agent broke this time")
    return bernoulli(input, seed)


def sleeps(input: dict[str, Any]) -> dict[str, Any]:
    """Sleep ``input["seconds"]``; first create the file ``input["touch"]`` if given."""
    if "touch" in input:
        with open(input["touch"], "a"):
            pass
    time.sleep(input["seconds"])
    return {"answer": "late"}


_spends = itertools.count(1)
"""Calls of :func:`spends` (``next`` on a count is atomic: trials run on threads)."""


def spends(input: dict[str, Any]) -> dict[str, Any]:
    """One LLM call using ``input["tokens"]`` input tokens and as many output tokens.

    With ``unmetered``, every second trial's call records no usage (a streamed answer without
    usage): its tokens are unknown.
    """
    with ai.llm(input.get("model", "model-a")) as call:
        if not (input.get("unmetered") and next(_spends) % 2 == 0):
            call.usage(input["tokens"], input["tokens"])
    time.sleep(input.get("seconds", 0.0))
    return {"answer": "ok"}


def conventions(input: dict[str, Any]) -> dict[str, Any]:
    """Tool calls and token usage in the OpenInference and OpenLLMetry conventions."""
    with _tracer.start_as_current_span(
        "oi", attributes={"openinference.span.kind": "TOOL", "tool.name": "oi_search"}
    ):
        pass
    with _tracer.start_as_current_span(
        "tl", attributes={"traceloop.span.kind": "tool", "traceloop.entity.name": "tl_lookup"}
    ):
        pass
    with _tracer.start_as_current_span(
        "llm",
        attributes={
            "openinference.span.kind": "LLM",
            "llm.model_name": "m",
            "llm.token_count.prompt": 7,
            "llm.token_count.completion": 3,
        },
    ):
        pass
    with _tracer.start_as_current_span(
        "legacy", attributes={"gen_ai.usage.prompt_tokens": 5, "gen_ai.usage.completion_tokens": 1}
    ):
        pass
    return {"answer": "ok"}


def exits(input: Any) -> Any:
    """Call sys.exit() (a BaseException, not an Exception)."""
    raise SystemExit(3)


def evalview(input: dict[str, Any], mocks: dict[str, Any] | None = None) -> dict[str, Any]:
    """EvalView's input ``{query, context}``: call ``context.call``, answer ``context.answer``.

    ``context.quality`` is recorded as the ``output_quality`` score; the mocks received are
    kept in ``seen_mocks``.
    """
    context = input.get("context") or {}
    with _lock:
        seen_mocks.append(mocks)
    for name in context.get("call", []):
        with ai.tool(name):
            served, value = mocked_result(mocks, name, {"q": input["query"]})
            if served:
                seen_results.append(value)
    if "quality" in context:
        ai.score("output_quality", context["quality"])
    return {"response": context.get("answer", input["query"])}


seen_mocks: list[Any] = []
seen_results: list[Any] = []
not_callable = 42


def bernoulli_worse(input: dict[str, Any], seed: int | None = None) -> dict[str, Any]:
    """As :func:`bernoulli`, passing ``input["drop"]`` (default 0.5) less often."""
    rng = random.Random(seed)
    return {"answer": "yes" if rng.random() < input["p"] - input.get("drop", 0.5) else "no"}

"""One trial of a test: its calls (one, or one per turn) and the judgement of what they did.

A multi-turn test sends each turn in order within one trial, as EvalView does: the turn's
``query`` and ``context``, the test's tool definitions, and the conversation so far
(``context.conversation_history``, ``user`` / ``assistant`` messages). Each turn's own
``expected`` is checked against that turn's tool calls and output (checks named ``turn N:
...``); the test's ``expected`` against all tool calls and the last output. The trial passes
only when every check does.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.run._checks import evaluate_checks, output_text
from assay.run._score import EVALVIEW_SCORE, QUALITY_SCORE, evalview_score
from assay.run._suite import TestCase

MOCKS: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "assay_mocks", default=None
)
"""The running test's ``mocks``, handed to an in-process agent with a ``mocks`` parameter."""


_UNCHECKED = (
    "min_score not checked: EvalView's score needs an output-quality score (its LLM judge; "
    f"record a score named {QUALITY_SCORE!r}) and nothing else to score (no tools, no sequence)"
)
_PARTIAL = (
    "no output-quality score recorded: min_score judged on tool accuracy and sequence "
    f"correctness only (record a score named {QUALITY_SCORE!r} for the rest of EvalView's score)"
)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One call of the agent within a trial."""

    input: Any
    """What was sent."""
    output: Any
    """What came back."""
    started_ns: int
    """``time.time_ns()`` before the call (the clock of span start times)."""
    ended_ns: int
    """``time.time_ns()`` after it."""


@dataclass(slots=True)
class Judgement:
    """What a trial's checks and score came to."""

    checks: list[tuple[str, bool]] = field(default_factory=list)
    """``(check name, passed)``, in a stable order."""
    score: float | None = None
    """The EvalView score (tests from EvalView files), or None."""
    notes: set[tuple[str, str]] = field(default_factory=set)
    """``(message, test id)``: what the run must tell the user (see :func:`summarize`)."""


def _turn_input(test: TestCase, index: int, history: list[dict[str, str]]) -> Any:
    turn = test.turns[index]
    context: dict[str, Any] = dict(turn.context or {})
    base = test.input if isinstance(test.input, dict) else {}
    tools = (base.get("context") or {}).get("tools")
    if tools:
        context.setdefault("tools", tools)
    if history:
        context["conversation_history"] = list(history)
    return {"query": turn.query, "context": context or None}


def run_calls(test: TestCase, call: Callable[[Any], Any]) -> list[Exchange]:
    """Call the agent for one trial: once with the input, or once per turn, in order."""
    token = MOCKS.set(test.mocks)
    try:
        if not test.turns:
            started = time.time_ns()
            output = call(test.input)
            return [Exchange(test.input, output, started, time.time_ns())]
        history: list[dict[str, str]] = []
        exchanges = []
        for index, turn in enumerate(test.turns):
            payload = _turn_input(test, index, history)
            started = time.time_ns()
            output = call(payload)
            exchanges.append(Exchange(payload, output, started, time.time_ns()))
            history += [
                {"role": "user", "content": turn.query},
                {"role": "assistant", "content": output_text(output)},
            ]
        return exchanges
    finally:
        MOCKS.reset(token)


def judge(
    test: TestCase,
    exchanges: Sequence[Exchange],
    tools: Sequence[tuple[int, str]],
    scores: Sequence[tuple[str, float]],
    *,
    deadline: float | None = None,
) -> Judgement:
    """Check a trial and compute its EvalView score.

    Args:
        test: The test.
        exchanges: The trial's calls, from :func:`run_calls`.
        tools: The trial's tool calls as ``(start time ns, name)``.
        scores: The scores recorded in the trial, ``(name, value)``.
        deadline: ``time.monotonic()`` by which the checks must be done.

    Raises:
        CheckTimeoutError: A check did not finish by ``deadline``.
    """
    ordered = [name for _, name in sorted(tools)]
    out = Judgement()
    for i, (turn, exchange) in enumerate(zip(test.turns, exchanges, strict=False)):
        if turn.expected.empty:
            continue
        own = [n for t, n in sorted(tools) if exchange.started_ns <= t <= exchange.ended_ns]
        for name, ok in evaluate_checks(turn.expected, exchange.output, own, deadline=deadline):
            out.checks.append((f"turn {i + 1}: {name}", ok))
    last = exchanges[-1].output if exchanges else None
    out.checks += evaluate_checks(test.expected, last, ordered, deadline=deadline)
    if test.score is not None:
        parts = evalview_score(test.score, test.expected, ordered, scores)
        out.score = parts.value
        minimum = test.thresholds.min_score
        if minimum is not None and parts.value is not None:
            out.checks.append((f"{EVALVIEW_SCORE} >= {minimum:g}", parts.value >= minimum))
        if minimum is not None and parts.quality is None:
            out.notes.add((_UNCHECKED if parts.value is None else _PARTIAL, test.id))
    return out


def run_notes(
    tests: Sequence[TestCase], takes_mocks: Callable[[TestCase], bool], priced: bool
) -> list[str]:
    """What the run must say before it starts: limits and mocks it cannot apply."""
    notes = []
    for test in tests:
        if test.mocks and not takes_mocks(test):
            notes.append(
                f"test {test.id!r}: mocks not applied: they reach only an in-process agent "
                "(--agent module:function) with a `mocks` parameter"
            )
    unpriced = [t.id for t in tests if t.thresholds.max_cost is not None]
    if unpriced and not priced:
        notes.append(
            f"thresholds.max_cost not checked ({', '.join(unpriced)}): it needs a price table "
            "(--prices FILE)"
        )
    return notes


def summarize(notes: set[tuple[str, str]]) -> list[str]:
    """One line per message, naming the tests it concerns."""
    by_message: dict[str, list[str]] = {}
    for message, test_id in sorted(notes):
        by_message.setdefault(message, []).append(test_id)
    return [f"{m}: {', '.join(ids)}" for m, ids in by_message.items()]

"""Seeded plans for agents on the fake OpenAI server: tool turns, a final answer, a failed call.

One plan per run: the tools the model asks for, turn by turn (two in one turn included), the
answer it gives (right or wrong: the checker tells), and the request that fails with HTTP 500
(the run crashes). The server counts each run's requests and tokens into the run's ``Truth``.
"""

from __future__ import annotations

import os
import random
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collector_process import ASSAY
from fake_openai import FakeOpenAI, Turn
from recording import Recording, Truth, assert_trials_match

RIGHT = "sunny"
"""What the weather tool says: the right answer."""
WRONG = "rainy"

TURNS = ([["weather"]], [["weather", "search"]], [["search"], ["weather"]])
"""The tool turns a plan draws from; the second asks for two tools in one model turn."""


@dataclass
class Plan:
    """What the model does in one run."""

    turns: list[list[str]]
    """The tools it asks for, a list per model turn."""
    answer: str
    """Its final answer."""
    fail_at: int | None = None
    """The request (0-based, within the run) answered with HTTP 500."""
    final_tool: str | None = None
    """Answer by calling this tool with ``{"answer": ...}`` (smolagents' ``final_answer``)."""


def plans(cases: tuple[str, ...], runs_per_case: int, seed: int) -> list[tuple[str, Plan]]:
    """``runs_per_case`` plans per case, interleaved; each case's third run fails a call."""
    rng = random.Random(seed)
    out = []
    for i in range(runs_per_case * len(cases)):
        case = cases[i % len(cases)]
        turns = [list(t) for t in rng.choice(TURNS)]
        if i // len(cases) == 0:
            turns = [["weather", "search"]]  # every test has two tools in one turn
        answer = RIGHT if rng.random() < 0.7 else WRONG
        fail_at = 1 if i // len(cases) == 2 else None  # after the first tool turn
        out.append((case, Plan(turns, answer, fail_at)))
    return out


@dataclass
class ScriptedServer:
    """The fake server playing the current run's plan."""

    fake: FakeOpenAI = field(default_factory=FakeOpenAI)
    plan: Plan | None = None
    truth: Truth | None = None
    usage_reported: bool = True
    """False when the client streams without asking for usage: the run's tokens are unknown."""
    _request: int = 0

    def start(self) -> ScriptedServer:
        self.fake.script = self._answer
        self.fake.start()
        return self

    @property
    def base_url(self) -> str:
        return self.fake.base_url

    def begin(self, plan: Plan, truth: Truth, *, usage_reported: bool = True) -> None:
        """Play ``plan`` for the run whose truth is ``truth``."""
        self.plan, self.truth, self._request = plan, truth, 0
        self.usage_reported = usage_reported
        if not usage_reported:
            truth.input_tokens = truth.output_tokens = None  # type: ignore[assignment]

    def _answer(self, body: dict[str, Any]) -> Turn:
        assert self.plan is not None and self.truth is not None
        i, self._request = self._request, self._request + 1
        truth = self.truth
        truth.mark()
        truth.llm_calls += 1
        if i == self.plan.fail_at:
            return Turn(fail=True)
        if i < len(self.plan.turns):
            calls = tuple((name, {"q": f"{name} {i}"}) for name in self.plan.turns[i])
            turn = Turn(tool_calls=calls, input_tokens=20 + 5 * i, output_tokens=3 + i)
        elif self.plan.final_tool is not None:
            calls = ((self.plan.final_tool, {"answer": self.plan.answer}),)
            turn = Turn(tool_calls=calls, input_tokens=20 + 5 * i, output_tokens=3 + i)
        else:
            turn = Turn(text=self.plan.answer, input_tokens=20 + 5 * i, output_tokens=3 + i)
        if self.usage_reported:
            truth.input_tokens += turn.input_tokens
            truth.output_tokens += turn.output_tokens
        return turn


def checker(truth: Truth) -> bool:
    """Our own checker: the answer is the weather tool's."""
    return truth.answer is not None and RIGHT in truth.answer and WRONG not in truth.answer


def tools(truth: Truth) -> list[Callable[[str], str]]:
    """The agent's tools, plain functions recording what ran (each framework wraps them)."""

    def weather(q: str) -> str:
        """The weather.

        Args:
            q: What to look up.
        """
        truth.mark()
        truth.tools.append("weather")
        return RIGHT

    def search(q: str) -> str:
        """Search the web.

        Args:
            q: What to look up.
        """
        truth.mark()
        truth.tools.append("search")
        return "found"

    return [weather, search]


PASS_WHEN = "correctness.label == pass"
"""The rule that reads the checker's evaluation (bare runs; API runs hold a check)."""


def assert_judged_runs_match(
    recording: Recording, source: str, api: bool, test_attribute: str | None = None
) -> None:
    """Every trial of one path equals its run's truth; outcomes came from the checker too."""
    options: dict[str, Any] = {"pass_when": PASS_WHEN}
    if not api:
        options["test_attribute"] = test_attribute
    trials = recording.trials(source, api=api, **options)
    assert_trials_match(trials, recording.api if api else recording.raw)
    assert sorted(set(trials["outcome"])) == ["error", "fail", "pass"]


DOC = Path(__file__).parents[2] / "docs" / "integrations.md"


def documented_commands(heading: str) -> list[list[str]]:
    """The ``$ assay ...`` commands of one section of docs/integrations.md."""
    text = DOC.read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [shlex.split(line[2:]) for line in section.splitlines() if line.startswith("$ assay ")]


def assert_documented_commands_hold(heading: str, recording: Recording) -> None:
    """Run the section's commands on the bare runs: describe suggests the documented attribute,
    and analyze counts each test's passes and trials as the runs had them."""
    commands = documented_commands(heading)
    assert [argv[1] for argv in commands] == ["describe", "analyze"]
    env = {**os.environ, "COLUMNS": "200"}
    outputs = []
    for argv in commands:
        args = [str(recording.parquet_raw) if a == "traces" else a for a in argv[1:]]
        done = subprocess.run([ASSAY, *args], capture_output=True, text=True, env=env)
        # 1: some test FAILs, 3: some is INCONCLUSIVE (docs/cli.md); 2 would be bad input.
        assert done.returncode in (0, 1, 3), done.stderr
        outputs.append(done.stdout)
    attribute = commands[1][commands[1].index("--test-attribute") + 1]
    assert f"try: assay analyze PATH --test-attribute {attribute}" in outputs[0]
    for test in {t.test_id for t in recording.raw}:
        runs = [t for t in recording.raw if t.test_id == test]
        passed = sum(t.outcome == "pass" for t in runs)
        assert f"({passed}/{len(runs)})" in outputs[1].split(test, 1)[1].splitlines()[0]

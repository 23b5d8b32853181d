"""Suites and test cases: what a suite file describes (``docs/suites.md``).

Loading and validating the YAML is :mod:`assay.run._suite_load`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_RUNS = 30
"""Maximum trials per test when neither the suite nor a flag says otherwise (DESIGN.md)."""
DEFAULT_PASS_RATE = 0.8
"""The pass-rate threshold by default (DESIGN.md)."""
DEFAULT_CONFIDENCE = 0.95
"""Confidence level by default: alpha = 1 - confidence."""


@dataclass(frozen=True, slots=True)
class OutputExpectation:
    """What the agent's output must (not) contain."""

    contains: tuple[str, ...] = ()
    """Substrings that must all appear in the output text."""
    not_contains: tuple[str, ...] = ()
    """Substrings that must not appear in the output text."""
    regex: tuple[str, ...] = ()
    """Regular expressions that must all match somewhere in the output text (``re.search``)."""
    json_schema: Mapping[str, Any] | None = None
    """A JSON Schema the output (or the JSON in the output text) must satisfy."""


@dataclass(frozen=True, slots=True)
class Expected:
    """Checks on a trial: its tool calls and its output."""

    tools: tuple[str, ...] = ()
    """Tools that must each be called at least once."""
    tool_sequence: tuple[str, ...] = ()
    """Tools that must be called in this order (other calls may come in between)."""
    forbidden_tools: tuple[str, ...] = ()
    """Tools that must not be called."""
    output: OutputExpectation = field(default_factory=OutputExpectation)
    """Checks on the output."""

    @property
    def empty(self) -> bool:
        """True when nothing is checked."""
        return not (self.tools or self.tool_sequence or self.forbidden_tools) and (
            self.output == OutputExpectation()
        )


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Per-trial limits: a trial breaking one fails."""

    min_score: float | None = None
    """Every score the trial records must be at least this."""
    max_cost: float | None = None
    """Cost of the trial in USD at most this (needs a price table)."""
    max_latency: float | None = None
    """Duration of the trial in milliseconds at most this."""


@dataclass(frozen=True, slots=True)
class Variance:
    """Statistical mode: how many trials, which pass rate, with what confidence."""

    runs: int = DEFAULT_RUNS
    """Maximum number of trials (adaptive stopping may use fewer)."""
    pass_rate: float = DEFAULT_PASS_RATE
    """The required pass rate (the threshold)."""
    min_mean_score: float | None = None
    """The mean of the trials' scores must be at least this."""
    max_std_dev: float | None = None
    """The standard deviation of the trials' scores must be at most this."""
    confidence_level: float = DEFAULT_CONFIDENCE
    """Confidence of the verdict; the sequential test's alpha is ``1 - confidence_level``."""


@dataclass(frozen=True, slots=True)
class TestCase:
    """One test case of a suite."""

    __test__ = False  # not a pytest test class

    id: str
    """The test id (``id`` or ``name``), unique in the suite."""
    input: Any
    """The agent's input: any JSON-able value."""
    expected: Expected
    """Checks on each trial."""
    thresholds: Thresholds
    """Per-trial limits."""
    variance: Variance
    """Trials, pass rate, confidence."""
    difficulty: str | None
    """A free label (``easy``, ``hard``...) to filter on."""
    tags: tuple[str, ...]
    """Free labels to filter on."""
    source: str
    """``file:line`` where the test is defined."""


@dataclass(frozen=True, slots=True)
class Suite:
    """Test cases loaded from a file or a folder."""

    name: str
    """Suite name (``name:`` of the file, else the file or folder name)."""
    tests: tuple[TestCase, ...]
    """The test cases, in file order."""
    path: str
    """What was loaded."""

    def select(
        self, *, difficulty: str | None = None, tags: Sequence[str] = ()
    ) -> tuple[TestCase, ...]:
        """The tests with this difficulty (if given) and at least one of these tags (if any)."""
        chosen = []
        for test in self.tests:
            if difficulty is not None and test.difficulty != difficulty:
                continue
            if tags and not set(tags) & set(test.tags):
                continue
            chosen.append(test)
        return tuple(chosen)

"""Suites and test cases: what a suite file describes (``docs/suites.md``).

Loading and validating the YAML is :mod:`assay.run._suite_load` (EvalView's own fields:
:mod:`assay.run._evalview`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.quality import Finding

DEFAULT_RUNS = 30
"""Maximum trials per test when neither the suite nor a flag says otherwise (docs/cli.md)."""
DEFAULT_PASS_RATE = 0.8
"""The pass-rate threshold by default (docs/cli.md)."""
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
    """Patterns that must all match somewhere in the output text (``re`` syntax, deadline-bound)."""
    json_schema: Mapping[str, Any] | None = None
    """A JSON Schema the output (or the JSON in the output text) must satisfy."""
    no_pii: bool = False
    """The output text must hold no e-mail, phone, SSN, card number or street address."""
    ignore_case: bool = False
    """Match ``contains``, ``not_contains`` and ``regex`` ignoring case (EvalView's way)."""


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
    tool_categories: tuple[str, ...] = ()
    """Categories (``file_read``, ``search``...) of which at least one tool must be called."""
    categories: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """The tools of each category named in ``tool_categories``."""
    sequence_mode: str = "subsequence"
    """How ``tool_sequence`` matches: ``subsequence``, ``exact`` or ``unordered``."""

    @property
    def empty(self) -> bool:
        """True when nothing is checked."""
        return not (
            self.tools or self.tool_sequence or self.forbidden_tools or self.tool_categories
        ) and (self.output == OutputExpectation())


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
class ScoreWeights:
    """EvalView's score: a weighted sum of three parts, each 0-100 (weights sum to 1)."""

    tool_accuracy: float = 0.3
    """Share of the expected tools and tool categories the trial used."""
    output_quality: float = 0.5
    """A score the agent records (EvalView's LLM judge); renormalised away when absent."""
    sequence_correctness: float = 0.2
    """Share of ``tool_sequence`` completed in order (EvalView's partial credit)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a multi-turn test: sent in order within one trial."""

    query: str
    """The user's message."""
    context: Mapping[str, Any] | None
    """Extra context sent with it."""
    expected: Expected
    """What this turn must do (its own tool calls and its own output)."""


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """An agent named by a file (EvalView's ``adapter`` and ``endpoint``)."""

    adapter: str
    """EvalView's adapter name; assay reaches ``http`` itself."""
    endpoint: str | None
    """The URL (or what the adapter needs)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra HTTP headers."""
    timeout: float | None = None
    """Seconds per request (the run's ``--timeout`` still bounds the trial)."""
    model: str | None = None
    """Model name for the token usage an endpoint reports (pricing)."""
    source: str = ""
    """Where it is defined (``file`` or ``file:line``)."""


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
    turns: tuple[Turn, ...] = ()
    """A multi-turn conversation (empty: one call with ``input``)."""
    score: ScoreWeights | None = None
    """EvalView's score for ``min_score`` (files in EvalView's layout), else None."""
    agent: AgentSpec | None = None
    """The agent the file names, used when no agent flag is given."""
    mocks: Mapping[str, Any] | None = None
    """EvalView's ``mocks``, handed to an in-process agent that takes ``mocks``."""
    suite_type: str | None = None
    """EvalView's ``capability`` or ``regression`` (also a tag)."""
    fixed_runs: bool = False
    """Run exactly the maximum number of trials (EvalView's statistical mode)."""


@dataclass(frozen=True, slots=True)
class Suite:
    """Test cases loaded from a file or a folder."""

    name: str
    """Suite name (``name:`` of the file, else the file or folder name)."""
    tests: tuple[TestCase, ...]
    """The test cases, in file order."""
    path: str
    """What was loaded."""
    findings: tuple[Finding, ...] = ()
    """What assay read but cannot honour, one finding per file (``--strict`` refuses them)."""
    agent: AgentSpec | None = None
    """The agent of the folder's ``config.yaml`` (EvalView's layout), if any."""

    def select(
        self, *, difficulty: str | None = None, tags: Sequence[str] = ()
    ) -> tuple[TestCase, ...]:
        """The tests with this difficulty (if given) and at least one of these tags (if any).

        Tags match ignoring case, as EvalView's ``--tag`` does.
        """
        wanted = {t.strip().casefold() for t in tags}
        chosen = []
        for test in self.tests:
            if difficulty is not None and test.difficulty != difficulty:
                continue
            if wanted and not wanted & {t.casefold() for t in test.tags}:
                continue
            chosen.append(test)
        return tuple(chosen)

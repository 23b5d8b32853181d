"""The result of an analysis, per test and for the whole run: what every report renders."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from assay.quality import DataQuality
from assay.stats import Interval
from assay.verdict._threshold import Verdict


@dataclass(frozen=True, slots=True)
class Usage:
    """LLM usage summed over a test's trials."""

    llm_calls: int
    """Number of LLM calls."""
    input_tokens: int
    """Input (prompt) tokens."""
    output_tokens: int
    """Output (completion) tokens."""


@dataclass(frozen=True, slots=True)
class DurationSummary:
    """Wall-clock duration of a test's trials, in seconds."""

    mean: float | None
    """Mean duration."""
    p90: float | None
    """90th percentile (linear interpolation)."""

    @classmethod
    def of(cls, durations: Any) -> DurationSummary:
        """Mean and p90 of durations in seconds (None for none); NaN values are left out."""
        values = np.asarray(durations, dtype=np.float64)
        values = values[~np.isnan(values)]
        if values.size == 0:
            return cls(None, None)
        return cls(float(values.mean()), float(np.percentile(values, 90)))


@dataclass(frozen=True, slots=True)
class TestResult:
    """Every figure assay reports for one test, and its verdict."""

    __test__ = False  # not a pytest test class

    test_id: str
    """The test case."""
    n: int
    """Trials counted (error trials are left out under ``errors="exclude"``)."""
    passed: int
    """Passing trials."""
    errors: int
    """Error trials (the harness or a dependency broke), always reported."""
    pass_rate: float | None
    """passed / n, or None when n = 0."""
    interval: Interval | None
    """Confidence interval of the pass rate, or None when n = 0."""
    threshold: float
    """Required pass rate."""
    verdict: Verdict
    """PASS, FAIL or INCONCLUSIVE."""
    usage: Usage
    """LLM usage over the test's trials."""
    duration_s: DurationSummary
    """Trial durations."""
    pass_at_k: dict[str, float | None] | None = None
    """pass@k keyed by k (as a string); None until computed."""
    pass_hat_k: dict[str, float | None] | None = None
    """pass^k keyed by k (as a string); None until computed."""
    score: Any = None
    """Summary of the test's scores, or None when no scores were recorded."""
    tool_consistency: Any = None
    """Tool-choice consistency, or None."""
    flakiness: Any = None
    """Flakiness score, category and factors, or None."""
    regression: Any = None
    """Regression verdict against a baseline, when one was given."""
    notes: tuple[str, ...] = ()
    """Plain-language remarks (e.g. how many more trials would likely settle it)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further figures keyed by name (rendered into JSON as-is)."""


@dataclass(frozen=True, slots=True)
class AnalysisResult:
    """The results of every test of one analysis."""

    tests: tuple[TestResult, ...]
    """One result per test, ordered by test id."""
    options: dict[str, Any]
    """The options the analysis ran with (threshold, confidence, ...)."""
    skipped_files: tuple[tuple[str, str], ...] = ()
    """Files left out under ``--skip-bad-files``: (path, reason)."""
    notes: tuple[str, ...] = ()
    """Remarks about the whole analysis."""
    data_quality: DataQuality = DataQuality()
    """What assay noticed about its input (incomplete traces, a nesting mapping, ...)."""

    @property
    def counts(self) -> dict[str, int]:
        """Number of tests per verdict (every verdict present, zeros included)."""
        counted = Counter(t.verdict for t in self.tests)
        return {v.value: counted.get(v, 0) for v in Verdict}

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """0 all passed, 1 any FAIL, 3 INCONCLUSIVE but no FAIL (0 with ``inconclusive_ok``)."""
        return exit_code((t.verdict for t in self.tests), inconclusive_ok=inconclusive_ok)


def exit_code(verdicts: Any, *, inconclusive_ok: bool = False) -> int:
    """The process exit code for a set of verdicts (DESIGN.md): 0, 1, or 3."""
    seen = set(verdicts)
    if Verdict.FAIL in seen:
        return 1
    if Verdict.INCONCLUSIVE in seen and not inconclusive_ok:
        return 3
    return 0

"""What a run produces: one record per trial, one result per test, exit codes."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.stats import (
    Interval,
    flakiness,
    pass_at_ks,
    pass_hat_ks,
    score_summary,
    tool_consistency,
)
from assay.verdict import AnalysisResult, DurationSummary, Usage, Verdict, exit_code
from assay.verdict import TestResult as AnalysisTestResult


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """One finished trial, as the runner saw it."""

    test_id: str
    """The test case."""
    index: int
    """0-based trial number within the test."""
    outcome: str
    """``pass``, ``fail`` or ``error``."""
    duration_s: float
    """Wall time of the trial."""
    input_tokens: int
    """Prompt tokens recorded in the trial."""
    output_tokens: int
    """Completion tokens recorded in the trial."""
    llm_calls: int
    """LLM calls recorded in the trial."""
    cost: float
    """USD, from the price table (0 without one)."""
    scores: tuple[float, ...]
    """Values of the scores the trial recorded."""
    failed_checks: tuple[str, ...]
    """Names of the checks that failed."""
    error: str | None
    """What went wrong, for an ``error`` trial."""
    tools: tuple[str, ...] = ()
    """The trial's tool calls in start-time order."""

    @property
    def passed(self) -> bool:
        """True for a passing trial."""
        return self.outcome == "pass"


@dataclass(frozen=True, slots=True)
class TestResult:
    """The verdict on one test case."""

    __test__ = False  # not a pytest test class

    test_id: str
    """The test case."""
    verdict: Verdict
    """PASS, FAIL or INCONCLUSIVE."""
    n: int
    """Trials counted (error trials are left out under ``errors="exclude"``)."""
    passed: int
    """Passing trials."""
    errors: int
    """``error`` trials (counted as failures)."""
    max_runs: int
    """The most trials this test could have used."""
    threshold: float
    """The required pass rate."""
    interval: Interval | None
    """Wilson interval of the pass rate over all finished trials (None without trials)."""
    method: str
    """``sprt``, ``confidence-sequence`` or ``fixed``."""
    decided_at: int | None
    """Trials after which the sequential test settled (None if it did not)."""
    reason: str
    """Why this verdict, in a few words."""
    mean_score: float | None
    """Mean trial score, if the trials recorded scores."""
    tokens: int
    """Tokens used by the test's trials."""
    cost: float
    """USD spent by the test's trials."""
    first_error: str | None = None
    """``trial <index>: <message>`` of the first ``error`` trial, if any."""
    trials_run: int = 0
    """Trials finished, including error trials left out of ``n`` under ``errors="exclude"``."""
    anytime_interval: tuple[float, float] | None = None
    """Anytime-valid bounds on the pass rate when adaptive (lower at level alpha, upper at
    beta): unlike the Wilson interval, valid although the number of trials was chosen by
    looking at the results."""

    @property
    def pass_rate(self) -> float | None:
        """Observed pass rate."""
        return self.passed / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class RunResult:
    """Everything a run did."""

    suite: str
    """Suite name."""
    run_id: str
    """``assay.run.id`` of every trial."""
    out: str
    """The trace set the trials were written to."""
    tests: tuple[TestResult, ...]
    """One result per selected test, in suite order."""
    trials: tuple[TrialRecord, ...]
    """Every finished trial, in completion order."""
    max_trials: int
    """The most trials the run could have used (sum of the tests' maxima)."""
    elapsed_s: float
    """Wall time."""
    tokens: int
    """Tokens used."""
    cost: float
    """USD spent."""
    stop_reason: str | None
    """Why the run stopped early (a budget, an interrupt), or None."""
    interrupted: bool
    """True if stopped by Ctrl-C."""
    warnings: tuple[str, ...]
    """Things the user should know (e.g. models without a price)."""
    errors_policy: str = "count"
    """``count`` or ``exclude``: how error trials entered the pass rates."""

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """0 all passed, 1 any FAIL, 3 any INCONCLUSIVE and no FAIL (0 if ``inconclusive_ok``)."""
        return exit_code((t.verdict for t in self.tests), inconclusive_ok=inconclusive_ok)

    def _figures(self, records: list[TrialRecord], test: TestResult) -> dict[str, Any]:
        """pass@k, pass^k, score summary, tool consistency and flakiness of a test's trials."""
        counted = [
            r for r in records if not (self.errors_policy == "exclude" and r.outcome == "error")
        ]
        n, c = len(counted), sum(r.passed for r in counted)
        values = [statistics.fmean(r.scores) for r in counted if r.scores]
        confidence = test.interval.confidence if test.interval else 0.95
        figures: dict[str, Any] = {
            "pass_at_k": {str(k): v.value for k, v in pass_at_ks(n, c).items()} if n else None,
            "pass_hat_k": {str(k): v.value for k, v in pass_hat_ks(n, c).items()} if n else None,
            "score": score_summary(values, confidence) if values else None,
            "tool_consistency": tool_consistency([r.tools for r in records])
            if len(records) >= 2
            else None,
            "flakiness": None,
        }
        if records:
            figures["flakiness"] = flakiness(
                np.array([r.passed for r in records]),
                errors=np.array([r.outcome == "error" for r in records]),
                scores=np.array(
                    [statistics.fmean(r.scores) if r.scores else np.nan for r in records]
                ),
                tool_sequences=[r.tools for r in records],
                step_counts=np.array([len(r.tools) for r in records]),
                latencies=np.array([r.duration_s for r in records]),
            )
        return figures

    def to_analysis(self) -> AnalysisResult:
        """The run as an analysis result, for the reports of ``assay analyze``.

        Counts, intervals, usage and durations come from this run's trials only; the verdict is
        the runner's (the sequential test's when adaptive), its reason a note.
        """
        by_test: dict[str, list[TrialRecord]] = {t.test_id: [] for t in self.tests}
        for record in self.trials:
            by_test[record.test_id].append(record)
        results = []
        for t in self.tests:
            records = sorted(by_test[t.test_id], key=lambda r: r.index)
            durations = np.array([r.duration_s for r in records], dtype=float)
            scores = [statistics.fmean(r.scores) for r in records if r.scores]
            figures = self._figures(records, t)
            results.append(
                AnalysisTestResult(
                    test_id=t.test_id,
                    n=t.n,
                    passed=t.passed,
                    errors=t.errors,
                    pass_rate=t.pass_rate,
                    interval=t.interval,
                    threshold=t.threshold,
                    verdict=t.verdict,
                    usage=Usage(
                        sum(r.llm_calls for r in records),
                        sum(r.input_tokens for r in records),
                        sum(r.output_tokens for r in records),
                    ),
                    duration_s=DurationSummary.of(durations),
                    pass_at_k=figures["pass_at_k"],
                    pass_hat_k=figures["pass_hat_k"],
                    score=figures["score"],
                    tool_consistency=figures["tool_consistency"],
                    flakiness=figures["flakiness"],
                    notes=(t.reason,)
                    + ((f"first error, {t.first_error}",) if t.first_error else ()),
                    extra={
                        "method": t.method,
                        "max_runs": t.max_runs,
                        "decided_at": t.decided_at,
                        "mean_score": statistics.fmean(scores) if scores else None,
                        "cost_usd": t.cost,
                        "anytime_ci": (
                            {"low": t.anytime_interval[0], "high": t.anytime_interval[1]}
                            if t.anytime_interval
                            else None
                        ),
                    },
                )
            )
        confidence = next((t.interval.confidence for t in self.tests if t.interval), 0.95)
        return AnalysisResult(
            tests=tuple(results),
            options={
                "threshold": self.tests[0].threshold if self.tests else None,
                "confidence": confidence,
                "ci_method": "wilson",
                "errors": self.errors_policy,
                "run_id": self.run_id,
            },
            notes=tuple(self.warnings),
        )

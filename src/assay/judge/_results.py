"""The result of an analysis, per test and for the whole run: what every report renders."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from assay.judge._behaviour_result import BehaviourResult
from assay.judge._cost import CostSummary
from assay.judge._figures import DurationSummary, Usage
from assay.judge._judge_error_result import JudgeError, JudgeReport, ScoreCorrection
from assay.judge._regression import RegressionResult, ScoreRegressionResult
from assay.judge._sequential import SequentialOutcome
from assay.judge._sources import Share
from assay.judge._suite_result import SuiteResult
from assay.judge._threshold import Verdict
from assay.judge._tool_errors import ToolErrors
from assay.judge._variance import VarianceCheck
from assay.quality import DataQuality
from assay.stats import FailureFactor, Flakiness, Interval, ScoreSummary, ToolConsistency

OptionValue = str | float | int | bool | tuple[int, ...] | None
"""The value of one option an analysis ran with (as JSON renders it)."""


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
    usage: Usage | None
    """LLM usage over the test's trials; None when their work is unknown (``work_unknown``)."""
    duration_s: DurationSummary
    """Trial durations."""
    verdict_reason: str = ""
    """One sentence: what decided the verdict."""
    trials: int = 0
    """Every trial recorded for the test, error trials left out of ``n`` included."""
    pass_at_k: Mapping[str, float | None] | None = None
    """pass@k keyed by k (as a string); None without trials."""
    pass_hat_k: Mapping[str, float | None] | None = None
    """pass^k keyed by k (as a string); None without trials."""
    score: ScoreSummary | None = None
    """Summary of the primary score, or None when no scores were recorded."""
    primary_score: str | None = None
    """The name of the score summarised as ``score`` (the one recorded in most trials)."""
    scores: Mapping[str, ScoreSummary] = field(default_factory=dict)
    """Summary of every score, by name."""
    tool_consistency: ToolConsistency | None = None
    """Tool-choice consistency, or None with fewer than two trials."""
    flakiness: Flakiness | None = None
    """Flakiness score, category and factors, or None."""
    failure_explanations: tuple[FailureFactor, ...] = ()
    """What failing trials do differently, most significant first."""
    variance_checks: tuple[VarianceCheck, ...] = ()
    """The configured variance limits (mean score, score std) and whether they were met."""
    more_trials_needed: int | None = None
    """For INCONCLUSIVE: about how many more trials would likely settle it."""
    min_trials_for_pass: int | None = None
    """The fewest trials with which a PASS was possible at all."""
    sequential: SequentialOutcome | None = None
    """The replayed sequential test, when the trials record one that applies."""
    regression: RegressionResult | None = None
    """Regression verdict against a baseline, when one was given."""
    score_regression: ScoreRegressionResult | None = None
    """Score regression against a baseline (one-sided Mann–Whitney), when both have scores."""
    behaviour: BehaviourResult | None = None
    """What else changed against the baseline (the behaviour diff), when one was given."""
    cost: CostSummary | None = None
    """USD spent by the test's trials; None when the trials table has no cost."""
    threshold_verdict: Verdict | None = None
    """With a baseline, the verdict against the threshold (the verdict is the regression's)."""
    first_error: str | None = None
    """``trial <index>: <message>`` of the first error trial, if any."""
    notes: tuple[str, ...] = ()
    """Plain-language remarks (e.g. how many more trials would likely settle it)."""
    tool_errors: ToolErrors | None = None
    """Tool calls with status ERROR: count, trials, first messages, the trace to open."""
    runs: tuple[Share, ...] = ()
    """Trials per ``assay.run.id``, most first (several: the pass rate pools runs)."""
    agent_versions: tuple[Share, ...] = ()
    """Trials per ``assay.agent.version``, most first."""
    work_unknown: int = 0
    """Trials whose traces hold work-like spans no convention claims: their tool and LLM
    figures (tool paths, calls, tokens, cost, tool errors) are unknown, and left None."""
    judge_error: JudgeError | None = None
    """With people's labels (``--labels``): the corrected rate the verdict read, and the
    judge's own rate, interval and verdict beside it; None without labels."""
    judge_scores: tuple[ScoreCorrection, ...] = ()
    """With people's scores of trials of this test: each judged score's mean corrected by them
    (PPI++); reported, no verdict reads it."""


@dataclass(frozen=True, slots=True)
class AnalysisResult:
    """The results of every test of one analysis."""

    tests: tuple[TestResult, ...]
    """One result per test, ordered by test id."""
    options: Mapping[str, OptionValue]
    """The options the analysis ran with (threshold, confidence, ...)."""
    skipped_files: tuple[tuple[str, str], ...] = ()
    """Files left out under ``--skip-bad-files``: (path, reason)."""
    notes: tuple[str, ...] = ()
    """Remarks about the whole analysis."""
    data_quality: DataQuality = field(default_factory=DataQuality)
    """What assay noticed about its input (duplicates, incomplete traces, skipped files...)."""
    suites: tuple[SuiteResult, ...] = ()
    """One answer per suite over its cases (``assay.suite``; the set's own suite last)."""
    judge: JudgeReport | None = None
    """With people's labels (``--labels``): the judge's agreement with them; None without."""

    @property
    def counts(self) -> dict[str, int]:
        """Number of tests per verdict (every verdict present, zeros included)."""
        counted = Counter(t.verdict for t in self.tests)
        return {v.value: counted.get(v, 0) for v in Verdict}

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """0 all passed, 1 any FAIL, 3 INCONCLUSIVE but no FAIL (0 with ``inconclusive_ok``).

        The verdicts counted are every case's, every suite comparison's (with a baseline),
        and every suite's threshold verdict when a suite threshold was asked for
        (``--suite-threshold``) — docs/cli.md.
        """
        verdicts = [t.verdict for t in self.tests]
        for suite in self.suites:
            if suite.comparison is not None:
                verdicts.append(suite.comparison.verdict)
            if suite.counts:
                verdicts.append(suite.verdict)
        return exit_code(verdicts, inconclusive_ok=inconclusive_ok)


def exit_code(verdicts: Iterable[Verdict], *, inconclusive_ok: bool = False) -> int:
    """The process exit code for a set of verdicts (docs/cli.md): 0, 1, or 3."""
    seen = set(verdicts)
    if Verdict.FAIL in seen:
        return 1
    if Verdict.INCONCLUSIVE in seen and not inconclusive_ok:
        return 3
    return 0

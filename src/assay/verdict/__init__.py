"""Decisions from statistics: threshold, regression, sequential and variance-config verdicts."""

from assay.verdict._judgement import Judgement, SequentialDesign, SequentialTracker
from assay.verdict._regression import (
    RegressionResult,
    ScoreRegressionResult,
    adjust_regressions,
    decide_regression,
    regression_test,
    score_regression_test,
)
from assay.verdict._results import (
    AnalysisResult,
    DurationSummary,
    OptionValue,
    SequentialOutcome,
    TestResult,
    Usage,
    exit_code,
)
from assay.verdict._threshold import (
    ThresholdResult,
    Verdict,
    more_trials_needed,
    settle_probability,
    threshold_test,
    threshold_verdict,
)
from assay.verdict._variance import VarianceCheck, variance_checks

__all__ = [
    "AnalysisResult",
    "DurationSummary",
    "Judgement",
    "OptionValue",
    "RegressionResult",
    "ScoreRegressionResult",
    "SequentialDesign",
    "SequentialOutcome",
    "SequentialTracker",
    "TestResult",
    "ThresholdResult",
    "Usage",
    "VarianceCheck",
    "Verdict",
    "adjust_regressions",
    "decide_regression",
    "exit_code",
    "more_trials_needed",
    "regression_test",
    "score_regression_test",
    "settle_probability",
    "threshold_test",
    "threshold_verdict",
    "variance_checks",
]

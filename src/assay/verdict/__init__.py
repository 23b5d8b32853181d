"""Decisions from statistics: threshold, regression, sequential, variance and behaviour verdicts."""

from assay.verdict._behaviour import behaviour_diff, behaviour_diffs
from assay.verdict._behaviour_result import (
    BehaviourChange,
    BehaviourResult,
    BehaviourVerdict,
    describe_change,
)
from assay.verdict._cost import CostSummary
from assay.verdict._gate import FailOn, gate_failures, parse_fail_on
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
    "BehaviourChange",
    "BehaviourResult",
    "BehaviourVerdict",
    "CostSummary",
    "DurationSummary",
    "FailOn",
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
    "behaviour_diff",
    "behaviour_diffs",
    "decide_regression",
    "describe_change",
    "exit_code",
    "gate_failures",
    "more_trials_needed",
    "parse_fail_on",
    "regression_test",
    "score_regression_test",
    "settle_probability",
    "threshold_test",
    "threshold_verdict",
    "variance_checks",
]

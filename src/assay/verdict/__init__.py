"""Decisions from statistics: threshold, regression and variance-config verdicts."""

from assay.verdict._results import (
    AnalysisResult,
    DurationSummary,
    TestResult,
    Usage,
    exit_code,
)
from assay.verdict._threshold import ThresholdResult, Verdict, threshold_verdict

__all__ = [
    "AnalysisResult",
    "DurationSummary",
    "TestResult",
    "ThresholdResult",
    "Usage",
    "Verdict",
    "exit_code",
    "threshold_verdict",
]

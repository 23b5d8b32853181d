"""Decisions from statistics: threshold, regression and variance-config verdicts."""

from assay.verdict._threshold import ThresholdResult, Verdict, threshold_verdict

__all__ = ["ThresholdResult", "Verdict", "threshold_verdict"]

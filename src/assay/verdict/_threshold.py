"""The three-valued threshold verdict: is the pass rate at least the threshold?"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from assay.errors import ConfigError
from assay.stats import Interval


class Verdict(enum.StrEnum):
    """The outcome of a statistical check."""

    PASS = "PASS"
    """The evidence shows the requirement is met."""
    FAIL = "FAIL"
    """The evidence shows the requirement is not met."""
    INCONCLUSIVE = "INCONCLUSIVE"
    """The evidence does not settle it either way; more trials would."""


@dataclass(frozen=True, slots=True)
class ThresholdResult:
    """A threshold verdict and the interval it rests on."""

    verdict: Verdict
    """PASS if the whole interval is at or above the threshold, FAIL if wholly below."""
    interval: Interval
    """The confidence interval of the pass rate."""
    threshold: float
    """The required pass rate."""


def threshold_verdict(interval: Interval, threshold: float) -> ThresholdResult:
    """Decide PASS / FAIL / INCONCLUSIVE for a pass-rate interval against ``threshold``.

    PASS if ``interval.low >= threshold``; FAIL if ``interval.high < threshold``; otherwise
    INCONCLUSIVE (the interval straddles the threshold).
    """
    if not 0 <= threshold <= 1:
        raise ConfigError(f"threshold must lie in [0, 1] (got {threshold})")
    if interval.low >= threshold:
        verdict = Verdict.PASS
    elif interval.high < threshold:
        verdict = Verdict.FAIL
    else:
        verdict = Verdict.INCONCLUSIVE
    return ThresholdResult(verdict, interval, threshold)

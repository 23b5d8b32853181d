"""Confidence intervals for a binomial proportion (a pass rate)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats as sps

from assay.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Interval:
    """A two-sided confidence interval for a proportion."""

    low: float
    """Lower bound, in [0, 1]."""
    high: float
    """Upper bound, in [0, 1]."""
    confidence: float
    """Confidence level, e.g. 0.95."""
    method: str
    """How it was computed, e.g. ``"wilson"``."""


def _check(successes: int, n: int, confidence: float) -> None:
    if n < 1:
        raise ConfigError(f"an interval needs at least one trial (n = {n})")
    if not 0 <= successes <= n:
        raise ConfigError(f"successes must lie in [0, n] (got {successes} of {n})")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie strictly between 0 and 1 (got {confidence})")


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The Wilson score interval for ``successes`` out of ``n``, two-sided.

    Wilson (1927), "Probable inference, the law of succession, and statistical inference",
    JASA 22:209–212. Unlike the normal-approximation (Wald) interval it stays inside [0, 1] and
    keeps close to its nominal coverage for small n and rates near 0 or 1.

    Args:
        successes: Number of passing trials.
        n: Number of trials (≥ 1).
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        The interval; equal to ``scipy.stats.binomtest(successes, n).proportion_ci(confidence,
        "wilson")``.
    """
    _check(successes, n, confidence)
    z = float(sps.norm.isf((1 - confidence) / 2))
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(low, high, confidence, "wilson")

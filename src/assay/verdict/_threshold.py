"""The three-valued threshold verdict: is the pass rate at least the threshold?"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from assay.errors import ConfigError
from assay.stats import Interval, min_trials_for_pass, proportion_bounds, proportion_interval


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
    more_trials_needed: int | None = None
    """For INCONCLUSIVE: further trials that would likely settle it at the observed rate (see
    :func:`more_trials_needed`); None otherwise, or if it would not settle."""
    min_trials_for_pass: int | None = None
    """Fewest trials with which PASS is possible at all (all passing); None if unknown."""
    note: str | None = None
    """A warning for the reader, e.g. that PASS is impossible with this few trials."""


def _decide(low: float, high: float, threshold: float) -> Verdict:
    if low >= threshold:
        return Verdict.PASS
    if high < threshold:
        return Verdict.FAIL
    return Verdict.INCONCLUSIVE


def _check_threshold(threshold: float) -> None:
    if not 0 <= threshold <= 1:
        raise ConfigError(f"threshold must lie in [0, 1] (got {threshold})")


def threshold_verdict(interval: Interval, threshold: float) -> ThresholdResult:
    """Decide PASS / FAIL / INCONCLUSIVE for a pass-rate interval against ``threshold``.

    PASS if ``interval.low >= threshold``; FAIL if ``interval.high < threshold``; otherwise
    INCONCLUSIVE (the interval straddles the threshold). Use :func:`threshold_test` to also
    get the number of further trials and the small-n warning.
    """
    _check_threshold(threshold)
    return ThresholdResult(_decide(interval.low, interval.high, threshold), interval, threshold)


def more_trials_needed(
    successes: int,
    n: int,
    threshold: float,
    confidence: float = 0.95,
    method: str = "wilson",
    max_additional: int = 100_000,
) -> int | None:
    """Further trials that would likely settle an INCONCLUSIVE threshold verdict.

    Rule: assume future trials pass at the observed rate p̂ = successes / n. For each total
    m > n, project round(p̂ · m) passes of m and ask whether that interval lies wholly on one
    side of the threshold; the answer is the smallest such m minus n. Since the projected
    count sits at the centre of where the real count will land, this is roughly the number
    after which the verdict is settled about half the time — a guide for the next run, not a
    guarantee. None when p̂ equals the threshold (it never settles) or nothing up to
    ``max_additional`` settles it.

    Args:
        successes: Passing trials so far.
        n: Trials so far (≥ 1).
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.
        max_additional: Largest number of further trials considered.

    Returns:
        The number of further trials, 0 if already settled, or None.
    """
    _check_threshold(threshold)
    current = proportion_interval(successes, n, confidence, method)
    if _decide(current.low, current.high, threshold) is not Verdict.INCONCLUSIVE:
        return 0
    rate = successes / n
    if rate == threshold:
        return None
    chunk = 4096
    for start in range(n + 1, n + max_additional + 1, chunk):
        totals = np.arange(start, min(start + chunk, n + max_additional + 1))
        projected = np.clip(np.rint(rate * totals), 0, totals)
        low, high = proportion_bounds(projected, totals, confidence, method)
        settled = (low >= threshold) | (high < threshold)
        if settled.any():
            return int(totals[int(np.argmax(settled))]) - n
    return None


def threshold_test(
    successes: int,
    n: int,
    threshold: float = 0.80,
    confidence: float = 0.95,
    method: str = "wilson",
) -> ThresholdResult:
    """The full threshold check from counts: interval, verdict, further trials, warning.

    Args:
        successes: Passing trials.
        n: Trials (≥ 1).
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method (see :func:`assay.stats.proportion_interval`).

    Returns:
        The result; ``note`` warns when n is too small for PASS to be possible at all.
    """
    _check_threshold(threshold)
    interval = proportion_interval(successes, n, confidence, method)
    verdict = _decide(interval.low, interval.high, threshold)
    needed = min_trials_for_pass(threshold, confidence, method)
    more = None
    if verdict is Verdict.INCONCLUSIVE:
        more = more_trials_needed(successes, n, threshold, confidence, method)
    note = None
    if needed is None:
        note = f"PASS at {threshold:g} is impossible with a {method} interval at any n"
    elif n < needed:
        note = (
            f"PASS at {threshold:g} is impossible with {n} trials even if all pass; "
            f"it needs at least {needed} ({method}, {confidence:g} confidence)"
        )
    return ThresholdResult(verdict, interval, threshold, more, needed, note)

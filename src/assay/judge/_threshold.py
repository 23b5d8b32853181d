"""The three-valued threshold verdict: is the pass rate at least the threshold?"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

import numpy as np

from assay.choices import IntervalMethod
from assay.errors import ConfigError
from assay.stats import (
    Interval,
    pass_rate_sequence,
    replaced_bounds,
    smallest_passing,
    verdict_fail_counts,
    verdict_interval,
    verdict_min_trials_for_pass,
    verdict_pass_counts,
)


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
    """For INCONCLUSIVE: further trials that would likely settle it at the observed rate when
    all the trials are judged again, as a second look must be, with the anytime-valid interval
    (:func:`follow_up_trials_needed`); None otherwise, or if it would not settle."""
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


def settle_probability(
    successes: int,
    n: int,
    additional: int,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> float:
    """P(the verdict is PASS or FAIL after ``additional`` more trials), at the observed rate.

    Future passes are Binomial(additional, successes / n); the probability is the exact sum
    over those outcomes whose verdict interval (of all n + additional trials, read in one
    look; :func:`assay.stats.verdict_interval`) lies wholly on one side of the threshold.

    Args:
        successes: Passing trials so far.
        n: Trials so far (≥ 1).
        additional: Further trials (≥ 0).
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        The probability in [0, 1].
    """
    from scipy import stats as sps

    _check_threshold(threshold)
    if n < 1 or not 0 <= successes <= n or additional < 0:
        raise ConfigError(
            f"need n >= 1, 0 <= successes <= n and additional >= 0 "
            f"(got {successes}, {n}, {additional})"
        )
    # Every bound rises with the count: PASS from one count on, FAIL below another, so the
    # settle probability is two binomial tails (the same sum over the outcomes, exactly).
    total = np.array([n + additional])
    first_pass = int(verdict_pass_counts(total, threshold, confidence, method)[0])
    first_not_fail = int(verdict_fail_counts(total, threshold, confidence, method)[0])
    rate = successes / n
    passes = sps.binom.sf(first_pass - successes - 1, additional, rate)
    fails = sps.binom.cdf(first_not_fail - successes - 1, additional, rate)
    return float(min(passes + fails, 1.0))


def more_trials_needed(
    successes: int,
    n: int,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
    max_additional: int = 100_000,
    probability: float = 0.5,
) -> int | None:
    """Further trials that would likely settle an INCONCLUSIVE threshold verdict.

    Rule: assume the true pass rate equals the observed one, p̂ = successes / n. The answer is
    the smallest number m of further trials for which the verdict on all n + m trials is
    settled (PASS or FAIL) with probability ≥ ``probability`` (default ½; see
    :func:`settle_probability`, an exact binomial sum). m is found by doubling and then
    bisection, since that probability rises with m apart from small saw-teeth. A guide for the
    next run, not a promise: the true rate may differ from p̂. None when nothing up to
    ``max_additional`` reaches the probability (e.g. p̂ sits on the threshold).

    Args:
        successes: Passing trials so far.
        n: Trials so far (≥ 1).
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.
        max_additional: Largest number of further trials considered.
        probability: How likely settling must be, in (0, 1).

    Returns:
        The number of further trials, 0 if already settled, or None.
    """
    _check_threshold(threshold)
    if not 0 < probability < 1:
        raise ConfigError(f"probability must lie strictly between 0 and 1 (got {probability})")
    current = verdict_interval(successes, n, threshold, confidence, method)
    if _decide(current.low, current.high, threshold) is not Verdict.INCONCLUSIVE:
        return 0

    def settles(m: int) -> bool:
        return settle_probability(successes, n, m, threshold, confidence, method) >= probability

    return smallest_passing(settles, max_additional)


def _replaced_note(
    interval: Interval, method: str, n: int, threshold: float, confidence: float
) -> str | None:
    """Which bounds of a verdict interval are Clopper–Pearson's and why; None if none is."""
    if interval.method == method:
        return None
    replaced = replaced_bounds(interval.method, method)
    sides = "both bounds are" if replaced == "both" else f"the {replaced} bound is"
    return (
        f"{sides} Clopper–Pearson's: {method}'s would exceed the stated "
        f"{100 * (1 - confidence) / 2:g}% error at {threshold:g} with {n} trials"
    )


def follow_up_trials_needed(
    successes: int,
    n: int,
    threshold: float,
    confidence: float = 0.95,
    max_additional: int = 100_000,
    probability: float = 0.5,
) -> int | None:
    """Further trials that would likely settle a verdict judged again on all the trials.

    A second look at a grown set keeps its error only with an interval valid at every n: the
    confidence sequence :func:`assay.stats.pass_rate_sequence` (its default horizon, fixed
    before any look). Rule as :func:`more_trials_needed`, with that interval: assuming the true
    rate is the observed one, the smallest m for which the sequence's interval over all n + m
    trials lies on one side of the threshold with probability ≥ ``probability`` (an exact
    binomial sum). Following a fixed-n interval's advice and looking again instead raises its
    error (docs/statistics.md, "A second look").

    Args:
        successes: Passing trials so far.
        n: Trials so far (≥ 1).
        threshold: Required pass rate, in (0, 1).
        confidence: Two-sided confidence level.
        max_additional: Largest number of further trials considered.
        probability: How likely settling must be, in (0, 1).

    Returns:
        The number of further trials, 0 if the sequence already settles it, or None.
    """
    from scipy import stats as sps

    sequence = pass_rate_sequence(threshold, confidence)
    if n < 1 or not 0 <= successes <= n:
        raise ConfigError(f"need n >= 1 and 0 <= successes <= n (got {successes}, {n})")
    if sequence.side(successes, n, threshold) != 0:
        return 0
    rate = successes / n

    def settles(m: int) -> bool:
        spread = 10 * np.sqrt(m * rate * (1 - rate)) + 5
        future = np.arange(max(0, int(m * rate - spread)), min(m, int(m * rate + spread) + 1) + 1)
        settled = sequence.side(successes + future, n + m, threshold) != 0
        return float(sps.binom.pmf(future[settled], m, rate).sum()) >= probability

    return smallest_passing(settles, max_additional)


def follow_up_advice(more: int, rate: float) -> str:
    """The "more trials" remark, with how to look again without losing the stated error."""
    return (
        f"about {more} more trials would likely settle it (if the true rate is the observed "
        f"{rate:.1%}), judged with the anytime-valid interval: add them (another `assay run` "
        "into the same set) and analyse all the trials again, which uses that interval for "
        "trials from several runs (else pass --anytime); a fixed-n interval looked at again "
        "would not keep its error"
    )


def threshold_test(
    successes: int,
    n: int,
    threshold: float = 0.80,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> ThresholdResult:
    """The full threshold check from counts: interval, verdict, further trials, warning.

    Args:
        successes: Passing trials.
        n: Trials (≥ 1).
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method (see :func:`assay.stats.proportion_interval`); a side whose
            exact error at the threshold exceeds α/2 at this n is Clopper–Pearson's instead
            (:func:`assay.stats.verdict_interval`; the interval's ``method`` says so).

    Returns:
        The result; ``note`` warns when n is too small for PASS to be possible at all, and
        says when a side of the interval is Clopper–Pearson's.
    """
    _check_threshold(threshold)
    return _threshold_test(successes, n, threshold, confidence, method)


@functools.lru_cache(maxsize=4096)
def _threshold_test(
    successes: int, n: int, threshold: float, confidence: float, method: str
) -> ThresholdResult:
    # Cached: a set of thousands of tests holds few distinct counts (the settle search alone
    # asks scipy about ten times a test), and the result is immutable.
    interval = verdict_interval(successes, n, threshold, confidence, method)
    verdict = _decide(interval.low, interval.high, threshold)
    needed = verdict_min_trials_for_pass(threshold, confidence, method)
    more = None
    if verdict is Verdict.INCONCLUSIVE and 0 < threshold < 1:
        # Following the advice means a second look, which needs the anytime-valid interval.
        more = follow_up_trials_needed(successes, n, threshold, confidence)
    note = None
    if needed is None:
        note = f"PASS at {threshold:g} is impossible with a {method} interval at any n"
    elif n < needed:
        note = (
            f"PASS at {threshold:g} is impossible with {n} trials even if all pass; "
            f"it needs at least {needed} ({method}, {confidence:g} confidence)"
        )
    replaced = _replaced_note(interval, method, n, threshold, confidence)
    if replaced:
        note = f"{note}; {replaced}" if note else replaced
    return ThresholdResult(verdict, interval, threshold, more, needed, note)

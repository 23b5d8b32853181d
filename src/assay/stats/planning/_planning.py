"""Planning: how many trials a threshold check or a regression check needs, by exact power."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.choices import DEFAULT_REGRESSION_TEST, IntervalMethod
from assay.errors import ConfigError
from assay.stats.base import check_open_unit, check_probability
from assay.stats.intervals import verdict_pass_counts
from assay.stats.two_sample import check_test, regression_power


@dataclass(frozen=True, slots=True)
class ThresholdPlan:
    """Trials needed so that a threshold check passes with the wanted probability."""

    n: int | None
    """Smallest n with P(PASS | true rate = expected) ≥ target power; None if none ≤ max_n."""
    power: float | None
    """P(PASS) at that n, exact."""
    stable_n: int | None
    """Smallest n from which P(PASS) stays ≥ target up to max_n (≥ ``n``)."""
    threshold: float
    """The pass-rate threshold of the check."""
    expected: float
    """The true pass rate assumed."""
    target_power: float
    """The wanted probability of PASS."""
    confidence: float
    """Confidence level of the interval."""
    method: str
    """Interval method."""
    note: str | None
    """Where power is not monotone in n, a sentence saying so; else None."""


@dataclass(frozen=True, slots=True)
class RegressionPlan:
    """Trials per version needed so a regression check detects a drop with the wanted power."""

    n_per_arm: int | None
    """Smallest n (per version) found with exact power ≥ target; None if none ≤ max_n."""
    power: float | None
    """Exact power at that n."""
    baseline_rate: float
    """The baseline pass rate assumed."""
    delta: float
    """The drop to detect."""
    alpha: float
    """Significance level of the one-sided test."""
    target_power: float
    """The wanted power."""
    test: str
    """``fisher``, ``boschloo`` or ``barnard``."""
    note: str | None
    """Where power dips below the target again just above ``n_per_arm``, a sentence; else None."""


def pass_probability(
    n: npt.ArrayLike,
    threshold: float,
    expected: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> npt.NDArray[np.float64]:
    """Exact P(PASS) of a fixed-n threshold check with n trials when the true rate is ``expected``.

    The check is the verdict rule :func:`assay.stats.verdict_interval` (``method``'s bound, or
    Clopper–Pearson's where ``method``'s exact error at the threshold exceeds α/2). PASS
    happens from some count x_min(n) on (:func:`assay.stats.verdict_pass_counts`); so
    P(PASS) = P(X ≥ x_min(n)) for X ~ Binomial(n, expected).

    Args:
        n: Numbers of trials (≥ 1), any shape.
        threshold: Required pass rate in [0, 1].
        expected: True pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        The probabilities, shaped like ``n``.
    """
    from scipy import stats as sps

    check_probability("threshold", threshold)
    check_probability("expected", expected)
    ns = np.asarray(n, dtype=np.int64)
    if ns.size and ns.min() < 1:
        raise ConfigError("n must be at least 1")
    first = verdict_pass_counts(ns, threshold, confidence, method)
    probability: npt.NDArray[np.float64] = np.where(
        first <= ns, sps.binom.sf(first - 1, ns, expected), 0.0
    )
    return probability


def plan_threshold(
    threshold: float,
    expected: float,
    power: float = 0.8,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
    max_n: int = 5000,
) -> ThresholdPlan:
    """How many trials make a PASS at ``threshold`` likely when the true rate is ``expected``.

    Exact: P(PASS) is a binomial tail (see :func:`pass_probability`), evaluated at every
    n ≤ ``max_n``. Because counts are whole numbers, P(PASS) saw-tooths in n — adding a trial
    can lower it — so besides the smallest n that reaches the target, the plan gives the
    smallest n from which it stays there.

    Args:
        threshold: Required pass rate in [0, 1].
        expected: True pass rate assumed, in [0, 1].
        power: Wanted P(PASS), in (0, 1).
        confidence: Two-sided confidence level of the interval.
        method: Interval method.
        max_n: Largest n considered.

    Returns:
        The plan.
    """
    check_open_unit("power", power)
    if max_n < 1:
        raise ConfigError(f"max_n must be at least 1 (got {max_n})")
    ns = np.arange(1, max_n + 1)
    probability = pass_probability(ns, threshold, expected, confidence, method)
    reached = probability >= power
    if not reached.any():
        return ThresholdPlan(
            None,
            None,
            None,
            threshold,
            expected,
            power,
            confidence,
            method,
            f"no n up to {max_n} reaches P(PASS) >= {power:g} when the true rate is {expected:g}",
        )
    first = int(np.argmax(reached))
    below = np.flatnonzero(~reached)
    stable_index = int(below[-1]) + 1 if below.size and below[-1] > first else first
    stable = int(ns[stable_index]) if stable_index < ns.size else None
    note = None
    if stable != int(ns[first]):
        note = (
            f"P(PASS) is not monotone in n: it first reaches {power:g} at n = {ns[first]} but "
            f"dips below again; it stays at or above {power:g} from n = {stable}"
            if stable is not None
            else f"P(PASS) first reaches {power:g} at n = {ns[first]} but dips below again"
        )
    return ThresholdPlan(
        int(ns[first]),
        float(probability[first]),
        stable,
        threshold,
        expected,
        power,
        confidence,
        method,
        note,
    )


def plan_regression(
    baseline_rate: float,
    delta: float = 0.10,
    alpha: float = 0.05,
    power: float = 0.8,
    test: str = DEFAULT_REGRESSION_TEST,
    max_n: int = 2000,
    window: int = 5,
) -> RegressionPlan:
    """Trials per version so that a drop of ``delta`` is detected with probability ``power``.

    Exact power (:func:`regression_power`, equal group sizes) is found by doubling n until the
    target is met, then bisection. Exact power saw-tooths in n, so the ``window`` sizes just
    below the bisection's answer are checked for an earlier one, and those just above for
    dips (reported in ``note``).

    Args:
        baseline_rate: Expected baseline pass rate in (0, 1].
        delta: Drop to detect, in (0, baseline_rate].
        alpha: One-sided significance level.
        power: Wanted power in (0, 1).
        test: ``fisher``, ``boschloo`` or ``barnard``.
        max_n: Largest n per version considered.
        window: How many neighbouring sizes to check on each side.

    Returns:
        The plan.
    """
    check_test(test)
    check_open_unit("alpha", alpha)
    check_open_unit("power", power)
    check_probability("baseline_rate", baseline_rate)
    if not 0 < delta <= baseline_rate:
        raise ConfigError(f"delta must lie in (0, baseline_rate] (got {delta})")

    def power_at(n: int) -> float:
        return regression_power(n, n, baseline_rate, delta, alpha, test)

    hi = 4
    while power_at(hi) < power:
        if hi >= max_n:
            return RegressionPlan(
                None,
                None,
                baseline_rate,
                delta,
                alpha,
                power,
                test,
                f"no n up to {max_n} per version reaches power {power:g}",
            )
        hi = min(2 * hi, max_n)
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power_at(mid) >= power:
            hi = mid
        else:
            lo = mid
    n = hi
    for m in range(max(1, hi - window), hi):
        if power_at(m) >= power:
            n = m
            break
    dips = [m for m in range(n + 1, min(n + window, max_n) + 1) if power_at(m) < power]
    note = None
    if dips:
        note = (
            f"power is not monotone in n: it reaches {power:g} at n = {n} but falls below "
            f"again at n = {', '.join(map(str, dips))}; consider n = {dips[-1] + 1} or more"
        )
    return RegressionPlan(n, power_at(n), baseline_rate, delta, alpha, power, test, note)

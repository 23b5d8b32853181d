"""Planning a threshold check run adaptively: the maximum trials ``assay run`` needs.

``assay run`` stops a test once its anytime-valid interval (:func:`pass_rate_sequence`, its prior
tuned to the maximum) lies wholly on one side of the threshold, and judges that interval; it is
wider than the fixed-n verdict interval, so the same probability of PASS needs a larger maximum
than a fixed run's n. The probabilities here are exact (:func:`operating_characteristics`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from assay.choices import SequentialMethod
from assay.errors import ConfigError
from assay.stats.base import check_open_unit, check_probability, smallest_passing
from assay.stats.sequential import (
    OperatingCharacteristics,
    operating_characteristics,
    sequential_test,
)

__all__ = ["AdaptiveThresholdPlan", "adaptive_run_characteristics", "plan_adaptive_threshold"]

_NEIGHBOURS: Final = 5
"""Maxima checked on each side of the bisection's answer (P(PASS) saw-tooths in the maximum)."""


@dataclass(frozen=True, slots=True)
class AdaptiveThresholdPlan:
    """The maximum trials at which ``assay run``'s adaptive check passes with the wanted power."""

    max_trials: int | None
    """Smallest maximum N (``runs``) with P(PASS | expected) ≥ target; None if none ≤ the limit."""
    power: float | None
    """P(PASS | true rate = expected) with that maximum, exact."""
    expected_trials: float | None
    """E[trials run | true rate = expected] with that maximum."""
    fail_at_threshold: float | None
    """P(FAIL | true rate = threshold): a wrong FAIL, exact."""
    pass_at_threshold: float | None
    """P(PASS | true rate = threshold): the bound on a wrong PASS for any rate below it (P(PASS)
    rises with the true rate)."""
    threshold: float
    """The pass-rate threshold of the check."""
    expected: float
    """The true pass rate assumed."""
    target_power: float
    """The wanted probability of PASS."""
    confidence: float
    """Confidence of the anytime-valid interval (the run's confidence level)."""
    method: str
    """The stopping rule: ``confidence-sequence``, ``assay run``'s default."""
    note: str | None
    """Where P(PASS) dips below the target just above ``max_trials``, or none reaches it; else
    None."""


def adaptive_run_characteristics(
    threshold: float, max_trials: int, p: float, confidence: float = 0.95
) -> OperatingCharacteristics:
    """Exact verdict probabilities of ``assay run``'s default adaptive check at true rate ``p``.

    The rule is the one ``assay run`` builds without ``--fixed`` or ``--sequential``:
    :func:`sequential_test` ``("confidence-sequence", threshold, max_trials, confidence)``.

    Args:
        threshold: Required pass rate, in (0, 1).
        max_trials: The maximum (the suite's ``runs``), ≥ 1.
        p: The true pass rate, in [0, 1].
        confidence: The run's confidence level.

    Returns:
        The operating characteristics.
    """
    rule = sequential_test(
        SequentialMethod.CONFIDENCE_SEQUENCE,
        threshold,
        max_trials=max_trials,
        confidence=confidence,
    )
    return operating_characteristics(rule, p)


def plan_adaptive_threshold(
    threshold: float,
    expected: float,
    power: float = 0.8,
    confidence: float = 0.95,
    max_n: int = 5000,
) -> AdaptiveThresholdPlan:
    """The smallest maximum N at which ``assay run``'s adaptive check PASSes with ``power``.

    Exact P(PASS) at each maximum (:func:`adaptive_run_characteristics`), found by doubling and
    bisection (:func:`smallest_passing`); because P(PASS) saw-tooths in N (whole counts, and the
    prior is tuned to N), the maxima just below the answer are checked for an earlier one and
    the answer is walked down while its predecessor also reaches the target, so the N returned
    reaches it and N - 1 does not; those just above are checked for dips (``note``).

    Args:
        threshold: Required pass rate, in (0, 1).
        expected: True pass rate assumed, in [0, 1].
        power: Wanted P(PASS), in (0, 1).
        confidence: The run's confidence level.
        max_n: Largest maximum considered.

    Returns:
        The plan.
    """
    check_open_unit("power", power)
    check_probability("expected", expected)
    if not 0 < threshold < 1:
        raise ConfigError(
            f"an adaptive run needs 0 < threshold < 1 (got {threshold}); plan a fixed run"
        )
    if max_n < 1:
        raise ConfigError(f"max_n must be at least 1 (got {max_n})")
    cache: dict[int, OperatingCharacteristics] = {}

    def at(n: int) -> OperatingCharacteristics:
        if n not in cache:
            cache[n] = adaptive_run_characteristics(threshold, n, expected, confidence)
        return cache[n]

    def plan(n: int | None, note: str | None) -> AdaptiveThresholdPlan:
        oc = None if n is None else at(n)
        edge = (
            None if n is None else adaptive_run_characteristics(threshold, n, threshold, confidence)
        )
        return AdaptiveThresholdPlan(
            n,
            None if oc is None else oc.pass_probability,
            None if oc is None else oc.expected_trials,
            None if edge is None else edge.fail_probability,
            None if edge is None else edge.pass_probability,
            threshold,
            expected,
            power,
            confidence,
            SequentialMethod.CONFIDENCE_SEQUENCE,
            note,
        )

    none_reaches = (
        f"no maximum up to {max_n} reaches P(PASS) >= {power:g} when the true rate is {expected:g}"
    )
    if expected <= threshold:
        # P(PASS) rises with the true rate, and at the threshold it is a wrong-PASS rate (≤ α).
        return plan(None, none_reaches)

    def reaches(n: int) -> bool:
        return at(n).pass_probability >= power

    found = smallest_passing(reaches, max_n)
    if found is None:
        return plan(None, none_reaches)
    n = next((m for m in range(max(1, found - _NEIGHBOURS), found) if reaches(m)), found)
    while n > 1 and reaches(n - 1):
        n -= 1
    dips = [m for m in range(n + 1, min(n + _NEIGHBOURS, max_n) + 1) if not reaches(m)]
    note = None
    if dips:
        note = (
            f"P(PASS) is not monotone in the maximum: it reaches {power:g} at {n} but falls "
            f"below again at {', '.join(map(str, dips))}; consider {dips[-1] + 1} or more"
        )
    return plan(n, note)

"""The reason for a verdict, in one sentence (JSON ``verdict_reason``; every report shows it)."""

from __future__ import annotations

import functools
import math

from assay.choices import SequentialMethod
from assay.judge._regression import RegressionResult
from assay.judge._results import TestResult
from assay.judge._sequential import ANYTIME_METHOD, SequentialOutcome
from assay.judge._threshold import Verdict
from assay.stats import Interval, SequentialDecision


def pct(value: float | None, digits: int = 1) -> str:
    """A proportion as a percentage (``0.433`` → ``43.3%``); ``—`` when missing or not finite."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{100 * value:.{digits}f}%"


def _share(value: float) -> str:
    """``90%``, ``92.5%``: a design parameter as it was given."""
    return f"{100 * value:.4g}%"


def ci_text(interval: Interval | None) -> str:
    """``95% CI [61.0%, 82.9%]`` (``95% anytime CI [...]`` after adaptive stopping).

    ``no interval`` when n = 0.
    """
    if interval is None:
        return "no interval"
    kind = "anytime CI" if interval.method == ANYTIME_METHOD else "CI"
    return f"{100 * interval.confidence:g}% {kind} [{pct(interval.low)}, {pct(interval.high)}]"


def rate_text(passed: int, n: int) -> str:
    """``43.3% (26/60)``."""
    return f"{pct(passed / n if n else None)} ({passed}/{n})"


def method_name(method: str) -> str:
    """``SPRT`` or ``confidence sequence``: a sequential method as people name it."""
    return "SPRT" if method == SequentialMethod.SPRT else method.replace("-", " ")


def stopping_text(outcome: SequentialOutcome) -> str:
    """When the stopping rule stopped, and what it decided when that is its own statement.

    ``the confidence sequence stopped after 45 of 200 trials``, ``the SPRT stopped after 6 of
    200 trials, deciding FAIL (pass rate below 90% with error ≤ 20%)``, ``not stopped within
    the maximum of 60 trials``.
    """
    design = outcome.design
    name = method_name(design.method)
    rule = f"the {name}" if design.method == SequentialMethod.SPRT or design.legacy else name
    if outcome.decided_at is None:
        if outcome.trials >= design.max_trials:
            return f"{rule} did not stop before the maximum of {design.max_trials} trials"
        return (
            f"{rule} had not stopped after {outcome.trials} of {design.max_trials} trials "
            "(the trials ended before the maximum)"
        )
    text = f"{rule} stopped after {outcome.decided_at} of {design.max_trials} trials"
    late = outcome.trials - outcome.decided_at
    if late > 0:
        text += f" ({late} more, in flight then, count too)"
    if design.method == SequentialMethod.SPRT or design.legacy:
        if outcome.decision is SequentialDecision.PASS:
            claim = f"pass rate above {_share(design.p0)} with error ≤ {_share(design.alpha)}"
        else:
            claim = (
                f"pass rate below {_share(design.p1 or design.p0)} with error ≤ "
                f"{_share(design.beta or 0)}"
            )
        text += f", deciding {outcome.decision.value} ({claim})"
    return text


def anytime_reason(
    verdict: Verdict,
    passed: int,
    n: int,
    interval: Interval,
    threshold: float,
    outcome: SequentialOutcome | None,
) -> str:
    """The anytime-valid interval against the threshold, and when the rule stopped.

    The verdict is the interval's; a stopping rule's decision the interval does not support is
    named as such (an SPRT FAIL beside an interval that holds the threshold).
    """
    reason = threshold_reason(verdict, passed, n, interval, threshold)
    if outcome is None:
        return reason
    stopping = stopping_text(outcome)
    decided = {SequentialDecision.PASS: Verdict.PASS, SequentialDecision.FAIL: Verdict.FAIL}
    said = decided.get(outcome.decision)
    if said is not None and said is not verdict:
        return f"{reason}; {stopping}, which the interval does not show"
    return f"{reason}; {stopping}"


@functools.lru_cache(maxsize=4096)
def threshold_reason(
    verdict: Verdict, passed: int, n: int, interval: Interval | None, threshold: float
) -> str:
    """The interval against the threshold, as it decided a fixed-n verdict.

    Cached: thousands of tests repeat few counts (and so few intervals).
    """
    if interval is None:
        return f"no pass rate to judge ({n} trials counted)"
    where = {
        Verdict.FAIL: "lies wholly below",
        Verdict.PASS: "lies at or above",
        Verdict.INCONCLUSIVE: "straddles",
    }[verdict]
    return (
        f"pass rate {rate_text(passed, n)}, {ci_text(interval)} {where} the threshold "
        f"{pct(threshold)}"
    )


SETTLE_ADVICE = "more trials per version would settle it (assay plan)"
"""A case's advice when its regression is INCONCLUSIVE: dropped at suite scale (the suite's
comparison answers there; :func:`at_suite_scale`)."""


def at_suite_scale(reason: str) -> str:
    """A case's reason without the per-case advice to run more trials (a suite answer exists)."""
    return reason.replace(f"; {SETTLE_ADVICE}", "")


def regression_reason(
    test: TestResult,
    regression: RegressionResult,
    *,
    scores_dropped: bool = False,
    threshold_verdict: Verdict | None = None,
) -> str:
    """With a baseline the verdict answers "did it get worse?": why, in one sentence.

    ``threshold_verdict``: the test's verdict against its threshold when ``test`` does not
    carry it yet (the result before its regression verdict: its own verdict is that one).
    """
    p_text = f"p = {regression.p_value:.2g}" + (
        f" (adjusted {regression.p_adjusted:.2g})" if regression.p_adjusted is not None else ""
    )
    base = regression.baseline_passed / regression.baseline_n if regression.baseline_n else None
    change = (
        f"{pct(base)} ({regression.baseline_passed}/{regression.baseline_n}) → "
        f"{rate_text(test.passed, test.n)}"
    )
    name, power, delta = regression.test, pct(regression.power, 0), pct(regression.delta, 0)
    settle = SETTLE_ADVICE
    if regression.anytime_reason is not None:
        name = "anytime-valid test"
        # Its power is low at these sizes by construction: the way to power is a fixed design.
        settle = "both versions run with --fixed get the exact test (assay plan sizes it)"
    if regression.verdict is Verdict.FAIL:
        reason = f"pass rate dropped, {change}; one-sided {name} {p_text} < {regression.alpha:.2g}"
    elif regression.verdict is Verdict.PASS:
        reason = (
            f"no drop, {change} ({name} {p_text}), and the check had {power} power to detect "
            f"a {delta} drop"
        )
    else:
        reason = (
            f"no significant drop, {change} ({name} {p_text}), but only {power} power to "
            f"detect a {delta} drop (needs {pct(regression.required_power, 0)}); {settle}"
        )
    if regression.anytime_reason is not None:
        # A fixed-n p-value would overstate the evidence after adaptive stopping: say why not.
        reason += f"; {regression.anytime_reason}, so the comparison uses the anytime-valid test"
        if regression.pairs is not None and regression.baseline_n != regression.current_n:
            # It pairs the trials in run order: the longer version's others are not used.
            reason += f" on the first {regression.pairs} trials of each version"
        low, high = regression.drop_low, regression.drop_high
        if low is not None and high is not None and low > high:
            # The running intersection is empty: no one drop fits every stretch of the pairs.
            reason += "; no single drop fits all the pairs (did a pass rate change during a run?)"
    if scores_dropped and regression.verdict is not Verdict.FAIL:
        reason = "scores dropped — " + reason
    if test.interval is not None:
        threshold = threshold_verdict or test.threshold_verdict
        against = f" ({threshold})" if threshold else ""
        reason += (
            f"; now {ci_text(test.interval)} against the threshold {pct(test.threshold)}{against}"
        )
    return reason


def with_errors(reason: str, errors: int) -> str:
    """The reason, and how many error trials there were."""
    if not errors:
        return reason
    return f"{reason}; {errors} error trial{'s' if errors != 1 else ''}"

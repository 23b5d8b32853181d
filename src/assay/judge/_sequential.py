"""Adaptive stopping: the recorded design, the one loop that feeds it, its replay, its interval.

``assay run`` and the pytest plugin feed each test's trials to a :class:`SequentialTracker` as
they finish; ``assay analyze`` replays the recorded design in trial-index order with the same
tracker (:func:`replay`), so they stop at the same trial. The rule only decides *when* a test
stops: its verdict is the anytime-valid interval (:meth:`SequentialDesign.sequence`) against
the threshold — the running intersection of its intervals after each counted trial in index
order when the order is known (replayed), else its interval over all the trials.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from assay.analysis import columns as tc
from assay.choices import SequentialMethod
from assay.stats import (
    DEFAULT_HORIZON,
    SPRT,
    BernoulliConfidenceSequence,
    Interval,
    LegacyConfidenceSequenceTest,
    SequentialDecision,
    SequentialState,
    SequentialTest,
    pass_rate_sequence,
    sequential_test,
)

ANYTIME_METHOD = "confidence-sequence"
"""``Interval.method`` of an anytime-valid interval (reports label it ``anytime``)."""


@dataclass(frozen=True, slots=True)
class SequentialDesign:
    """How an adaptive test decided when to stop: its rule, threshold and maximum.

    The confidence sequence records its level (``alpha = 1 - confidence``) and prior strength;
    the SPRT its indifference zone and error rates. A confidence-sequence design without a
    prior strength was recorded by an earlier version (its rule compared the interval's lower
    end at level ``alpha`` with ``p0`` and its upper end at level ``beta`` with ``p1``).
    """

    method: str
    """``confidence-sequence`` (Robbins) or ``sprt`` (Wald)."""
    p0: float
    """The threshold."""
    p1: float | None
    """SPRT: the lower end of the passing side (``p0 + delta``, narrowed near 1)."""
    delta: float | None
    """SPRT: width of the indifference zone asked for."""
    alpha: float
    """Confidence sequence: ``1 - confidence`` of the sequence it stopped on; SPRT: bound on
    P(it decides PASS) at ``p0``."""
    beta: float | None
    """SPRT: bound on P(it decides FAIL) at ``p1``."""
    max_trials: int
    """The most trials; the rule stops here at the latest."""
    prior_strength: float | None = None
    """Confidence sequence: the prior's strength in trials (its mean is ``p0``)."""

    @classmethod
    def of(
        cls,
        method: str,
        threshold: float,
        runs: int,
        *,
        confidence: float = 0.95,
        delta: float = 0.1,
        alpha: float = 0.05,
        beta: float = 0.2,
    ) -> SequentialDesign:
        """The design of ``method`` (raises ``ConfigError`` if invalid).

        ``confidence`` is the run's: the level of the confidence sequence; ``delta``,
        ``alpha`` and ``beta`` shape only the SPRT.
        """
        rule = sequential_test(
            method,
            threshold,
            delta=delta,
            alpha=alpha,
            beta=beta,
            max_trials=runs,
            confidence=confidence,
        )
        if isinstance(rule, SPRT):
            return cls(rule.name, threshold, rule.p1, delta, alpha, beta, runs)
        sequence = rule.sequence
        alpha = round(sequence.alpha, 12)  # 0.05, not 1 - 0.95 = 0.050000000000000044
        return cls(rule.name, threshold, None, None, alpha, None, runs, sequence.prior_strength)

    @classmethod
    def follow_up(cls, threshold: float, confidence: float) -> SequentialDesign:
        """The design of trials looked at more than once: no stopping rule, the sequence only.

        Its prior is :func:`~assay.stats.pass_rate_sequence`'s for the default horizon, fixed
        before any look (a prior tuned to the n of a later look would depend on the looks),
        so the interval is valid whenever and however often the trials are judged.
        """
        sequence = pass_rate_sequence(threshold, confidence)
        alpha = round(sequence.alpha, 12)
        return cls(
            SequentialMethod.CONFIDENCE_SEQUENCE,
            threshold,
            None,
            None,
            alpha,
            None,
            DEFAULT_HORIZON,
            sequence.prior_strength,
        )

    @property
    def legacy(self) -> bool:
        """A confidence-sequence design recorded by an earlier version (see the class)."""
        return self.method == SequentialMethod.CONFIDENCE_SEQUENCE and self.prior_strength is None

    def sequence(self, confidence: float) -> BernoulliConfidenceSequence:
        """The anytime-valid interval a verdict reads, at ``confidence``.

        The recorded prior when there is one (so the verdict and the stop agree at the recorded
        level), else the one :func:`~assay.stats.pass_rate_sequence` tunes to the maximum.
        """
        if self.prior_strength is not None:
            return BernoulliConfidenceSequence(confidence, self.p0, self.prior_strength)
        return pass_rate_sequence(self.p0, confidence, self.max_trials)

    def build(self, confidence: float = 0.95) -> SequentialTest:
        """The stopping rule this design describes (``confidence``: the verdict's interval)."""
        if self.method == SequentialMethod.CONFIDENCE_SEQUENCE and not self.legacy:
            return sequential_test(
                self.method,
                self.p0,
                max_trials=self.max_trials,
                confidence=1 - self.alpha,
                prior_strength=self.prior_strength,
            )
        delta, beta = self.delta or 0.1, self.beta or 0.2
        if self.legacy:
            return LegacyConfidenceSequenceTest(
                self.p0, delta, self.alpha, beta, self.max_trials, confidence
            )
        return sequential_test(
            self.method,
            self.p0,
            delta=delta,
            alpha=self.alpha,
            beta=beta,
            max_trials=self.max_trials,
            confidence=confidence,
        )


def anytime_interval(passed: int, n: int, design: SequentialDesign, confidence: float) -> Interval:
    """The anytime-valid interval of ``passed`` of ``n`` trials collected under ``design``."""
    low, high = design.sequence(confidence).interval(passed, n)
    return Interval(low, high, confidence, ANYTIME_METHOD)


def running_interval(
    design: SequentialDesign, confidence: float, outcomes: Sequence[bool]
) -> Interval | None:
    """The anytime-valid intervals after each of ``outcomes`` (in order), intersected.

    Valid whenever it is read, as narrow as the trials ever made it, and once on one side of
    the threshold it stays there. None when the intersection is empty (the sequence missed the
    true rate at some n, or the rate changed during the run).
    """
    low, high = design.sequence(confidence).running_interval(outcomes)
    return Interval(low, high, confidence, ANYTIME_METHOD) if low <= high else None


@dataclass(frozen=True, slots=True)
class SequentialOutcome:
    """When the stopping rule of a test stopped, replayed in trial-index order."""

    design: SequentialDesign
    """The recorded design: rule, threshold, maximum (and the rule's parameters)."""
    decision: SequentialDecision
    """The rule's own decision: PASS or FAIL where it stopped; INCONCLUSIVE if it did not."""
    decided_at: int | None
    """Trials (in index order) after which it stopped; None if it did not."""
    trials: int
    """Trials fed to it (in index order), those after its stop included."""
    low: float = 0.0
    """Lower end of the running intersection of the anytime-valid intervals after each
    counted trial, in index order (the interval the verdict reads)."""
    high: float = 1.0
    """Its upper end; below ``low`` (1, 0) if the intersection is empty."""


@dataclass(slots=True)
class SequentialTracker:
    """The one stopping loop: trial outcomes in trial-index order → when to stop.

    ``assay run``, the pytest plugin and the replay of ``assay analyze`` all feed it, so they
    stop at the same trial. Trials fed after the stop (those in flight) still count towards
    the interval.
    """

    test: SequentialTest
    """The stopping rule."""
    exclude_errors: bool = False
    """Error trials do not count (``errors="exclude"``)."""
    fed: int = 0
    """Trials fed, error trials included."""
    counted: int = 0
    """Trials that count towards the pass rate."""
    passed: int = 0
    """Passing trials among them."""
    decision: SequentialDecision | None = None
    """The rule's PASS, FAIL or INCONCLUSIVE once it stopped; None while it continues."""
    decided_at: int | None = None
    """Trials fed (error trials included) when it stopped."""
    outcomes: list[bool] = field(default_factory=list)
    """Pass or fail of every counted trial, in index order."""

    def feed(self, passed: bool, error: bool) -> None:
        """Take the next trial in index order."""
        self.fed += 1
        if error and self.exclude_errors:
            return
        self.counted += 1
        self.passed += passed
        self.outcomes.append(passed)
        if self.decision is None:
            code = int(
                self.test.decide_many(np.array([self.passed], dtype=np.int64), self.counted)[0]
            )
            if code > 0:
                self.decision = SequentialDecision.PASS
            elif code < 0:
                self.decision = SequentialDecision.FAIL
            elif self.test.max_trials is not None and self.counted >= self.test.max_trials:
                self.decision = SequentialDecision.INCONCLUSIVE
            if self.decision is not None:
                self.decided_at = self.fed

    def state(self) -> SequentialState | None:
        """The rule and its anytime-valid interval over every counted trial; None before one."""
        return self.test.state(self.passed, self.counted) if self.counted else None


def replay(
    trials: pl.DataFrame, design: SequentialDesign, exclude_errors: bool, confidence: float
) -> SequentialOutcome:
    """Feed the trials to the design's stopping rule in trial-index order, as the run did.

    Also intersects the anytime-valid intervals (at ``confidence``) after each counted trial:
    the interval the verdict reads.
    """
    tracker = SequentialTracker(design.build(confidence), exclude_errors=exclude_errors)
    ordered = trials.sort(tc.TRIAL_INDEX, nulls_last=True)
    for passed, error in zip(
        ordered[tc.PASSED].to_list(), ordered[tc.ERROR].to_list(), strict=True
    ):
        tracker.feed(bool(passed), bool(error))
    decision = tracker.decision or SequentialDecision.INCONCLUSIVE
    stopped = decision in (SequentialDecision.PASS, SequentialDecision.FAIL)
    interval = running_interval(design, confidence, tracker.outcomes)
    low, high = (interval.low, interval.high) if interval is not None else (1.0, 0.0)
    decided_at = tracker.decided_at if stopped else None
    return SequentialOutcome(design, decision, decided_at, tracker.fed, low, high)

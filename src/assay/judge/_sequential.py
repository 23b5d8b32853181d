"""The sequential test of a pass rate: its design, the one loop that feeds it, its replay.

``assay run`` and the pytest plugin feed each test's trials to a :class:`SequentialTracker` as
they finish; ``assay analyze`` replays the recorded design in trial-index order with the same
tracker (:func:`replay`), so they stop at the same trial with the same decision.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from assay.analysis import columns as tc
from assay.judge._threshold import Verdict
from assay.stats import SequentialDecision, SequentialState, SequentialTest, sequential_test


@dataclass(frozen=True, slots=True)
class SequentialDesign:
    """A sequential test of the pass rate: method, indifference zone, error rates, maximum."""

    method: str
    """``sprt`` (Wald) or ``confidence-sequence`` (Robbins)."""
    p0: float
    """The threshold: a PASS is wrong when the true rate is at most this."""
    p1: float
    """A FAIL is wrong when the true rate is at least this (``p0 + delta``, narrowed near 1)."""
    delta: float
    """Width of the indifference zone asked for."""
    alpha: float
    """Bound on P(PASS) at ``p0``."""
    beta: float
    """Bound on P(FAIL) at ``p1``."""
    max_trials: int
    """Truncation: INCONCLUSIVE when reached unsettled."""

    @classmethod
    def of(
        cls, method: str, threshold: float, delta: float, alpha: float, beta: float, runs: int
    ) -> SequentialDesign:
        """The design of ``method`` at this threshold (raises ``ConfigError`` if invalid)."""
        seq = sequential_test(
            method, threshold, delta=delta, alpha=alpha, beta=beta, max_trials=runs
        )
        return cls(seq.name, seq.p0, seq.p1, delta, seq.alpha, seq.beta, runs)

    def build(self) -> SequentialTest:
        """The sequential test this design describes."""
        return sequential_test(
            self.method,
            self.p0,
            delta=self.delta,
            alpha=self.alpha,
            beta=self.beta,
            max_trials=self.max_trials,
        )


@dataclass(frozen=True, slots=True)
class SequentialOutcome:
    """Where the sequential test of a test stood when its trials were judged."""

    design: SequentialDesign
    """The recorded design: method, p0, p1, alpha, beta, maximum trials."""
    verdict: Verdict
    """PASS or FAIL once settled; INCONCLUSIVE when it did not settle."""
    decided_at: int | None
    """Trials (in index order) after which it settled; None if it did not."""
    trials: int
    """Trials fed to it (in index order)."""
    low: float
    """Anytime-valid lower bound on the pass rate (level alpha) at the last trial fed."""
    high: float
    """Anytime-valid upper bound on the pass rate (level beta) at the last trial fed."""


@dataclass(slots=True)
class SequentialTracker:
    """The one sequential loop: trial outcomes in trial-index order → a decision.

    ``assay run``, the pytest plugin and the replay of ``assay analyze`` all feed it, so they
    stop at the same trial with the same decision.
    """

    test: SequentialTest
    """The sequential test."""
    exclude_errors: bool = False
    """Error trials do not count (``errors="exclude"``)."""
    fed: int = 0
    """Trials fed, error trials included."""
    counted: int = 0
    """Trials that count towards the pass rate."""
    passed: int = 0
    """Passing trials among them."""
    decision: SequentialDecision | None = None
    """PASS, FAIL or INCONCLUSIVE once settled; None while it continues."""
    decided_at: int | None = None
    """Trials fed (error trials included) when it settled."""
    last: SequentialState | None = None
    """The latest state (bounds on the pass rate)."""

    def feed(self, passed: bool, error: bool) -> None:
        """Take the next trial in index order (ignored once settled)."""
        self.fed += 1
        if self.decision is not None or (error and self.exclude_errors):
            return
        self.counted += 1
        self.passed += passed
        self.last = self.test.state(self.passed, self.counted)
        if self.last.decision is not SequentialDecision.CONTINUE:
            self.decision = self.last.decision
            self.decided_at = self.fed


def replay(
    trials: pl.DataFrame, design: SequentialDesign, exclude_errors: bool
) -> SequentialOutcome:
    """Feed the trials to the design's sequential test in trial-index order, as the run did."""
    tracker = SequentialTracker(design.build(), exclude_errors=exclude_errors)
    ordered = trials.sort(tc.TRIAL_INDEX, nulls_last=True)
    for passed, error in zip(
        ordered[tc.PASSED].to_list(), ordered[tc.ERROR].to_list(), strict=True
    ):
        tracker.feed(bool(passed), bool(error))
    low, high = (tracker.last.low, tracker.last.high) if tracker.last else (0.0, 1.0)
    verdict = {
        SequentialDecision.PASS: Verdict.PASS,
        SequentialDecision.FAIL: Verdict.FAIL,
    }.get(tracker.decision or SequentialDecision.CONTINUE, Verdict.INCONCLUSIVE)
    decided_at = tracker.decided_at if verdict is not Verdict.INCONCLUSIVE else None
    return SequentialOutcome(design, verdict, decided_at, tracker.fed, low, high)

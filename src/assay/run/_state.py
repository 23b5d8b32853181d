"""One test's progress during a run: its trials in index order and its sequential test."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from assay import conventions as c
from assay.judge import (
    Judgement,
    SequentialTracker,
    anytime_interval,
    running_interval,
    threshold_verdict,
)
from assay.run._results import TrialRecord
from assay.run._suite import TestCase
from assay.stats import SequentialDecision, verdict_interval


class Progress(Protocol):
    """Receives the run's progress (the CLI shows it with rich)."""

    def start(self, tests: Sequence[TestCase], max_runs: Sequence[int]) -> None:
        """The run starts."""

    def update(self, status: TestStatus) -> None:
        """A test has a new finished trial or decision."""

    def stop(self) -> None:
        """The run is over."""


@dataclass(frozen=True, slots=True)
class TestStatus:
    """A test's progress, for display."""

    __test__ = False

    test_id: str
    """The test case."""
    done: int
    """Trials finished (in index order)."""
    passed: int
    """Passing trials among them."""
    errors: int
    """Error trials among them."""
    max_runs: int
    """The most trials the test may use."""
    low: float
    """Lower end of the current interval (Wilson; the anytime-valid one when adaptive)."""
    high: float
    """Upper end of the current interval."""
    decision: SequentialDecision | None = None
    """Once its stopping rule stopped: PASS or FAIL where the anytime-valid interval lies on
    one side of the threshold, else INCONCLUSIVE; None while it runs or without one."""
    finished: bool = False
    """Every trial it was given ran (a fixed run), without a sequential decision."""
    stopped: str | None = None
    """Why it stopped unsettled (a budget, an interrupt); None if it did not."""

    @property
    def label(self) -> str:
        """What the display shows: the decision, ``done``, the stop reason or ``running``."""
        if self.decision is not None:
            return self.decision.value
        if self.finished:
            return "done"
        return self.stopped or "running"


@dataclass(slots=True)
class TestState:
    """A test's trials so far, fed to its sequential test in trial-index order."""

    __test__ = False

    test: TestCase
    """The test case."""
    max_runs: int
    """The most trials."""
    judgement: Judgement
    """Threshold, confidence, error policy, variance limits and sequential design."""
    tracker: SequentialTracker | None = None
    """The sequential loop (None for a fixed run)."""
    launched: int = 0
    """Trials started."""
    pending: dict[int, TrialRecord] = field(default_factory=dict)
    """Finished trials waiting for an earlier index to finish."""
    records: list[TrialRecord] = field(default_factory=list)
    """Finished trials fed so far, in index order."""
    passed: int = 0
    """Passing trials among ``records``."""
    errors: int = 0
    """Error trials among ``records``."""
    window: int = 1_000_000
    """At most this many trials started but not yet fed (bounds the overshoot after a stop)."""
    version: str | None = None
    """``assay.agent.version`` of its trials; None: the run's (a paired run has two)."""

    def __post_init__(self) -> None:
        design = self.judgement.sequential
        if design is not None and self.tracker is None:
            self.tracker = SequentialTracker(
                design.build(self.judgement.confidence),
                exclude_errors=self.judgement.excludes_errors,
            )

    @property
    def decision(self) -> SequentialDecision | None:
        """The sequential decision once settled; INCONCLUSIVE ("done") for a finished fixed run."""
        if self.tracker is not None:
            return self.tracker.decision
        return SequentialDecision.INCONCLUSIVE if len(self.records) >= self.max_runs else None

    @property
    def decided_at(self) -> int | None:
        """Trials fed when the sequential test settled."""
        return self.tracker.decided_at if self.tracker is not None else None

    @property
    def counted(self) -> int:
        """Trials that count towards the pass rate (error trials drop out when excluded)."""
        excluded = self.errors if self.judgement.excludes_errors else 0
        return len(self.records) - excluded

    def wants_more(self) -> bool:
        """True if another trial of this test may start now."""
        # Results are fed in index order, so a slow early trial holds back later ones; without
        # the window, fast trials could run far past the point where the test settles.
        return (
            self.decision is None
            and self.launched < self.max_runs
            and self.launched - len(self.records) < self.window
        )

    def feed(self, record: TrialRecord) -> None:
        """Take a finished trial; advance the sequential test over the in-order prefix."""
        self.pending[record.index] = record
        while len(self.records) in self.pending:
            r = self.pending.pop(len(self.records))
            self.records.append(r)
            error = r.outcome == c.OUTCOME_ERROR
            self.passed += r.passed
            self.errors += error
            if self.tracker is not None:
                self.tracker.feed(r.passed, error)

    def status(self, stopped: str | None = None) -> TestStatus:
        """The test's progress for display; ``stopped`` labels an unsettled test."""
        n = len(self.records)
        design, confidence = self.judgement.sequential, self.judgement.confidence
        interval = None
        if self.counted and design is not None and self.tracker is not None:
            # As the verdict will read it (assay.judge): intersected in index order.
            interval = running_interval(design, confidence, self.tracker.outcomes)
            interval = interval or anytime_interval(self.passed, self.counted, design, confidence)
        elif self.counted:
            # The fixed-n verdict's own interval (Wilson, a side Clopper–Pearson's at small n).
            threshold = self.judgement.threshold
            interval = verdict_interval(self.passed, self.counted, threshold, confidence)
        low, high = (interval.low, interval.high) if interval is not None else (0.0, 1.0)
        settled = None
        if self.tracker is not None and self.decision is not None and interval is not None:
            # What the verdict will say: the interval's side, whatever the rule decided.
            verdict = threshold_verdict(interval, self.judgement.threshold).verdict
            settled = SequentialDecision(verdict.value)
        return TestStatus(
            self.test.id,
            n,
            self.passed,
            self.errors,
            self.max_runs,
            low,
            high,
            decision=settled,
            finished=self.decision is not None and self.tracker is None,
            stopped=stopped,
        )

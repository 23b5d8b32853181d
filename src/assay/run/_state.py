"""One test's progress during a run: its trials in index order and its sequential test."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from assay import conventions as c
from assay.run._results import TrialRecord
from assay.run._suite import TestCase
from assay.stats import SequentialDecision, SequentialState, SequentialTest, wilson_interval


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
    """Lower end of the current interval (Wilson, or the anytime bound when adaptive)."""
    high: float
    """Upper end of the current interval."""
    decision: str
    """``running``, ``PASS``, ``FAIL``, ``INCONCLUSIVE``, or a stop reason."""


@dataclass(slots=True)
class TestState:
    """A test's trials so far, fed to its sequential test in trial-index order."""

    __test__ = False

    test: TestCase
    """The test case."""
    max_runs: int
    """The most trials."""
    threshold: float
    """Required pass rate."""
    confidence: float
    """Confidence of the Wilson interval."""
    seq: SequentialTest | None
    """The sequential test (None for a fixed run)."""
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
    decision: SequentialDecision | None = None
    """Set once the test is settled (or, for a fixed run, complete)."""
    decided_at: int | None = None
    """Trials fed when the sequential test settled."""
    last: SequentialState | None = None
    """The sequential test's latest state."""
    exclude_errors: bool = False
    """Leave error trials out of the pass rate."""
    window: int = 1_000_000
    """At most this many trials started but not yet fed (bounds the overshoot after a stop)."""

    @property
    def counted(self) -> int:
        """Trials that count towards the pass rate (error trials drop out when excluded)."""
        return len(self.records) - (self.errors if self.exclude_errors else 0)

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
            self.passed += r.passed
            self.errors += r.outcome == c.OUTCOME_ERROR
            if self.exclude_errors and r.outcome == c.OUTCOME_ERROR:
                continue
            if self.seq is not None and self.decision is None:
                self.last = self.seq.state(self.passed, self.counted)
                if self.last.decision is not SequentialDecision.CONTINUE:
                    self.decision = self.last.decision
                    self.decided_at = len(self.records)
            elif self.seq is None and len(self.records) >= self.max_runs:
                self.decision = SequentialDecision.INCONCLUSIVE  # "done": fixed run finished

    def status(self, stopped: str | None = None) -> TestStatus:
        """The test's progress for display; ``stopped`` labels an unsettled test."""
        n = len(self.records)
        if self.last is not None:
            low, high = self.last.low, self.last.high
        elif self.counted:
            interval = wilson_interval(self.passed, self.counted, self.confidence)
            low, high = interval.low, interval.high
        else:
            low, high = 0.0, 1.0
        if self.decision is not None and self.seq is not None:
            decision = self.decision.value
        elif self.decision is not None:
            decision = "done"
        else:
            decision = stopped or "running"
        return TestStatus(
            self.test.id, n, self.passed, self.errors, self.max_runs, low, high, decision
        )

"""What a look at a watched trace set shows: per test, and about the input (typed values).

The console table, ``/metrics``, the webhook and ``--once``'s exit code all read these.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.judge import Verdict, exit_code
from assay.stats import WatchFamilyRisk

__all__ = ["InputNote", "MeanStatus", "TestStatus", "WatchStatus"]


@dataclass(frozen=True, slots=True)
class MeanStatus:
    """A mean per trial (a score's, or the cost's) at one look."""

    name: str
    """The score's name, or ``cost_usd``."""
    n: int
    """Trials that recorded it."""
    mean: float | None
    """The observed mean (None before the first)."""
    low: float | None
    """Lower end of its anytime-valid interval; None where no bound makes one valid."""
    high: float | None
    """Upper end of the interval (None likewise)."""
    note: str | None = None
    """Why there is no interval, when there is none."""


@dataclass(frozen=True, slots=True)
class TestStatus:
    """One test at one look."""

    test_id: str
    """The test (the value of ``--test-attribute``)."""
    trials: int
    """Trials judged so far (of the watched version, with ``--baseline-version``)."""
    passed: int
    """Of those, trials that passed."""
    errors: int
    """Of those, trials that ended in an error."""
    n: int
    """Trials in the pass rate (errors left out under ``--errors exclude``)."""
    low: float
    """Lower end of the confidence sequence's interval (anytime-valid)."""
    high: float
    """Upper end of the interval."""
    threshold: float
    """The pass rate required."""
    verdict: Verdict
    """PASS (interval at or above the threshold), FAIL (wholly below), else INCONCLUSIVE."""
    drift_alarm: bool
    """Whether the drift alarm is raised now."""
    alarm_since: int | None
    """The trial count at which the alarm was first raised (None: never)."""
    reference_trials: int
    """Trials in the drift alarm's reference (the test's own, or the baseline version's)."""
    scores: tuple[MeanStatus, ...] = ()
    """Each score's mean, by name."""
    cost: MeanStatus | None = None
    """The mean cost per trial in USD (None while no trial was priced)."""

    @property
    def pass_rate(self) -> float | None:
        """Observed pass rate (None before the first trial)."""
        return self.passed / self.n if self.n else None


@dataclass(frozen=True, slots=True)
class InputNote:
    """Something about the input the user must be told, counted over the whole watch."""

    kind: str
    """A stable name: ``judged_without_root``, ``spans_without_trial``, a finding's kind, ..."""
    count: int
    """How many traces, spans or files, summed over every look."""
    message: str
    """The latest sentence about it."""


@dataclass(frozen=True, slots=True)
class WatchStatus:
    """Every test at one look, and what was read."""

    tests: tuple[TestStatus, ...]
    """One per test seen, by test id."""
    confidence: float
    """The confidence of every pass-rate sequence."""
    files_read: int
    """Spans files read so far."""
    spans_read: int
    """Spans read so far."""
    pending_traces: int
    """Traces waiting for their root span or their grace."""
    notes: tuple[InputNote, ...] = ()
    """What the input showed that the user must know (incomplete traces, skipped files, ...)."""
    family: WatchFamilyRisk | None = None
    """What the per-test guarantees mean over every test watched; None for fewer than two."""

    def exit_code(self, inconclusive_ok: bool = False) -> int:
        """0 all PASS, 1 any FAIL, 3 INCONCLUSIVE but no FAIL (0 with ``inconclusive_ok``)."""
        return exit_code((t.verdict for t in self.tests), inconclusive_ok=inconclusive_ok)

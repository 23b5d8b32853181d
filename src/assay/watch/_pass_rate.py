"""A watched test's pass rate: its counts, and its verdict read from a confidence sequence.

The verdict is the one of every command (PASS: the interval lies at or above the threshold;
FAIL: wholly below; else INCONCLUSIVE), but the interval is a confidence sequence
(:func:`assay.watch.pass_rate_sequence`): it covers the true rate at every look at once with
probability at least the confidence, so looking after every trial, forever, keeps the chance
of a wrong PASS or FAIL within ``1 - confidence``.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.choices import ErrorPolicy
from assay.judge import Verdict
from assay.stats import BernoulliConfidenceSequence

__all__ = ["PassRateCounts", "sequence_verdict"]


@dataclass(slots=True)
class PassRateCounts:
    """A test's trials so far: memory is three numbers, however many trials."""

    trials: int = 0
    """Every trial judged."""
    passed: int = 0
    """Trials that passed."""
    errors: int = 0
    """Trials that ended in an error (the harness or a dependency broke)."""

    def add(self, trials: int, passed: int, errors: int) -> None:
        """Count a batch of trials."""
        self.trials += trials
        self.passed += passed
        self.errors += errors

    def judged(self, errors: ErrorPolicy) -> tuple[int, int]:
        """``(passes, n)`` as the error policy counts them (``exclude`` leaves errors out)."""
        n = self.trials - self.errors if errors == ErrorPolicy.EXCLUDE else self.trials
        return self.passed, n


def sequence_verdict(
    sequence: BernoulliConfidenceSequence, passes: int, n: int, threshold: float
) -> Verdict:
    """PASS, FAIL or INCONCLUSIVE: where the sequence's interval lies against the threshold."""
    side = int(sequence.side(passes, n, threshold))
    if n > 0 and threshold <= 0:
        return Verdict.PASS  # every rate is at or above 0
    return {1: Verdict.PASS, -1: Verdict.FAIL}.get(side, Verdict.INCONCLUSIVE)

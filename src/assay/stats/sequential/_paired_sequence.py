"""An anytime-valid interval for the mean paired difference over cases, and its decision.

Two versions run the same cases; each case gives one difference ``current - baseline`` of its
pass rates (or of any score in [0, 1]), so each difference lies in ``[-1, 1]``. The cases are
treated as draws from a population of cases, the framing of Miller (2024), "Adding Error Bars
to Evals", arXiv:2411.00640: the quantity of interest is the population's mean difference,
each case weighted equally. Fed in a random order fixed by a seed (:func:`case_order`), the
differences are independent draws from that population, and the betting confidence sequence
of :class:`~assay.stats.BoundedMeanSequence` with bounds ``[-1, 1]`` (Waudby-Smith & Ramdas
2024) covers the mean difference at every case count at once: an adaptive comparison may stop
as soon as the interval settles the question.

The sign: a negative difference is a drop (the current version passes less often).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError
from assay.stats.base import check_drop
from assay.stats.sequential._betting import BoundedMeanSequence

__all__ = [
    "PairedDecision",
    "PairedDifferenceSequence",
    "PairedStatus",
    "decide_paired",
]


class PairedDecision(StrEnum):
    """What the interval of the mean difference (current − baseline) settles."""

    DROP = "drop shown"
    """The interval lies wholly below 0: the current version is worse."""
    NO_DROP = "no drop of delta"
    """The interval lies wholly above ``-delta``: any drop is smaller than delta."""
    WITHIN_MARGIN = "within margin"
    """Non-inferiority: the interval lies wholly above ``-margin``."""
    BEYOND_MARGIN = "beyond margin"
    """Non-inferiority refuted: the interval lies wholly below ``-margin``."""
    UNDECIDED = "undecided"
    """None of these yet."""


@dataclass(frozen=True, slots=True)
class PairedStatus:
    """The mean paired difference so far, its anytime-valid interval and the decision."""

    cases: int
    """Cases fed so far."""
    mean: float | None
    """Their mean difference (current − baseline); None before the first case."""
    low: float
    """Lower end of the interval of the population's mean difference."""
    high: float
    """Its upper end."""
    confidence: float
    """It covers the mean difference at every case count at once with this probability."""
    decision: PairedDecision
    """What the interval settles (see :meth:`PairedDifferenceSequence.decide`)."""


def decide_paired(
    low: float, high: float, delta: float = 0.10, margin: float | None = None
) -> PairedDecision:
    """What an interval ``[low, high]`` of the mean difference (current − baseline) settles.

    Without a margin: :attr:`~PairedDecision.DROP` when ``high < 0`` (checked first: a shown
    drop fails even when it is smaller than delta), :attr:`~PairedDecision.NO_DROP` when
    ``low > -delta``. With a margin (non-inferiority, "can we switch?"):
    :attr:`~PairedDecision.WITHIN_MARGIN` when ``low > -margin``,
    :attr:`~PairedDecision.BEYOND_MARGIN` when ``high < -margin``. Otherwise undecided.
    """
    if margin is not None:
        if not 0 <= margin < 1:
            raise ConfigError(f"margin must lie in [0, 1) (got {margin})")
        if low > -margin:
            return PairedDecision.WITHIN_MARGIN
        if high < -margin:
            return PairedDecision.BEYOND_MARGIN
        return PairedDecision.UNDECIDED
    check_drop("delta", delta)
    if high < 0:
        return PairedDecision.DROP
    if low > -delta:
        return PairedDecision.NO_DROP
    return PairedDecision.UNDECIDED


@dataclass(slots=True)
class PairedDifferenceSequence:
    """The betting confidence sequence of the mean per-case difference, fed case by case.

    Its interval is the running intersection of the sequence's intervals after each case: it
    covers the mean whenever the sequence covers it at every case count (probability at least
    ``confidence``), it is as narrow as the cases ever made it, and once a decision is reached it
    stays. Should the intersection ever be empty (the sequence missed the mean at some count, or
    the cases were not exchangeable), the current interval is used instead.
    """

    confidence: float = 0.95
    """``1 - alpha``: the chance the interval covers the mean difference at every count."""
    delta: float = 0.10
    """The drop that matters: "no drop of delta" once the interval lies above ``-delta``."""
    margin: float | None = None
    """A non-inferiority margin; None: decide drop / no drop of delta instead."""
    _sequence: BoundedMeanSequence = field(init=False)
    _low: float = field(init=False, default=-1.0)
    _high: float = field(init=False, default=1.0)

    def __post_init__(self) -> None:
        self._sequence = BoundedMeanSequence(self.confidence, -1.0, 1.0)
        decide_paired(-1.0, 1.0, self.delta, self.margin)  # checks delta and margin

    def add(self, differences: npt.ArrayLike) -> None:
        """Feed per-case differences ``current - baseline`` (each in [-1, 1]), in case order.

        Raises:
            InputError: A difference outside [-1, 1] or not finite (none of them is fed).
        """
        values = np.asarray(differences, dtype=np.float64).ravel()
        if values.size and not (np.isfinite(values).all() and np.abs(values).max() <= 1):
            self._sequence.add(values)  # refuses them all, with the one message for the bounds
        for value in values:
            self._sequence.add([value])
            low, high = self._sequence.interval()
            self._low, self._high = max(self._low, low), min(self._high, high)

    def interval(self) -> tuple[float, float]:
        """The anytime-valid interval of the mean difference (``(-1, 1)`` before any case)."""
        if self._low > self._high:
            return self._sequence.interval()
        return self._low, self._high

    def decide(self) -> PairedDecision:
        """What the interval settles now (:func:`decide_paired`)."""
        low, high = self.interval()
        return decide_paired(low, high, self.delta, self.margin)

    def status(self) -> PairedStatus:
        """The count, mean, interval and decision now."""
        low, high = self.interval()
        return PairedStatus(
            self._sequence.n,
            self._sequence.mean,
            low,
            high,
            self.confidence,
            decide_paired(low, high, self.delta, self.margin),
        )

"""A test's mean score and mean cost per trial, with anytime-valid intervals where bounded.

A score recorded in [0, 1] — or in the range declared for it (``--score-range quality=0:100``,
EvalView's scale) — gets the betting confidence sequence of :class:`BoundedMeanSequence`
(Waudby-Smith & Ramdas 2024), on the values rescaled to [0, 1] and the interval scaled back. A
value outside that range voids the interval: its mean is shown, with no interval, and the
reason (the guarantee needs the bounds; guessing them from the values seen would break it).
Cost per trial has no natural upper bound, and no finite-sample interval is valid for the mean
of an unbounded quantity without one (a single rare, huge trial can move the mean anywhere):
with ``--trial-cost-bound USD`` (a bound the operator knows, e.g. a budget the agent enforces)
the cost is rescaled to [0, 1] and gets the same sequence; a trial above that bound voids it,
and says so.
Without it the mean is shown alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from assay.stats import BoundedMeanSequence
from assay.watch._status import MeanStatus

__all__ = ["RunningMean"]


@dataclass(slots=True)
class RunningMean:
    """One mean per trial, its count and sum, and its sequence while the bound holds."""

    name: str
    """What is averaged (a score's name, or ``cost_usd``)."""
    confidence: float
    """The sequence's confidence."""
    bound: float | None = 1.0
    """Values lie in [low, bound]; None: no known bound, no interval."""
    unbounded_note: str = "no known range: no anytime-valid interval"
    """Why there is no interval when ``bound`` is None."""
    low: float = 0.0
    """The lower end of the values' range."""
    range_hint: str = ""
    """Said after a value outside the range: how to declare another (``--score-range``)."""
    n: int = 0
    total: float = 0.0
    note: str | None = None
    _sequence: BoundedMeanSequence | None = field(default=None)

    def __post_init__(self) -> None:
        if self.bound is not None:
            self._sequence = BoundedMeanSequence(self.confidence)
        else:
            self.note = self.unbounded_note

    def add(self, values: npt.NDArray[np.float64]) -> bool:
        """Count ``values`` (finite ones); False when one broke the bound (the interval ends)."""
        finite = values[np.isfinite(values)]
        self.n += finite.size
        self.total += float(finite.sum())
        if self._sequence is None or self.bound is None:
            return True
        scaled = (finite - self.low) / (self.bound - self.low)
        if scaled.size and (scaled.min() < 0 or scaled.max() > 1):
            self._sequence = None
            self.note = (
                f"a value outside [{self.low:g}, {self.bound:g}]{self.range_hint}: "
                "no anytime-valid interval"
            )
            return False
        self._sequence.add(scaled)
        return True

    def status(self) -> MeanStatus:
        """Its mean and interval now."""
        mean = self.total / self.n if self.n else None
        if self._sequence is None or self.bound is None:
            return MeanStatus(self.name, self.n, mean, None, None, self.note)
        low, high = self._sequence.interval()
        width = self.bound - self.low
        return MeanStatus(self.name, self.n, mean, self.low + low * width, self.low + high * width)

"""What a test's trials cost: the figure every report shows beside token usage."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class CostSummary:
    """USD spent by a test's trials, from their tokens and a price table."""

    total_usd: float
    """Sum over the priced trials."""
    mean_usd: float | None
    """Mean per priced trial; None when no trial could be priced."""
    priced: int
    """Trials with a cost."""
    unpriced: int
    """Trials left without a cost because a model they used has no price."""
    prices: str
    """Where the prices come from: ``default (list prices of 2025-06)`` or a file's path."""

    @classmethod
    def of(cls, costs: npt.ArrayLike, prices: str) -> CostSummary:
        """Summarise per-trial costs; NaN marks a trial without a price."""
        values = np.asarray(costs, dtype=np.float64)
        known = values[~np.isnan(values)]
        mean = float(known.mean()) if known.size else None
        return cls(float(known.sum()), mean, int(known.size), int(values.size - known.size), prices)

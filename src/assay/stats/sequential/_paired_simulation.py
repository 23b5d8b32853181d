"""Many adaptive paired comparisons at once: where each stops, and what it decides.

An adaptive comparison (``assay run --baseline-agent``) feeds each finished case's difference of
pass rates to :class:`~assay.stats.PairedDifferenceSequence` in a seeded random order and stops
at the first case where the interval settles the question (:func:`~assay.stats.decide_paired`),
or when the suite runs out. This module runs that same rule over many rows of differences side
by side — each row one comparison, the betting step shared with the one-at-a-time sequence
(:func:`assay.stats.sequential._betting.bet`) — so that its error rates and the cases it uses can be
measured (``benchmarks/bench_adaptive_compare.py``) and planned for (:func:`plan_paired` with
``design="adaptive"``) at the cost of one array operation per case.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.errors import InputError
from assay.stats.base import check_open_unit
from assay.stats.sequential._betting import GRID, bet, unit_interval
from assay.stats.sequential._paired_sequence import PairedDecision, decide_paired

__all__ = ["PairedStops", "simulate_paired_sequence"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PairedStops:
    """Where each simulated adaptive comparison stopped, and what its interval settled."""

    cases: IntArray
    """Cases fed when it stopped: the first case count with a decision, else all of them."""
    decisions: npt.NDArray[np.str_]
    """Each row's :class:`~assay.stats.PairedDecision` value (``"undecided"`` at the end)."""
    low: FloatArray
    """Lower end of the anytime-valid interval of the mean difference when it stopped."""
    high: FloatArray
    """Its upper end."""

    def share(self, decision: PairedDecision) -> float:
        """The fraction of rows that ended with ``decision``."""
        return float(np.mean(self.decisions == decision.value))


def simulate_paired_sequence(
    differences: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    delta: float = 0.10,
    margin: float | None = None,
) -> PairedStops:
    """Run the adaptive paired comparison over each row of per-case differences, in row order.

    Each row is one comparison's differences ``current - baseline`` (in [-1, 1]) in the order
    its cases would run; the row stops at the first case where the running intersection of the
    betting sequence's intervals settles (exactly as :class:`PairedDifferenceSequence` feeds
    and decides, checked by a test), or at its last case.

    Args:
        differences: Shape ``(comparisons, cases)``.
        confidence: ``1 - alpha`` of the sequence.
        delta: The drop that matters (decision "no drop of delta").
        margin: A non-inferiority margin instead of delta.

    Returns:
        Per row: cases used, decision and interval.

    Raises:
        InputError: Not a 2-D array of finite values in [-1, 1].
        ConfigError: A confidence, delta or margin out of range.
    """
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 2 or d.shape[1] == 0:
        raise InputError(f"differences must be a 2-D array with cases (got shape {d.shape})")
    if not (np.isfinite(d).all() and np.abs(d).max() <= 1):
        raise InputError("a difference outside [-1, 1]: the paired sequence needs bounds")
    check_open_unit("confidence", confidence)
    decide_paired(-1.0, 1.0, delta, margin)  # checks delta and margin
    rows, cases = d.shape
    alpha = 1 - confidence
    x = (d + 1) / 2  # the sequence's [-1, 1] rescaled to [0, 1], as BoundedMeanSequence does
    used = np.full(rows, cases, dtype=np.int64)
    decisions = np.full(rows, PairedDecision.UNDECIDED.value, dtype="<U16")
    final_low, final_high = np.full(rows, -1.0), np.full(rows, 1.0)
    # the rows still running, compacted as rows stop so each step costs only the live ones
    live = np.arange(rows)
    log_up, log_down = np.zeros((rows, GRID.size)), np.zeros((rows, GRID.size))
    means, squares = np.full(rows, 0.5), np.full(rows, 0.25)
    totals = np.zeros(rows)
    low, high = np.full(rows, -1.0), np.full(rows, 1.0)
    for t in range(1, cases + 1):
        value = x[live, t - 1]
        stepped = bet(log_up, log_down, means, squares, t, value, alpha)
        means, squares = np.asarray(stepped[0]), np.asarray(stepped[1])
        totals += value
        unit_low, unit_high = unit_interval(log_up, log_down, totals / t, alpha)
        now_low, now_high = 2 * unit_low - 1, 2 * unit_high - 1
        low, high = np.maximum(low, now_low), np.minimum(high, now_high)
        empty = low > high  # the sequence missed at some count: the current interval instead
        shown_low, shown_high = np.where(empty, now_low, low), np.where(empty, now_high, high)
        decided = _decisions(shown_low, shown_high, delta, margin)
        done = decided != PairedDecision.UNDECIDED.value
        if t == cases:
            done[:] = True
        if done.any():
            stopped = live[done]
            used[stopped] = t
            decisions[stopped] = decided[done]
            final_low[stopped], final_high[stopped] = shown_low[done], shown_high[done]
            keep = ~done
            live, log_up, log_down = live[keep], log_up[keep], log_down[keep]
            means, squares, totals = means[keep], squares[keep], totals[keep]
            low, high = low[keep], high[keep]
        if live.size == 0:
            break
    return PairedStops(used, decisions, final_low, final_high)


def _decisions(
    low: FloatArray, high: FloatArray, delta: float, margin: float | None
) -> npt.NDArray[np.str_]:
    """:func:`decide_paired` row-wise (same order of checks)."""
    out = np.full(low.shape, PairedDecision.UNDECIDED.value, dtype="<U16")
    if margin is not None:
        out[high < -margin] = PairedDecision.BEYOND_MARGIN.value
        out[low > -margin] = PairedDecision.WITHIN_MARGIN.value
        return out
    out[low > -delta] = PairedDecision.NO_DROP.value
    out[high < 0] = PairedDecision.DROP.value  # checked first in decide_paired: written last
    return out

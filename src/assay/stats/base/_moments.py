"""Sum, mean, spread and percentiles of many samples at once, each as numpy gives it alone.

A set of thousands of tests summarises thousands of small samples (each test's scores,
durations, costs); numpy's per-call overhead, not the arithmetic, is then the cost. Samples of
one size are stacked into the rows of a matrix and reduced along the rows: numpy reduces each
contiguous row with the same pairwise summation it uses for a lone array, and the percentiles
interpolate between the same order statistics, so every figure is the one the sample alone
gives, bit for bit (``tests/stats/test_moments.py`` checks sizes from 1 to past numpy's
summation blocks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Moments:
    """Per sample (in the order given): its size and figures; NaN where a figure is undefined."""

    n: npt.NDArray[np.intp]
    """Values in the sample."""
    total: FloatArray
    """``x.sum()`` (0 for an empty sample)."""
    mean: FloatArray
    """``x.mean()``; NaN for an empty sample."""
    std: FloatArray
    """``x.std(ddof=1)``; NaN below two values."""
    min: FloatArray
    """``x.min()``; NaN for an empty sample."""
    max: FloatArray
    """``x.max()``; NaN for an empty sample."""
    p50: FloatArray
    """``np.percentile(x, 50)``; NaN for an empty sample."""
    p90: FloatArray
    """``np.percentile(x, 90)``; NaN for an empty sample."""


def sample_moments(
    samples: Sequence[npt.NDArray[np.float64]], *, spread: bool = True, percentiles: bool = True
) -> Moments:
    """The :class:`Moments` of each 1-D float64 sample, one numpy pass per distinct size.

    Args:
        samples: The samples.
        spread: Compute ``std`` (else left NaN).
        percentiles: Compute ``p50`` and ``p90`` (else left NaN).
    """
    k = len(samples)
    sizes = np.array([s.size for s in samples], dtype=np.intp)
    total = np.zeros(k)
    mean, std, low, high, p50, p90 = (np.full(k, np.nan) for _ in range(6))
    for size in np.unique(sizes).tolist():
        if size == 0:
            continue
        rows = np.flatnonzero(sizes == size)
        matrix = np.stack([samples[i] for i in rows.tolist()])
        total[rows] = matrix.sum(axis=1)
        mean[rows] = matrix.mean(axis=1)
        if spread and size > 1:
            std[rows] = matrix.std(axis=1, ddof=1)
        low[rows] = matrix.min(axis=1)
        high[rows] = matrix.max(axis=1)
        if percentiles:
            p50[rows], p90[rows] = np.percentile(matrix, [50, 90], axis=1)
    return Moments(sizes, total, mean, std, low, high, p50, p90)

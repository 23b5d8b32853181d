"""Mann–Whitney U p-values of many pairs of samples at once, each exactly scipy's.

The one Mann–Whitney engine of assay (the behaviour diff and the failure explanations both
call it). ``scipy.stats.mannwhitneyu`` (Mann & Whitney 1947) costs about a millisecond a call
in argument handling alone; a set of thousands of tests has thousands of pairs. scipy's
``method="auto"`` takes the exact null distribution when either sample has at most 8 values
and the pooled values have no ties, else the normal approximation with tie and continuity
corrections; the same choice is made here pair by pair, and each p-value is the one
``mannwhitneyu(x, y)`` returns on its own, bit for bit (tests/stats/test_mann_whitney.py and
tests/stats/test_explain_batched.py check equality):

* where scipy's choice is the asymptotic method, every pair is tested at once by
  :func:`_asymptotic_p_values`, scipy's formula over arrays (pairs of one pooled size ranked
  together);
* where it is the exact method, pairs of the same sizes are stacked and handed to one scipy
  call along ``axis=1`` with ``method="exact"``;
* a pair of more than :data:`_VECTORISED_MAX` values pooled by one scipy call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

_EXACT_UP_TO = 8
"""scipy's ``method="auto"``: exact when either sample has at most this many values (no ties)."""


def mann_whitney_p_values(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]], alternative: str = "two-sided"
) -> list[float]:
    """``scipy.stats.mannwhitneyu(x, y, alternative=alternative).pvalue`` of every pair.

    Args:
        pairs: ``(x, y)`` samples, each non-empty and free of NaN.
        alternative: ``two-sided``, ``less`` or ``greater``, as scipy reads it.

    Returns:
        One p-value per pair, in order, equal to scipy's one-call result (same method, same
        floating-point operations).
    """
    from scipy import stats as sps

    samples = [
        (np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel())
        for x, y in pairs
    ]
    out: list[float] = [0.0] * len(samples)
    asymptotic: list[int] = []
    small: dict[tuple[int, int], list[int]] = {}
    for i, (x, y) in enumerate(samples):
        pooled = x.size + y.size
        if pooled > _VECTORISED_MAX:
            out[i] = float(sps.mannwhitneyu(x, y, alternative=alternative).pvalue)
        elif x.size > _EXACT_UP_TO and y.size > _EXACT_UP_TO:
            asymptotic.append(i)
        else:
            small.setdefault((x.size, y.size), []).append(i)
    exact: dict[tuple[int, int], list[int]] = {}
    for sizes, rows in small.items():
        # Ties make scipy's "auto" asymptotic: pairs of one pair of sizes are checked at once
        # (sorted rows with two equal neighbours: what np.unique's count would show).
        pooled_rows = np.stack([np.concatenate(samples[i]) for i in rows])
        ordered = np.sort(pooled_rows, axis=1)
        tied = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
        for i, has_ties in zip(rows, tied.tolist(), strict=True):
            if has_ties:
                asymptotic.append(i)
            else:
                exact.setdefault(sizes, []).append(i)
    asymptotic.sort()
    for rows in exact.values():
        # One call per pair of sizes, along axis=1: scipy's exact method row by row.
        xs = np.stack([samples[i][0] for i in rows])
        ys = np.stack([samples[i][1] for i in rows])
        result = sps.mannwhitneyu(xs, ys, alternative=alternative, axis=1, method="exact")
        for i, p in zip(rows, np.atleast_1d(result.pvalue).tolist(), strict=True):
            out[i] = float(p)
    if asymptotic:
        p_values = _asymptotic_p_values([samples[i] for i in asymptotic], alternative)
        for i, p in zip(asymptotic, p_values.tolist(), strict=True):
            out[i] = float(p)
    return out


_VECTORISED_MAX = 200_000
"""Pooled sizes up to which :func:`_asymptotic_p_values` is scipy's to the bit: its sums of
ranks and of tie terms (t³ − t) are integers or halves below 2⁵³, exact in any order."""


def _asymptotic_p_values(
    samples: list[tuple[FloatArray, FloatArray]], alternative: str = "two-sided"
) -> FloatArray:
    """Asymptotic Mann–Whitney p-values of many pairs of samples, sizes mixed.

    ``scipy.stats.mannwhitneyu(x, y, alternative=alternative, method="asymptotic")`` for each
    pair, bit for bit: the same average ranks, the same tie-corrected z with continuity
    correction, in the same floating-point steps, and ``scipy.special.ndtr``. Pairs of one
    pooled size are ranked together, one row each (one scipy call costs about a millisecond
    of overhead; a set of thousands of tests has thousands of pairs).
    """
    from scipy import special

    n1 = np.array([f.size for f, _ in samples], dtype=np.int64)
    n = n1 + np.array([p.size for _, p in samples], dtype=np.int64)
    r1 = np.empty(n.size)
    tie_term = np.empty(n.size)
    for size in np.unique(n).tolist():
        same = np.flatnonzero(n == size)
        # Blocks of about 64k values: the temporaries stay in cache, not in fresh pages.
        step = max(1, _BLOCK // size)
        for block in range(0, same.size, step):
            rows = same[block : block + step]
            pooled = np.empty((rows.size, size))
            for row, i in enumerate(rows.tolist()):
                fail_x, pass_x = samples[i]
                pooled[row, : fail_x.size] = fail_x
                pooled[row, fail_x.size :] = pass_x
            r1[rows], tie_term[rows] = _rank_sums(pooled, n1[rows])
    n2 = n - n1
    u1 = r1 - n1 * (n1 + 1) / 2
    u2 = n1 * n2 - u1
    # scipy's choice of statistic and factor: U1 for "greater", U2 for "less", else the larger.
    if alternative == "greater":
        u, factor = u1, 1
    elif alternative == "less":
        u, factor = u2, 1
    else:
        u, factor = np.maximum(u1, u2), 2
    mu = n1 * n2 / 2
    s = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    numerator = u - mu
    numerator -= 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        z = numerator / s
    p: FloatArray = np.clip(special.ndtr(-z) * factor, 0.0, 1.0)
    return p


_BLOCK = 1 << 16
"""Values ranked at once by :func:`_asymptotic_p_values`."""
_COUNTED = 256
"""Small counts (every value an integer below this) are ranked by counting, not sorting."""


def _counted_rank_sums(
    values: npt.NDArray[np.intp], n1: npt.NDArray[np.int64], width: int
) -> tuple[FloatArray, FloatArray]:
    """:func:`_rank_sums` of rows of small counts, by counting each value's trials.

    A value held by c trials after s smaller ones has the average rank s + 1 + (c − 1) / 2;
    the first sample's rank sum is the sum over values of its trials times that rank. Every
    term and partial sum is an integer or a half below 2⁵³, so the sums are the sorted ones
    to the bit.
    """
    k, size = values.shape
    cells = values + (np.arange(k) * width)[:, None]
    counts = np.bincount(cells.ravel(), minlength=k * width).reshape(k, width)
    first = np.arange(size) < n1[:, None]
    counts_first = np.bincount(cells[first], minlength=k * width).reshape(k, width)
    ties = counts.astype(np.float64)
    before = np.cumsum(counts, axis=1) - counts
    ranks = (before + 1).astype(np.float64) + (ties - 1) / 2
    r1 = (counts_first * ranks).sum(axis=1)
    tie_term = (ties**3 - ties).sum(axis=1)
    return r1, tie_term


def _rank_sums(pooled: FloatArray, n1: npt.NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    """The first sample's sum of average ranks and the tie term Σ (t³ − t), per row.

    Each row of ``pooled`` holds one pair, its first ``n1`` values the first sample.
    """
    k, size = pooled.shape
    low, high = pooled.min(), pooled.max()
    if low >= 0 and high < _COUNTED and (pooled == np.floor(pooled)).all():
        return _counted_rank_sums(pooled.astype(np.intp), n1, int(high) + 1)
    order = np.argsort(pooled, axis=1)  # ties share their rank: any order of them will do
    ordered = np.take_along_axis(pooled, order, axis=1)
    new = np.ones((k, size), dtype=bool)  # the first of a run of equal values
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    last = np.ones((k, size), dtype=bool)  # the last of one
    last[:, :-1] = new[:, 1:]
    position = np.arange(size)
    start = np.maximum.accumulate(np.where(new, position, 0), axis=1)
    end = np.minimum.accumulate(np.where(last, position, size)[:, ::-1], axis=1)[:, ::-1]
    # scipy's average rank: the run's first ordinal rank plus (count - 1) / 2.
    counts = (end - start + 1).astype(np.float64)
    ranks = (start + 1).astype(np.float64) + (counts - 1) / 2
    first = order < n1[:, None]
    r1 = np.where(first, ranks, 0.0).sum(axis=1)
    tie_term = np.where(new, counts**3 - counts, 0.0).sum(axis=1)
    return r1, tie_term

"""Rejection regions of the exact tests and their exact power, computed once per group sizes.

Power is the probability that the test rejects when the true rates are given: the sum, over
the rejection region, of the probabilities of both groups' outcomes. It is exact (every
outcome enumerated), never a normal approximation, and never computed from the observed
difference.
"""

from __future__ import annotations

import functools

import numpy as np

from assay.choices import DEFAULT_REGRESSION_TEST, RegressionTest
from assay.stats.base import check_drop, check_open_unit, check_probability
from assay.stats.two_sample._exact2x2 import (
    BoolArray,
    _check_positive,
    _check_sizes,
    _coarse_probability,
    _ordering,
    _refined_p_value,
    _TableCache,
    check_test,
    enumerable,
)
from assay.stats.two_sample._prefix_power import fisher_boundary, prefix_power

# A region is one byte per table: keep at most ~50 MB of them.
_REGIONS = _TableCache(50_000_000)


def _region(n1: int, n2: int, test: str, alpha: float) -> BoolArray:
    key = (n1, n2, test, alpha)
    cached = _REGIONS.get(key)
    if isinstance(cached, np.ndarray):
        return cached
    region = _make_region(n1, n2, test, alpha)
    _REGIONS.put(key, (n1 + 1) * (n2 + 1), region)
    return region


def _make_region(n1: int, n2: int, test: str, alpha: float) -> BoolArray:
    ordering = _ordering(n1, n2, test)
    if test == RegressionTest.FISHER:
        region: BoolArray = ordering.statistic < alpha
    else:
        # "At least as extreme" sets are nested, so p-values grow along the sorted order and
        # the region is a prefix of it. Coarse-grid values are cheap lower bounds: bisect with
        # them first, then walk back from that end with refined p-values.
        def coarse_in(k: int) -> bool:
            return _coarse_probability(n1, n2, test, int(ordering.ends[k])) < alpha

        def refined_in(k: int) -> bool:
            return _refined_p_value(n1, n2, test, k) < alpha

        lo, hi = 0, ordering.ends.size
        while lo < hi:
            mid = (lo + hi) // 2
            if coarse_in(mid):
                lo = mid + 1
            else:
                hi = mid
        end = lo  # every position >= end is outside the region
        inside, outside, step = end - 1, end, 1
        while inside >= 0 and not refined_in(inside):
            outside = inside
            inside = end - 1 - step
            step *= 2
        inside = max(inside, -1)
        while outside - inside > 1:
            mid = (inside + outside) // 2
            if refined_in(mid):
                inside = mid
            else:
                outside = mid
        lo = outside
        region = ordering.position < lo
    region.setflags(write=False)
    return region


def rejection_region(
    baseline_n: int, current_n: int, alpha: float = 0.05, test: str = DEFAULT_REGRESSION_TEST
) -> BoolArray:
    """Which outcomes the test rejects at ``alpha``: a read-only boolean array.

    Element ``[x1, x2]`` is True when ``baseline_passed = x1, current_passed = x2`` gives
    p < alpha. Computed once per (sizes, test, alpha) and cached.

    Args:
        baseline_n: Baseline trials (≥ 1).
        current_n: Current trials (≥ 1).
        alpha: Significance level in (0, 1).
        test: One of :data:`TESTS`.

    Returns:
        A ``(baseline_n + 1, current_n + 1)`` boolean array.
    """
    check_test(test)
    _check_sizes(baseline_n, current_n)
    check_open_unit("alpha", alpha)
    return _region(baseline_n, current_n, test, float(alpha))


def rejection_probability(
    baseline_n: int,
    current_n: int,
    baseline_rate: float,
    current_rate: float,
    alpha: float = 0.05,
    test: str = DEFAULT_REGRESSION_TEST,
) -> float:
    """Exact probability that the test rejects when the true rates are as given.

    Sums, over the rejection region, the probability of each pair of binomial outcomes:
    Σ Bin(x1; n1, baseline_rate) · Bin(x2; n2, current_rate). With ``current_rate =
    baseline_rate - delta`` it is the power to detect a drop of delta; with equal rates it is
    the type-I error at that rate (never above alpha for these tests).

    Args:
        baseline_n: Baseline trials (≥ 1).
        current_n: Current trials (≥ 1).
        baseline_rate: True baseline pass rate in [0, 1].
        current_rate: True current pass rate in [0, 1].
        alpha: Significance level in (0, 1).
        test: One of :data:`TESTS`.

    Fisher's test is computed at any size (above :data:`MAX_TABLES` tables its region is
    summed row by row: :mod:`._prefix_power`); Boschloo's and Barnard's up to that many.

    Returns:
        The probability in [0, 1].
    """
    from scipy import stats as sps

    for name, rate in (("baseline_rate", baseline_rate), ("current_rate", current_rate)):
        check_probability(name, rate)
    if test == RegressionTest.FISHER and not enumerable(baseline_n, current_n):
        # Too many tables to enumerate: Fisher's region is summed row by row, exactly.
        _check_positive(baseline_n, current_n)
        check_open_unit("alpha", alpha)
        return prefix_power(
            baseline_n,
            current_n,
            baseline_rate,
            current_rate,
            lambda rows: fisher_boundary(baseline_n, current_n, alpha, rows),
        )
    region = rejection_region(baseline_n, current_n, alpha, test).astype(np.float64)
    pmf1 = sps.binom.pmf(np.arange(baseline_n + 1), baseline_n, baseline_rate)
    pmf2 = sps.binom.pmf(np.arange(current_n + 1), current_n, current_rate)
    return float(min(max(pmf1 @ region @ pmf2, 0.0), 1.0))


def regression_power(
    baseline_n: int,
    current_n: int,
    baseline_rate: float,
    delta: float = 0.10,
    alpha: float = 0.05,
    test: str = DEFAULT_REGRESSION_TEST,
) -> float:
    """Exact power to detect a drop of ``delta`` from ``baseline_rate`` at these group sizes.

    The current rate under the alternative is ``max(baseline_rate - delta, 0)``. Enumerates
    all outcomes of both groups (see :func:`rejection_probability`); no normal approximation,
    and never the observed difference (post-hoc "observed power" says nothing new).

    Args:
        baseline_n: Baseline trials (≥ 1).
        current_n: Current trials (≥ 1).
        baseline_rate: Baseline pass rate the drop starts from, in [0, 1].
        delta: The drop to detect, in (0, 1].
        alpha: Significance level in (0, 1).
        test: One of :data:`TESTS`.

    Returns:
        The power in [0, 1].
    """
    check_drop("delta", delta)
    return _power(baseline_n, current_n, baseline_rate, delta, alpha, test)


@functools.lru_cache(maxsize=4096)
def _power(n1: int, n2: int, rate: float, delta: float, alpha: float, test: str) -> float:
    # A suite of many cases with a few trials each repeats the same few (sizes, rate): each
    # is computed once, not once a case (scipy's binomial pmf costs far more than the sum).
    return rejection_probability(n1, n2, rate, max(rate - delta, 0.0), alpha, test)


__all__ = [
    "regression_power",
    "rejection_probability",
    "rejection_region",
]

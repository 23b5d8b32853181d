"""Exact power of a two-sample drop test at any size, without enumerating every outcome table.

The exact tests enumerate all ``(n1 + 1)(n2 + 1)`` outcome tables (:mod:`._exact2x2`), which
stops at :data:`~._exact2x2.MAX_TABLES` (about 2,200 trials per version). Fisher's
test needs no enumeration for its p-value (a hypergeometric tail), and its rejection region has
a simple shape: for each number of baseline passes ``x1`` the test rejects exactly when the
current passes ``x2`` lie below a boundary ``c(x1)`` that never falls as ``x1`` grows (its
p-value rises with ``x2`` and falls with ``x1``). Power is then

    Σ over x1 of Bin(x1; n1, p1) · P(Bin(n2, p2) < c(x1)),

and only the rows ``x1`` carrying binomial mass matter (those beyond 1e-15 in either tail add
at most 2e-15). :func:`fisher_boundary` walks ``c`` up those rows with the exact
hypergeometric CDF, equal to the enumerated region where that can be built (tested).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_TAIL = 1e-15
"""Binomial mass left out on each side of the rows summed."""


def fisher_p_value(
    baseline_passed: int, baseline_n: int, current_passed: int, current_n: int
) -> float:
    """Fisher's one-sided p-value for a drop, ``P(X2 <= x2 | x1 + x2)``, at any size."""
    from scipy import stats as sps

    total = baseline_passed + current_passed
    p = sps.hypergeom.cdf(current_passed, baseline_n + current_n, total, current_n)
    return float(min(max(p, 0.0), 1.0))


def mass_rows(n: int, rate: float) -> IntArray:
    """The outcomes ``0..n`` of Bin(n, rate) outside its two 1e-15 tails, in order."""
    from scipy import stats as sps

    low = int(max(sps.binom.ppf(_TAIL, n, rate) - 1, 0))
    high = int(min(sps.binom.isf(_TAIL, n, rate) + 1, n))
    return np.arange(low, high + 1, dtype=np.int64)


def fisher_boundary(n1: int, n2: int, alpha: float, rows: IntArray) -> IntArray:
    """``c(x1)`` of Fisher's test at ``alpha`` for consecutive ``rows``: it rejects x2 < c(x1).

    ``c`` never falls as ``x1`` grows (the p-value falls with ``x1``), so it is walked up the
    rows, each step one exact hypergeometric CDF; the first row's ``c`` is bisected.
    """

    def rejects(x1: int, x2: int) -> bool:
        return fisher_p_value(x1, n1, x2, n2) < alpha

    first = int(rows[0])
    lo, hi = 0, n2 + 1  # rejects every x2 < lo; not hi (hi = n2 + 1: none left)
    while lo < hi:
        mid = (lo + hi) // 2
        if rejects(first, mid):
            lo = mid + 1
        else:
            hi = mid
    out = np.empty(rows.size, dtype=np.int64)
    c = lo
    for i, x1 in enumerate(rows.tolist()):
        while c <= n2 and rejects(x1, c):
            c += 1
        out[i] = c
    return out


def prefix_power(
    n1: int,
    n2: int,
    baseline_rate: float,
    current_rate: float,
    boundary: Callable[[IntArray], IntArray],
) -> float:
    """Exact probability of rejecting, for a test that rejects x2 < c(x1) (see the module).

    Args:
        n1: Baseline trials.
        n2: Current trials.
        baseline_rate: True baseline pass rate.
        current_rate: True current pass rate.
        boundary: ``c`` for an array of consecutive rows.

    Returns:
        The probability in [0, 1].
    """
    from scipy import stats as sps

    rows = mass_rows(n1, baseline_rate)
    c = boundary(rows)
    weights = sps.binom.pmf(rows, n1, baseline_rate)
    below = sps.binom.cdf(c - 1, n2, current_rate)
    return float(min(max(float(weights @ below), 0.0), 1.0))


__all__ = [
    "fisher_boundary",
    "fisher_p_value",
    "mass_rows",
    "prefix_power",
]

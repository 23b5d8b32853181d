"""One-sided exact tests of two pass rates (current worse than baseline) and their exact power.

Every test here orders all (n1 + 1)(n2 + 1) possible outcome tables once per pair of group
sizes, so a suite of tests with equal sizes shares one computation:

* ``fisher`` — Fisher's exact test, conditional on the total number of passes; its p-value is
  the hypergeometric tail P(X2 ≤ x2 | x1 + x2) (Fisher 1935).
* ``boschloo`` — Boschloo's test (Boschloo 1970, Statistica Neerlandica 24:1): Fisher's p-value
  used as the ordering statistic of an unconditional test, whose p-value is the largest
  probability, over the common pass rate π, of a table at least as extreme. Uniformly more
  powerful than Fisher's test at the same level.
* ``barnard`` — Barnard's unconditional test (Barnard 1945, Nature 156:177) with the pooled
  Wald statistic as ordering, as ``scipy.stats.barnard_exact``.

For the unconditional tests, a p-value is the largest probability, over the common pass rate
π, of the set of tables at least as extreme as the observed one. These sets are nested along
the sorted order and (checked per size) are row by row prefixes x2 < c(x1), so the
probability of one set at many π values is a sum of binomial CDFs: cheap. It is evaluated on a
grid of 400 π values (Chebyshev points, dense near 0 and 1 where the binomial peaks are
narrow) and the highest peaks are refined by three rounds of zooming. The rejection region at
alpha is a prefix of the sorted order, found by bisection (first with grid values, which are
lower bounds, then with refined ones). The results equal ``scipy.stats.boschloo_exact`` /
``barnard_exact`` (whose table has the two samples as *columns*: ``[[x1, x2], [n1 - x1,
n2 - x2]]``, ``alternative="greater"``), which the tests check on a grid of tables; where
scipy's optimiser misses the supremum (Barnard, larger groups) ours is larger and matches a
brute-force search.
"""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.choices import DEFAULT_REGRESSION_TEST, RegressionTest
from assay.errors import ConfigError, InsufficientDataError
from assay.stats.two_sample._prefix_power import fisher_p_value

TESTS: Final = tuple(t for t in RegressionTest if t is not RegressionTest.ANYTIME)
"""The exact fixed-n two-sample tests of pass rates, by CLI name (the anytime-valid one is
:class:`~assay.stats.DropSequence`)."""

MAX_TABLES: Final = 5_000_000
"""Largest number of outcome tables (n1 + 1)(n2 + 1) enumerated (memory stays < ~0.5 GB)."""

_GRID_POINTS: Final = 400
_ZOOM_POINTS: Final = 33
_ZOOM_ROUNDS: Final = 3
# scipy.stats.boschloo_exact treats Fisher p-values within a relative 1e-13 as ties (gh-14178).
_BOSCHLOO_TIE_RTOL: Final = 1e-13

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class _TableCache:
    """A least-recently-used cache of per-size arrays, bounded by the tables they hold.

    ``functools.lru_cache`` bounds the number of entries, but one entry for 2,000 trials per
    version holds ~100 MB; this bounds the sum of (n1 + 1)(n2 + 1) over the entries instead.
    """

    def __init__(self, max_tables: int) -> None:
        self.max_tables = max_tables
        self.entries: collections.OrderedDict[tuple[object, ...], tuple[int, object]] = (
            collections.OrderedDict()
        )
        self.tables = 0

    def get(self, key: tuple[object, ...]) -> object | None:
        found = self.entries.get(key)
        if found is None:
            return None
        self.entries.move_to_end(key)
        return found[1]

    def put(self, key: tuple[object, ...], tables: int, value: object) -> None:
        self.entries[key] = (tables, value)
        self.tables += tables
        while self.tables > self.max_tables and len(self.entries) > 1:
            _, (dropped, _) = self.entries.popitem(last=False)
            self.tables -= dropped

    def clear(self) -> None:
        self.entries.clear()
        self.tables = 0


# About 25 MB per million tables for an ordering: keep at most ~0.5 GB of them.
_ORDERINGS = _TableCache(20_000_000)


def enumerable(n1: int, n2: int) -> bool:
    """Whether the (n1 + 1)(n2 + 1) outcome tables of these group sizes can be enumerated.

    Above :data:`MAX_TABLES` only Fisher's test (its p-value a hypergeometric tail, its power
    summed row by row: :mod:`._prefix_power`) and the anytime-valid test are computed.
    """
    return (n1 + 1) * (n2 + 1) <= MAX_TABLES


def _check_positive(n1: int, n2: int) -> None:
    if n1 < 0 or n2 < 0:
        raise ConfigError(f"group sizes cannot be negative (got {n1} and {n2})")
    if n1 == 0 or n2 == 0:
        raise InsufficientDataError(f"both groups need at least one trial (got {n1} and {n2})")


def _check_sizes(n1: int, n2: int) -> None:
    _check_positive(n1, n2)
    if not enumerable(n1, n2):
        raise ConfigError(
            f"an exact regression test enumerates (n1 + 1)(n2 + 1) outcome tables, at most "
            f"{MAX_TABLES:,} (about 2,200 trials per version); got {n1} and {n2} trials "
            "(Fisher's test and the anytime test compute at any size)"
        )


def check_test(test: str) -> None:
    if test not in TESTS:
        raise ConfigError(f"unknown regression test {test!r}; choose one of {', '.join(TESTS)}")


def _grid() -> FloatArray:
    theta = np.linspace(0.0, np.pi, _GRID_POINTS)
    grid: FloatArray = (1.0 - np.cos(theta)) / 2.0
    return grid


@functools.lru_cache(maxsize=64)
def _log_comb(n: int) -> FloatArray:
    from scipy import special as sps_special

    x = np.arange(n + 1)
    log_comb: FloatArray = (
        sps_special.gammaln(n + 1) - sps_special.gammaln(x + 1) - (sps_special.gammaln(n - x + 1))
    )
    return log_comb


def _pmfs(n: int, pis: FloatArray) -> FloatArray:
    """Binomial(n, π) probabilities of 0..n, one row per π, computed in log space."""
    from scipy import special as sps_special

    x = np.arange(n + 1)[None, :]
    p = pis[:, None]
    log_pmf = _log_comb(n)[None, :] + sps_special.xlogy(x, p) + sps_special.xlog1py(n - x, -p)
    pmf: FloatArray = np.exp(log_pmf)
    # Subnormal numbers make BLAS and ufuncs crawl (100x); they cannot move a p-value.
    pmf[pmf < 1e-300] = 0.0
    return pmf


@dataclass(frozen=True, slots=True)
class _Ordering:
    """All tables of one (n1, n2, test), sorted from most to least extreme."""

    n1: int
    n2: int
    ends: IntArray
    """For sorted position k, how many tables are at least as extreme (ties included)."""
    position: IntArray
    """(n1 + 1, n2 + 1): the sorted position of each table."""
    statistic: FloatArray
    """(n1 + 1, n2 + 1): the ordering statistic (Fisher's p-value for fisher and boschloo)."""
    rows_are_prefixes: bool
    """True when, for each x1, more current passes are never more extreme: then every region
    is, row by row, a prefix x2 < c(x1), and its probability is a sum of binomial CDFs."""
    row_keys: IntArray
    """Flattened ``ends[position] + x1 · (T + 1)``: sorted when rows are prefixes, so c(x1) for
    every row is one vectorised ``searchsorted``."""


def _fisher_statistic(n1: int, n2: int) -> FloatArray:
    """P(X2 <= x2 | x1 + x2) for every table: Fisher's one-sided p-value for a drop.

    The hypergeometric weights C(n1, x1) C(n2, x2) are laid out by total passes, summed from
    the most extreme end (so small tails keep their relative precision) and divided by their
    total (so the last one is exactly 1). With equal group sizes, table (x1, x2) and its mirror
    (n - x2, n - x1) have the same p-value in exact arithmetic; they are made equal in floating
    point too, as scipy's tie tolerance would. Equals ``scipy.stats.hypergeom.cdf(x2, n1 + n2,
    x1 + x2, n2)`` to about 1e-12 (tested).
    """
    x1 = np.arange(n1 + 1)[:, None]
    x2 = np.broadcast_to(np.arange(n2 + 1)[None, :], (n1 + 1, n2 + 1))
    total = x1 + x2
    log_weight = _log_comb(n1)[x1] + _log_comb(n2)[x2]
    log_weight = log_weight - _log_comb(n1 + n2)[total]  # keeps exp() in range
    by_total = np.zeros((n1 + n2 + 1, n2 + 1))
    by_total[total, x2] = np.exp(log_weight)
    cumulative = np.cumsum(by_total, axis=1)
    cdf: FloatArray = np.minimum(cumulative[total, x2] / cumulative[total, -1], 1.0)
    if n1 == n2:
        cdf = np.minimum(cdf, cdf[::-1, ::-1].T)
    return cdf


def _statistic(n1: int, n2: int, test: str) -> tuple[FloatArray, float]:
    """The ordering statistic (small = evidence of a drop) and its relative tie tolerance."""
    if test in (RegressionTest.FISHER, RegressionTest.BOSCHLOO):
        return _fisher_statistic(n1, n2), _BOSCHLOO_TIE_RTOL
    # Barnard: the pooled Wald statistic exactly as scipy.stats.barnard_exact computes it.
    x1 = np.arange(n1 + 1, dtype=np.int64)[:, None]
    x2 = np.arange(n2 + 1, dtype=np.int64)[None, :]
    p1, p2 = x1 / n1, x2 / n2
    p = (x1 + x2) / (n1 + n2)
    variances = p * (1 - p) * (1 / n1 + 1 / n2)
    with np.errstate(divide="ignore", invalid="ignore"):
        wald = np.divide(p1 - p2, np.sqrt(variances))
    wald[np.broadcast_to(p1 == p2, wald.shape)] = 0
    return -wald, 0.0


def _ordering(n1: int, n2: int, test: str) -> _Ordering:
    key = (n1, n2, test)
    cached = _ORDERINGS.get(key)
    if isinstance(cached, _Ordering):
        return cached
    ordering = _make_ordering(n1, n2, test)
    _ORDERINGS.put(key, (n1 + 1) * (n2 + 1), ordering)
    return ordering


def _make_ordering(n1: int, n2: int, test: str) -> _Ordering:
    s, rtol = _statistic(n1, n2, test)
    flat = s.ravel()
    order = np.argsort(flat, kind="stable")
    sorted_s = flat[order]
    ends = np.searchsorted(sorted_s, sorted_s + rtol * np.abs(sorted_s), side="right")
    flat_position = np.empty(flat.size, dtype=np.int64)
    flat_position[order] = np.arange(flat.size)
    position: IntArray = flat_position.reshape(n1 + 1, n2 + 1)
    # Regions are unions of whole tie groups; each is a row prefix iff the group boundary
    # of a table never falls as x2 grows.
    group_end = ends[position]
    prefixes = bool(np.all(np.diff(group_end, axis=1) >= 0))
    row_keys = (group_end + np.arange(n1 + 1)[:, None] * (flat.size + 1)).ravel()
    return _Ordering(n1, n2, ends.astype(np.int64), position, s, prefixes, row_keys)


@functools.lru_cache(maxsize=32)  # ~13 MB per entry at n = 2,000
def _grid_pmfs(n: int) -> tuple[FloatArray, FloatArray]:
    """Binomial(n, π) pmfs on the coarse grid, and their CDFs with a leading 0 column."""
    pmf = _pmfs(n, _grid())
    cdf = np.concatenate([np.zeros((pmf.shape[0], 1)), np.cumsum(pmf, axis=1)], axis=1)
    return pmf, cdf


def _region_probability(
    ordering: _Ordering,
    count: int,
    pis: FloatArray | None = None,
) -> FloatArray:
    """P(one of the ``count`` most extreme tables) at each common pass rate in ``pis``.

    ``count`` must be a tie-group boundary (a value of ``ordering.ends``), as every region is.

    ``pis=None`` means the coarse grid, whose pmfs are cached.
    """
    if pis is None:
        pmf1, _ = _grid_pmfs(ordering.n1)
        pmf2, cdf2 = _grid_pmfs(ordering.n2)
    else:
        pmf1, pmf2 = _pmfs(ordering.n1, pis), _pmfs(ordering.n2, pis)
        cdf2 = np.concatenate([np.zeros((pis.size, 1)), np.cumsum(pmf2, axis=1)], axis=1)
    if ordering.rows_are_prefixes:
        # Row x1 of the region is x2 < c(x1): P = Σ_x1 Bin(x1) · CDF2(c(x1) - 1).
        rows = np.arange(ordering.n1 + 1)
        offsets = rows * (ordering.position.size + 1)
        ends = np.searchsorted(ordering.row_keys, count + offsets, side="right")
        values: FloatArray = (pmf1 * cdf2[:, ends - rows * (ordering.n2 + 1)]).sum(axis=1)
    else:
        inside = (ordering.position < count).astype(np.float64)
        values = ((pmf1 @ inside) * pmf2).sum(axis=1)
    return values


@functools.lru_cache(maxsize=8192)
def _coarse_probability(n1: int, n2: int, test: str, count: int) -> float:
    """Max over the coarse grid of P(one of the ``count`` most extreme tables).

    A lower bound of the unconditional p-value, and close to it.
    """
    return float(_region_probability(_ordering(n1, n2, test), count).max())


@functools.lru_cache(maxsize=8192)
def _sup_probability(n1: int, n2: int, test: str, count: int) -> float:
    """Sup over π of P(one of the ``count`` most extreme tables): an unconditional p-value.

    The coarse grid finds the peaks; those within 5% of the highest are refined by zooming
    (a lower peak cannot overtake it: the grid's error is far smaller).
    """
    ordering = _ordering(n1, n2, test)
    grid = _grid()
    values = _region_probability(ordering, count)
    best = float(values.max())
    padded = np.concatenate([[-1.0], values, [-1.0]])
    peaks = np.flatnonzero(
        (values >= padded[:-2]) & (values >= padded[2:]) & (values >= 0.95 * best)
    )
    for g in (int(i) for i in peaks):
        lo, hi = grid[max(g - 1, 0)], grid[min(g + 1, grid.size - 1)]
        for _ in range(_ZOOM_ROUNDS):
            pis = np.linspace(lo, hi, _ZOOM_POINTS)
            zoom = _region_probability(ordering, count, pis)
            i = int(zoom.argmax())
            best = max(best, float(zoom[i]))
            lo, hi = pis[max(i - 1, 0)], pis[min(i + 1, pis.size - 1)]
    return min(best, 1.0)


def _refined_p_value(n1: int, n2: int, test: str, k: int) -> float:
    """The unconditional p-value of the table at sorted position ``k``."""
    return _sup_probability(n1, n2, test, int(_ordering(n1, n2, test).ends[k]))


def _p_value_at(ordering: _Ordering, test: str, x1: int, x2: int) -> float:
    if test == RegressionTest.FISHER:
        return float(min(ordering.statistic[x1, x2], 1.0))
    return _refined_p_value(ordering.n1, ordering.n2, test, int(ordering.position[x1, x2]))


def _check_counts(
    baseline_passed: int, baseline_n: int, current_passed: int, current_n: int
) -> None:
    _check_positive(baseline_n, current_n)
    if not 0 <= baseline_passed <= baseline_n:
        raise ConfigError(f"baseline passes must lie in [0, {baseline_n}] (got {baseline_passed})")
    if not 0 <= current_passed <= current_n:
        raise ConfigError(f"current passes must lie in [0, {current_n}] (got {current_passed})")


def regression_p_value(
    baseline_passed: int,
    baseline_n: int,
    current_passed: int,
    current_n: int,
    test: str = DEFAULT_REGRESSION_TEST,
) -> float:
    """One-sided exact p-value for "the current pass rate is lower than the baseline's".

    Sources: Fisher (1935); Boschloo (1970), Statistica Neerlandica 24:1; Barnard (1945),
    Nature 156:177. Equal to ``scipy.stats.fisher_exact``, ``boschloo_exact`` or
    ``barnard_exact`` on the table ``[[baseline_passed, current_passed], [baseline_n -
    baseline_passed, current_n - current_passed]]`` (samples as columns) with
    ``alternative="greater"`` — except where scipy's optimiser (shgo over 32 points) misses the
    supremum, as it does for Barnard's test with larger groups: there scipy's p-value is too
    small and ours is the larger, correct one (checked against the definition on a fine grid).

    Args:
        baseline_passed: Passing baseline trials.
        baseline_n: Baseline trials (≥ 1).
        current_passed: Passing current trials.
        current_n: Current trials (≥ 1).
        test: One of :data:`TESTS`.

    Returns:
        The p-value in [0, 1]; small means the drop is unlikely to be chance.

    Fisher's p-value is computed at any size; Boschloo's and Barnard's enumerate every outcome
    table, so they need ``(n1 + 1)(n2 + 1) <=`` :data:`MAX_TABLES` (:func:`enumerable`).

    Raises:
        ConfigError: For an unknown test, counts outside [0, n], or Boschloo's or Barnard's
            test above :data:`MAX_TABLES` tables.
        InsufficientDataError: When a group has no trials.
    """
    check_test(test)
    _check_counts(baseline_passed, baseline_n, current_passed, current_n)
    if test == RegressionTest.FISHER and not enumerable(baseline_n, current_n):
        return fisher_p_value(baseline_passed, baseline_n, current_passed, current_n)
    _check_sizes(baseline_n, current_n)
    ordering = _ordering(baseline_n, current_n, test)
    return _p_value_at(ordering, test, baseline_passed, current_passed)


__all__ = [
    "TESTS",
    "enumerable",
    "regression_p_value",
]

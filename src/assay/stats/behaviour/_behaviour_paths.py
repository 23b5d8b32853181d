"""The tool-path part of the behaviour diff: a permutation test of the path distribution."""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.stats.base import check_open_unit
from assay.stats.behaviour._behaviour import (
    Shift,
    difference_interval,
    require_trials,
)


@dataclass(frozen=True, slots=True)
class PathShift:
    """A tool-path distribution test, with the variant whose share moved most."""

    shift: Shift
    """The test; ``baseline`` / ``current`` are the shares of ``path``."""
    path: tuple[str, ...]
    """The path variant whose share changed most (its tool names in order)."""
    distance: float
    """Total variation distance between the two path distributions (0 = same, 1 = disjoint)."""
    variants: int
    """Distinct paths over both versions."""


def _chi2_rows(
    observed: npt.NDArray[np.float64],
    expected: npt.NDArray[np.float64],
    expected_other: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    # For two rows with fixed margins the other row's deviations mirror the first's.
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(expected > 0, 1 / expected, 0) + np.where(
            expected_other > 0, 1 / expected_other, 0
        )
    result: npt.NDArray[np.float64] = (((observed - expected) ** 2) * weight).sum(axis=-1)
    return result


_BLOCK = 2000

FIRST_LOOK = 1999
"""Relabellings of the first look when many more are asked for (see :func:`path_shift`)."""


def permutations_for(family_size: int, alpha: float) -> int:
    """Relabellings a path test needs so that its smallest p-value can pass an adjustment.

    A permutation p-value is at least 1 / (1 + R); after Holm over m features the first step
    compares it with alpha / m. R = max(1999, 10·m / alpha), capped at 50 000, leaves that
    comfortably reachable for families of up to about 250 features.

    Args:
        family_size: Features adjusted together (≥ 1).
        alpha: Significance level.

    Returns:
        The number of relabellings.
    """
    check_open_unit("alpha", alpha)
    return int(min(50_000, max(1999, math.ceil(10 * max(1, family_size) / alpha))))


@functools.lru_cache(maxsize=1024)
def _null_statistics(
    colours: tuple[int, ...], n_b: int, n_resamples: int, seed: int
) -> npt.NDArray[np.float64]:
    """The relabellings' chi-square statistics for these path totals, sorted (read-only).

    A random relabelling fixes both margins, so the baseline row's counts are one
    multivariate hypergeometric draw: sampling them directly is the permutation test without
    shuffling every trial. In blocks, to bound memory for many variants. The draws depend on
    the totals, the baseline's size, the count and the seed alone, so the cases of a suite
    that share them (2,000 cases of 5 trials a side repeat a few hundred) draw them once:
    every p-value is the one its own draws give.
    """
    rng = np.random.default_rng(seed)
    totals = np.array(colours, dtype=np.int64)
    n = int(totals.sum())
    expected = totals * n_b / n
    expected_other = totals - expected
    parts = []
    for start in range(0, n_resamples, _BLOCK):
        block = min(_BLOCK, n_resamples - start)
        counts = rng.multivariate_hypergeometric(totals, n_b, size=block)
        parts.append(_chi2_rows(counts.astype(float), expected, expected_other))
    null = np.sort(np.concatenate(parts))
    null.setflags(write=False)
    return null


def path_shift(
    baseline: Sequence[Hashable],
    current: Sequence[Hashable],
    confidence: float = 0.95,
    n_resamples: int = 1999,
    seed: int = 0,
    screen: float | None = None,
) -> PathShift:
    """Did the distribution of tool paths change? Permutation chi-square test.

    The statistic is Pearson's chi-square of the 2 × K table (version × path variant); its null
    distribution comes from ``n_resamples`` random relabellings of the trials (fixed ``seed``),
    so the test is exact in the Monte Carlo sense however sparse the table — many variants seen
    once or twice, where the chi-square approximation fails. p = (1 + #{T* ≥ T}) / (1 + R)
    (Phipson & Smyth 2010, SAGMB 9:39), never 0.

    With ``screen`` and at least ten times :data:`FIRST_LOOK` relabellings asked for (a family
    of hundreds of features pooled across a suite asks for 50,000, so that a p-value can pass
    Holm's first step), a first look of :data:`FIRST_LOOK` decides: a p-value above ``screen``
    is kept, one at or below it is replaced by the p-value of ``n_resamples`` fresh relabellings
    (seed + 1). Still valid: with p₁ and p₂ the two looks' independent p-values, each
    P(pᵢ ≤ u) ≤ u, the reported p is at most u with probability P(p₁ ≤ screen)·P(p₂ ≤ u) ≤ u
    for u < screen, and at most P(p₁ ≤ u) ≤ u for u ≥ screen. With ``screen`` = alpha no
    p-value that could pass an adjustment at alpha is left at the first look's resolution, and
    the paths that did not move (most of them) cost 1,999 relabellings instead of 50,000.

    Args:
        baseline: One path per baseline trial (any hashable: a tuple of tool names).
        current: One path per current trial.
        confidence: Two-sided confidence level of the variant's interval.
        n_resamples: Random relabellings.
        seed: Seed of the relabellings, so that a report is reproducible.
        screen: Refine only p-values at or below this after a first look (None: no first
            look).

    Returns:
        The test, the variant whose share moved most with its share difference and Newcombe
        interval, and the total variation distance.
    """
    check_open_unit("confidence", confidence)
    n_b, n_c = len(baseline), len(current)
    require_trials(n_b, n_c)
    keys: dict[Hashable, int] = {}
    codes = [keys.setdefault(p, len(keys)) for p in [*baseline, *current]]
    k = len(keys)
    observed, totals = [0] * k, [0] * k
    for code in codes[:n_b]:
        observed[code] += 1
    for code in codes:
        totals[code] += 1
    shift, moved, distance = _table_shift(
        tuple(observed), tuple(totals), n_b, confidence, n_resamples, seed, screen
    )
    path = list(keys)[moved]
    return PathShift(
        shift, tuple(str(t) for t in path) if isinstance(path, tuple) else (str(path),), distance, k
    )


def _permutation_p(
    statistic: float, total_counts: tuple[int, ...], n_b: int, n_resamples: int, seed: int
) -> float:
    """(1 + relabellings at least as extreme) / (1 + relabellings)."""
    null = _null_statistics(total_counts, n_b, n_resamples, seed)
    # A relative tolerance keeps ties in floating point counted as ties.
    hits = null.size - int(np.searchsorted(null, statistic * (1 - 1e-12), side="left"))
    return (1 + hits) / (1 + n_resamples)


@functools.lru_cache(maxsize=4096)
def _table_shift(
    observed_counts: tuple[int, ...],
    total_counts: tuple[int, ...],
    n_b: int,
    confidence: float,
    n_resamples: int,
    seed: int,
    screen: float | None = None,
) -> tuple[Shift, int, float]:
    """The test of one 2 × K table (variants in order of first appearance).

    Returns the shift, the position of the variant that moved most, and the total variation
    distance.
    Every figure depends on the table alone, and 2,000 cases of 5 trials a side repeat a few
    hundred tables: each is tested once (the trials' own paths only name the variant).
    """
    k = len(total_counts)
    n = sum(total_counts)
    n_c = n - n_b
    totals = np.array(total_counts, dtype=np.int64).astype(float)
    expected = totals * n_b / n
    expected_other = totals - expected
    observed = np.array(observed_counts, dtype=np.int64).astype(float)
    statistic = float(_chi2_rows(observed, expected, expected_other))
    if k == 1:
        p = 1.0
    elif screen is not None and n_resamples >= 10 * FIRST_LOOK:
        p = _permutation_p(statistic, total_counts, n_b, FIRST_LOOK, seed)
        if p <= screen:
            p = _permutation_p(statistic, total_counts, n_b, n_resamples, seed + 1)
    else:
        p = _permutation_p(statistic, total_counts, n_b, n_resamples, seed)
    share_b = observed / n_b
    share_c = (totals - observed) / n_c
    moved = int(np.argmax(np.abs(share_c - share_b)))
    k_b, k_c = int(observed[moved]), int(totals[moved] - observed[moved])
    low, high = difference_interval(k_b, n_b, k_c, n_c, confidence)
    shift = Shift(
        "path",
        k_b / n_b,
        k_c / n_c,
        k_c / n_c - k_b / n_b,
        "difference",
        low,
        high,
        confidence,
        float(p),
        "permutation-chi2",
        n_b,
        n_c,
    )
    return shift, moved, float(0.5 * np.abs(share_c - share_b).sum())

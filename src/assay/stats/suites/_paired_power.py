"""Power of the paired tests of a drop, and the smallest drop they detect.

Power is planned: it comes from the design (cases, trials) and the spread the assumed drop
would give, never from the observed difference ("observed power" restates the p-value;
Hoenig & Heisey 2001, Am. Stat. 55:19).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Final

import numpy as np

from assay.stats.intervals import TRUNCATION, unit_log_capital
from assay.stats.suites._clustered import FloatArray

POWER_REPLICATES: Final = 500
"""Simulated suites behind a betting test's power: its Monte Carlo error is at most ±0.023
(±0.018 at a power of 0.8), stated with it."""

BETTING_DROP_RESOLUTION: Final = 0.004
"""The smallest detectable drop of the betting test is found to this (one bisection step of a
simulated power costs a few milliseconds per hundred cases)."""

_POWER_CELLS: Final = 300_000  # replicates × cases simulated at once, at most (time, memory)
_SIMULATED_PLAN_CASES: Final = 2000  # above, a plan's betting power is the normal formula

PLAN_REPLICATES: Final = 400
"""Simulated suites behind a plan's betting power (Monte Carlo error at most ±0.025)."""


def mcnemar_power(cases: int, delta: float, discordance: float, alpha: float) -> float:
    """Exact power of the one-sided exact McNemar test at a drop of ``delta`` over ``cases``.

    Each case is discordant with probability ψ = max(``discordance``, delta), a drop with
    probability (ψ + δ) / 2 and a gain with (ψ − δ) / 2: a shift of δ that keeps the
    discordance seen (the design's, never the observed effect; Hoenig & Heisey 2001, Am.
    Stat. 55:19). Power = Σ_m Bin(m; C, ψ) · P(Bin(m, (ψ + δ) / 2ψ) ≥ b_m), where b_m is the
    smallest count of drops that the test rejects among m discordant cases.
    """
    from scipy import stats as sps

    psi = min(max(discordance, delta), 1.0)
    m = np.arange(cases + 1)
    share = (psi + delta) / (2 * psi)
    reject = sps.binom.sf(_mcnemar_critical(cases, alpha), m, share)
    return float(np.clip(sps.binom.pmf(m, cases, psi) @ reject, 0.0, 1.0))


@functools.lru_cache(maxsize=64)
def _mcnemar_critical(cases: int, alpha: float) -> FloatArray:
    """Per m = 0..cases discordant pairs, the k from which on (k + 1 drops) McNemar rejects.

    The largest k with P(X ≥ k + 1) ≥ alpha under Bin(m, ½).
    """
    from scipy import stats as sps

    m = np.arange(cases + 1)
    k0 = sps.binom.ppf(1 - alpha, m, 0.5)
    k0 = np.where(sps.binom.sf(k0, m, 0.5) >= alpha, k0 + 1, k0)
    k0.setflags(write=False)
    return np.asarray(k0, dtype=np.float64)


def sign_flip_power(
    cases: int, delta: float, sd_under_drop: float, alpha: float, exact: bool
) -> float:
    """Power of the sign-flip test at a mean drop of ``delta`` (a normal approximation).

    Given the differences, the sign-flip distribution of Σ d_i has mean 0 and variance Σ d_i²
    (Fisher 1935; its normal limit: Lehmann & Romano 2005, "Testing Statistical Hypotheses",
    §15.2), so the test rejects about when Σ d_i < −q · √(Σ d_i²). Under a drop of δ with
    per-case SD σ, Σ d_i ≈ N(−Cδ, Cσ²) and Σ d_i² ≈ C(σ² + δ²), which gives
    power ≈ Φ((δ√C − q · √(σ² + δ²)) / σ), with q the t quantile on C − 1 degrees of freedom
    (a little conservative for small C). Unlike the t test's power it counts the δ² that a
    drop adds to the permutation variance; the benchmark checks it against simulation. When
    the exact test cannot reach alpha at all (2^−C ≥ alpha), the power is 0.
    """
    from scipy import special

    if cases < 2 or (exact and 2.0**-cases >= alpha):
        return 0.0
    if sd_under_drop <= 0:
        return 1.0
    critical = t_quantile(1 - alpha, cases - 1)
    spread = math.sqrt(sd_under_drop**2 + delta**2)
    return float(special.ndtr((delta * math.sqrt(cases) - critical * spread) / sd_under_drop))


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (``scipy.stats.t.ppf``), kept: a suite asks for few (p, df)."""
    from scipy import stats as sps

    return float(sps.t.ppf(p, df))


def betting_power(
    differences: FloatArray, alpha: float, seed: int, replicates: int = POWER_REPLICATES
) -> Callable[[float], tuple[float, float]]:
    """The betting test's power at a mean drop δ, by simulating suites like the one observed.

    A simulated suite draws C cases with replacement from the observed differences, centred
    (so the observed effect plays no part; Hoenig & Heisey 2001) and moved down by δ, cut to
    [−1, 1]; the power is the share of ``replicates`` such suites whose betting p-value lies
    below ``alpha`` — the test :func:`~assay.stats.paired_comparison` runs, on the same
    distribution of per-case differences but for the shift. No normal approximation: the
    spread, skew and atoms of the differences (most cases unchanged, a few moving a full point)
    are the observed ones. The draws are fixed by ``seed`` and shared by every δ (common random
    numbers), so the power rises with δ smoothly enough for the bisection of
    :func:`smallest_drop`, and the same data give the same figure.

    Returns:
        ``power_at(δ) -> (power, Monte Carlo standard error)``.
    """
    c = int(differences.size)
    rows = max(100, min(replicates, _POWER_CELLS // max(c, 1)))
    centred = differences - differences.mean()
    drawn = centred[np.random.default_rng(seed).integers(0, c, size=(rows, c))]
    level = math.log(1 / alpha)

    @functools.lru_cache(maxsize=64)
    def power_at(delta: float) -> tuple[float, float]:
        # differences in [-1, 1] → [0, 1]; a drop is a mean below 1/2: a bet on 1 - y above 1/2
        below = 1.0 - (np.clip(drawn - delta, -1.0, 1.0) + 1.0) / 2
        rejected = unit_log_capital(below, 0.5, alpha) > level
        share = float(rejected.mean())
        return share, math.sqrt(max(share * (1 - share), 0.25 / rows) / rows)

    return power_at


def planned_betting_power(
    cases: int, delta: float, sd: float, alpha: float, replicates: int = PLAN_REPLICATES
) -> float:
    """The betting test's power for a plan: C differences drawn N(−δ, sd²), cut to [−1, 1].

    A plan has no data to resample (:func:`betting_power` does that once data exist), only
    the spread Miller's decomposition gives; the differences are then taken as normal, from
    one seeded stream shared by every plan (the first C draws of a suite are the same whatever
    C, so the power moves smoothly with C, δ and sd). Above 2,000 cases a normal
    approximation of the log capital instead (:func:`_large_suite_power`).
    """
    if cases < 1:
        return 0.0
    if sd <= 0:
        return 1.0
    if cases > _SIMULATED_PLAN_CASES:
        return _large_suite_power(cases, delta, sd, alpha)
    # drawn case by case (rows = suites): suite r's first C cases do not depend on C
    z = np.random.default_rng(0).standard_normal((cases, replicates)).T
    drawn = np.clip(sd * z - delta, -1.0, 1.0)
    below = 1.0 - (drawn + 1.0) / 2
    return float((unit_log_capital(below, 0.5, alpha) > math.log(1 / alpha)).mean())


def _large_suite_power(cases: int, delta: float, sd: float, alpha: float) -> float:
    """The betting test's power at large C, where its stakes have settled.

    On [0, 1] the drop is δ/2 and the spread σ = sd/2; the stake settles at λ =
    min(sqrt(2L / (C σ²)), 1) (L = log 1/α; 1 the truncation c/m at m = 1/2), and log K_C is
    about normal with mean C(λδ/2 − λ²(σ² + δ²/4)/2) and variance Cλ²σ² (a second-order
    expansion of log(1 + λz)). Within 0.04 of the simulation from 100 to 3,000 cases.
    """
    from scipy import stats as sps

    level = math.log(1 / alpha)
    shift, spread = delta / 2, sd / 2
    stake = min(math.sqrt(2 * level / (cases * spread**2)), 2 * TRUNCATION)
    mean = cases * (stake * shift - stake**2 * (spread**2 + shift**2) / 2)
    return float(sps.norm.cdf((mean - level) / (math.sqrt(cases) * stake * spread)))


def smallest_drop(
    power_at: Callable[[float], float], wanted: float, resolution: float = 1e-3
) -> float | None:
    """The smallest drop in (0, 1] whose power reaches ``wanted``, to ``resolution``."""
    if power_at(1.0) < wanted:
        return None
    low, high = 0.0, 1.0
    while high - low > resolution:
        mid = (low + high) / 2
        if power_at(mid) >= wanted:
            high = mid
        else:
            low = mid
    return high


__all__ = [
    "BETTING_DROP_RESOLUTION",
    "POWER_REPLICATES",
    "betting_power",
    "mcnemar_power",
    "planned_betting_power",
    "sign_flip_power",
    "smallest_drop",
]

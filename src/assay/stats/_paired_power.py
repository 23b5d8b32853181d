"""Power of the paired tests of a drop, and the smallest drop they detect.

Power is planned: it comes from the design (cases, trials) and the spread the assumed drop
would give, never from the observed difference ("observed power" restates the p-value;
Hoenig & Heisey 2001, Am. Stat. 55:19).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from assay.stats._clustered import FloatArray


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
    from scipy import stats as sps

    if cases < 2 or (exact and 2.0**-cases >= alpha):
        return 0.0
    if sd_under_drop <= 0:
        return 1.0
    critical = float(sps.t.ppf(1 - alpha, cases - 1))
    spread = math.sqrt(sd_under_drop**2 + delta**2)
    return float(sps.norm.cdf((delta * math.sqrt(cases) - critical * spread) / sd_under_drop))


def sd_under_drop(
    differences: FloatArray, current_rates: FloatArray, current_n: FloatArray, delta: float
) -> float:
    """SD of the per-case differences if the current version were δ lower on every case.

    The observed spread (centred, so the observed effect plays no part), plus the change in
    within-case binomial variance that the shift makes, (p − δ)(1 − p + δ) − p(1 − p) =
    δ(2p − 1) − δ², averaged over cases over their trial counts, when it is an increase (never
    counted as a decrease: conservative); and never below δ(1 − δ) / K̄, the within variance
    one shifted case alone adds.
    """
    observed = float(differences.var(ddof=1)) if differences.size > 1 else 0.0
    added = float(np.mean((delta * (2 * current_rates - 1) - delta**2) / current_n))
    floor = delta * (1 - delta) / float(current_n.mean())
    return math.sqrt(max(observed + max(added, 0.0), floor))


def smallest_drop(power_at: Callable[[float], float], wanted: float) -> float | None:
    """The smallest drop in (0, 1] whose power reaches ``wanted``, to 0.001, by bisection."""
    if power_at(1.0) < wanted:
        return None
    low, high = 0.0, 1.0
    while high - low > 1e-3:
        mid = (low + high) / 2
        if power_at(mid) >= wanted:
            high = mid
        else:
            low = mid
    return high


__all__ = [
    "mcnemar_power",
    "sd_under_drop",
    "sign_flip_power",
    "smallest_drop",
]

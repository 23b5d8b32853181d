"""Two versions over the same cases: the paired difference, a one-sided test of a drop, power.

Pairing removes the between-case spread of difficulty from the comparison: each case is its
own control, and the sample is the C per-case differences (current − baseline).

Pass rates (:func:`paired_comparison`, what the suite's verdicts read): the differences lie in
[−1, 1] and the cases are draws from a population of cases, so the interval, the drop bounds
and the test are the betting construction of a bounded mean (:mod:`._bounded_mean`), each
keeping its level at every C whatever the cases look like — no symmetry within a case, no
normal mean. The test is exact McNemar instead when every case ran once per version (then
exact under the same "mean difference zero" null, and more powerful).

Other per-case means (:func:`paired_mean_difference`: scores, cost, duration; unbounded, and
reported, not gated on) keep the paired t interval and the sign-flip permutation test (exact up
to :data:`EXACT_SIGN_FLIP_CASES` nonzero differences, else Monte Carlo with a fixed seed and
its error stated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.choices import PairedTest
from assay.errors import ConfigError, InsufficientDataError
from assay.stats.base import check_drop, check_open_unit
from assay.stats.intervals import Interval, bounded_mean_bounds, bounded_mean_p_value
from assay.stats.suites._clustered import FloatArray, cluster_standard_error
from assay.stats.suites._paired_power import (
    BETTING_DROP_RESOLUTION,
    betting_power,
    mcnemar_power,
    smallest_drop,
    t_quantile,
)

EXACT_SIGN_FLIP_CASES: Final = 20
"""Up to this many nonzero differences, all 2^m sign flips are enumerated (exact p-value)."""

DEFAULT_PERMUTATIONS: Final = 9999
"""Monte Carlo sign flips beyond that: the p-value's standard error is at most 0.005."""

PAIRED_TESTS: Final = tuple(PairedTest)
"""The one-sided tests of a drop, by the names the JSON uses."""

_CELLS: Final = 2_000_000  # sign-flip matrix entries drawn at once


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """The mean over cases of a per-case difference (current − baseline), test and bounds."""

    cases: int
    """Paired cases."""
    difference: float
    """Mean over cases of (current − baseline); negative = the current version is lower."""
    std_error: float | None
    """Standard error of ``difference`` (s_d / √C); None with one case."""
    interval: Interval
    """Two-sided interval of ``difference`` at ``interval.confidence``."""
    drop_upper: float
    """One-sided (1 − alpha) upper confidence bound of the drop (baseline − current)."""
    drop_lower: float
    """One-sided (1 − alpha) lower confidence bound of the drop."""
    test: str
    """One of :data:`PAIRED_TESTS`."""
    p_value: float
    """One-sided p-value of H1: current < baseline."""
    p_value_error: float | None
    """Monte Carlo standard error of ``p_value``; None when it is exact."""
    alpha: float
    """One-sided significance level of the test and of the drop bounds."""


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """Two versions' pass rates over the cases both ran: difference, test, power."""

    cases: int
    """Paired cases."""
    difference: float
    """Mean over cases of (current rate − baseline rate); negative = drop."""
    interval: Interval
    """Two-sided interval of that mean difference at ``interval.confidence``."""
    drop_upper: float
    """One-sided (1 − alpha) upper bound of the drop (baseline − current), by betting: the
    ``--margin`` verdict is PASS when it lies below the margin."""
    drop_lower: float
    """One-sided (1 − alpha) lower bound of the drop, by betting."""
    test: str
    """``"mcnemar-exact"`` (one trial per case per version) or ``"betting"``."""
    p_value: float
    """One-sided p-value, H1: current < baseline: the regression verdict is FAIL below alpha."""
    p_value_error: float | None
    """Monte Carlo standard error of ``p_value``; None when exact (always, now)."""
    power: float
    """Power of this test at a drop of ``delta`` (planned, never "observed power")."""
    delta: float
    """The drop the power is about."""
    min_detectable_drop: float | None
    """The drop this design detects with ``required_power``; None if not even a drop of 1."""
    alpha: float
    """One-sided significance level."""
    required_power: float
    """The power asked for."""
    std_error: float | None
    """Standard error of ``difference``; None with one case."""
    power_error: float | None = None
    """Monte Carlo standard error of ``power`` when it is simulated (betting); None: exact."""


def _check_levels(alpha: float, confidence: float) -> None:
    check_open_unit("alpha", alpha)
    check_open_unit("confidence", confidence)


def sign_flip_p_value(
    differences: FloatArray, seed: int = 0, resamples: int = DEFAULT_PERMUTATIONS
) -> tuple[float, float | None, str]:
    """One-sided sign-flip permutation p-value of "the mean difference is below zero".

    Under H0 each case's difference is symmetric about 0 (the versions are exchangeable within
    a case), so flipping signs leaves its distribution unchanged (Fisher 1935, §21; Good 2005,
    "Permutation, Parametric, and Bootstrap Tests", §3.1). p = P(Σ ±|d_i| ≤ Σ d_i): exact by
    enumerating all 2^m flips of the m nonzero differences when m ≤ 20; otherwise from
    ``resamples`` seeded random flips as (1 + hits) / (1 + resamples), which never falls below
    the exact p-value's level (Phipson & Smyth 2010, SAGMB 9:39), with standard error
    √(p(1 − p) / resamples).

    Returns:
        ``(p, standard error or None, test name)``.
    """
    nonzero = np.abs(differences[differences != 0])
    observed = float(differences.sum())
    # A relative tolerance so that a flip equal to the observed sum counts as "as extreme"
    # despite rounding in the summation order.
    tolerance = 1e-9 * max(1.0, float(nonzero.sum()))
    m = int(nonzero.size)
    if m <= EXACT_SIGN_FLIP_CASES:
        sums = np.zeros(1)
        for value in nonzero:
            sums = np.concatenate([sums + value, sums - value])
        return float(np.mean(sums <= observed + tolerance)), None, PairedTest.SIGN_FLIP_EXACT
    rng = np.random.default_rng(seed)
    # Differences of pass rates take few distinct sizes: the number of positive signs among
    # the n_v differences of size v is Binomial(n_v, ½), so a flip's sum Σ_v v(2B_v − n_v) is
    # drawn in O(distinct sizes), the same distribution as flipping every case.
    sizes, counts = np.unique(nonzero, return_counts=True)
    few = sizes.size * 4 <= m
    total = float(nonzero.sum())
    hits = 0
    chunk = max(1, _CELLS // (sizes.size if few else m))
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        if few:
            positive = rng.binomial(counts, 0.5, size=(rows, sizes.size))
            flipped = (2 * positive - counts) @ sizes
        else:
            # One random bit per case: the signs of 8 cases from each random byte.
            bits = rng.integers(0, 256, size=(rows, (m + 7) // 8), dtype=np.uint8)
            flipped = 2.0 * byte_sums(bits, nonzero) - total
        hits += int(np.count_nonzero(flipped <= observed + tolerance))
    p = (1 + hits) / (1 + resamples)
    return p, math.sqrt(p * (1 - p) / resamples), PairedTest.SIGN_FLIP_MONTE_CARLO


_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)
"""Row b: the 8 bits of byte b, most significant first (``np.unpackbits``' order)."""


def byte_sums(bits: npt.NDArray[np.uint8], values: FloatArray) -> FloatArray:
    """Per row of random bytes, the sum of the ``values`` whose bit is set.

    Byte g of a row holds the bits of values 8g … 8g + 7 (most significant first, as
    ``np.unpackbits``); the sums are Σ_g T_g[byte], T_g the table of the 256 sums of group g —
    a look-up per byte instead of a multiply-add per value (8 times fewer operations, and no
    matrix of signs: 2,000 cases × 9,999 flips in 0.03 CPU-s instead of 0.09 on a busy 2-core
    AMD EPYC). The same sums as the signs' product up to the order of the additions.
    """
    groups = bits.shape[1]
    padded = np.zeros(groups * 8)
    padded[: values.size] = values
    table = (_BYTE_BITS @ padded.reshape(groups, 8).T).T.ravel()  # (group, byte) → its sum
    offsets = np.arange(groups, dtype=np.intp) * 256
    sums: FloatArray = table[bits.astype(np.intp) + offsets].sum(axis=1)
    return sums


def _zero_spread_margin(cases: int, level: float) -> float:
    """The share of cases that could have moved a full point unseen.

    Clopper–Pearson's one-sided bound from none of C: 1 − level^(1/C) (about 3 / C at 0.05,
    the "rule of three").
    """
    return float(1.0 - level ** (1.0 / cases))


def paired_t_interval(differences: FloatArray, confidence: float) -> Interval:
    """The paired t interval d̄ ± t_{C−1} · s_d / √C of the mean of C ≥ 2 differences.

    The cluster-robust interval with cases as clusters (Miller 2024, arXiv:2411.00640, §4);
    with no spread it is the point itself.
    """
    c = int(differences.size)
    mean = float(differences.mean())
    half = t_quantile(0.5 + confidence / 2, c - 1) * cluster_standard_error(differences)
    return Interval(mean - half, mean + half, confidence, "paired-t")


def _difference(
    differences: FloatArray,
    alpha: float,
    confidence: float,
    bounds: tuple[float, float] | None,
    test_result: tuple[float, float | None, str],
) -> PairedDifference:
    from scipy import stats as sps

    c = int(differences.size)
    mean = float(differences.mean())
    p, error, test = test_result
    if c == 1:
        low, high = bounds if bounds is not None else (mean, mean)
        drop_hi = -low if bounds is not None else -mean
        drop_lo = -high if bounds is not None else -mean
        return PairedDifference(
            1, mean, None, Interval(low, high, confidence, "paired-t"), drop_hi, drop_lo,
            test, p, error, alpha,
        )  # fmt: skip
    se = cluster_standard_error(differences)
    method = "paired-t"
    if se == 0.0 and bounds is not None:
        # Every case moved by the same amount: no spread to scale by, so widen by the share
        # of cases that could have moved a full point unseen (see _zero_spread_margin).
        two_sided = _zero_spread_margin(c, (1 - confidence) / 2)
        one_sided = _zero_spread_margin(c, alpha)
        low, high = mean - two_sided, mean + two_sided
        drop_hi, drop_lo = -mean + one_sided, -mean - one_sided
        method = "paired-zero-spread"
    else:
        interval = paired_t_interval(differences, confidence)
        one = float(sps.t.ppf(1 - alpha, c - 1)) * se
        low, high = interval.low, interval.high
        drop_hi, drop_lo = -mean + one, -mean - one
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
        drop_hi, drop_lo = min(drop_hi, -bounds[0]), max(drop_lo, -bounds[1])
    # + 0.0 turns a negated zero (−0.0) into 0.0, so that no report shows "-0".
    drop_hi, drop_lo = drop_hi + 0.0, drop_lo + 0.0
    return PairedDifference(
        c, mean, se, Interval(low, high, confidence, method), drop_hi, drop_lo,
        test, p, error, alpha,
    )  # fmt: skip


def paired_mean_difference(
    baseline_values: npt.ArrayLike,
    current_values: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    confidence: float = 0.95,
    bounds: tuple[float, float] | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_PERMUTATIONS,
) -> PairedDifference:
    """Paired comparison of a per-case mean (score, cost per trial, duration) of two versions.

    The per-case differences d_c = current_c − baseline_c; their mean; the paired t interval
    d̄ ± t_{C−1} · s_d / √C (the cluster-robust interval with cases as clusters, Miller 2024,
    arXiv:2411.00640, §4); one-sided (1 − alpha) bounds of the drop −d̄; and the sign-flip
    test of a drop (:func:`sign_flip_p_value`). For a cost or a duration, where higher is
    worse, read "drop" as "fall": the sign convention is always current − baseline. With
    ``bounds`` and no spread (every difference equal) the bounds widen as in
    :func:`paired_comparison`; without ``bounds`` the interval is then the point itself.

    Args:
        baseline_values: Each case's baseline mean.
        current_values: The same cases' current means, in the same order.
        alpha: One-sided significance level in (0, 1).
        confidence: Two-sided confidence of the interval.
        bounds: The range of a difference, e.g. (−1, 1) for rates; None for unbounded values.
        seed: Seed of the Monte Carlo sign flips.
        resamples: Monte Carlo sign flips (when more than 20 cases differ).

    Returns:
        The paired difference.

    Raises:
        ConfigError: For unequal lengths, non-finite values, or bad levels.
        InsufficientDataError: For no paired case.
    """
    _check_levels(alpha, confidence)
    base = np.asarray(baseline_values, dtype=np.float64).ravel()
    current = np.asarray(current_values, dtype=np.float64).ravel()
    if base.shape != current.shape:
        raise ConfigError("baseline and current need one value per paired case each")
    if base.size == 0:
        raise InsufficientDataError("no case was run by both versions")
    if not (np.all(np.isfinite(base)) and np.all(np.isfinite(current))):
        raise ConfigError("paired values must be finite numbers (found NaN or infinity)")
    if resamples < 100:
        raise ConfigError(f"resamples must be at least 100 (got {resamples})")
    differences = current - base
    return _difference(
        differences, alpha, confidence, bounds, sign_flip_p_value(differences, seed, resamples)
    )


def mcnemar_p_value(drops: int, gains: int) -> float:
    """Exact one-sided McNemar p-value of a drop from the discordant pairs.

    ``drops`` cases passed on the baseline and failed on the current version, ``gains`` the
    reverse. Under H0 drops ~ Binomial(drops + gains, ½) (McNemar 1947, Psychometrika 12:153;
    exact form: Fay 2010, R Journal 2:53); p = P(X ≥ drops). It equals the exact sign-flip
    p-value of the ±1 differences. statsmodels' ``mcnemar(exact=True)`` is the two-sided
    version (2 · min tail, capped at 1).
    """
    from scipy import stats as sps

    discordant = drops + gains
    if discordant == 0:
        return 1.0
    return float(sps.binom.sf(drops - 1, discordant, 0.5))


def _counts(name: str, passed: npt.ArrayLike, n: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    x = np.asarray(passed, dtype=np.float64).ravel()
    total = np.asarray(n, dtype=np.float64).ravel()
    if x.shape != total.shape:
        raise ConfigError(f"{name}: passed and n need one count per case each")
    if np.any(total < 1) or np.any(x < 0) or np.any(x > total):
        raise ConfigError(f"{name}: need 0 <= passed <= n and n >= 1 for every case")
    return x, total


def paired_comparison(
    baseline_passed: npt.ArrayLike,
    baseline_n: npt.ArrayLike,
    current_passed: npt.ArrayLike,
    current_n: npt.ArrayLike,
    *,
    alpha: float = 0.05,
    delta: float = 0.10,
    power: float = 0.80,
    confidence: float = 0.95,
    seed: int = 0,
    resamples: int = DEFAULT_PERMUTATIONS,
) -> PairedComparison:
    """Compare two versions' pass rates over the cases both ran (arrays aligned by case).

    Per case the difference of pass rates d_c in [−1, 1]; their mean over cases (each case
    weighted equally). The cases are taken as independent draws from a population of cases
    (Miller 2024, arXiv:2411.00640); nothing else is assumed.

    * ``interval``: the betting interval of the mean difference (Waudby-Smith & Ramdas 2024;
      :func:`~assay.stats.bounded_mean_bounds` on [−1, 1]), (1 − confidence) / 2 on each side.
    * ``drop_upper`` / ``drop_lower``: its one-sided (1 − alpha) bounds of the drop −d̄.
      Non-inferiority at margin M — what ``--margin`` reads: drop_upper < M shows the drop is
      below M, drop_lower > M that it exceeds M, each a level-alpha test at every C, also when
      the drop comes from a few cases breaking completely.
    * ``p_value`` — what the regression verdict reads (FAIL below alpha): exact McNemar
      (:func:`mcnemar_p_value`) when every case ran exactly once per version; otherwise the
      betting test of "mean difference ≥ 0" (:func:`~assay.stats.bounded_mean_p_value`), valid
      when the versions are not exchangeable within a case (a null with an unchanged mean
      but cases that moved both ways). Below alpha exactly when ``drop_lower`` > 0.
    * ``power`` at ``delta``: the design's, never the observed effect's (Hoenig & Heisey
      2001): exact for McNemar (:func:`mcnemar_power`, discordance as observed); for the
      betting test simulated from the observed differences, centred and moved down by δ
      (:func:`~assay.stats.suites._paired_power.betting_power`, seeded, ``power_error`` its Monte
      Carlo error). ``min_detectable_drop`` is the smallest drop with power ≥ ``power``, by
      bisection.

    Args:
        baseline_passed: Passing baseline trials per case.
        baseline_n: Baseline trials per case (≥ 1).
        current_passed: Passing current trials, same cases in the same order.
        current_n: Current trials per case (≥ 1).
        alpha: One-sided significance level.
        delta: The drop the power is about, in (0, 1].
        power: The power wanted, in (0, 1).
        confidence: Two-sided confidence of the interval.
        seed: Fixes the order the betting construction feeds the cases in, and the simulated
            suites of its power.
        resamples: Unused (kept for callers of the sign-flip era); must be at least 100.

    Returns:
        The comparison.

    Raises:
        ConfigError: For counts outside [0, n], unequal lengths or bad levels.
        InsufficientDataError: For no paired case.
    """
    _check_levels(alpha, confidence)
    check_drop("delta", delta)
    check_open_unit("power", power)
    bx, bn = _counts("baseline", baseline_passed, baseline_n)
    cx, cn = _counts("current", current_passed, current_n)
    if bx.shape != cx.shape:
        raise ConfigError("baseline and current need one count per paired case each")
    if bx.size == 0:
        raise InsufficientDataError("no case was run by both versions")
    if resamples < 100:
        raise ConfigError(f"resamples must be at least 100 (got {resamples})")
    differences = cx / cn - bx / bn
    c = int(differences.size)
    side = (1 - confidence) / 2
    low, high = bounded_mean_bounds(differences, side, side, bounds=(-1.0, 1.0), seed=seed)
    lower_alpha, upper_alpha = bounded_mean_bounds(
        differences, alpha, alpha, bounds=(-1.0, 1.0), seed=seed
    )
    power_error: float | None = None
    resolution = 1e-3
    if np.all(bn == 1) and np.all(cn == 1):
        drops = int(np.count_nonzero(differences < 0))
        gains = int(np.count_nonzero(differences > 0))
        p, test = mcnemar_p_value(drops, gains), str(PairedTest.MCNEMAR_EXACT)
        discordance = (drops + gains) / c

        def power_at(d: float) -> float:
            return mcnemar_power(c, d, discordance, alpha)

    else:
        p = bounded_mean_p_value(differences, 0.0, alpha=alpha, bounds=(-1.0, 1.0), seed=seed)
        test = str(PairedTest.BETTING)
        simulated = betting_power(differences, alpha, seed)

        def power_at(d: float) -> float:
            return simulated(d)[0]

        power_error = simulated(delta)[1]
        resolution = BETTING_DROP_RESOLUTION

    se = cluster_standard_error(differences) if c > 1 else None
    return PairedComparison(
        cases=c,
        difference=float(differences.mean()),
        interval=Interval(low, high, confidence, "paired-betting"),
        # + 0.0 turns a negated zero (−0.0) into 0.0, so that no report shows "-0".
        drop_upper=-lower_alpha + 0.0,
        drop_lower=-upper_alpha + 0.0,
        test=test,
        p_value=p,
        p_value_error=None,
        power=power_at(delta),
        delta=delta,
        min_detectable_drop=smallest_drop(power_at, power, resolution),
        alpha=alpha,
        required_power=power,
        std_error=se,
        power_error=power_error,
    )


__all__ = [
    "DEFAULT_PERMUTATIONS",
    "EXACT_SIGN_FLIP_CASES",
    "PAIRED_TESTS",
    "PairedComparison",
    "PairedDifference",
    "mcnemar_p_value",
    "paired_comparison",
    "paired_mean_difference",
    "paired_t_interval",
    "sign_flip_p_value",
]

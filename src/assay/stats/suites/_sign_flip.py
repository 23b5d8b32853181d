"""Two-sided sign-flip tests of many per-case mean differences at once, and their power.

The suite's behaviour diff tests a dozen or more features over the same paired cases: each
feature's C per-case differences (current − baseline). Under H0 each difference is symmetric
about 0 (the versions are exchangeable within a case), so its sign can be flipped without
changing its distribution (Fisher 1935, §21; Good 2005, "Permutation, Parametric, and Bootstrap
Tests", §3.1). The statistic is |Σ d_i| (two-sided: a feature may rise or fall).

As :func:`~assay.stats.sign_flip_p_value`: exact by enumerating the 2^m flips of the m nonzero
differences when m ≤ :data:`~assay.stats.EXACT_SIGN_FLIP_CASES`; otherwise ``resamples``
seeded random flips, p = (1 + hits) / (1 + resamples) (Phipson & Smyth 2010, SAGMB 9:39), with
standard error √(p(1 − p) / resamples). The Monte Carlo features share one sign matrix — one
draw, one matrix product — and a feature's p-value depends only on its own differences, the
seed and the resamples: the same, bit for bit, as :func:`sign_flip_two_sided` of that feature
alone (``tests/stats/test_sign_flip.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.choices import PairedTest
from assay.errors import ConfigError
from assay.stats.suites._clustered import FloatArray
from assay.stats.suites._paired import DEFAULT_PERMUTATIONS, EXACT_SIGN_FLIP_CASES
from assay.stats.suites._paired_power import sign_flip_power, t_quantile

_CELLS = 2_000_000  # sign-matrix entries drawn at once (16 MB of float64)
_ONE_THREAD = 65536 * 4 - 1  # multiply-adds of a product OpenBLAS keeps on one thread


@dataclass(frozen=True, slots=True)
class SignFlipTests:
    """Two-sided sign-flip p-values of the columns of a matrix of per-case differences."""

    p_values: npt.NDArray[np.float64]
    """One p-value per column."""
    errors: npt.NDArray[np.float64]
    """Monte Carlo standard error per column; NaN where the p-value is exact."""
    tests: tuple[str, ...]
    """``sign-flip-exact`` or ``sign-flip-monte-carlo`` per column."""


def _tolerance(column: FloatArray) -> float:
    # Relative, so that a flip equal to the observed sum counts as "as extreme" despite
    # rounding in the summation order (as sign_flip_p_value).
    return 1e-9 * max(1.0, float(np.abs(column).sum()))


def _exact(column: FloatArray) -> float:
    nonzero = np.abs(column[column != 0])
    observed = abs(float(column.sum()))
    sums = np.zeros(1)
    for value in nonzero:
        sums = np.concatenate([sums + value, sums - value])
    return float(np.mean(np.abs(sums) >= observed - _tolerance(column)))


def sign_flip_two_sided(
    differences: npt.ArrayLike, seed: int = 0, resamples: int = DEFAULT_PERMUTATIONS
) -> SignFlipTests:
    """Two-sided sign-flip p-values of "the mean difference is 0", one per column.

    Args:
        differences: A (cases × features) matrix of per-case differences, or one vector.
        seed: Seed of the Monte Carlo sign flips (one draw shared by every column).
        resamples: Monte Carlo sign flips (columns with more than 20 nonzero differences).

    Returns:
        The p-values, their Monte Carlo errors and the test of each column.

    Raises:
        ConfigError: For non-finite values or fewer than 100 resamples.
    """
    matrix = np.asarray(differences, dtype=np.float64)
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if not np.all(np.isfinite(matrix)):
        raise ConfigError("paired differences must be finite numbers (found NaN or infinity)")
    if resamples < 100:
        raise ConfigError(f"resamples must be at least 100 (got {resamples})")
    cases, features = matrix.shape
    p = np.empty(features)
    errors = np.full(features, np.nan)
    tests = [str(PairedTest.SIGN_FLIP_EXACT)] * features
    nonzero = np.count_nonzero(matrix, axis=0)
    exact = nonzero <= EXACT_SIGN_FLIP_CASES
    for j in np.flatnonzero(exact):
        p[j] = _exact(matrix[:, j])
    drawn = np.flatnonzero(~exact)
    if drawn.size:
        hits = _hits(matrix[:, drawn], seed, resamples)
        p[drawn] = (1 + hits) / (1 + resamples)
        errors[drawn] = np.sqrt(p[drawn] * (1 - p[drawn]) / resamples)
        for j in drawn:
            tests[j] = str(PairedTest.SIGN_FLIP_MONTE_CARLO)
    return SignFlipTests(p, errors, tuple(tests))


def _hits(matrix: FloatArray, seed: int, resamples: int) -> npt.NDArray[np.float64]:
    """Per column, the random flips whose |sum| reaches the observed |sum|.

    Every case gets a sign (a zero difference flips to itself), so the draw depends on the
    number of cases alone and every column sees the same flips. A flip's sum is
    Σ s_i d_i = 2 · Σ_{s_i = +1} d_i − Σ d_i: one matrix product of the 0/1 signs.
    """
    cases = matrix.shape[0]
    total = matrix.sum(axis=0)
    threshold = np.abs(total) - np.array([_tolerance(matrix[:, j]) for j in range(matrix.shape[1])])
    rng = np.random.default_rng(seed)
    # The draws depend on the cases and resamples alone (never on the columns), so a column
    # sees the same flips in any batch.
    chunk = max(1, _CELLS // cases)
    # Products small enough that OpenBLAS runs them on one thread (it splits a product of
    # more than 65536 · 4 multiply-adds): on a busy machine its threads spin for more CPU
    # than they save, two to ten times the single thread's 0.03 CPU-s at 2,000 cases x 16.
    step = max(1, _ONE_THREAD // (cases * matrix.shape[1]))
    signs = np.empty((min(chunk, resamples), cases))
    sums = np.empty((min(chunk, resamples), matrix.shape[1]))
    hits = np.zeros(matrix.shape[1])
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        # One random bit per case: the signs of 8 cases from each random byte.
        bits = rng.integers(0, 256, size=(rows, (cases + 7) // 8), dtype=np.uint8)
        block = signs[:rows]
        np.copyto(block, np.unpackbits(bits, axis=1, count=cases))  # reused: no page faults
        for first in range(0, rows, step):
            last = min(rows, first + step)
            np.matmul(block[first:last], matrix, out=sums[first:last])
        flipped = 2.0 * sums[:rows] - total
        hits += np.count_nonzero(np.abs(flipped) >= threshold, axis=0)
    return hits


def _reachable(cases: int, level: float, resamples: int) -> bool:
    """Whether the test's smallest p-value lies below ``level`` (else it can never reject)."""
    if cases < 2:
        return False
    if cases <= EXACT_SIGN_FLIP_CASES:
        return 2.0 ** (1 - cases) < level
    return 1 / (1 + resamples) < level


def mean_difference_power(
    cases: int,
    effect: float,
    spread: float,
    level: float,
    resamples: int = DEFAULT_PERMUTATIONS,
) -> float:
    """Power of the two-sided sign-flip test to see a mean difference of ``effect``.

    The normal approximation of :func:`~assay.stats.sign_flip_power` (which counts the δ² a
    shift adds to the permutation variance) at ``level / 2`` on the side of the shift — the
    other tail adds at most level / 2. Zero where the test cannot reach ``level`` at all: 2 ·
    2^−C ≥ level when it is exact, 1 / (1 + resamples) ≥ level when it is Monte Carlo.
    ``tests/stats/test_sign_flip.py`` checks it against a seeded simulation of the test.

    Args:
        cases: Paired cases.
        effect: The mean difference to see (> 0).
        spread: Standard deviation of the per-case differences.
        level: Two-sided level the p-value must fall below.
        resamples: The Monte Carlo test's resamples.
    """
    if not _reachable(cases, level, resamples):
        return 0.0
    return sign_flip_power(cases, effect, spread, level / 2, cases <= EXACT_SIGN_FLIP_CASES)


def detectable_difference(
    cases: int,
    spread: float,
    level: float,
    power: float,
    resamples: int = DEFAULT_PERMUTATIONS,
) -> float | None:
    """The mean difference :func:`mean_difference_power` sees with ``power``; None: none.

    Solves Φ((δ√C − q·√(σ² + δ²)) / σ) = power for δ in closed form (q the t quantile at
    ``level / 2`` on C − 1 degrees of freedom, z = Φ⁻¹(power)):
    δ = σ (z√C + q√(C + z² − q²)) / (C − q²), which exists when C > q².
    """
    from scipy import special

    if not _reachable(cases, level, resamples):
        return None
    q = t_quantile(1 - level / 2, cases - 1)
    if cases <= q * q:
        return None
    if spread <= 0:
        return 0.0
    z = float(special.ndtri(power))
    root = math.sqrt(cases + z * z - q * q)
    return spread * (z * math.sqrt(cases) + q * root) / (cases - q * q)


__all__ = [
    "SignFlipTests",
    "detectable_difference",
    "mean_difference_power",
    "sign_flip_two_sided",
]

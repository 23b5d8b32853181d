"""What "UNCHANGED" can claim: the power of the behaviour tests to see a minimal effect.

Normal approximations, cheap enough to run per feature and per candidate sample size; the
simulation tests in ``tests/stats/test_behaviour.py`` check them against the real tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError
from assay.stats.base import check_open_unit
from assay.stats.behaviour._behaviour import BehaviourKind

MINIMAL_EFFECTS: dict[BehaviourKind, float] = {
    "path": 0.20,
    "binary": 0.20,
    "count": 1.30,
    "continuous": 1.25,
}
"""The smallest change "UNCHANGED" vouches for, per kind: a shift of 20 percentage points in
the share of trials taking a path or using a tool; 30 % more (or fewer) calls per trial; 25 %
more (or less) of a continuous quantity (tokens, cost, latency). Ratios count both ways
(1.3 and 1/1.3)."""


def share_power(
    share: float, n_baseline: int, n_current: int, difference: float, alpha: float
) -> float:
    """Power of a two-sided test of two shares to detect a change of ``difference``.

    Normal approximation on Cohen's arcsine scale, h = 2 asin √p₁ − 2 asin √p₂ (Cohen 1988,
    ch. 6), which is close to Fisher's exact test for the sizes assay sees and cheap enough to
    run per feature. The change is taken in the harder of the two directions that stay inside
    [0, 1] from the observed baseline ``share``.

    Args:
        share: The baseline share.
        n_baseline: Baseline trials.
        n_current: Current trials.
        difference: The absolute change in share to detect (> 0).
        alpha: Two-sided significance level.

    Returns:
        The power, in [0, 1].
    """
    from scipy import special

    check_open_unit("alpha", alpha)
    if difference <= 0:
        raise ConfigError(f"the change to detect must be positive (got {difference})")
    targets = [t for t in (share - difference, share + difference) if 0 <= t <= 1]
    if not targets:
        return 0.0
    z = -float(special.ndtri(alpha / 2))
    scale = math.sqrt(n_baseline * n_current / (n_baseline + n_current))
    h = min(abs(2 * math.asin(math.sqrt(share)) - 2 * math.asin(math.sqrt(t))) for t in targets)
    return float(special.ndtr(h * scale - z))


def ratio_power(cv: float, n_baseline: int, n_current: int, ratio: float, alpha: float) -> float:
    """Power of the log-ratio test to detect means differing by ``ratio`` (either way).

    With coefficient of variation ``cv`` in both versions, se(log ratio) ≈ cv·√(1/n₁ + 1/n₂)
    (the delta method of :func:`log_ratio_se`); power ≈ Φ(|log ratio| / se − z_{1−α/2}). For
    Mann–Whitney on continuous data this is an approximation (its efficiency relative to the
    t-test is ≥ 0.864 and often above 1 for skewed data); the benchmark measures the real one.

    Args:
        cv: Standard deviation / mean of the baseline values (≥ 0).
        n_baseline: Baseline trials.
        n_current: Current trials.
        ratio: The ratio of means to detect (> 1; 1/ratio is as hard).
        alpha: Two-sided significance level.

    Returns:
        The power, in [0, 1]; 1 when the values never vary.
    """
    from scipy import special

    check_open_unit("alpha", alpha)
    if ratio <= 1:
        raise ConfigError(f"the ratio to detect must exceed 1 (got {ratio})")
    if cv <= 0:
        return 1.0
    se = cv * math.sqrt(1 / n_baseline + 1 / n_current)
    # ndtr / ndtri: the normal cdf and its inverse, without scipy.stats' per-call overhead.
    return float(special.ndtr(math.log(ratio) / se + special.ndtri(alpha / 2)))


def ratio_powers(
    cv: npt.NDArray[np.float64],
    n_baseline: int,
    n_current: int,
    ratio: float,
    alpha: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """:func:`ratio_power` of many features of the same sizes at once, element by element.

    The same IEEE operations on arrays (one call, not one a feature; the power search of
    :func:`trials_for_power` keeps the scalar one), so each power is :func:`ratio_power`'s
    bit for bit (``tests/judge/test_behaviour_batch.py``).

    Args:
        cv: Each feature's coefficient of variation (≥ 0).
        n_baseline: Baseline trials.
        n_current: Current trials.
        ratio: The ratio of means to detect (> 1).
        alpha: Each feature's two-sided significance level, in (0, 1).

    Returns:
        The powers.
    """
    from scipy import special

    if ratio <= 1:
        raise ConfigError(f"the ratio to detect must exceed 1 (got {ratio})")
    se = cv * math.sqrt(1 / n_baseline + 1 / n_current)
    with np.errstate(divide="ignore", invalid="ignore"):  # cv 0: power 1, below
        power = special.ndtr(math.log(ratio) / se + special.ndtri(alpha / 2))
    result: npt.NDArray[np.float64] = np.where(cv > 0, power, 1.0)
    return result


def trials_for_power(
    power_at: Callable[[int], float],
    target: float = 0.80,
    limit: int = 100_000,
    guess: int | None = None,
) -> int | None:
    """The fewest trials per version n with ``power_at(n) ≥ target`` (power rises with n).

    Args:
        power_at: Power with n trials on each side.
        target: The power wanted.
        limit: Give up beyond this many trials.
        guess: A likely answer (:func:`equal_trials_guess`): checked first, in two calls
            instead of a search of about twenty; the answer is the same either way.

    Returns:
        n, or None if even ``limit`` trials fall short.
    """
    if power_at(limit) < target:
        return None
    if (
        guess is not None
        and 1 <= guess <= limit
        and power_at(guess) >= target
        and (guess == 1 or power_at(guess - 1) < target)
    ):
        return guess
    low, high = 1, limit
    while low < high:
        mid = (low + high) // 2
        if power_at(mid) >= target:
            high = mid
        else:
            low = mid + 1
    return low


def equal_trials_guess(
    share: bool, spread: float, effect: float, alpha: float, target: float
) -> int:
    """Where :func:`share_power` or :func:`ratio_power` (n trials a side) reaches ``target``.

    Their normal approximations solved for n: with z = z_{1−α/2} + z_{target}, n = 2 (z / h)²
    for shares (h: Cohen's smaller step from ``spread``) and n = 2 (cv · z / log ratio)² for
    ratios, rounded up. A starting point for :func:`trials_for_power`, which checks it.

    Args:
        share: True for :func:`share_power` (``spread`` the baseline share, ``effect`` the
            difference), False for :func:`ratio_power` (``spread`` the cv, ``effect`` the ratio).
        spread: As above.
        effect: As above.
        alpha: Two-sided significance level.
        target: The power wanted.

    Returns:
        The estimate (≥ 1; 1 when nothing constrains it).
    """
    from scipy import special

    z = float(special.ndtri(target)) - float(special.ndtri(alpha / 2))
    if share:
        steps = [
            abs(2 * math.asin(math.sqrt(spread)) - 2 * math.asin(math.sqrt(t)))
            for t in (spread - effect, spread + effect)
            if 0 <= t <= 1
        ]
        step = min(steps, default=0.0)
    else:
        step = math.log(effect) / spread if spread > 0 else 0.0
    if step <= 0 or z <= 0:
        return 1
    return max(1, math.ceil(2 * (z / step) ** 2))

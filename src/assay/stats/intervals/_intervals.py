"""Confidence intervals for a binomial proportion (a pass rate).

Two entry points share one set of formulas: :func:`proportion_interval` for one count (it calls
scipy where scipy has the method, so the figures are scipy's), and :func:`proportion_bounds`,
vectorised over numpy arrays, for planning and search loops that need thousands of intervals.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.choices import IntervalMethod
from assay.errors import ConfigError, InsufficientDataError
from assay.stats.base import check_open_unit, check_probability, check_successes, smallest_passing

METHODS: Final = tuple(IntervalMethod)
"""The interval methods assay knows, by the names the CLI and the JSON use."""

_SCIPY_NAMES: Final[dict[str, str]] = {
    IntervalMethod.WILSON: "wilson",
    IntervalMethod.WILSON_CC: "wilsoncc",
    IntervalMethod.CLOPPER_PEARSON: "exact",
}


@dataclass(frozen=True, slots=True)
class Interval:
    """A two-sided confidence interval: of a proportion, a mean over cases or a difference."""

    low: float
    """Lower bound (in [0, 1] for a proportion, [-1, 1] for a difference of rates)."""
    high: float
    """Upper bound (likewise)."""
    confidence: float
    """Confidence level, e.g. 0.95."""
    method: str
    """How it was computed: one of :data:`METHODS` for a pass rate, e.g. ``"wilson"``;
    ``"cluster-betting"``, ``"cluster-clopper-pearson"``, ``"cluster-t"``,
    ``"cluster-bootstrap"`` or ``"cluster-zero-spread"`` for a suite mean; ``"paired-betting"``
    for a paired difference of pass rates, ``"paired-t"`` or ``"paired-zero-spread"`` for one
    of other means."""


def _check(successes: int, n: int, confidence: float) -> None:
    check_successes(successes, n)
    check_open_unit("confidence", confidence)
    if n == 0:
        raise InsufficientDataError("an interval needs at least one trial (n = 0)")


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ConfigError(f"unknown interval method {method!r}; choose one of {', '.join(METHODS)}")


def proportion_interval(
    successes: int, n: int, confidence: float = 0.95, method: str = IntervalMethod.WILSON
) -> Interval:
    """A two-sided confidence interval for ``successes`` out of ``n``.

    Methods and sources:

    * ``wilson`` — Wilson (1927), JASA 22:209–212; the score interval. Default: it stays
      inside [0, 1] and its coverage averaged over rates is close to nominal where the normal
      (Wald) interval fails (Brown, Cai & DasGupta 2001, Stat. Sci. 16:101); at a given small
      n and rate one side can miss far more than α/2, which is why a threshold verdict reads
      :func:`assay.stats.verdict_interval` instead.
    * ``wilson-cc`` — Wilson with continuity correction, Newcombe (1998), Stat. Med. 17:857.
    * ``clopper-pearson`` — the "exact" interval from inverting two one-sided binomial tests,
      Clopper & Pearson (1934), Biometrika 26:404; coverage is never below nominal.
    * ``jeffreys`` — equal-tailed Beta(x + ½, n − x + ½) posterior interval, with the usual
      boundary rule: lower bound 0 at x = 0, upper bound 1 at x = n (Brown et al. 2001).
    * ``agresti-coull`` — Wald interval around (x + z²/2)/(n + z²), Agresti & Coull (1998),
      Am. Stat. 52:119; clipped to [0, 1].

    The first three are computed by ``scipy.stats.binomtest(successes, n).proportion_ci``
    (methods ``wilson``, ``wilsoncc``, ``exact``) and equal it.

    Args:
        successes: Number of passing trials, in [0, n].
        n: Number of trials (≥ 1).
        confidence: Two-sided confidence level in (0, 1).
        method: One of :data:`METHODS`.

    Returns:
        The interval, its bounds in [0, 1] with ``low <= successes / n <= high``.

    Raises:
        ConfigError: For an unknown method, a confidence outside (0, 1) or successes outside
            [0, n].
        InsufficientDataError: For n = 0.
    """
    from scipy import stats as sps

    _check_method(method)
    _check(successes, n, confidence)
    if method in _SCIPY_NAMES:
        ci = sps.binomtest(successes, n).proportion_ci(confidence, _SCIPY_NAMES[method])
        low, high = float(ci.low), float(ci.high)
    else:
        lows, highs = proportion_bounds(successes, n, confidence, method)
        low, high = float(lows), float(highs)
    return Interval(min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0), confidence, method)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The Wilson score interval for ``successes`` out of ``n``, two-sided.

    Wilson (1927), "Probable inference, the law of succession, and statistical inference",
    JASA 22:209–212. Same as ``proportion_interval(successes, n, confidence, "wilson")``.

    Args:
        successes: Number of passing trials.
        n: Number of trials (≥ 1).
        confidence: Two-sided confidence level in (0, 1).

    Returns:
        The interval; equal to ``scipy.stats.binomtest(successes, n).proportion_ci(confidence,
        "wilson")``.
    """
    return proportion_interval(successes, n, confidence, IntervalMethod.WILSON)


def proportion_bounds(
    successes: npt.ArrayLike,
    n: npt.ArrayLike,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Vectorised lower and upper bounds of :func:`proportion_interval` (same formulas).

    Used where thousands of intervals are needed (planning, searches). Arrays broadcast; no
    range checks beyond the method and confidence, so callers pass valid counts (n ≥ 1,
    0 ≤ successes ≤ n). Agrees with :func:`proportion_interval` to floating-point accuracy.

    Args:
        successes: Passing trials, an integer array.
        n: Trials, an integer array broadcastable with ``successes``.
        confidence: Two-sided confidence level in (0, 1).
        method: One of :data:`METHODS`.

    Returns:
        ``(low, high)`` as float arrays of the broadcast shape.
    """
    from scipy import stats as sps

    _check_method(method)
    check_open_unit("confidence", confidence)
    x = np.asarray(successes, dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    x, nn = np.broadcast_arrays(x, nn)
    alpha = 1.0 - confidence
    z = float(sps.norm.isf(alpha / 2))
    z2 = z * z
    with np.errstate(invalid="ignore", divide="ignore"):
        if method in (IntervalMethod.WILSON, IntervalMethod.WILSON_CC):
            # Newcombe (1998), as in scipy.stats._binomtest._binom_wilson_conf_int.
            p = x / nn
            q = 1 - p
            denom = 2 * (nn + z2)
            centre = (2 * nn * p + z2) / denom
            if method == IntervalMethod.WILSON:
                half = z / denom * np.sqrt(4 * nn * p * q + z2)
                low, high = centre - half, centre + half
            else:
                low = centre - (1 + z * np.sqrt(z2 - 2 - 1 / nn + 4 * p * (nn * q + 1))) / denom
                high = centre + (1 + z * np.sqrt(z2 + 2 - 1 / nn + 4 * p * (nn * q - 1))) / denom
        elif method == IntervalMethod.CLOPPER_PEARSON:
            low = sps.beta.ppf(alpha / 2, x, nn - x + 1)
            high = sps.beta.isf(alpha / 2, x + 1, nn - x)
        elif method == IntervalMethod.JEFFREYS:
            low = sps.beta.ppf(alpha / 2, x + 0.5, nn - x + 0.5)
            high = sps.beta.isf(alpha / 2, x + 0.5, nn - x + 0.5)
        else:  # agresti-coull
            n_tilde = nn + z2
            p_tilde = (x + z2 / 2) / n_tilde
            half = z * np.sqrt(p_tilde * (1 - p_tilde) / n_tilde)
            low, high = p_tilde - half, p_tilde + half
    low = np.where(x == 0, 0.0, np.clip(low, 0.0, 1.0))
    high = np.where(x == nn, 1.0, np.clip(high, 0.0, 1.0))
    return low.astype(np.float64), high.astype(np.float64)


def min_trials_for_pass(
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
    max_n: int = 1_000_000,
) -> int | None:
    """The fewest trials for which all-pass (n of n) can give a PASS at ``threshold``.

    PASS needs the interval's lower bound to reach the threshold; with fewer trials even a
    perfect record is INCONCLUSIVE. The lower bound of n/n grows with n for every method, so
    this is found by doubling then bisection, with :func:`proportion_interval` itself.

    Args:
        threshold: Required pass rate in [0, 1).
        confidence: Two-sided confidence level in (0, 1).
        method: One of :data:`METHODS`.
        max_n: Give up beyond this many trials.

    Returns:
        The smallest such n, or None if no n ≤ ``max_n`` suffices.

    Raises:
        ConfigError: For a threshold outside [0, 1] or a bad method or confidence.
    """
    _check_method(method)
    check_open_unit("confidence", confidence)
    check_probability("threshold", threshold)
    return _min_trials_for_pass(float(threshold), float(confidence), method, int(max_n))


@functools.lru_cache(maxsize=256)
def _min_trials_for_pass(
    threshold: float, confidence: float, method: str, max_n: int
) -> int | None:
    def passes(n: int) -> bool:
        return proportion_interval(n, n, confidence, method).low >= threshold

    return smallest_passing(passes, max_n)


__all__ = [
    "METHODS",
    "Interval",
    "min_trials_for_pass",
    "proportion_bounds",
    "proportion_interval",
    "wilson_interval",
]

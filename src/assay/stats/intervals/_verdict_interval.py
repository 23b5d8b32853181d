"""The fixed-n verdict interval: each side's error at the threshold at most α/2, exactly.

A threshold verdict reads a two-sided interval: PASS when its lower bound is at or above the
threshold t, FAIL when its upper bound is below. At a true rate equal to t, the chance of a
false PASS is P_t(lower bound ≥ t) and of a false FAIL P_t(upper bound < t); a two-sided
interval at confidence 1 − α promises about α/2 for each. Approximate intervals miss it at
small n: with Wilson's, one failed trial of one is FAIL at t = 0.8 with probability 0.2, and
the false-FAIL rate stays above 2.5% at many n up to 55 (docs/statistics.md tabulates it).

The rule: for each (n, t, confidence) and each side, compute the chosen method's exact
one-sided error at t (a binomial tail, since every bound rises with the count); keep the
method's bound where that error is ≤ α/2, else use the Clopper–Pearson bound of the same
side, whose error is ≤ α/2 at every n (Clopper & Pearson 1934, Biometrika 26:404: each side
inverts an exact one-sided binomial test). Both bound functions rise with the count, so the
error is also ≤ α/2 at every true rate beyond t on the wrong side. The interval the verdict
reads is the interval shown, and its ``method`` names the sides replaced.
"""

from __future__ import annotations

import functools

import numpy as np
import numpy.typing as npt

from assay.choices import IntervalMethod
from assay.errors import ConfigError
from assay.stats.base import check_probability
from assay.stats.intervals._intervals import (
    Interval,
    min_trials_for_pass,
    proportion_bounds,
    proportion_interval,
)

_EXACT = IntervalMethod.CLOPPER_PEARSON


def _first_count(
    ns: npt.NDArray[np.int64],
    threshold: float,
    confidence: float,
    method: str,
    *,
    upper: bool,
) -> npt.NDArray[np.int64]:
    """Per n, the smallest count whose bound (lower, or upper) is ≥ ``threshold``; n + 1 if none.

    A vectorised bisection over all n at once: every method's bounds rise with the count.
    """
    lo = np.zeros_like(ns)
    hi = ns + 1
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        active = lo < hi
        low, high = proportion_bounds(np.minimum(mid, ns), ns, confidence, method)
        reached = active & (mid <= ns) & ((high if upper else low) >= threshold)
        hi = np.where(reached, mid, hi)
        lo = np.where(active & ~reached, mid + 1, lo)
    return lo


def threshold_errors(
    n: npt.ArrayLike,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Exact one-sided errors at the threshold of a verdict read from ``method``'s interval.

    At a true pass rate equal to ``threshold``, with X ~ Binomial(n, threshold): the false-PASS
    rate P(lower bound ≥ threshold) (the limit as the true rate rises to the threshold from
    below) and the false-FAIL rate P(upper bound < threshold). Binomial tails from scipy.

    Args:
        n: Numbers of trials (≥ 1), any shape.
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        ``(false_pass, false_fail)``, shaped like ``n``.
    """
    from scipy import stats as sps

    check_probability("threshold", threshold)
    ns = np.asarray(n, dtype=np.int64)
    if ns.size and ns.min() < 1:
        raise ConfigError("n must be at least 1")
    first_pass = _first_count(ns, threshold, confidence, method, upper=False)
    first_not_fail = _first_count(ns, threshold, confidence, method, upper=True)
    false_pass = sps.binom.sf(first_pass - 1, ns, threshold)
    false_fail = sps.binom.cdf(first_not_fail - 1, ns, threshold)
    return np.asarray(false_pass, dtype=np.float64), np.asarray(false_fail, dtype=np.float64)


def verdict_sides(
    n: npt.ArrayLike,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Per n, whether the verdict keeps ``method``'s lower and upper bound (else Clopper–Pearson).

    A side is kept when its exact error at the threshold (:func:`threshold_errors`) is at most
    α/2 = (1 − confidence)/2. At a threshold of 0 or 1 no verdict can be wrong on the side
    that would matter, so both sides are kept; Clopper–Pearson's own sides are always kept.

    Args:
        n: Numbers of trials (≥ 1), any shape.
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        ``(lower_kept, upper_kept)``, boolean arrays shaped like ``n``.
    """
    ns = np.asarray(n, dtype=np.int64)
    if method == _EXACT or not 0 < threshold < 1:
        check_probability("threshold", threshold)
        keep = np.ones(ns.shape, dtype=np.bool_)
        return keep, keep.copy()
    # Callers pass many counts of one n (a settle probability): each distinct n once.
    distinct, where = np.unique(ns, return_inverse=True)
    false_pass, false_fail = threshold_errors(distinct, threshold, confidence, method)
    half = (1.0 - confidence) / 2
    lower, upper = false_pass <= half, false_fail <= half
    return lower[where].reshape(ns.shape), upper[where].reshape(ns.shape)


@functools.lru_cache(maxsize=4096)
def _sides(n: int, threshold: float, confidence: float, method: str) -> tuple[bool, bool]:
    lower, upper = verdict_sides(n, threshold, confidence, method)
    return bool(lower), bool(upper)


def verdict_method(method: str, lower_kept: bool, upper_kept: bool) -> str:
    """The label of a verdict interval: ``wilson``, ``clopper-pearson``, or which side was replaced.

    ``wilson, clopper-pearson upper`` when only the upper bound is Clopper–Pearson's (the JSON's
    ``ci.method`` and the console's note read it).
    """
    if lower_kept and upper_kept:
        return method
    if not lower_kept and not upper_kept:
        return _EXACT
    return f"{method}, {_EXACT} {'upper' if lower_kept else 'lower'}"


def replaced_bounds(label: str, method: str) -> str | None:
    """Which bounds a verdict interval labelled ``label`` took from Clopper–Pearson.

    The inverse of :func:`verdict_method`: ``"lower"``, ``"upper"``, ``"both"``, or None when
    the interval is ``method``'s own.
    """
    if label == method:
        return None
    if label == _EXACT:
        return "both"
    return label.rsplit(" ", 1)[1]


def verdict_interval(
    successes: int,
    n: int,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> Interval:
    """The interval a fixed-n threshold verdict reads and shows (see the module docstring).

    Each bound is ``method``'s (:func:`proportion_interval`, scipy's figures) where its exact
    one-sided error at ``threshold`` is ≤ α/2, else Clopper–Pearson's; ``method`` of the result
    names the bounds that differ from ``method``'s (:func:`verdict_method`).

    Args:
        successes: Passing trials, in [0, n].
        n: Trials (≥ 1).
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        The interval.
    """
    shown = proportion_interval(successes, n, confidence, method)
    check_probability("threshold", threshold)
    lower_kept, upper_kept = _sides(n, float(threshold), float(confidence), method)
    if lower_kept and upper_kept:
        return shown
    exact = proportion_interval(successes, n, confidence, _EXACT)
    # A side whose Clopper–Pearson bound equals the method's (0 at no passes, 1 at all) is
    # the method's too: the label and the note name only a bound that moved.
    lower_kept = lower_kept or exact.low == shown.low
    upper_kept = upper_kept or exact.high == shown.high
    return Interval(
        shown.low if lower_kept else exact.low,
        shown.high if upper_kept else exact.high,
        confidence,
        verdict_method(method, lower_kept, upper_kept),
    )


def verdict_bounds(
    successes: npt.ArrayLike,
    n: npt.ArrayLike,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Vectorised bounds of :func:`verdict_interval` (valid counts, as :func:`proportion_bounds`).

    Args:
        successes: Passing trials, an integer array.
        n: Trials (≥ 1), broadcastable with ``successes``.
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        ``(low, high)`` as float arrays of the broadcast shape.
    """
    x, ns = np.broadcast_arrays(np.asarray(successes), np.asarray(n, dtype=np.int64))
    low, high = proportion_bounds(x, ns, confidence, method)
    lower_kept, upper_kept = verdict_sides(ns, threshold, confidence, method)
    if lower_kept.all() and upper_kept.all():
        return low, high
    exact_low, exact_high = proportion_bounds(x, ns, confidence, _EXACT)
    return np.where(lower_kept, low, exact_low), np.where(upper_kept, high, exact_high)


def _rule_counts(
    n: npt.ArrayLike, threshold: float, confidence: float, method: str, *, upper: bool
) -> npt.NDArray[np.int64]:
    """Per n, the first count whose verdict bound (lower, or upper) reaches the threshold."""
    check_probability("threshold", threshold)
    ns = np.asarray(n, dtype=np.int64)
    own = _first_count(ns, threshold, confidence, method, upper=upper)
    kept = verdict_sides(ns, threshold, confidence, method)[1 if upper else 0]
    if kept.all():
        return own
    exact = _first_count(ns, threshold, confidence, _EXACT, upper=upper)
    return np.where(kept, own, exact)


def verdict_pass_counts(
    n: npt.ArrayLike,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> npt.NDArray[np.int64]:
    """Per n, the fewest passing trials the verdict rule reads as PASS; n + 1 when none does.

    P(PASS) with n trials at true rate p is then P(X ≥ this count), X ~ Binomial(n, p).

    Args:
        n: Numbers of trials (≥ 1), any shape.
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        The counts, shaped like ``n``.
    """
    return _rule_counts(n, threshold, confidence, method, upper=False)


def verdict_fail_counts(
    n: npt.ArrayLike,
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
) -> npt.NDArray[np.int64]:
    """Per n, the fewest passing trials the verdict rule does not read as FAIL (0 if none is).

    FAIL with n trials at true rate p is then P(X < this count), X ~ Binomial(n, p).

    Args:
        n: Numbers of trials (≥ 1), any shape.
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.

    Returns:
        The counts, shaped like ``n``.
    """
    return _rule_counts(n, threshold, confidence, method, upper=True)


def verdict_min_trials_for_pass(
    threshold: float,
    confidence: float = 0.95,
    method: str = IntervalMethod.WILSON,
    max_n: int = 1_000_000,
) -> int | None:
    """The fewest trials with which all-pass is PASS under the verdict rule; None if none ≤ max_n.

    Not found by bisection: a side replaced at one n and kept at the next makes "n of n passes"
    non-monotone in n, so every n up to the larger of the two methods' own answers is checked.

    Args:
        threshold: Required pass rate in [0, 1].
        confidence: Two-sided confidence level.
        method: Interval method.
        max_n: Give up beyond this many trials.

    Returns:
        The smallest such n, or None.
    """
    check_probability("threshold", threshold)
    return _verdict_min_trials(float(threshold), float(confidence), method, int(max_n))


@functools.lru_cache(maxsize=256)
def _verdict_min_trials(threshold: float, confidence: float, method: str, max_n: int) -> int | None:
    bounds = [min_trials_for_pass(threshold, confidence, m, max_n) for m in (method, _EXACT)]
    known = [b for b in bounds if b is not None]
    if not known:
        return None
    ns = np.arange(1, max(known) + 1)
    passes = verdict_pass_counts(ns, threshold, confidence, method) <= ns
    return int(ns[np.argmax(passes)]) if passes.any() else None


__all__ = [
    "replaced_bounds",
    "threshold_errors",
    "verdict_bounds",
    "verdict_fail_counts",
    "verdict_interval",
    "verdict_method",
    "verdict_min_trials_for_pass",
    "verdict_pass_counts",
    "verdict_sides",
]

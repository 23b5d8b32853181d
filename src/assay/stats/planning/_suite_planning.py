"""Planning a paired comparison of two versions: how many cases, and how many trials each?"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.choices import PairedDesign
from assay.errors import ConfigError, InsufficientDataError
from assay.stats.base import check_open_unit
from assay.stats.suites import EXACT_SIGN_FLIP_CASES, planned_betting_power, sign_flip_power

DEFAULT_TRIALS_PER_CASE: Final = (1, 2, 3, 5, 10)
"""The trials-per-case options a paired plan lists when none are asked for."""

_MAX_CASES: Final = 1_000_000

FloatLike = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PairedPlanOption:
    """One design: K trials per case per version, and the cases it needs."""

    trials_per_case: int
    """K: trials of each case on each version."""
    cases: int | None
    """Smallest number of cases C with power ≥ the target; None if none up to a million."""
    power: float | None
    """The power at that C."""
    trials: int | None
    """Trials in all, both versions: 2 · C · K."""
    sd_of_difference: float
    """SD of one case's difference of means: √(σ²_between + σ²_within / K)."""
    mean_cases_at_delta: float | None = None
    """Adaptive design: mean cases used at a drop of delta with a suite of ``cases``."""
    mean_cases_no_change: float | None = None
    """Adaptive design: mean cases used when nothing changed."""


@dataclass(frozen=True, slots=True)
class PairedPlan:
    """Cases needed for a paired comparison to detect a drop, per trials-per-case option."""

    options: tuple[PairedPlanOption, ...]
    """One line per trials-per-case option."""
    delta: float
    """The mean drop over cases to detect."""
    alpha: float
    """One-sided significance level of the test."""
    power: float
    """The power wanted."""
    between_case_sd: float
    """Assumed SD over cases of the true per-case difference (σ_between)."""
    within_case_var: float
    """Assumed variance of one trial pair's difference within a case (σ²_within)."""
    design: str
    """The design planned for: ``"fixed"`` (all cases run, then one test) or ``"adaptive"``
    (cases in a random order until the paired confidence sequence settles)."""
    method: str
    """How power was computed, in a sentence."""


@dataclass(frozen=True, slots=True)
class PilotVariances:
    """Between- and within-case variances measured on a pilot, for :func:`plan_paired`."""

    between_case_sd: float
    """SD over cases of the true per-case difference; 0 (assumed) from one version."""
    within_case_var: float
    """Within-case variance of one trial pair's difference: mean of p_c(1 − p_c), both versions."""
    cases: int
    """Cases that entered the within-case estimate (at least two trials on each version)."""
    versions: int
    """1 or 2: how many versions the pilot had."""
    note: str | None
    """What was assumed, in a sentence; None when both variances were measured."""


def plan_paired(
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.80,
    between_case_sd: float,
    within_case_var: float,
    trials_per_case: Sequence[int] = DEFAULT_TRIALS_PER_CASE,
    design: str = PairedDesign.FIXED,
) -> PairedPlan:
    """How many cases a paired comparison needs to detect a mean drop of ``delta``.

    Miller's decomposition (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640, §4–5):
    with C cases of K trials per version, Var(mean difference) = (σ²_between + σ²_within / K)
    / C, where σ²_between is the variance over cases of the true per-case difference and
    σ²_within the variance of one trial pair's difference within a case (for pass rates
    p_c(1 − p_c) on each version, about 2·p̄(1 − p̄) less the spread of difficulty). More trials
    shrink only the second term, so beyond a few trials per case only more cases help.

    The power of the fixed design is that of the test :func:`paired_comparison` runs: with
    K ≥ 2 the betting test, simulated on normal differences of that spread
    (:func:`planned_betting_power`); with K = 1 McNemar's, approximated by the sign-flip
    test's normal power (:func:`sign_flip_power`). The smallest C is found by doubling then
    bisection. The adaptive comparison stops on a
    confidence sequence; :func:`plan_adaptive_paired` plans it by simulating that rule
    (``design="adaptive"`` is refused here).

    Args:
        delta: Mean drop over cases to detect, > 0.
        alpha: One-sided significance level.
        power: Wanted power.
        between_case_sd: σ_between ≥ 0.
        within_case_var: σ²_within ≥ 0.
        trials_per_case: The K options to list (each ≥ 1).
        design: ``"fixed"``.

    Returns:
        The plan.
    """
    if design != PairedDesign.FIXED:
        raise ConfigError(
            f"design {design!r} is not planned here: only the fixed design is (the adaptive "
            "one by simulating its stopping rule: plan_adaptive_paired)"
        )
    if not delta > 0:
        raise ConfigError(f"delta must be positive (got {delta})")
    check_open_unit("alpha", alpha)
    check_open_unit("power", power)
    if between_case_sd < 0 or within_case_var < 0:
        raise ConfigError("between_case_sd and within_case_var must not be negative")
    ks = sorted(set(int(k) for k in trials_per_case))
    if not ks or ks[0] < 1:
        raise ConfigError("trials per case must be at least 1")
    if between_case_sd == 0 and within_case_var == 0:
        raise ConfigError("between_case_sd and within_case_var cannot both be 0")
    options = []
    for k in ks:
        sd = math.sqrt(between_case_sd**2 + within_case_var / k)

        def power_at(c: int, sd: float = sd, k: int = k) -> float:
            if k >= 2:
                return planned_betting_power(c, delta, sd, alpha)
            # McNemar: exact up to 20 cases, and cannot reject at all while 2^-C >= alpha.
            return sign_flip_power(c, delta, sd, alpha, exact=c <= EXACT_SIGN_FLIP_CASES)

        cases = _smallest_cases(power_at, power)
        options.append(
            PairedPlanOption(
                k,
                cases,
                power_at(cases) if cases is not None else None,
                2 * cases * k if cases is not None else None,
                sd,
            )
        )
    return PairedPlan(
        tuple(options),
        delta,
        alpha,
        power,
        between_case_sd,
        within_case_var,
        design,
        "K >= 2: the betting test's power, simulated on normal differences of that spread; "
        "K = 1: McNemar's, by the sign-flip normal approximation (lower when few cases "
        "disagree)",
    )


def _smallest_cases(power_at: Callable[[int], float], wanted: float) -> int | None:
    high = 2
    while power_at(high) < wanted:
        if high >= _MAX_CASES:
            return None
        high = min(2 * high, _MAX_CASES)
    low = high // 2
    while high - low > 1:
        mid = (low + high) // 2
        if power_at(mid) >= wanted:
            high = mid
        else:
            low = mid
    return high


def _within_terms(passed: npt.NDArray[np.float64], n: npt.NDArray[np.float64]) -> FloatLike:
    # x(n − x) / (n(n − 1)) is unbiased for p(1 − p) from n ≥ 2 Bernoulli trials.
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n >= 2, passed * (n - passed) / (n * (n - 1)), np.nan)


def pilot_variances(
    baseline_passed: npt.ArrayLike,
    baseline_n: npt.ArrayLike,
    current_passed: npt.ArrayLike | None = None,
    current_n: npt.ArrayLike | None = None,
) -> PilotVariances:
    """Measure σ²_within and σ_between for :func:`plan_paired` from a pilot's per-case counts.

    Within a case, x(n − x) / (n(n − 1)) is an unbiased estimate of p_c(1 − p_c) (it needs
    n ≥ 2); σ²_within is the sum over the two versions of its mean over cases (from one
    version: twice that version's). With two versions, the observed variance of the per-case
    differences of rates is σ²_between + mean_c(p_c(1 − p_c) / n_c, both versions)
    (Miller 2024, §5), so σ²_between is that variance less the within part, floored at 0.
    From one version σ_between cannot be measured and is taken as 0 (the same agent on both
    sides); the note says so.

    Args:
        baseline_passed: Passing trials per case (the only version, or the baseline).
        baseline_n: Trials per case.
        current_passed: The current version's passing trials, same cases; or None.
        current_n: The current version's trials per case; or None.

    Returns:
        The measured variances.

    Raises:
        InsufficientDataError: When no case has two trials (on each version given).
        ConfigError: For bad counts.
    """
    bx = np.asarray(baseline_passed, dtype=np.float64).ravel()
    bn = np.asarray(baseline_n, dtype=np.float64).ravel()
    if bx.shape != bn.shape or np.any(bn < 1) or np.any(bx < 0) or np.any(bx > bn):
        raise ConfigError("pilot: need 0 <= passed <= n and n >= 1 for every case")
    wb = _within_terms(bx, bn)
    if current_passed is None or current_n is None:
        usable = ~np.isnan(wb)
        if not usable.any():
            raise InsufficientDataError(
                "a pilot needs at least one case with two or more trials to measure the "
                "within-case variance"
            )
        return PilotVariances(
            0.0,
            2.0 * float(np.mean(wb[usable])),
            int(usable.sum()),
            1,
            "one version: the between-case SD of the difference is assumed 0 and the "
            "within-case variance is twice this version's",
        )
    cx = np.asarray(current_passed, dtype=np.float64).ravel()
    cn = np.asarray(current_n, dtype=np.float64).ravel()
    if cx.shape != bx.shape or cn.shape != bn.shape:
        raise ConfigError("pilot: both versions need one count per case, same cases")
    if np.any(cn < 1) or np.any(cx < 0) or np.any(cx > cn):
        raise ConfigError("pilot: need 0 <= passed <= n and n >= 1 for every case")
    wc = _within_terms(cx, cn)
    usable = ~np.isnan(wb) & ~np.isnan(wc)
    if not usable.any():
        raise InsufficientDataError(
            "a pilot needs at least one case with two or more trials on each version"
        )
    within = float(np.mean(wb[usable] + wc[usable]))
    between_var = 0.0
    note = None
    if bx.size >= 2:
        differences = cx / cn - bx / bn
        noise = float(np.mean(wb[usable] / bn[usable] + wc[usable] / cn[usable]))
        between_var = max(float(differences.var(ddof=1)) - noise, 0.0)
    else:
        note = "one case: the between-case SD cannot be measured and is taken as 0"
    return PilotVariances(math.sqrt(between_var), within, int(usable.sum()), 2, note)


__all__ = [
    "DEFAULT_TRIALS_PER_CASE",
    "PairedPlan",
    "PairedPlanOption",
    "PilotVariances",
    "pilot_variances",
    "plan_paired",
]

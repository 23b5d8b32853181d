"""Did an agent's behaviour shift between two versions? One test and effect per feature kind.

Four kinds of per-trial feature, each with a test suited to it, an effect size and a
confidence interval (docs/statistics.md, "Behaviour diff"):

* ``path`` — the distribution of tool paths (one categorical value per trial): a permutation
  test of the 2 × K contingency table's chi-square statistic (fixed seed); effect: the change
  in share of the path variant that moved most, with a Newcombe interval.
* ``binary`` — "uses tool X", "has error spans": Fisher's exact test; effect: the difference
  in shares (current − baseline) with Newcombe's hybrid score interval.
* ``count`` — calls to a tool, steps, LLM calls: the ratio of mean counts with a robust
  (sandwich) Wald interval on the log scale and Welch's degrees of freedom; p from the same
  statistic, so the interval and the p-value agree.
* ``continuous`` — tokens, cost, latency: Mann–Whitney U p-value; effect: the ratio of means,
  interval as for counts.

Power functions say what "unchanged" can claim: the chance to see a documented minimal effect
per kind (:data:`MINIMAL_EFFECTS`) at a given significance level.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special
from scipy import stats as sps

from assay.errors import ConfigError, InsufficientDataError
from assay.stats._intervals import wilson_interval

BehaviourKind = Literal["path", "binary", "count", "continuous"]
"""The kinds of behavioural feature, each with its own test."""

BEHAVIOUR_KINDS: tuple[BehaviourKind, ...] = ("path", "binary", "count", "continuous")

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

EffectMeasure = Literal["difference", "ratio"]


@dataclass(frozen=True, slots=True)
class Shift:
    """How one feature differs between the baseline's and the current version's trials."""

    kind: BehaviourKind
    """The feature kind, which decides the test."""
    baseline: float
    """Baseline summary: share of trials (path, binary) or mean per trial (count, continuous)."""
    current: float
    """The same for the current version."""
    effect: float | None
    """``difference`` current − baseline (path, binary) or ``ratio`` current / baseline (count,
    continuous); None when a ratio is undefined (baseline mean 0)."""
    measure: EffectMeasure
    """What ``effect`` is."""
    ci_low: float | None
    """Lower confidence bound of ``effect``; None when undefined."""
    ci_high: float | None
    """Upper confidence bound of ``effect``; None when undefined."""
    confidence: float
    """Two-sided confidence level of the interval."""
    p_value: float
    """Two-sided p-value for "no difference" (before any adjustment)."""
    method: str
    """The test: ``permutation-chi2``, ``fisher``, ``robust-poisson`` or ``mann-whitney``."""
    baseline_n: int
    """Baseline trials."""
    current_n: int
    """Current trials."""


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


@dataclass(frozen=True, slots=True)
class FeaturePair:
    """One behavioural feature's per-trial values in the baseline and the current version."""

    name: str
    """Machine name, e.g. ``tool_calls:search``, ``path``, ``cost``."""
    kind: BehaviourKind
    """Decides the test."""
    label: str
    """Words for a person, e.g. "calls to `search` per trial"."""
    baseline: npt.NDArray[np.float64]
    """One value per baseline trial (empty for ``path``)."""
    current: npt.NDArray[np.float64]
    """One value per current trial (empty for ``path``)."""
    baseline_paths: tuple[tuple[str, ...], ...] = ()
    """One tool path per baseline trial (``path`` only)."""
    current_paths: tuple[tuple[str, ...], ...] = ()
    """One tool path per current trial (``path`` only)."""


@dataclass(frozen=True, slots=True)
class BehaviourSample:
    """Everything a behaviour diff of one test needs: trial ids and feature values."""

    baseline_ids: tuple[str, ...]
    """Trace id of each baseline trial, in the order of the feature values."""
    current_ids: tuple[str, ...]
    """Trace id of each current trial."""
    features: tuple[FeaturePair, ...]
    """The features, in a stable order."""


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie strictly between 0 and 1 (got {confidence})")


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must lie strictly between 0 and 1 (got {alpha})")


def difference_interval(
    k_baseline: int, n_baseline: int, k_current: int, n_current: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Interval for the difference of two shares, current − baseline.

    Newcombe (1998), Statist. Med. 17:873, method 10 (hybrid score): built from the two Wilson
    intervals, it stays inside [−1, 1] and keeps near-nominal coverage at shares near 0 or 1,
    where the Wald interval collapses (a tool that appears in no baseline trial).

    Args:
        k_baseline: Baseline trials with the property.
        n_baseline: Baseline trials (≥ 1).
        k_current: Current trials with the property.
        n_current: Current trials (≥ 1).
        confidence: Two-sided confidence level.

    Returns:
        ``(low, high)``.
    """
    p_b, p_c = k_baseline / n_baseline, k_current / n_current
    wb = wilson_interval(k_baseline, n_baseline, confidence)
    wc = wilson_interval(k_current, n_current, confidence)
    d = p_c - p_b
    low = d - math.sqrt((p_c - wc.low) ** 2 + (wb.high - p_b) ** 2)
    high = d + math.sqrt((wc.high - p_c) ** 2 + (p_b - wb.low) ** 2)
    return max(-1.0, low), min(1.0, high)


def _sizes(n_baseline: int, n_current: int) -> None:
    if n_baseline < 1 or n_current < 1:
        raise InsufficientDataError("a behaviour comparison needs trials on both sides")


def binary_shift(
    k_baseline: int, n_baseline: int, k_current: int, n_current: int, confidence: float = 0.95
) -> Shift:
    """Did the share of trials with a property change? Fisher's exact test, two-sided.

    ``scipy.stats.fisher_exact`` on the 2 × 2 table (Fisher 1935); the effect is the
    difference in shares with :func:`difference_interval`.

    Args:
        k_baseline: Baseline trials with the property (e.g. that call ``verify``).
        n_baseline: Baseline trials.
        k_current: Current trials with the property.
        n_current: Current trials.
        confidence: Two-sided confidence level of the interval.

    Returns:
        The shift, ``measure="difference"``.
    """
    _check_confidence(confidence)
    _sizes(n_baseline, n_current)
    if not (0 <= k_baseline <= n_baseline and 0 <= k_current <= n_current):
        raise ConfigError("counts must lie between 0 and the number of trials")
    table = [[k_current, n_current - k_current], [k_baseline, n_baseline - k_baseline]]
    p = float(sps.fisher_exact(table, alternative="two-sided").pvalue)
    low, high = difference_interval(k_baseline, n_baseline, k_current, n_current, confidence)
    p_b, p_c = k_baseline / n_baseline, k_current / n_current
    return Shift(
        "binary",
        p_b,
        p_c,
        p_c - p_b,
        "difference",
        low,
        high,
        confidence,
        min(1.0, p),
        "fisher",
        n_baseline,
        n_current,
    )


def _sample(values: npt.ArrayLike, what: str) -> npt.NDArray[np.float64]:
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise InsufficientDataError(f"no {what} values")
    if not np.all(np.isfinite(x)):
        raise ConfigError(f"{what} values must be finite")
    if np.any(x < 0):
        raise ConfigError(f"{what} values must not be negative (a ratio of means needs ≥ 0)")
    return x


def log_ratio_se(
    baseline: npt.NDArray[np.float64], current: npt.NDArray[np.float64], ddof: int = 1
) -> tuple[float, float]:
    """Robust standard error of log(mean current / mean baseline), and Welch's df.

    Delta method with each group's own variance: Var(log x̄) ≈ s² / (n x̄²). For two groups
    this is the sandwich (heteroskedasticity-robust) standard error of a Poisson regression's
    group coefficient — valid whatever the dispersion (retries make counts over-dispersed;
    fixed step counts under-dispersed). Welch–Satterthwaite degrees of freedom temper it for
    small samples.

    Args:
        baseline: Baseline values (mean > 0).
        current: Current values (mean > 0).
        ddof: Delta degrees of freedom of the variances (1: unbiased; 0: the HC0 sandwich).

    Returns:
        ``(se, df)``; ``df`` is infinite when a group has one value or both variances are 0.
    """
    parts = []
    for x in (baseline, current):
        var = float(x.var(ddof=ddof)) if x.size > ddof else 0.0
        parts.append((var / (x.size * float(x.mean()) ** 2), x.size))
    total = sum(v for v, _ in parts)
    se = math.sqrt(total)
    denominator = sum(v**2 / (n - 1) for v, n in parts if n > 1 and v > 0)
    df = total**2 / denominator if denominator > 0 else math.inf
    return se, df


def _ratio_shift(
    kind: BehaviourKind,
    baseline: npt.NDArray[np.float64],
    current: npt.NDArray[np.float64],
    confidence: float,
    method: str,
) -> Shift:
    """The ratio of means with its robust interval and the Wald p-value on the log scale."""
    m_b, m_c = float(baseline.mean()), float(current.mean())
    common = (kind, m_b, m_c)
    sizes = (int(baseline.size), int(current.size))
    if m_b == 0 or m_c == 0:
        # A ratio with a zero mean is 0 or infinite and has no log-scale interval; whether the
        # quantity appears at all is a binary question, asked by the caller.
        p = 1.0 if m_b == m_c else 0.0
        effect = None if m_b == 0 else 0.0
        return Shift(*common, effect, "ratio", None, None, confidence, p, method, *sizes)
    ratio = m_c / m_b
    se, df = log_ratio_se(baseline, current)
    if se == 0:
        p = 1.0 if ratio == 1 else 0.0
        return Shift(*common, ratio, "ratio", ratio, ratio, confidence, p, method, *sizes)
    z = math.log(ratio) / se
    # Student t with Welch's df (normal when df is infinite), via scipy.special for speed.
    if math.isfinite(df):
        p = float(min(1.0, 2 * special.stdtr(df, -abs(z))))
        q = float(special.stdtrit(df, 0.5 + confidence / 2))
    else:
        p = float(min(1.0, 2 * special.ndtr(-abs(z))))
        q = float(special.ndtri(0.5 + confidence / 2))
    low, high = ratio * math.exp(-q * se), ratio * math.exp(q * se)
    return Shift(*common, ratio, "ratio", low, high, confidence, p, method, *sizes)


def count_shift(baseline: npt.ArrayLike, current: npt.ArrayLike, confidence: float = 0.95) -> Shift:
    """Did a count per trial change (calls to a tool, steps, LLM calls)? Rate ratio.

    The effect is mean current / mean baseline with a robust Wald interval on the log scale
    (:func:`log_ratio_se`, a quasi-likelihood Poisson model with sandwich variance); the
    p-value is the same Wald statistic's, so "interval excludes 1" and "p < 1 − confidence"
    agree. Chosen over a plain Poisson interval, which is far too narrow when a retry makes
    some trials call a tool twice, and over a bootstrap, which is slow inside a simulation
    benchmark and erratic with many tied counts at 30 trials.

    Args:
        baseline: One count per baseline trial.
        current: One count per current trial.
        confidence: Two-sided confidence level.

    Returns:
        The shift, ``measure="ratio"``, ``method="robust-poisson"``.
    """
    _check_confidence(confidence)
    return _ratio_shift(
        "count", _sample(baseline, "count"), _sample(current, "count"), confidence, "robust-poisson"
    )


def continuous_shift(
    baseline: npt.ArrayLike, current: npt.ArrayLike, confidence: float = 0.95
) -> Shift:
    """Did a continuous quantity change (tokens, cost, latency)? Mann–Whitney U.

    The p-value is ``scipy.stats.mannwhitneyu(..., alternative="two-sided")`` (Mann & Whitney
    1947): no assumption on the shape of skewed token or latency distributions. The effect is
    the ratio of means — what a budget cares about ("+40 % tokens") — with the robust interval
    of :func:`count_shift`. The two answer slightly different questions (a shift in the typical
    value vs in the mean), so on rare occasions the p-value is below alpha while the interval
    touches 1, or the reverse; the verdict rests on the p-value.

    Args:
        baseline: One value per baseline trial (≥ 0).
        current: One value per current trial (≥ 0).
        confidence: Two-sided confidence level.

    Returns:
        The shift, ``measure="ratio"``, ``method="mann-whitney"``.
    """
    _check_confidence(confidence)
    x, y = _sample(baseline, "baseline"), _sample(current, "current")
    shift = _ratio_shift("continuous", x, y, confidence, "mann-whitney")
    if np.ptp(np.concatenate([x, y])) == 0:
        p = 1.0
    else:
        p = float(sps.mannwhitneyu(y, x, alternative="two-sided").pvalue)
    return replace(shift, p_value=p)


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
    _check_alpha(alpha)
    return int(min(50_000, max(1999, math.ceil(10 * max(1, family_size) / alpha))))


def path_shift(
    baseline: Sequence[Hashable],
    current: Sequence[Hashable],
    confidence: float = 0.95,
    n_resamples: int = 1999,
    seed: int = 0,
) -> PathShift:
    """Did the distribution of tool paths change? Permutation chi-square test.

    The statistic is Pearson's chi-square of the 2 × K table (version × path variant); its null
    distribution comes from ``n_resamples`` random relabellings of the trials (fixed ``seed``),
    so the test is exact in the Monte Carlo sense however sparse the table — many variants seen
    once or twice, where the chi-square approximation fails. p = (1 + #{T* ≥ T}) / (1 + R)
    (Phipson & Smyth 2010, SAGMB 9:39), never 0.

    Args:
        baseline: One path per baseline trial (any hashable: a tuple of tool names).
        current: One path per current trial.
        confidence: Two-sided confidence level of the variant's interval.
        n_resamples: Random relabellings.
        seed: Seed of the relabellings, so that a report is reproducible.

    Returns:
        The test, the variant whose share moved most with its share difference and Newcombe
        interval, and the total variation distance.
    """
    _check_confidence(confidence)
    n_b, n_c = len(baseline), len(current)
    _sizes(n_b, n_c)
    keys: dict[Hashable, int] = {}
    codes = np.array([keys.setdefault(p, len(keys)) for p in [*baseline, *current]], dtype=np.int64)
    k = len(keys)
    n = n_b + n_c
    totals = np.bincount(codes, minlength=k).astype(float)
    expected = totals * n_b / n
    expected_other = totals - expected
    observed = np.bincount(codes[:n_b], minlength=k).astype(float)
    statistic = float(_chi2_rows(observed, expected, expected_other))
    if k == 1:
        p = 1.0
    else:
        rng = np.random.default_rng(seed)
        colours = totals.astype(np.int64)
        hits = 0
        # A random relabelling fixes both margins, so the baseline row's counts are one
        # multivariate hypergeometric draw: sampling them directly is the permutation test
        # without shuffling every trial. In blocks, to bound memory for many variants.
        for start in range(0, n_resamples, _BLOCK):
            block = min(_BLOCK, n_resamples - start)
            counts = rng.multivariate_hypergeometric(colours, n_b, size=block)
            null = _chi2_rows(counts.astype(float), expected, expected_other)
            # A relative tolerance keeps ties in floating point counted as ties.
            hits += int(np.sum(null >= statistic * (1 - 1e-12)))
        p = (1 + hits) / (1 + n_resamples)
    share_b = observed / n_b
    share_c = (totals - observed) / n_c
    moved = int(np.argmax(np.abs(share_c - share_b)))
    k_b, k_c = int(observed[moved]), int(totals[moved] - observed[moved])
    low, high = difference_interval(k_b, n_b, k_c, n_c, confidence)
    names = list(keys)
    path = names[moved]
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
    distance = float(0.5 * np.abs(share_c - share_b).sum())
    return PathShift(
        shift, tuple(str(t) for t in path) if isinstance(path, tuple) else (str(path),), distance, k
    )


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
    _check_alpha(alpha)
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
    _check_alpha(alpha)
    if ratio <= 1:
        raise ConfigError(f"the ratio to detect must exceed 1 (got {ratio})")
    if cv <= 0:
        return 1.0
    se = cv * math.sqrt(1 / n_baseline + 1 / n_current)
    # ndtr / ndtri: the normal cdf and its inverse, without scipy.stats' per-call overhead.
    return float(special.ndtr(math.log(ratio) / se + special.ndtri(alpha / 2)))


def trials_for_power(
    power_at: Callable[[int], float], target: float = 0.80, limit: int = 100_000
) -> int | None:
    """The fewest trials per version n with ``power_at(n) ≥ target`` (power rises with n).

    Args:
        power_at: Power with n trials on each side.
        target: The power wanted.
        limit: Give up beyond this many trials.

    Returns:
        n, or None if even ``limit`` trials fall short.
    """
    if power_at(limit) < target:
        return None
    low, high = 1, limit
    while low < high:
        mid = (low + high) // 2
        if power_at(mid) >= target:
            high = mid
        else:
            low = mid + 1
    return low

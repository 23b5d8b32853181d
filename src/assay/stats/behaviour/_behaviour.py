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

The path test lives in :mod:`._behaviour_paths`; what "unchanged" can claim — the
power to see a minimal effect per kind — in :mod:`._behaviour_power`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError, InsufficientDataError
from assay.stats.base import check_open_unit
from assay.stats.intervals import wilson_interval
from assay.stats.two_sample import mann_whitney_p_values

BehaviourKind = Literal["path", "binary", "count", "continuous"]
"""The kinds of behavioural feature, each with its own test."""

BEHAVIOUR_KINDS: tuple[BehaviourKind, ...] = ("path", "binary", "count", "continuous")

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
    return _difference_interval(k_baseline, n_baseline, k_current, n_current, confidence)


@functools.lru_cache(maxsize=4096)
def _difference_interval(
    k_baseline: int, n_baseline: int, k_current: int, n_current: int, confidence: float
) -> tuple[float, float]:
    # Many cases of a few trials each repeat the same few tables; scipy's Wilson interval costs
    # a binomial test a call, so each table is computed once.
    p_b, p_c = k_baseline / n_baseline, k_current / n_current
    wb = wilson_interval(k_baseline, n_baseline, confidence)
    wc = wilson_interval(k_current, n_current, confidence)
    d = p_c - p_b
    low = d - math.sqrt((p_c - wc.low) ** 2 + (wb.high - p_b) ** 2)
    high = d + math.sqrt((wc.high - p_c) ** 2 + (p_b - wb.low) ** 2)
    return max(-1.0, low), min(1.0, high)


def require_trials(n_baseline: int, n_current: int) -> None:
    """Raise InsufficientDataError unless both versions have trials."""
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
    check_open_unit("confidence", confidence)
    require_trials(n_baseline, n_current)
    if not (0 <= k_baseline <= n_baseline and 0 <= k_current <= n_current):
        raise ConfigError("counts must lie between 0 and the number of trials")
    p = _fisher(k_current, n_current - k_current, k_baseline, n_baseline - k_baseline)
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


@functools.lru_cache(maxsize=4096)
def _fisher(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher p of ``[[a, b], [c, d]]``, once per table (the same few recur)."""
    from scipy import stats as sps

    return float(sps.fisher_exact([[a, b], [c, d]], alternative="two-sided").pvalue)


def _sample(values: npt.ArrayLike, what: str) -> npt.NDArray[np.float64]:
    x = np.asarray(values, dtype=np.float64).ravel()
    if x.size == 0:
        raise InsufficientDataError(f"no {what} values")
    if not np.all(np.isfinite(x)):
        raise ConfigError(f"{what} values must be finite")
    if np.any(x < 0):
        raise ConfigError(f"{what} values must not be negative (a ratio of means needs ≥ 0)")
    return x


def _samples(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]], what: tuple[str, str]
) -> list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    """:func:`_sample` of every pair, checked in one pass (one by one only to name a fault)."""
    out = [
        (np.asarray(b, dtype=np.float64).ravel(), np.asarray(c, dtype=np.float64).ravel())
        for b, c in pairs
    ]
    flat = [x for pair in out for x in pair]
    if flat:
        values = np.concatenate(flat)
        if min(x.size for x in flat) > 0 and np.all(np.isfinite(values)) and values.min() >= 0:
            return out
    return [(_sample(b, what[0]), _sample(c, what[1])) for b, c in out]


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
    moments = [
        (float(x.mean()), float(x.var(ddof=ddof)) if x.size > ddof else 0.0, int(x.size))
        for x in (baseline, current)
    ]
    return _log_ratio_se(moments[0], moments[1])


_Moments = tuple[float, float, int]
"""A sample's mean, unbiased variance (0 with one value) and size."""


def _row_moments(matrix: npt.NDArray[np.float64]) -> list[_Moments]:
    """Each row's mean, unbiased variance (0 with one value) and size, one numpy pass each."""
    rows, size = matrix.shape
    means = matrix.mean(axis=1).tolist()
    variances = matrix.var(axis=1, ddof=1).tolist() if size > 1 else [0.0] * rows
    return [(mean, variance, size) for mean, variance in zip(means, variances, strict=True)]


def _log_ratio_se(baseline: _Moments, current: _Moments) -> tuple[float, float]:
    """:func:`log_ratio_se` from the two samples' moments."""
    parts = [(var / (n * mean**2), n) for mean, var, n in (baseline, current)]
    total = sum(v for v, _ in parts)
    se = math.sqrt(total)
    denominator = sum(v**2 / (n - 1) for v, n in parts if n > 1 and v > 0)
    df = total**2 / denominator if denominator > 0 else math.inf
    return se, df


def _ratio_shift(
    kind: BehaviourKind,
    baseline: _Moments,
    current: _Moments,
    confidence: float,
    method: str,
    p_value: float | None = None,
) -> Shift:
    """The ratio of means with its robust interval and the Wald p-value on the log scale.

    ``p_value`` replaces the Wald p-value (the continuous kind's is Mann–Whitney's).
    """
    from scipy import special

    m_b, m_c = baseline[0], current[0]
    common = (kind, m_b, m_c)
    sizes = (baseline[2], current[2])
    if m_b == 0 or m_c == 0:
        # A ratio with a zero mean is 0 or infinite and has no log-scale interval; whether the
        # quantity appears at all is a binary question, asked by the caller.
        p = 1.0 if m_b == m_c else 0.0
        effect = None if m_b == 0 else 0.0
        p = p if p_value is None else p_value
        return Shift(*common, effect, "ratio", None, None, confidence, p, method, *sizes)
    ratio = m_c / m_b
    se, df = _log_ratio_se(baseline, current)
    if se == 0:
        p = _separated_p(ratio, *sizes) if p_value is None else p_value
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
    p = p if p_value is None else p_value
    return Shift(*common, ratio, "ratio", low, high, confidence, p, method, *sizes)


def _separated_p(ratio: float, n_baseline: int, n_current: int) -> float:
    """The p-value of two versions that each repeat one value: the permutation test's.

    Without spread the Wald statistic is infinite, and p = 0 would call 5 trials of 3 calls
    against 5 of 2 certain (over a suite of 2,000 cases such pairs come by chance). Relabelling
    the trials, only the observed split (and its mirror when the sizes are equal) moves the
    means as far apart, so the exact permutation p-value is 1 or 2 over C(n_b + n_c, n_b):
    2 / 252 = 0.0079 at 5 a side, 1.7e-17 at 30.
    """
    if ratio == 1:
        return 1.0
    splits = 2 if n_baseline == n_current else 1
    return splits / math.comb(n_baseline + n_current, n_baseline)


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
    return count_shifts([(baseline, current)], confidence)[0]


def count_shifts(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]], confidence: float = 0.95
) -> list[Shift]:
    """:func:`count_shift` of many features at once (their moments in one pass), in order.

    Args:
        pairs: ``(baseline, current)`` counts of each feature.
        confidence: Two-sided confidence level.

    Returns:
        One shift per pair, each equal to :func:`count_shift`'s.
    """
    check_open_unit("confidence", confidence)
    return _ratio_shifts("count", _samples(pairs, ("count", "count")), confidence)


def _ratio_shifts(
    kind: Literal["count", "continuous"],
    samples: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
    confidence: float,
) -> list[Shift]:
    """:func:`row_shifts` of pairs of any sizes: those of one pair of sizes stacked together."""
    by_sizes: dict[tuple[int, int], list[int]] = {}
    for index, (b, c) in enumerate(samples):
        by_sizes.setdefault((b.size, c.size), []).append(index)
    out: list[Shift | None] = [None] * len(samples)
    for rows in by_sizes.values():
        baseline = np.stack([samples[i][0] for i in rows])
        current = np.stack([samples[i][1] for i in rows])
        for index, shift in zip(rows, row_shifts(kind, baseline, current, confidence), strict=True):
            out[index] = shift
    return [s for s in out if s is not None]


def row_shifts(
    kind: Literal["count", "continuous"],
    baseline: npt.NDArray[np.float64],
    current: npt.NDArray[np.float64],
    confidence: float = 0.95,
) -> list[Shift]:
    """:func:`count_shift` or :func:`continuous_shift` of features stacked as rows.

    The behaviour diff of a suite tests thousands of features whose samples have one of a few
    pairs of sizes; each row's moments, rank test and interval are the ones its feature gets
    alone, bit for bit (row-wise numpy reductions, :func:`mann_whitney_p_values`).

    Args:
        kind: ``count`` (robust Poisson) or ``continuous`` (Mann–Whitney).
        baseline: One row of baseline values per feature (features × baseline trials).
        current: The current values, row for row (features × current trials).
        confidence: Two-sided confidence level.

    Returns:
        One shift per row, in order.
    """
    check_open_unit("confidence", confidence)
    both = np.hstack([baseline, current])
    if not (both.size and np.isfinite(both).all() and both.min() >= 0):
        what = ("count", "count") if kind == "count" else ("baseline", "current")
        for b, c in zip(baseline, current, strict=True):  # the first fault, in its words
            _sample(b, what[0])
            _sample(c, what[1])
    moments_b, moments_c = _row_moments(baseline), _row_moments(current)
    if kind == "count":
        return _ratio_shift_rows(kind, moments_b, moments_c, confidence, "robust-poisson")
    # Every value the same on both sides: no rank order to test (scipy would divide by zero).
    varied = np.flatnonzero(both.max(axis=1) > both.min(axis=1)).tolist()
    p = [1.0] * baseline.shape[0]
    tested = mann_whitney_p_values([(current[i], baseline[i]) for i in varied])
    for i, value in zip(varied, tested, strict=True):
        p[i] = value
    return _ratio_shift_rows(kind, moments_b, moments_c, confidence, "mann-whitney", p)


def _ratio_shift_rows(
    kind: BehaviourKind,
    baseline: Sequence[_Moments],
    current: Sequence[_Moments],
    confidence: float,
    method: str,
    p_values: Sequence[float] | None = None,
) -> list[Shift]:
    """:func:`_ratio_shift` of every row, its t and normal quantiles in one scipy call each.

    The same IEEE steps row by row: scipy's special functions give an array's elements what
    they give each alone, and the rest is the same Python arithmetic.
    """
    from scipy import special

    shifts: list[Shift | None] = []
    wald: list[tuple[int, float, float, float, float]] = []  # row, ratio, se, df, z
    for row, (b, c) in enumerate(zip(baseline, current, strict=True)):
        p_value = None if p_values is None else p_values[row]
        se = df = 0.0
        if b[0] != 0 and c[0] != 0:
            se, df = _log_ratio_se(b, c)
        if se == 0:  # a zero mean or no spread: no Wald statistic
            shifts.append(_ratio_shift(kind, b, c, confidence, method, p_value))
            continue
        ratio = c[0] / b[0]
        wald.append((row, ratio, se, df, math.log(ratio) / se))
        shifts.append(None)
    level = 0.5 + confidence / 2
    student = [w for w in wald if math.isfinite(w[3])]
    normal = [w for w in wald if not math.isfinite(w[3])]
    tails: list[float] = []
    quantiles: list[float] = []
    if student:
        dfs = np.array([w[3] for w in student])
        tails = special.stdtr(dfs, np.array([-abs(w[4]) for w in student])).tolist()
        quantiles = special.stdtrit(dfs, level).tolist()
    if normal:
        tails += special.ndtr(np.array([-abs(w[4]) for w in normal])).tolist()
        quantiles += [float(special.ndtri(level))] * len(normal)
    for (row, ratio, se, _, _), tail, q in zip([*student, *normal], tails, quantiles, strict=True):
        b, c = baseline[row], current[row]
        p = float(min(1.0, 2 * tail)) if p_values is None else p_values[row]
        low, high = ratio * math.exp(-q * se), ratio * math.exp(q * se)
        shifts[row] = Shift(
            kind, b[0], c[0], ratio, "ratio", low, high, confidence, p, method, b[2], c[2]
        )
    return [s for s in shifts if s is not None]


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
    return continuous_shifts([(baseline, current)], confidence)[0]


def continuous_shifts(
    pairs: Sequence[tuple[npt.ArrayLike, npt.ArrayLike]], confidence: float = 0.95
) -> list[Shift]:
    """:func:`continuous_shift` of many features at once (one Mann–Whitney pass), in order.

    Args:
        pairs: ``(baseline, current)`` values of each feature.
        confidence: Two-sided confidence level.

    Returns:
        One shift per pair, each equal to :func:`continuous_shift`'s.
    """
    check_open_unit("confidence", confidence)
    return _ratio_shifts("continuous", _samples(pairs, ("baseline", "current")), confidence)

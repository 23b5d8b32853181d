"""Summaries of a named score (e.g. 0–100) across trials, and a one-sided test for a drop."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from assay.choices import ScoreInterval
from assay.errors import ConfigError, InsufficientDataError
from assay.stats.base import check_open_unit, sample_moments

SCORE_CI_METHODS = tuple(ScoreInterval)
"""How the interval of a mean score can be computed."""


@dataclass(frozen=True, slots=True)
class ScoreSummary:
    """Descriptive statistics of one score over a test's trials."""

    n: int
    """Number of values."""
    mean: float
    """Arithmetic mean."""
    std: float | None
    """Sample standard deviation (ddof = 1); None for a single value."""
    min: float
    """Smallest value."""
    max: float
    """Largest value."""
    p50: float
    """Median (numpy's linear interpolation)."""
    p90: float
    """90th percentile (numpy's linear interpolation)."""
    ci_low: float | None
    """Lower bound of the confidence interval of the mean; None for a single value."""
    ci_high: float | None
    """Upper bound of the confidence interval of the mean; None for a single value."""
    ci_method: str
    """``"t"`` (Student t) or ``"bootstrap"`` (BCa)."""
    confidence: float
    """Two-sided confidence level of the interval."""
    range_low: float | None = None
    """Lower end of the range the score is known to lie in (the interval is cut there)."""
    range_high: float | None = None
    """Upper end of that range; both None when no range is known (no cut)."""
    range_source: str | None = None
    """``"declared"`` (a range assay records the score in, or one the user gave) or
    ``"assumed"`` (every value in [0, 1], the default scale of a score); None: no range."""
    clipped: bool = False
    """Whether the interval reached past the range and was cut at its end."""
    note: str | None = None
    """Why there is no interval though there are two or more values (every score tied)."""


def _values(values: npt.ArrayLike, what: str = "scores") -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64).ravel()
    if array.size == 0:
        raise InsufficientDataError(f"no {what} to summarise")
    if not np.all(np.isfinite(array)):
        raise ConfigError(f"{what} must be finite numbers (found NaN or infinity)")
    return array


@functools.lru_cache(maxsize=1024)
def _t_quantiles(confidence: float, df: int) -> tuple[float, float]:
    """The standard t quantiles of a two-sided ``confidence`` interval with ``df`` degrees.

    ``scipy.stats.t.interval`` is these times the scale plus the location, so the interval
    is the same to the bit; a set of thousands of tests asks for few distinct ``df``.
    """
    from scipy import stats as sps

    low, high = sps.t.interval(confidence, df)
    return float(low), float(high)


def score_summary(
    values: npt.ArrayLike,
    confidence: float = 0.95,
    ci: str = ScoreInterval.T,
    seed: int | None = 0,
    n_resamples: int = 9999,
    bounds: tuple[float, float] | None = None,
    bounds_source: str = "declared",
) -> ScoreSummary:
    """Mean, spread, percentiles and a confidence interval for the mean of ``values``.

    The ``t`` interval is mean ± t_{n−1, (1+confidence)/2} · s/√n (Student 1908; via
    ``scipy.stats.t``). The ``bootstrap`` interval is scipy's bias-corrected and accelerated
    (BCa) bootstrap of the mean (Efron 1987, JASA 82:171; ``scipy.stats.bootstrap``), seeded
    so that a report is reproducible.

    A mean of values in [a, b] lies in [a, b], so cutting the interval at a known range keeps
    its coverage (the true mean is inside the cut interval whenever it is inside the uncut
    one) while never showing impossible values. When all values are equal there is no
    interval: a zero-width one would claim certainty that a handful of trials cannot give; the
    ``note`` says so.

    Args:
        values: The score of each trial.
        confidence: Two-sided confidence level in (0, 1).
        ci: ``"t"`` or ``"bootstrap"``.
        seed: Seed of the bootstrap's random numbers.
        n_resamples: Bootstrap resamples.
        bounds: The range ``(low, high)`` the score is known to lie in; the interval is cut
            to it. None: no cut.
        bounds_source: How the range is known, recorded as ``range_source``.

    Returns:
        The summary; with one value, or all values tied, ``std`` or the interval are None.

    Raises:
        InsufficientDataError: For no values.
        ConfigError: For a bad ``ci``, ``confidence``, ``bounds`` or a non-finite value.
    """
    _check_bounds(bounds)
    if ci not in SCORE_CI_METHODS:
        raise ConfigError(
            f"unknown score interval {ci!r}; choose one of {', '.join(SCORE_CI_METHODS)}"
        )
    check_open_unit("confidence", confidence)
    x = _values(values)
    n = int(x.size)
    mean = float(x.mean())
    p50, p90 = (float(v) for v in np.percentile(x, [50, 90]))
    std: float | None = None
    low: float | None = None
    high: float | None = None
    if n >= 2:
        std = float(x.std(ddof=1))
        if std == 0.0:
            pass  # tied: no interval (see _finish)
        elif ci == ScoreInterval.T:
            sem = std / math.sqrt(n)
            # sps.t.interval(confidence, n - 1, loc=mean, scale=sem), its quantiles cached.
            t_low, t_high = _t_quantiles(confidence, n - 1)
            low, high = t_low * sem + mean, t_high * sem + mean
        else:
            low, high = _bootstrap(x, confidence, seed, n_resamples)
    summary = ScoreSummary(
        n, mean, std, float(x.min()), float(x.max()), p50, p90, low, high, ci, confidence
    )
    return _finish(summary, bounds, bounds_source)


def _check_bounds(bounds: tuple[float, float] | None) -> None:
    if bounds is not None and not (
        math.isfinite(bounds[0]) and math.isfinite(bounds[1]) and bounds[0] < bounds[1]
    ):
        raise ConfigError(f"a score's range must be finite with low < high (got {bounds})")


def _finish(summary: ScoreSummary, bounds: tuple[float, float] | None, source: str) -> ScoreSummary:
    """``summary`` with its interval cut to ``bounds`` and a note when every value is tied."""
    note = None
    if summary.n >= 2 and summary.std == 0.0:
        note = (
            f"all {summary.n} scores equal {summary.mean:g}: no interval (a zero-width one "
            "would claim a certainty that tied trials do not give)"
        )
    if bounds is None:
        return summary if note is None else replace(summary, note=note)
    low, high = summary.ci_low, summary.ci_high
    clipped = False
    if low is not None and high is not None:
        clipped = low < bounds[0] or high > bounds[1]
        low, high = min(max(low, bounds[0]), bounds[1]), max(min(high, bounds[1]), bounds[0])
    return replace(
        summary,
        ci_low=low,
        ci_high=high,
        range_low=bounds[0],
        range_high=bounds[1],
        range_source=source,
        clipped=clipped,
        note=note,
    )


def score_summaries(
    samples: Sequence[npt.ArrayLike],
    confidences: Sequence[float],
    ci: str = ScoreInterval.T,
    seed: int | None = 0,
    bounds: Sequence[tuple[tuple[float, float], str] | None] | None = None,
) -> list[ScoreSummary]:
    """:func:`score_summary` of many samples (each at its own confidence), the same figures.

    ``bounds`` gives each sample's range and how it is known (``(range, source)``, or None for
    no range), as ``bounds`` and ``bounds_source`` of :func:`score_summary`.

    The ``t`` summaries of samples of one size are computed together
    (:func:`~assay.stats.base._moments.sample_moments`: each figure is the lone sample's, bit for
    bit, and the interval is the same arithmetic on them); bootstrap intervals, and samples
    :func:`score_summary` would refuse, go through it one by one.
    """
    arrays = [np.asarray(v, dtype=np.float64).ravel() for v in samples]
    ranges = list(bounds) if bounds is not None else [None] * len(arrays)
    for given in ranges:
        _check_bounds(None if given is None else given[0])
    if (
        ci != ScoreInterval.T
        or not arrays
        or any(a.size == 0 for a in arrays)
        or not np.isfinite(np.concatenate(arrays)).all()
        or not all(0 < c < 1 for c in confidences)
    ):
        return [
            score_summary(
                a,
                c,
                ci=ci,
                seed=seed,
                bounds=None if r is None else r[0],
                bounds_source="declared" if r is None else r[1],
            )
            for a, c, r in zip(arrays, confidences, ranges, strict=True)
        ]
    m = sample_moments(arrays)
    out = []
    columns = (m.n.tolist(), m.mean.tolist(), m.std.tolist(), m.min.tolist(), m.max.tolist())
    quantiles = (m.p50.tolist(), m.p90.tolist())
    for i, (n, mean, spread, low, high) in enumerate(zip(*columns, strict=True)):
        std: float | None = None
        ci_low: float | None = None
        ci_high: float | None = None
        if n >= 2:
            std = spread
            if std != 0.0:  # tied: no interval (see _finish)
                sem = std / math.sqrt(n)
                t_low, t_high = _t_quantiles(confidences[i], n - 1)
                ci_low, ci_high = t_low * sem + mean, t_high * sem + mean
        given = ranges[i]
        summary = ScoreSummary(
            n,
            mean,
            std,
            low,
            high,
            quantiles[0][i],
            quantiles[1][i],
            ci_low,
            ci_high,
            ci,
            confidences[i],
        )
        if given is None:
            out.append(_finish(summary, None, "declared"))
        else:
            out.append(_finish(summary, given[0], given[1]))
    return out


def _bootstrap(
    x: npt.NDArray[np.float64], confidence: float, seed: int | None, n_resamples: int
) -> tuple[float, float]:
    from scipy import stats as sps

    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        # BCa warns and returns NaN on nearly-degenerate samples; fall back to percentile.
        warnings.simplefilter("ignore")
        result = sps.bootstrap(
            (x,),
            np.mean,
            confidence_level=confidence,
            n_resamples=n_resamples,
            method="BCa",
            rng=rng,
        )
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if not (math.isfinite(low) and math.isfinite(high)):
            result = sps.bootstrap(
                (x,),
                np.mean,
                confidence_level=confidence,
                n_resamples=n_resamples,
                method="percentile",
                rng=np.random.default_rng(seed),
            )
            low = float(result.confidence_interval.low)
            high = float(result.confidence_interval.high)
    return low, high


@dataclass(frozen=True, slots=True)
class ScoreShift:
    """A one-sided Mann–Whitney U test that current scores are lower than the baseline's."""

    baseline_n: int
    """Number of baseline scores."""
    current_n: int
    """Number of current scores."""
    baseline_median: float
    """Median baseline score."""
    current_median: float
    """Median current score."""
    u_statistic: float
    """U of the baseline sample, as returned by ``scipy.stats.mannwhitneyu(baseline, current)``."""
    superiority: float
    """P(baseline score > current score) + ½ P(tie) = U / (n1 · n2); 0.5 means no shift."""
    p_value: float
    """One-sided p-value for "baseline scores tend to be higher"."""


def score_shift_test(baseline: npt.ArrayLike, current: npt.ArrayLike) -> ScoreShift:
    """Test whether scores went down: one-sided Mann–Whitney U (Mann & Whitney 1947).

    ``scipy.stats.mannwhitneyu(baseline, current, alternative="greater")``: the alternative is
    that a baseline score tends to exceed a current one. Makes no normality assumption; scores
    with ties use scipy's tie-corrected asymptotic or exact method as scipy chooses.

    Args:
        baseline: Scores of the baseline trials.
        current: Scores of the current trials.

    Returns:
        The test result; ``superiority`` is the effect size (common-language effect size).

    Raises:
        InsufficientDataError: If either sample is empty.
    """
    from scipy import stats as sps

    x = _values(baseline, "baseline scores")
    y = _values(current, "current scores")
    if np.ptp(np.concatenate([x, y])) == 0:
        # All scores equal: no evidence of any shift (scipy would divide by zero).
        u, p = x.size * y.size / 2, 1.0
    else:
        result = sps.mannwhitneyu(x, y, alternative="greater")
        u, p = float(result.statistic), float(result.pvalue)
    return ScoreShift(
        int(x.size),
        int(y.size),
        float(np.median(x)),
        float(np.median(y)),
        float(u),
        float(u) / (x.size * y.size),
        float(p),
    )

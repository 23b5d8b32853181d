"""A suite's mean over cases, with cases as clusters: betting, cluster-robust t or bootstrap.

A suite has C cases, each run a few times. Trials of one case share the case's difficulty, so
they are not independent draws: the unit that was sampled is the case. Each case is weighted
equally (the suite's question is "how often does the agent solve a case?", not "a trial"), so
the estimate is the mean of the per-case means, and every interval here treats the C per-case
means as the sample. The default interval (``betting``) keeps its level on each side at every
number of cases and every spread of case rates; the t and bootstrap intervals are asymptotic
(docs/statistics.md, "The suite verdict at the true suite mean").
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from assay.choices import SuiteInterval
from assay.errors import ConfigError
from assay.stats.base import check_open_unit
from assay.stats.intervals import Interval, bounded_mean_bounds, proportion_bounds
from assay.stats.suites._passk import pass_at_k, pass_hat_k
from assay.stats.suites._scores import _values

CLUSTER_METHODS: Final = tuple(SuiteInterval)
"""How a suite interval can be computed: betting (the default), cluster-robust t, bootstrap."""

DEFAULT_RESAMPLES: Final = 2000
"""Bootstrap resamples: Efron & Tibshirani (1993, ch. 14) ask for at least 1000 for BCa."""

_CHUNK: Final = 256  # resamples drawn at once: bounds the memory at 256 × C indices

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ClusteredMean:
    """The mean over cases of per-case means, with an interval that treats cases as clusters."""

    mean: float
    """Mean over cases of the per-case means: each case weighted equally."""
    std_error: float | None
    """Cluster-robust standard error of ``mean``; None with one case."""
    interval: Interval
    """Two-sided interval of the suite mean; ``method`` names how it was made."""
    cases: int
    """Number of cases (clusters)."""
    observations: int
    """Number of trials (observations) over all cases."""


@dataclass(frozen=True, slots=True)
class SuitePassAtK:
    """A suite's pass@k or pass^k: the per-case unbiased estimates averaged over cases.

    Unpacks as ``estimate, interval = suite_pass_at_k(...)``.
    """

    k: int
    """Number of tries the estimate is about."""
    estimate: float | None
    """Mean over the cases with at least k trials; None when no case has k trials."""
    interval: Interval | None
    """Betting interval of ``estimate`` (cases as draws, each estimate in [0, 1]); None
    without an estimate."""
    cases: int
    """Cases that entered the estimate (those with at least k trials)."""
    excluded: int
    """Cases left out because they had fewer than k trials."""

    def __iter__(self) -> Iterator[float | Interval | None]:
        """Yield ``estimate`` then ``interval``, so the result unpacks as a pair."""
        yield self.estimate
        yield self.interval


def cluster_standard_error(case_means: FloatArray) -> float:
    """Cluster-robust standard error of the mean over cases, each case weighted equally.

    With weights that make every case count once, Liang & Zeger's (1986) sandwich with the
    small-sample factor C / (C − 1) reduces to s / √C, where s is the standard deviation (ddof
    = 1) of the per-case means: Σ_c (m_c − m̄)² · C / (C − 1) / C² = s² / C. It equals
    statsmodels' OLS ``cov_type="cluster"`` both on the case means and on the trials weighted
    1 / n_c (checked in the tests), and inspect_ai's ``stderr(cluster=)`` when every case has
    the same number of trials (inspect_ai weights trials, not cases).
    """
    return float(case_means.std(ddof=1) / math.sqrt(case_means.size))


def zero_spread_interval(
    mean: float, cases: int, confidence: float, bounds: tuple[float, float]
) -> tuple[float, float]:
    """The interval used when every case has the same value, so the sample shows no spread.

    A standard error of zero would claim certainty from a finite number of cases (30 cases all
    passing would give [1, 1]). Instead the C cases are read as C Bernoulli trials at the
    rescaled mean and given the Clopper–Pearson interval (Clopper & Pearson 1934): for C of C
    the lower bound is (α/2)^(1/C), about 1 − 3.7 / C at 95%.
    """
    low_bound, high_bound = bounds
    span = high_bound - low_bound
    share = (mean - low_bound) / span
    lo, hi = proportion_bounds(share * cases, cases, confidence, "clopper-pearson")
    return low_bound + float(lo) * span, low_bound + float(hi) * span


def bca_interval(
    values: FloatArray, confidence: float, seed: int, resamples: int
) -> tuple[float, float]:
    """Bias-corrected and accelerated bootstrap interval of the mean of ``values``.

    Resamples the values (the cases) with replacement ``resamples`` times from
    ``numpy.random.default_rng(seed)``; acceleration from the jackknife, which for a mean has
    the closed form (S − x_i) / (C − 1). Efron (1987), JASA 82:171; Efron & Tibshirani (1993),
    ch. 14. Falls back to the percentile interval when every resample lies on one side of the
    estimate (the bias correction is then infinite).
    """
    from scipy import stats as sps

    c = values.size
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size * 4 <= c:
        # Few distinct values (pass rates of K trials, pass@k): how often each is drawn in C
        # draws with replacement is multinomial, so a resample's mean is drawn from those counts
        # in O(distinct) instead of O(C): the same distribution as resampling the cases.
        drawn = rng.multinomial(c, counts / c, size=resamples)
        means = (drawn @ distinct) / c
    else:
        means = np.empty(resamples)
        for start in range(0, resamples, _CHUNK):
            stop = min(start + _CHUNK, resamples)
            means[start:stop] = values[rng.integers(0, c, size=(stop - start, c))].mean(axis=1)
    estimate = float(values.mean())
    alpha = 1.0 - confidence
    below = (np.count_nonzero(means < estimate) + 0.5 * np.count_nonzero(means == estimate)) / (
        resamples
    )
    levels = np.array([alpha / 2, 1 - alpha / 2])
    if 0 < below < 1:
        z0 = float(sps.norm.ppf(below))
        jack = (values.sum() - values) / (c - 1)
        centred = jack.mean() - jack
        denominator = 6.0 * float((centred**2).sum()) ** 1.5
        accel = float((centred**3).sum()) / denominator if denominator > 0 else 0.0
        z = sps.norm.ppf(levels)
        levels = sps.norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    low, high = np.quantile(means, levels)
    return float(low), float(high)


def clustered_mean(
    case_means: npt.ArrayLike,
    case_sizes: npt.ArrayLike,
    confidence: float = 0.95,
    method: str = SuiteInterval.BETTING,
    *,
    bounds: tuple[float, float] | None = (0.0, 1.0),
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    pass_rates: bool = True,
) -> ClusteredMean:
    """A suite's mean over cases and its interval with cases as clusters.

    * ``betting`` (the default; ``Interval.method`` ``"cluster-betting"``): the fixed-n betting
      interval of a bounded mean (Waudby-Smith & Ramdas 2024, JRSS-B 86:1; see
      :func:`~assay.stats.bounded_mean_bounds`) on the C case means, which treats them as
      independent draws from a population of cases: each side errs at most (1 − confidence) / 2
      of the time at every C and every spread of case rates (most cases at 1.0 included). When
      every case has exactly one trial and the values are pass rates (``pass_rates``), the case
      means are Bernoulli draws and the exact Clopper–Pearson interval of the count is used
      instead (``"cluster-clopper-pearson"``; Clopper & Pearson 1934): the same guarantee,
      narrower. Needs ``bounds``.
    * ``t`` (``Interval.method`` ``"cluster-t"``): mean ± t_{C−1} · SE with the cluster-robust
      standard error (Liang & Zeger 1986, Biometrika 73:13; Miller 2024, "Adding Error Bars to
      Evals", arXiv:2411.00640, §2–3) — see :func:`cluster_standard_error` — and a t quantile
      on C − 1 degrees of freedom (Cameron & Miller 2015, J. Hum. Resour. 50:317, §VI). Clipped
      to ``bounds`` when given.
    * ``bootstrap`` (``"cluster-bootstrap"``): the cluster bootstrap (cases resampled with
      replacement, each keeping its trials; Field & Welsh 2007, JRSS B 69:369), BCa (see
      :func:`bca_interval`), seeded. It follows a skewed spread of case means near 0 or 1
      better than the symmetric t interval.

    When all case means are equal and ``bounds`` are given, ``t`` and ``bootstrap`` return the
    Clopper–Pearson interval over cases (:func:`zero_spread_interval`,
    ``"cluster-zero-spread"``), never a zero-width interval (``betting`` needs no special case).

    Args:
        case_means: Each case's mean (its pass rate, or its mean score).
        case_sizes: Each case's number of trials (≥ 1); only counted (cases weigh equally).
        confidence: Two-sided confidence level in (0, 1).
        method: ``"betting"``, ``"t"`` or ``"bootstrap"``.
        bounds: The range the values can take ((0, 1) for pass rates), or None (a score of
            unknown range: ``t`` or ``bootstrap`` only).
        seed: Seed of the bootstrap, and of the order ``betting`` feeds the cases in.
        resamples: Bootstrap resamples.
        pass_rates: The values are passes / trials (False for scores, pass@k estimates).

    Returns:
        The mean, its standard error and interval; with one case the interval is ``bounds``
        (or the value itself without bounds) and the standard error None.

    Raises:
        ConfigError: For a bad method, confidence, sizes, or a value outside ``bounds``.
        InsufficientDataError: For no cases.
    """
    from scipy import stats as sps

    if method not in CLUSTER_METHODS:
        raise ConfigError(f"unknown suite interval {method!r}; choose betting, t or bootstrap")
    if method == SuiteInterval.BETTING and bounds is None:
        raise ConfigError("the betting interval needs the values' bounds; use t or bootstrap")
    check_open_unit("confidence", confidence)
    means = _values(case_means, "case means")
    sizes = np.asarray(case_sizes, dtype=np.int64).ravel()
    if sizes.shape != means.shape or np.any(sizes < 1):
        raise ConfigError("case_sizes needs one count of at least 1 per case")
    if resamples < 100:
        raise ConfigError(f"resamples must be at least 100 (got {resamples})")
    if bounds is not None and (means.min() < bounds[0] or means.max() > bounds[1]):
        raise ConfigError(f"case means must lie in [{bounds[0]:g}, {bounds[1]:g}]")
    c = int(means.size)
    mean = float(means.mean())
    name = _NAMES[SuiteInterval(method)]
    binary = (
        pass_rates
        and bounds is not None
        and bool(np.all(sizes == 1))
        and bool(np.all((means == bounds[0]) | (means == bounds[1])))
    )
    if method == SuiteInterval.BETTING and binary:
        name = "cluster-clopper-pearson"
    if c == 1:
        low, high = bounds if bounds is not None else (mean, mean)
        return ClusteredMean(mean, None, Interval(low, high, confidence, name), 1, int(sizes.sum()))
    se = cluster_standard_error(means)
    if method == SuiteInterval.BETTING and bounds is not None:
        low, high = _betting(means, binary, confidence, bounds, seed)
    elif se == 0.0 and bounds is not None:
        low, high = zero_spread_interval(mean, c, confidence, bounds)
        name = "cluster-zero-spread"
    elif method == SuiteInterval.T:
        half = float(sps.t.ppf(0.5 + confidence / 2, c - 1)) * se
        low, high = mean - half, mean + half
    else:
        low, high = bca_interval(means, confidence, seed, resamples)
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return ClusteredMean(mean, se, Interval(low, high, confidence, name), c, int(sizes.sum()))


_NAMES: Final = {
    SuiteInterval.BETTING: "cluster-betting",
    SuiteInterval.T: "cluster-t",
    SuiteInterval.BOOTSTRAP: "cluster-bootstrap",
}


def _betting(
    means: FloatArray,
    binary: bool,
    confidence: float,
    bounds: tuple[float, float],
    seed: int,
) -> tuple[float, float]:
    """The betting interval, or Clopper–Pearson's for one trial per case (exact there)."""
    side = (1 - confidence) / 2
    if binary:
        span = bounds[1] - bounds[0]
        passed = float(np.round(((means - bounds[0]) / span).sum()))
        lo, hi = proportion_bounds(passed, means.size, confidence, "clopper-pearson")
        return bounds[0] + float(lo) * span, bounds[0] + float(hi) * span
    return bounded_mean_bounds(means, side, side, bounds=bounds, seed=seed)


def _suite_k(
    estimator_name: str,
    passed_by_case: npt.ArrayLike,
    n_by_case: npt.ArrayLike,
    k: int,
    confidence: float,
    seed: int,
    resamples: int,
) -> SuitePassAtK:
    passed = np.asarray(passed_by_case, dtype=np.int64).ravel()
    n = np.asarray(n_by_case, dtype=np.int64).ravel()
    if passed.shape != n.shape:
        raise ConfigError("passed_by_case and n_by_case need one count per case each")
    check_open_unit("confidence", confidence)
    estimator = pass_at_k if estimator_name == "pass@k" else pass_hat_k
    # Cases share few distinct (n, passed) pairs: each pair's estimate is computed once, by
    # the one per-case estimator, and spread back to its cases.
    pairs, where = np.unique(np.stack([n, passed]), axis=1, return_inverse=True)
    estimates = [estimator(int(ni), int(ci), k).value for ni, ci in pairs.T]
    per_case = np.array([np.nan if v is None else v for v in estimates])[where.ravel()]
    kept = per_case[~np.isnan(per_case)]
    excluded = int(per_case.size - kept.size)
    if kept.size == 0:
        return SuitePassAtK(k, None, None, 0, excluded)
    summary = clustered_mean(
        kept,
        np.ones(kept.size, dtype=np.int64),
        confidence,
        SuiteInterval.BETTING,
        seed=seed,
        resamples=resamples,
        pass_rates=False,
    )
    return SuitePassAtK(k, summary.mean, summary.interval, int(kept.size), excluded)


def suite_pass_at_k(
    passed_by_case: npt.ArrayLike,
    n_by_case: npt.ArrayLike,
    k: int,
    confidence: float = 0.95,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> SuitePassAtK:
    """A suite's pass@k: the unbiased per-case pass@k averaged over cases.

    Per case, 1 − C(n − c, k) / C(n, k) (Chen et al. 2021, arXiv:2107.03374, via
    :func:`pass_at_k`); the suite figure is their mean over cases with at least k trials
    (Yao et al. 2024, "τ-bench", arXiv:2406.12045, average over tasks), the others counted in
    ``excluded``. The interval is the betting interval of the per-case estimates (each in
    [0, 1]; see :func:`clustered_mean`), which keeps its level at every number of cases.

    Args:
        passed_by_case: Passing trials per case.
        n_by_case: Trials per case.
        k: Tries, ≥ 1.
        confidence: Two-sided confidence level in (0, 1).
        seed: Fixes the order the betting interval feeds the cases in.
        resamples: Unused by the betting interval (checked: at least 100).

    Returns:
        The estimate and interval (unpack as a pair), with the cases used and excluded.
    """
    return _suite_k("pass@k", passed_by_case, n_by_case, k, confidence, seed, resamples)


def suite_pass_hat_k(
    passed_by_case: npt.ArrayLike,
    n_by_case: npt.ArrayLike,
    k: int,
    confidence: float = 0.95,
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> SuitePassAtK:
    """A suite's pass^k: the unbiased per-case C(c, k) / C(n, k) averaged over cases.

    τ-bench's reliability figure (Yao et al. 2024, arXiv:2406.12045), per case by
    :func:`pass_hat_k`; otherwise as :func:`suite_pass_at_k`.
    """
    return _suite_k("pass^k", passed_by_case, n_by_case, k, confidence, seed, resamples)


__all__ = [
    "CLUSTER_METHODS",
    "ClusteredMean",
    "SuitePassAtK",
    "clustered_mean",
    "suite_pass_at_k",
    "suite_pass_hat_k",
]

"""A mean score corrected by people's scores of some trials: prediction-powered inference.

The judge scores every trial; people score some of them. PPI++ (Angelopoulos, Duchi & Zrnic
2023, "PPI++: Efficient prediction-powered inference", arXiv:2311.01453) estimates the mean of
people's scores as the mean of people's scores on the labelled trials, plus λ times the judge's
mean on the other trials less its mean on the labelled ones. The judge's error cancels in
expectation whatever λ; λ is tuned to the variance it saves (λ = 0: people's scores alone;
λ = 1: the original PPI, Angelopoulos et al. 2023, Science 382:669). The interval is the normal
one of that estimate: valid as the labelled and unlabelled counts grow (a large-sample method).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.errors import ConfigError, InsufficientDataError
from assay.stats.base import check_open_unit
from assay.stats.intervals import Interval

_METHOD = "ppi++"


@dataclass(frozen=True, slots=True)
class PredictionPoweredMean:
    """The mean of people's scores, estimated with the judge's scores of every trial."""

    estimate: float
    """The PPI++ estimate."""
    interval: Interval
    """Its normal interval (``method`` ``ppi++``)."""
    tuning: float
    """λ in [0, 1]: how much the judge's scores are leaned on."""
    labelled: int
    """Trials scored by people (and the judge)."""
    unlabelled: int
    """Trials scored by the judge only."""
    judge_mean: float
    """The judge's mean over every trial (the uncorrected figure)."""


def ppi_mean(
    human: npt.ArrayLike,
    judge_labelled: npt.ArrayLike,
    judge_unlabelled: npt.ArrayLike,
    confidence: float = 0.95,
) -> PredictionPoweredMean:
    """The PPI++ mean of people's scores, with power tuning.

    Args:
        human: People's scores of the labelled trials.
        judge_labelled: The judge's scores of the same trials, in the same order.
        judge_unlabelled: The judge's scores of the trials people did not score.
        confidence: Two-sided confidence of the interval.

    Returns:
        The estimate, its interval, λ and the counts.

    Raises:
        InsufficientDataError: Fewer than two labelled trials, or no unlabelled one.
        ConfigError: Mismatched lengths or a confidence outside (0, 1).
    """
    from scipy import stats as sps

    y = np.asarray(human, dtype=float)
    f = np.asarray(judge_labelled, dtype=float)
    g = np.asarray(judge_unlabelled, dtype=float)
    if y.shape != f.shape or y.ndim != 1 or g.ndim != 1:
        raise ConfigError("human and judge scores of the labelled trials must pair one to one")
    check_open_unit("confidence", confidence)
    n, big_n = y.size, g.size
    if n < 2 or big_n < 1:
        raise InsufficientDataError(
            f"PPI needs ≥ 2 trials scored by people and ≥ 1 not (got {n} and {big_n})"
        )
    every = np.concatenate([f, g])
    spread = float(every.var(ddof=1)) if every.size > 1 else 0.0
    covariance = float(np.cov(y, f, ddof=1)[0, 1])
    # PPI++'s variance-minimising λ (their eq. for the mean), kept in [0, 1].
    tuning = 0.0 if spread == 0 else covariance / ((1 + n / big_n) * spread)
    tuning = min(max(tuning, 0.0), 1.0)
    estimate = float(y.mean() + tuning * (g.mean() - f.mean()))
    residual = y - tuning * f
    variance = (
        float(residual.var(ddof=1)) / n
        + tuning**2 * float(g.var(ddof=1) if big_n > 1 else 0.0) / big_n
    )
    z = float(sps.norm.isf((1 - confidence) / 2))
    half = z * float(np.sqrt(variance))
    return PredictionPoweredMean(
        estimate=estimate,
        interval=Interval(estimate - half, estimate + half, confidence, _METHOD),
        tuning=tuning,
        labelled=n,
        unlabelled=big_n,
        judge_mean=float(every.mean()),
    )

"""How well a judge agrees with people: sensitivity, specificity and Cohen's kappa.

A judge (an LLM grading a trial ``pass`` or ``fail``) is compared with human labels of the same
trials. Its **sensitivity** is the share of the trials people passed that it passed too, its
**specificity** the share of the trials people failed that it failed too; each with its exact
(Clopper–Pearson) interval. **Cohen's kappa** is agreement beyond chance, with the large-sample
interval of Fleiss, Cohen & Everitt (1969).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from assay.choices import IntervalMethod
from assay.errors import ConfigError
from assay.stats.base import check_open_unit
from assay.stats.intervals import Interval, proportion_interval


@dataclass(frozen=True, slots=True)
class Kappa:
    """Cohen's kappa with its interval."""

    estimate: float
    """(observed agreement − chance agreement) / (1 − chance agreement); NaN when chance
    agreement is 1 (every label the same on both sides)."""
    interval: Interval | None
    """Its normal interval with the standard error of Fleiss, Cohen & Everitt (1969), clipped
    to [−1, 1]; None when the estimate is NaN."""


@dataclass(frozen=True, slots=True)
class Agreement:
    """A binary judge against human labels of the same trials: the 2×2 table and its figures.

    "Positive" is a pass: ``true_pass`` counts trials both passed, ``false_pass`` trials the
    judge passed and people failed, and so on.
    """

    true_pass: int
    """People passed, the judge passed."""
    false_fail: int
    """People passed, the judge failed."""
    false_pass: int
    """People failed, the judge passed."""
    true_fail: int
    """People failed, the judge failed."""
    confidence: float
    """Two-sided confidence of the intervals."""

    def __post_init__(self) -> None:
        counts = (self.true_pass, self.false_fail, self.false_pass, self.true_fail)
        if any(k < 0 for k in counts):
            raise ConfigError(f"agreement counts must be ≥ 0 (got {counts})")
        check_open_unit("confidence", self.confidence)

    @property
    def labelled(self) -> int:
        """Trials with a human label."""
        return self.true_pass + self.false_fail + self.false_pass + self.true_fail

    @property
    def human_passed(self) -> int:
        """Trials people passed."""
        return self.true_pass + self.false_fail

    @property
    def human_failed(self) -> int:
        """Trials people failed."""
        return self.false_pass + self.true_fail

    @property
    def sensitivity(self) -> float | None:
        """P(judge passes | people pass); None without a trial people passed."""
        return self.true_pass / self.human_passed if self.human_passed else None

    @property
    def specificity(self) -> float | None:
        """P(judge fails | people fail); None without a trial people failed."""
        return self.true_fail / self.human_failed if self.human_failed else None

    @property
    def sensitivity_interval(self) -> Interval | None:
        """Clopper–Pearson interval of the sensitivity (None without a trial people passed)."""
        if not self.human_passed:
            return None
        return proportion_interval(
            self.true_pass, self.human_passed, self.confidence, IntervalMethod.CLOPPER_PEARSON
        )

    @property
    def specificity_interval(self) -> Interval | None:
        """Clopper–Pearson interval of the specificity (None without a trial people failed)."""
        if not self.human_failed:
            return None
        return proportion_interval(
            self.true_fail, self.human_failed, self.confidence, IntervalMethod.CLOPPER_PEARSON
        )

    @property
    def kappa(self) -> Kappa:
        """Cohen's kappa of the 2×2 table, with its interval."""
        table = np.array(
            [[self.true_pass, self.false_fail], [self.false_pass, self.true_fail]], dtype=float
        )
        return cohen_kappa(table, self.confidence)


def cohen_kappa(table: npt.ArrayLike, confidence: float = 0.95) -> Kappa:
    """Cohen's kappa of a k×k agreement table, with its large-sample interval.

    Cohen (1960), Educ. Psychol. Meas. 20:37; the standard error is the large-sample one of
    Fleiss, Cohen & Everitt (1969), Psychol. Bull. 72:323 (``std_kappa`` of
    ``statsmodels.stats.inter_rater.cohens_kappa``, which the tests compare with).

    Args:
        table: Counts, rows one rater's categories and columns the other's, in the same order.
        confidence: Two-sided confidence of the interval.

    Returns:
        The estimate and its interval (estimate ± z·SE, clipped to [−1, 1]).
    """
    from scipy import stats as sps

    counts = np.asarray(table, dtype=float)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1] or (counts < 0).any():
        raise ConfigError("kappa needs a square table of counts ≥ 0")
    total = counts.sum()
    if total == 0:
        return Kappa(float("nan"), None)
    p = counts / total
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    observed = float(np.trace(p))
    chance = float(rows @ cols)
    if chance >= 1:
        return Kappa(float("nan"), None)
    kappa = (observed - chance) / (1 - chance)
    diagonal = np.diag(p)
    inside = float(np.sum(diagonal * (1 - (rows + cols) * (1 - kappa)) ** 2))
    outside = (1 - kappa) ** 2 * float(
        np.sum(p * (cols[:, None] + rows[None, :]) ** 2) - np.sum(diagonal * (cols + rows) ** 2)
    )
    correction = (kappa - chance * (1 - kappa)) ** 2
    variance = max(inside + outside - correction, 0.0) / ((1 - chance) ** 2 * total)
    z = float(sps.norm.isf((1 - confidence) / 2))
    half = z * float(np.sqrt(variance))
    interval = Interval(max(kappa - half, -1.0), min(kappa + half, 1.0), confidence, "fleiss")
    return Kappa(float(kappa), interval)

"""The typed results of a verdict corrected for the judge's error (see :mod:`._judge_error`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assay.analysis import Grader
from assay.judge._threshold import Verdict
from assay.stats import Interval
from assay.stats.judges import Agreement, CorrectedRate, PredictionPoweredMean


@dataclass(frozen=True, slots=True)
class JudgeAgreement:
    """The judge against people over a set of labelled trials."""

    agreement: Agreement
    """The 2×2 table with sensitivity, specificity and kappa."""
    evaluations: tuple[str, ...]
    """The evaluations the labels grade."""


@dataclass(frozen=True, slots=True)
class JudgeError:
    """A test's verdict read on the corrected rate, with the judge's own figure beside it."""

    corrected: CorrectedRate
    """The corrected rate among the trials the judge graded (error trials apart)."""
    judge_rate: float | None
    """The judge's pass rate (passed / n), uncorrected."""
    judge_interval: Interval | None
    """The interval the judge's rate alone would be judged by."""
    judge_verdict: Verdict
    """The verdict the judge's rate alone would give."""
    used: Agreement
    """The agreement the correction used (every labelled trial of the analysis)."""
    test_agreement: Agreement | None
    """The judge against people on this test's own labelled trials; None without any."""
    graded_share: float
    """Share of the counted trials the judge graded (1 − error trials' share when errors
    count as failures): the corrected rate and interval are scaled by it."""


@dataclass(frozen=True, slots=True)
class ScoreCorrection:
    """A test's mean score of one evaluation, corrected by people's scores (PPI++)."""

    evaluation: str
    """The evaluation the judge scores."""
    mean: PredictionPoweredMean
    """The corrected mean with its interval, λ, the counts and the judge's own mean."""


@dataclass(frozen=True, slots=True)
class SelfAgreement:
    """The judge against itself: trials it graded more than once, and how often it flipped."""

    evaluation: str
    """The evaluation."""
    trials: int
    """Trials graded more than once."""
    flipped: int
    """Of those, trials whose grades disagree."""
    flip_rate: float
    """flipped / trials."""
    interval: Interval
    """Clopper–Pearson interval of the flip rate."""


@dataclass(frozen=True, slots=True)
class JudgeReport:
    """The judge's agreement with people, for the whole analysis."""

    overall: JudgeAgreement
    """Over every labelled trial (what each correction used)."""
    by_evaluation: Mapping[str, Agreement]
    """Over the trials labelled for each evaluation."""
    labels: int
    """Labels read from the file."""
    labelled_trials: int
    """Trials they matched."""
    self_agreement: tuple[SelfAgreement, ...] = ()
    """Per labelled evaluation the judge graded some trial of more than once: its flip rate."""
    min_agreement: float | None = None
    """The kappa the judge must reach (``--min-agreement``); None: not asked."""
    graders: tuple[Grader, ...] = ()
    """Which judge graded the labelled trials (model, prompt version), as its records say."""

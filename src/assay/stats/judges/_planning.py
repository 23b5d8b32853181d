"""How many human labels a verdict corrected for the judge's error needs (``assay plan``).

At an assumed true pass rate, judge sensitivity and specificity, and number of trials, the
chance that the corrected interval (:func:`corrected_bounds`) gives the right verdict — PASS
when the true rate is at or above the threshold, FAIL when below — grows with the labels, drawn
at random from the trials. It is estimated by a seeded simulation of the trials and the labels;
the plan is the fewest labels (found by doubling, then bisection) whose estimate reaches the
wanted probability.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from assay.errors import ConfigError
from assay.stats.base import check_probability, smallest_passing
from assay.stats.judges._correction import corrected_bounds


@dataclass(frozen=True, slots=True)
class LabelPlan:
    """The human labels a corrected verdict needs."""

    labels: int | None
    """Fewest labels with which the right verdict comes with the wanted probability; None when
    even every trial labelled does not reach it (more trials are needed too)."""
    probability: float | None
    """The simulated probability of the right verdict with that many labels."""
    verdict: str
    """The right verdict at the assumed rate: ``PASS`` or ``FAIL``."""
    judge_rate: float
    """The pass rate the judge shows at the assumed rate: Se·π + (1 − Sp)(1 − π)."""
    repetitions: int
    """Simulated repetitions per label count (the probability's Monte Carlo error is about
    √(p(1 − p)/repetitions))."""


def right_verdict_probability(
    labels: int,
    threshold: float,
    expected: float,
    sensitivity: float,
    specificity: float,
    trials: int,
    confidence: float = 0.95,
    repetitions: int = 400,
    seed: int = 0,
) -> float:
    """The simulated chance of the right corrected verdict with ``labels`` random labels."""
    rng = np.random.default_rng(seed)
    cells = [
        expected * sensitivity,
        expected * (1 - sensitivity),
        (1 - expected) * (1 - specificity),
        (1 - expected) * specificity,
    ]
    tp, fn, fp, tn = rng.multinomial(labels, cells, size=repetitions).T
    apparent = expected * sensitivity + (1 - expected) * (1 - specificity)
    passed = tp + fp + rng.binomial(trials - labels, apparent, size=repetitions)
    low, high, _ = corrected_bounds(passed, trials, tp, fn, fp, tn, confidence)
    right = low >= threshold if expected >= threshold else high < threshold
    return float(np.mean(right))


def plan_labels(
    threshold: float,
    expected: float,
    sensitivity: float,
    specificity: float,
    trials: int,
    power: float = 0.80,
    confidence: float = 0.95,
    repetitions: int = 400,
    seed: int = 0,
) -> LabelPlan:
    """The fewest random human labels for the right corrected verdict with probability ``power``.

    Args:
        threshold: The required pass rate.
        expected: The true pass rate assumed.
        sensitivity: The judge's sensitivity assumed.
        specificity: The judge's specificity assumed.
        trials: Trials the judge grades (labels are drawn from them).
        power: Wanted probability of the right verdict.
        confidence: Two-sided confidence of the corrected interval.
        repetitions: Simulated repetitions per label count.
        seed: Seed of the simulation (the plan is reproducible).
    """
    for name, value in (
        ("threshold", threshold),
        ("expected", expected),
        ("sensitivity", sensitivity),
        ("specificity", specificity),
    ):
        check_probability(name, value)
    if sensitivity + specificity <= 1:
        raise ConfigError("sensitivity + specificity must exceed 1: the judge must beat chance")
    if trials < 2 or not 0 < power < 1:
        raise ConfigError(f"need trials ≥ 2 and power in (0, 1) (got {trials}, {power})")

    def reaches(labels: int) -> bool:
        return (
            right_verdict_probability(
                labels,
                threshold,
                expected,
                sensitivity,
                specificity,
                trials,
                confidence,
                repetitions,
                seed,
            )
            >= power
        )

    labels = smallest_passing(reaches, trials)
    probability = (
        None
        if labels is None
        else right_verdict_probability(
            labels,
            threshold,
            expected,
            sensitivity,
            specificity,
            trials,
            confidence,
            repetitions,
            seed,
        )
    )
    return LabelPlan(
        labels=labels,
        probability=probability,
        verdict="PASS" if expected >= threshold else "FAIL",
        judge_rate=expected * sensitivity + (1 - expected) * (1 - specificity),
        repetitions=repetitions,
    )

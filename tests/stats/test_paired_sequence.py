"""The betting sequence with known bounds, and the paired difference over cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.errors import ConfigError, InputError
from assay.stats import (
    BoundedMeanSequence,
    PairedDecision,
    PairedDifferenceSequence,
    case_order,
    decide_paired,
)


def test_bounds_other_than_zero_one_rescale_exactly() -> None:
    # The same values on [0, 1] and on [-1, 1] (x -> 2x - 1) give the same interval, mapped.
    rng = np.random.default_rng(2)
    values = rng.beta(3, 2, 150)
    unit, wide = BoundedMeanSequence(0.9), BoundedMeanSequence(0.9, -1.0, 1.0)
    unit.add(values)
    wide.add(2 * values - 1)
    low, high = unit.interval()
    assert wide.interval() == pytest.approx((2 * low - 1, 2 * high - 1), abs=1e-12)
    assert wide.mean == pytest.approx(2 * float(values.mean()) - 1)
    with pytest.raises(InputError, match=r"outside \[-1, 1\]"):
        wide.add([1.5])
    with pytest.raises(ConfigError):
        BoundedMeanSequence(0.9, 1.0, 1.0)


def _case_differences(rng: np.random.Generator, cases: int, trials: int) -> np.ndarray:
    # Case difficulty from Beta(2, 1); the current version 5 points worse on every case.
    base = rng.beta(2, 1, cases)
    current = np.clip(base - 0.05, 0, 1)
    return (rng.binomial(trials, current) - rng.binomial(trials, base)) / trials


def test_the_interval_covers_the_mean_difference_at_every_case() -> None:
    rng = np.random.default_rng(39)
    truth = _mean_true_difference()
    reps, misses = 200, 0
    for _ in range(reps):
        sequence = PairedDifferenceSequence(0.9)
        ever = False
        for difference in _case_differences(rng, 150, 3):
            sequence.add([difference])
            low, high = sequence.interval()
            ever |= not low <= truth <= high
        misses += ever
    assert misses / reps <= 0.1 + 3 * math.sqrt(0.09 / reps)


def _mean_true_difference() -> float:
    # E[clip(B - 0.05, 0, 1) - B] for B ~ Beta(2, 1) (density 2b): -0.05 + ∫_0^0.05 (0.05 - b) 2b db
    return -0.05 + 2 * (0.05**3 / 2 - 0.05**3 / 3)


def test_a_large_drop_is_shown_and_an_equal_pair_is_no_drop_of_delta() -> None:
    rng = np.random.default_rng(1)
    worse = PairedDifferenceSequence(0.95, delta=0.1)
    worse.add(rng.choice([-1.0, 0.0], size=400, p=[0.3, 0.7]))
    assert worse.decide() is PairedDecision.DROP
    same = PairedDifferenceSequence(0.95, delta=0.1)
    same.add(rng.choice([-1.0, 0.0, 1.0], size=2000, p=[0.05, 0.9, 0.05]))
    status = same.status()
    assert status.decision is PairedDecision.NO_DROP
    assert status.cases == 2000 and status.low > -0.1 and status.high > 0


def test_the_decision_rule() -> None:
    assert decide_paired(-0.2, -0.01) is PairedDecision.DROP
    assert decide_paired(-0.05, 0.02, delta=0.1) is PairedDecision.NO_DROP
    assert decide_paired(-0.15, 0.02, delta=0.1) is PairedDecision.UNDECIDED
    assert decide_paired(-0.03, -0.01, margin=0.05) is PairedDecision.WITHIN_MARGIN
    assert decide_paired(-0.3, -0.1, margin=0.05) is PairedDecision.BEYOND_MARGIN
    assert decide_paired(-0.1, 0.0, margin=0.05) is PairedDecision.UNDECIDED
    with pytest.raises(ConfigError):
        decide_paired(0, 0, delta=0)
    with pytest.raises(ConfigError):
        PairedDifferenceSequence(margin=1.5)


def test_the_case_order_is_a_seeded_permutation() -> None:
    order = case_order(50, seed=4)
    assert sorted(order.tolist()) == list(range(50))
    assert (order == case_order(50, seed=4)).all()
    assert not (order == case_order(50, seed=5)).all()


def test_the_interval_is_the_running_intersection() -> None:
    rng = np.random.default_rng(8)
    values = rng.choice([-1.0, 0.0, 1.0], size=300, p=[0.2, 0.7, 0.1])
    paired = PairedDifferenceSequence(0.9)
    plain = BoundedMeanSequence(0.9, -1.0, 1.0)
    lows, highs = [], []
    for value in values:
        paired.add([value])
        plain.add([value])
        low, high = plain.interval()
        lows.append(low)
        highs.append(high)
        assert paired.interval() == (max(lows), min(highs))
    with pytest.raises(InputError):
        paired.add([0.5, 2.0])
    assert paired.status().cases == 300  # nothing of a refused batch was fed

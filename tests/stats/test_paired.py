"""Paired comparison of two versions: McNemar (statsmodels), sign flips, bounds, power."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import (
    mcnemar_p_value,
    mcnemar_power,
    paired_comparison,
    paired_mean_difference,
    sign_flip_p_value,
)
from assay.stats.suites._paired_power import BETTING_DROP_RESOLUTION


@pytest.mark.parametrize("drops, gains", [(5, 1), (9, 3), (12, 11), (20, 2), (3, 0), (7, 7)])
def test_mcnemar_is_half_the_two_sided_statsmodels_p(drops: int, gains: int) -> None:
    two_sided = mcnemar([[10, drops], [gains, 10]], exact=True).pvalue
    assert min(1.0, 2 * mcnemar_p_value(drops, gains)) == pytest.approx(two_sided, rel=1e-12)


def test_one_trial_per_case_uses_mcnemar_and_equals_the_exact_sign_flip() -> None:
    base = np.array([1] * 14 + [0] * 6 + [1] * 20)
    current = np.array([0] * 9 + [1] * 5 + [1] * 2 + [0] * 4 + [1] * 20)
    got = paired_comparison(base, np.ones(40), current, np.ones(40))
    assert got.test == "mcnemar-exact" and got.p_value_error is None
    assert got.p_value == pytest.approx(mcnemar_p_value(9, 2))
    p, _, test = sign_flip_p_value((current - base).astype(float))
    assert test == "sign-flip-exact" and p == pytest.approx(got.p_value, rel=1e-12)


def test_exact_sign_flip_equals_brute_force_and_scipy() -> None:
    rng = np.random.default_rng(1)
    d = rng.choice([-1, -2 / 3, -1 / 3, 0, 1 / 3, 2 / 3], 12)
    p, error, test = sign_flip_p_value(d)
    flips = np.array(list(itertools.product([-1, 1], repeat=d.size)))
    brute = np.mean((flips * np.abs(d)).sum(axis=1) <= d.sum() + 1e-12)
    assert test == "sign-flip-exact" and error is None
    assert p == pytest.approx(brute, rel=1e-12)
    base = rng.uniform(0, 1, 12)
    res = sps.permutation_test(
        (base + d, base),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        alternative="less",
        n_resamples=np.inf,
    )
    assert paired_mean_difference(base, base + d).p_value == pytest.approx(res.pvalue, rel=1e-9)


def test_monte_carlo_sign_flip_is_near_exact_and_states_its_error() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(-0.1, 0.5, 22)
    sums = np.zeros(1)
    for value in np.abs(d):
        sums = np.concatenate([sums + value, sums - value])
    exact = float(np.mean(sums <= d.sum() + 1e-9))
    p, error, test = sign_flip_p_value(d, seed=3, resamples=20000)
    assert test == "sign-flip-monte-carlo" and error is not None
    assert abs(p - exact) < 4 * error
    assert sign_flip_p_value(d, seed=3, resamples=20000) == (p, error, test)


def test_paired_interval_equals_scipy_ttest_rel() -> None:
    rng = np.random.default_rng(4)
    base = rng.uniform(0, 100, 35)
    current = base + rng.normal(-3, 10, 35)
    got = paired_mean_difference(base, current, confidence=0.9)
    ci = sps.ttest_rel(current, base).confidence_interval(0.9)
    assert (got.interval.low, got.interval.high) == pytest.approx((ci.low, ci.high), rel=1e-10)
    one = sps.ttest_rel(current, base, alternative="less").confidence_interval(0.95)
    assert got.drop_lower == pytest.approx(-one.high, rel=1e-10)
    upper = sps.ttest_rel(current, base, alternative="greater").confidence_interval(0.95)
    assert got.drop_upper == pytest.approx(-upper.low, rel=1e-10)


def test_no_spread_still_gives_a_bound_never_a_point() -> None:
    got = paired_comparison(np.ones(30), np.ones(30), np.ones(30), np.ones(30))
    assert got.difference == 0 and got.p_value == 1.0
    # 30 unchanged cases cannot rule out a few cases that would move a full point
    assert 0.05 < got.drop_upper < 0.3 and got.drop_lower < 0
    assert got.interval.method == "paired-betting"


def simulate(
    rng: np.random.Generator, cases: int, k: int, drop: float, reps: int
) -> tuple[np.ndarray, ...]:
    p = rng.beta(2, 1, (reps, cases))
    base = rng.binomial(k, p)
    current = rng.binomial(k, np.clip(p - drop, 0, 1))
    return base, current


@pytest.mark.parametrize("k", [1, 3])
def test_type_one_error_within_alpha(k: int) -> None:
    rng = np.random.default_rng(5)
    reps = 300
    base, current = simulate(rng, 40, k, 0.0, reps)
    n = np.full(40, k)
    rejected = sum(
        paired_comparison(b, n, c, n, resamples=999).p_value < 0.05
        for b, c in zip(base, current, strict=True)
    )
    assert rejected / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


@pytest.mark.slow  # a simulation of several seconds
def test_non_inferiority_bound_errs_at_most_alpha_at_the_margin() -> None:
    # True drop exactly the margin: "drop_upper < margin" (a PASS) must happen <= alpha.
    rng = np.random.default_rng(6)
    reps, margin = 400, 0.1
    p = rng.uniform(0.3, 0.9, (reps, 60))
    base = rng.binomial(3, p)
    current = rng.binomial(3, p - margin)
    n = np.full(60, 3)
    wrong = sum(
        paired_comparison(b, n, c, n, resamples=200).drop_upper < margin
        for b, c in zip(base, current, strict=True)
    )
    assert wrong / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_mcnemar_power_equals_simulation() -> None:
    rng = np.random.default_rng(7)
    cases, delta, psi, reps = 80, 0.1, 0.3, 20000
    outcome = rng.choice(3, (reps, cases), p=[(psi + delta) / 2, (psi - delta) / 2, 1 - psi])
    drops, gains = (outcome == 0).sum(axis=1), (outcome == 1).sum(axis=1)
    rejected = np.mean(sps.binom.sf(drops - 1, drops + gains, 0.5) < 0.05)
    expected = mcnemar_power(cases, delta, psi, 0.05)
    assert abs(rejected - expected) < 4 * math.sqrt(expected * (1 - expected) / reps)


@pytest.mark.slow  # a simulation of several seconds
def test_betting_power_is_close_to_the_simulated_rejection_rate() -> None:
    # Power stated from data without a drop vs the rate at which a real drop is detected.
    rng = np.random.default_rng(8)
    cases, k, delta, reps = 80, 3, 0.1, 200
    n = np.full(cases, k)
    base, current = simulate(rng, cases, k, 0.0, reps)
    stated = np.mean(
        [
            paired_comparison(b, n, c, n, delta=delta, resamples=200).power
            for b, c in zip(base[:50], current[:50], strict=True)
        ]
    )
    base, current = simulate(rng, cases, k, delta, reps)
    detected = np.mean(
        [
            paired_comparison(b, n, c, n, resamples=999).p_value < 0.05
            for b, c in zip(base, current, strict=True)
        ]
    )
    # Stated from data without the drop; the MC error of `detected` is ~0.03.
    assert abs(stated - detected) < 0.1


def test_min_detectable_drop_has_the_required_power() -> None:
    rng = np.random.default_rng(9)
    base, current = simulate(rng, 200, 3, 0.0, 1)
    n = np.full(200, 3)
    got = paired_comparison(base[0], n, current[0], n)
    assert got.min_detectable_drop is not None
    again = paired_comparison(base[0], n, current[0], n, delta=got.min_detectable_drop)
    assert again.power >= 0.8
    step = BETTING_DROP_RESOLUTION + 1e-4  # the bisection's resolution for the betting test
    below = paired_comparison(base[0], n, current[0], n, delta=got.min_detectable_drop - step)
    assert below.power < 0.8


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 4), st.integers(0, 4), st.integers(1, 4), st.integers(0, 4)),
        min_size=1,
        max_size=30,
    )
)
def test_bounds_are_ordered_and_p_is_a_probability(cases: list) -> None:
    bn = np.array([c[0] for c in cases])
    bx = np.array([min(c[1], c[0]) for c in cases])
    cn = np.array([c[2] for c in cases])
    cx = np.array([min(c[3], c[2]) for c in cases])
    got = paired_comparison(bx, bn, cx, cn, resamples=200)
    assert 0 <= got.p_value <= 1 and 0 <= got.power <= 1
    assert -1 <= got.interval.low <= got.difference <= got.interval.high <= 1
    assert got.drop_lower <= -got.difference <= got.drop_upper


def test_bad_input() -> None:
    with pytest.raises(ConfigError):
        paired_comparison([2], [1], [0], [1])
    with pytest.raises(ConfigError):
        paired_comparison([1, 1], [1, 1], [1], [1])
    with pytest.raises(InsufficientDataError):
        paired_comparison([], [], [], [])
    with pytest.raises(ConfigError):
        paired_comparison([1], [1], [1], [1], delta=0)


def test_monte_carlo_shortcut_for_few_distinct_differences_matches_flipping_cases() -> None:
    # Few distinct sizes: binomial counts per size; all distinct: one bit per case. Same law.
    rng = np.random.default_rng(10)
    d = rng.choice([-2 / 3, -1 / 3, 1 / 3, 2 / 3], 120)
    p_few, error, _ = sign_flip_p_value(d, seed=1, resamples=20000)
    p_bits, _, _ = sign_flip_p_value(d + rng.normal(0, 1e-9, d.size), seed=1, resamples=20000)
    assert error is not None and 0.05 < p_few < 0.95
    assert abs(p_few - p_bits) < 5 * error


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)), min_size=1, max_size=40),
    st.floats(0.5, 0.99),
)
def test_paired_mean_difference_properties(pairs: list, confidence: float) -> None:
    base = np.array([b for b, _ in pairs])
    current = np.array([c for _, c in pairs])
    got = paired_mean_difference(base, current, confidence=confidence, resamples=200)
    assert got.interval.low <= got.difference <= got.interval.high
    assert got.drop_lower <= -got.difference <= got.drop_upper
    assert 0 < got.p_value <= 1
    swapped = paired_mean_difference(current, base, confidence=confidence, resamples=200)
    assert swapped.difference == pytest.approx(-got.difference, abs=1e-9)

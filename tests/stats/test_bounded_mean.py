"""The fixed-n betting interval and test of a bounded mean, and the suite figures built on it.

Each guarantee is checked by a seeded simulation on the shapes an audit found the asymptotic
intervals and tests failing on (benchmarks/bench_audit_suite_interval.py and
benchmarks/bench_audit_paired.py print the full tables).
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import ConfigError
from assay.stats import (
    bounded_mean_bounds,
    bounded_mean_p_value,
    case_order,
    clustered_mean,
    paired_comparison,
    proportion_bounds,
)
from assay.stats.intervals._bounded_mean import TRUNCATION, unit_lower_bounds


def capital_by_hand(x: np.ndarray, m: float, alpha: float) -> float:
    """Waudby-Smith & Ramdas's capital, one value at a time, written out independently."""
    n = x.size
    log_capital, total, squares, mu = 0.0, 0.0, 0.0, 0.5
    variance = 0.25
    for t, value in enumerate(x, start=1):
        stake = min(math.sqrt(2 * math.log(1 / alpha) / (n * variance)), TRUNCATION / m)
        log_capital += math.log(1 + stake * (value - m))
        total += value
        mu = (0.5 + total) / (t + 1)
        squares += (value - mu) ** 2
        variance = (0.25 + squares) / (t + 1)
    return log_capital


def test_lower_bound_is_where_the_capital_written_out_by_hand_reaches_one_over_alpha() -> None:
    rng = np.random.default_rng(1)
    values = rng.binomial(3, rng.beta(2, 1, 40)) / 3
    low, _ = bounded_mean_bounds(values, 0.025, 0.025, seed=7)
    fed = values[case_order(values.size, 7)]
    level = math.log(1 / 0.025)
    assert capital_by_hand(fed, low - 1e-6, 0.025) >= level
    assert capital_by_hand(fed, low + 1e-6, 0.025) < level
    assert 0 < low < values.mean()


def test_the_p_value_and_the_upper_bound_agree() -> None:
    rng = np.random.default_rng(2)
    for _ in range(20):
        values = np.clip(rng.uniform(-1, 1, 60) - 0.15, -1.0, 1.0)
        _, high = bounded_mean_bounds(values, 0.05, 0.05, bounds=(-1.0, 1.0))
        p = bounded_mean_p_value(values, 0.0, alpha=0.05, bounds=(-1.0, 1.0))
        assert (p < 0.05) == (high < 0.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.integers(0, 5))
def test_bounds_hold_the_mean_within_the_range(values: list[float], seed: int) -> None:
    low, high = bounded_mean_bounds(values, 0.025, 0.025, seed=seed)
    assert 0.0 <= low <= float(np.mean(values)) + 1e-9
    assert float(np.mean(values)) - 1e-9 <= high <= 1.0
    wider = bounded_mean_bounds(values, 0.005, 0.005, seed=seed)
    assert wider[0] <= low + 1e-9 and wider[1] >= high - 1e-9


def test_bad_input_is_refused() -> None:
    with pytest.raises(ConfigError):
        bounded_mean_bounds([1.5], 0.05, 0.05)
    with pytest.raises(ConfigError):
        bounded_mean_bounds([0.5], 0.0, 0.05)
    with pytest.raises(ConfigError):
        bounded_mean_p_value([], 0.5)
    with pytest.raises(ConfigError):
        clustered_mean([0.5, 0.7], [2, 2], bounds=None)  # betting needs the bounds


def false_pass_rate(shape: str, cases: int, k: int, reps: int, seed: int) -> tuple[float, float]:
    """False PASS (lower bound >= the true mean) of the default suite interval, and its SE."""
    rng = np.random.default_rng(seed)
    if shape == "mostly-1":
        rates, mean = np.where(rng.random((reps, cases)) < 0.9, 1.0, 0.2), 0.92
    else:  # ceiling
        u = rng.random((reps, cases))
        rates = np.where(u < 0.7, 1.0, np.where(u < 0.8, 0.0, rng.beta(2, 2, (reps, cases))))
        mean = 0.8
    x = rng.binomial(k, rates) / k
    low = unit_lower_bounds(x[:, case_order(cases)], 0.025)
    assert clustered_mean(x[0], np.full(cases, k)).interval.low == pytest.approx(low[0])
    share = float(np.mean(low >= mean))
    return share, math.sqrt(max(share * (1 - share), 1e-4) / reps)


@pytest.mark.parametrize(
    "shape, cases, k", [("mostly-1", 30, 3), ("mostly-1", 300, 3), ("ceiling", 30, 3)]
)
def test_suite_interval_keeps_alpha_over_two_where_the_t_interval_did_not(
    shape: str, cases: int, k: int
) -> None:
    # The audit: cluster-t gave 7.3% (mostly-1, C = 30) and 6.0% (ceiling) false PASS.
    share, se = false_pass_rate(shape, cases, k, 1500, seed=cases + k)
    assert share <= 0.025 + 4 * se


def test_one_trial_per_case_reads_the_exact_clopper_pearson_interval() -> None:
    rng = np.random.default_rng(3)
    rates = (rng.random(100) < 0.92).astype(float)
    got = clustered_mean(rates, np.ones(100))
    low, high = proportion_bounds(rates.sum(), 100, 0.95, "clopper-pearson")
    assert got.interval.method == "cluster-clopper-pearson"
    assert (got.interval.low, got.interval.high) == pytest.approx((float(low), float(high)))
    scores = clustered_mean(rates, np.ones(100), pass_rates=False)
    assert scores.interval.method == "cluster-betting"


def test_same_seed_same_interval() -> None:
    rng = np.random.default_rng(4)
    rates = rng.binomial(3, rng.beta(2, 1, 50)) / 3
    sizes = np.full(50, 3)
    assert clustered_mean(rates, sizes, seed=3) == clustered_mean(rates, sizes, seed=3)


def test_paired_test_keeps_alpha_when_cases_are_not_exchangeable() -> None:
    # The audit: the baseline passes 90% of cases always and fails 10% always; the current
    # version passes every case with probability 0.9. Mean difference 0; the sign-flip test
    # rejected 7.4% of the time at C = 30.
    rng = np.random.default_rng(5)
    cases, k, reps = 30, 3, 1000
    n = np.full(cases, k)
    rejected = 0
    for i in range(reps):
        base = np.where(rng.random(cases) < 0.9, k, 0)
        current = rng.binomial(k, 0.9, cases)
        p = bounded_mean_p_value((current - base) / k, 0.0, bounds=(-1.0, 1.0))
        if i < 5:  # what the comparison reads
            result = paired_comparison(base, n, current, n)
            assert result.test == "betting" and result.p_value == pytest.approx(p, rel=1e-9)
        rejected += p < 0.05
    assert rejected / reps <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / reps)


def test_margin_pass_keeps_alpha_when_a_few_cases_break_completely() -> None:
    # The baseline passes every case; the change breaks each with probability 0.05: the true
    # drop is exactly the margin. The one-sided t bound gave a PASS 11.9% of the time (C = 100).
    rng = np.random.default_rng(6)
    cases, k, reps, margin = 100, 3, 2000, 0.05
    n = np.full(cases, k)
    current = np.where(rng.random((reps, cases)) < 0.05, 0, k)
    differences = (current - k) / k
    for i in range(3):  # drop_upper is minus the level-alpha lower bound of the difference
        low, _ = bounded_mean_bounds(differences[i], 0.05, 0.05, bounds=(-1.0, 1.0))
        assert paired_comparison(n, n, current[i], n).drop_upper == pytest.approx(-low)
    unit = (differences[:, case_order(cases)] + 1) / 2
    drop_upper = -(2 * unit_lower_bounds(unit, 0.05) - 1)
    passes = float(np.mean(drop_upper < margin))
    assert passes <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / reps)

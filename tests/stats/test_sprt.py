"""The sequential tests: boundaries, exact operating characteristics, simulated error rates."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from assay.errors import ConfigError
from assay.stats import (
    SPRT,
    ConfidenceSequenceTest,
    SequentialDecision,
    fixed_sample_design,
    operating_characteristics,
    sequential_test,
    simulate_sequential,
)

ALPHA, BETA = 0.05, 0.2


def test_sprt_boundaries_are_villes() -> None:
    test = SPRT(0.8, 0.1, ALPHA, BETA)
    assert (test.p0, test.p1) == (0.8, 0.9)
    assert test.upper == pytest.approx(math.log(20)) and test.lower == pytest.approx(math.log(0.2))
    # 26 straight passes: 26·log(9/8) = 3.06 ≥ log 20 = 3.00 > 25·log(9/8).
    assert test.state(25, 25).decision is SequentialDecision.CONTINUE
    assert test.state(26, 26).decision is SequentialDecision.PASS
    # three failures: 3·log(1/2) = -2.08 ≤ log 0.2 = -1.61 < 2·log(1/2).
    assert test.state(0, 2).decision is SequentialDecision.CONTINUE
    assert test.state(0, 3).decision is SequentialDecision.FAIL
    truncated = SPRT(0.8, 0.1, ALPHA, BETA, max_trials=10)
    assert truncated.state(9, 10).decision is SequentialDecision.INCONCLUSIVE


def test_zone_is_narrowed_near_one_and_bad_designs_are_config_errors() -> None:
    assert SPRT(0.95, 0.1).p1 == pytest.approx(0.975)
    for bad in (0.0, 1.0, -0.1):
        with pytest.raises(ConfigError):
            SPRT(bad)
    with pytest.raises(ConfigError):
        sequential_test("bayes", 0.8)
    with pytest.raises(ConfigError):
        sequential_test("sprt", 0.8, max_trials=0)
    with pytest.raises(ConfigError):
        SPRT(0.8).state(3, 2)


def test_fixed_design_matches_scipy() -> None:
    design = fixed_sample_design(0.8, 0.9, ALPHA, BETA)
    n, c = design.n, design.critical
    assert sps.binom.sf(c - 1, n, 0.8) <= ALPHA < sps.binom.sf(c - 2, n, 0.8)
    assert sps.binom.cdf(c - 1, n, 0.9) <= BETA
    for m in range(1, n):  # no smaller n works
        k = next(k for k in range(m + 2) if k > m or sps.binom.sf(k - 1, m, 0.8) <= ALPHA)
        assert k > m or sps.binom.cdf(k - 1, m, 0.9) > BETA


@pytest.mark.parametrize("method", ["sprt", "confidence-sequence"])
def test_exact_characteristics_agree_with_simulation(method: str) -> None:
    test = sequential_test(method, 0.8, max_trials=60)
    for p in (0.7, 0.85, 0.95):
        exact = operating_characteristics(test, p)
        decisions, trials = simulate_sequential(test, p, 4000, seed=11)
        se = math.sqrt(0.25 / 4000)
        assert abs(np.mean(decisions == 1) - exact.pass_probability) < 4 * se
        assert abs(np.mean(decisions == -1) - exact.fail_probability) < 4 * se
        assert abs(trials.mean() - exact.expected_trials) < 0.05 * exact.expected_trials + 0.5
        total = exact.pass_probability + exact.fail_probability + exact.inconclusive_probability
        assert total == pytest.approx(1.0)


@pytest.mark.parametrize("method", ["sprt", "confidence-sequence"])
def test_simulated_error_rates_hold_outside_the_indifference_zone(method: str) -> None:
    """Threshold 0.8, delta 0.1, alpha 0.05, beta 0.2 (the issue's design), fixed seed."""
    test = sequential_test(method, 0.8, delta=0.1, alpha=ALPHA, beta=BETA, max_trials=123)
    reps = 3000
    for i, p in enumerate((0.6, 0.7, 0.8)):
        decisions, _ = simulate_sequential(test, p, reps, seed=100 + i)
        wrong = float(np.mean(decisions == 1))
        assert wrong <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps), (p, wrong)
    for i, p in enumerate((0.9, 0.95, 1.0)):
        decisions, _ = simulate_sequential(test, p, reps, seed=200 + i)
        wrong = float(np.mean(decisions == -1))
        assert wrong <= BETA + 3 * math.sqrt(BETA * (1 - BETA) / reps), (p, wrong)


def test_sprt_saves_at_least_40_percent_outside_the_zone() -> None:
    fixed = fixed_sample_design(0.8, 0.9, ALPHA, BETA)
    test = sequential_test("sprt", 0.8, max_trials=fixed.n)
    rates = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
    mean_n = np.mean([operating_characteristics(test, p).expected_trials for p in rates])
    assert mean_n <= 0.6 * fixed.n
    # and the error rates are exact bounds at the zone's ends, not approximations
    assert operating_characteristics(test, 0.8).pass_probability <= ALPHA
    assert operating_characteristics(test, 0.9).fail_probability <= BETA


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=200).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    ),
    st.sampled_from(["sprt", "confidence-sequence"]),
)
def test_bounds_are_ordered_and_decisions_consistent(counts: tuple[int, int], method: str) -> None:
    successes, n = counts
    test = sequential_test(method, 0.8)
    state = test.state(successes, n)
    assert 0.0 <= state.low <= successes / n <= state.high <= 1.0
    if method == "confidence-sequence":
        if state.decision is SequentialDecision.PASS:
            assert state.low > 0.8 - 1e-6
        if state.decision is SequentialDecision.FAIL:
            assert state.high < 0.9 + 1e-6


def test_confidence_sequence_is_valid_under_optional_continuation() -> None:
    """Coverage of the lower bound holds at every n at once, at p = 0.8 (simulation)."""
    test = ConfidenceSequenceTest(0.8, max_trials=200)
    decisions, _ = simulate_sequential(test, 0.8, 3000, seed=5)
    assert np.mean(decisions == 1) <= ALPHA


def test_stats_does_not_load_polars() -> None:
    code = "import sys, assay.stats; print('polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_adaptive_benchmark_runs() -> None:
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_adaptive.py"
    done = subprocess.run(
        [sys.executable, str(script), "--reps", "300"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "fixed-N exact binomial test: n = 82, PASS iff >= 72 pass" in done.stdout
    assert " NO " not in done.stdout
    assert "sprt, max 82" in done.stdout and "(target >= 40%)" in done.stdout

"""Stopping rules and the verdicts after them: boundaries, exact characteristics, simulation.

Every verdict is the anytime-valid interval against the threshold; a rule decides only when to
stop. A wrong verdict is a PASS at a true rate at or below the threshold or a FAIL at one at or
above it: at most 1 - confidence = 5% (the sequence misses the true rate at some n at most that
often), however the test stopped.
"""

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
    BernoulliConfidenceSequence,
    ConfidenceSequenceTest,
    LegacyConfidenceSequenceTest,
    SequentialDecision,
    fixed_sample_design,
    operating_characteristics,
    pass_rate_sequence,
    sequential_test,
    simulate_sequential,
    tuned_prior_strength,
    wilson_interval,
)

ALPHA, BETA = 0.05, 0.2
CONFIDENCE = 0.95
RATES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)


def _wrong(p: float, pass_probability: float, fail_probability: float) -> float:
    """P(a wrong verdict): PASS at or below the threshold, FAIL at or above it."""
    return (pass_probability if p <= 0.8 else 0.0) + (fail_probability if p >= 0.8 else 0.0)


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
    for p in (0.6, 0.7, 0.85, 0.95, 1.0):
        exact = operating_characteristics(test, p)
        decisions, trials = simulate_sequential(test, p, 4000, seed=11)
        se = math.sqrt(0.25 / 4000)
        assert abs(np.mean(decisions == 1) - exact.pass_probability) < 4 * se
        assert abs(np.mean(decisions == -1) - exact.fail_probability) < 4 * se
        assert abs(trials.mean() - exact.expected_trials) < 0.05 * exact.expected_trials + 0.5
        total = exact.pass_probability + exact.fail_probability + exact.inconclusive_probability
        assert total == pytest.approx(1.0)


@pytest.mark.parametrize("method", ["confidence-sequence", "sprt"])
@pytest.mark.parametrize("max_trials", [50, 100, 200])
def test_wrong_verdicts_stay_within_the_stated_error_at_every_rate(
    method: str, max_trials: int
) -> None:
    """Exactly (no simulation error): at every true rate, for every maximum."""
    test = sequential_test(method, 0.8, max_trials=max_trials, confidence=CONFIDENCE)
    for p in RATES:
        oc = operating_characteristics(test, p)
        assert _wrong(p, oc.pass_probability, oc.fail_probability) <= 1 - CONFIDENCE, (p, oc)


@pytest.mark.parametrize("method", ["confidence-sequence", "sprt"])
def test_simulated_wrong_verdicts_stay_within_the_stated_error(method: str) -> None:
    test = sequential_test(method, 0.8, max_trials=100)
    reps = 3000
    bound = 1 - CONFIDENCE + 3 * math.sqrt(0.05 * 0.95 / reps)
    for i, p in enumerate((0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)):
        verdicts, _ = simulate_sequential(test, p, reps, seed=100 + i)
        wrong = _wrong(p, float(np.mean(verdicts == 1)), float(np.mean(verdicts == -1)))
        assert wrong <= bound, (p, wrong)


def test_the_default_stops_exactly_when_its_interval_lies_on_one_side() -> None:
    test = sequential_test("confidence-sequence", 0.8, max_trials=100)
    assert isinstance(test, ConfidenceSequenceTest)
    assert test.sequence == pass_rate_sequence(0.8, CONFIDENCE, 100)  # the one factory
    for n in (1, 5, 17, 28, 50, 99, 100):
        for s in range(n + 1):
            low, high = test.sequence.interval(s, n)  # root finding, not the rule's own test
            if min(abs(low - 0.8), abs(high - 0.8)) < 1e-9:
                continue  # on the boundary to rounding
            expected = 1 if low >= 0.8 else -1 if high < 0.8 else 0
            assert int(test.decide_many(np.array([s]), n)[0]) == expected, (s, n, low, high)
            decision = test.state(s, n).decision
            assert (decision is SequentialDecision.PASS) == (expected == 1)
            assert (decision is SequentialDecision.FAIL) == (expected == -1)


def test_an_sprt_stop_the_interval_does_not_support_is_inconclusive() -> None:
    sprt = SPRT(0.8, 0.1, ALPHA, BETA, max_trials=200)
    # Three straight failures: the SPRT decides FAIL (3·log(1/2) <= log 0.2) ...
    assert sprt.state(0, 3).decision is SequentialDecision.FAIL
    # ... but the 95% anytime interval after 0 of 3 still holds 80%: the verdict is open.
    low, high = sprt.sequence.interval(0, 3)
    assert low <= 0.8 <= high and int(sprt.sequence.side(0, 3, 0.8)) == 0
    # So at a true rate of 0.6 the SPRT stops early and almost never settles the verdict,
    # while the confidence sequence runs longer and FAILs.
    early = operating_characteristics(sprt, 0.6)
    default = sequential_test("confidence-sequence", 0.8, max_trials=200)
    settled = operating_characteristics(default, 0.6)
    assert early.expected_trials < settled.expected_trials
    assert early.inconclusive_probability > 0.99 and settled.fail_probability > 0.99


def test_clear_cases_use_at_most_40_percent_of_a_maximum_of_200() -> None:
    """The target where it is reachable; at a maximum of 100 on average over the clear rates."""
    test = sequential_test("confidence-sequence", 0.8, max_trials=200)
    for p in (0.5, 0.6, 0.95, 1.0):
        oc = operating_characteristics(test, p)
        assert oc.expected_trials <= 0.4 * 200, (p, oc)
        assert max(oc.pass_probability, oc.fail_probability) > 0.99  # and settled right
    at_100 = sequential_test("confidence-sequence", 0.8, max_trials=100)
    used = [operating_characteristics(at_100, p).expected_trials for p in (0.5, 0.6, 0.95, 1.0)]
    assert np.mean(used) <= 0.4 * 100


def test_the_prior_is_tuned_to_be_narrowest_at_the_maximum() -> None:
    # x - log(1 + x) = 2 log(1/alpha), x = N / strength: the normal-mixture optimum.
    strength = tuned_prior_strength(100, 0.95)
    x = 100 / strength
    assert x - math.log1p(x) == pytest.approx(2 * math.log(20), rel=1e-9)

    def width(rho: float, share: float) -> float:
        low, high = BernoulliConfidenceSequence(0.95, 0.8, rho).interval(round(share * 100), 100)
        return high - low

    def wilson(share: float) -> float:
        interval = wilson_interval(round(share * 100), 100)
        return interval.high - interval.low

    # At the maximum, over observed rates near the threshold, within 2% of the narrowest any
    # prior strength from 2 to 100 trials gives; about 1.5 times the fixed-n Wilson width.
    shares = (0.7, 0.8, 0.9)
    mean = float(np.mean([width(strength, q) for q in shares]))
    best = min(float(np.mean([width(rho, q) for q in shares])) for rho in np.geomspace(2, 100, 15))
    assert mean <= 1.02 * best
    assert 1.3 < mean / float(np.mean([wilson(q) for q in shares])) < 1.6


def test_the_legacy_rule_replays_the_decisions_it_recorded() -> None:
    legacy = LegacyConfidenceSequenceTest(0.8, 0.1, ALPHA, BETA, max_trials=60)
    lower = BernoulliConfidenceSequence(1 - ALPHA, 0.8, 10.0)
    upper = BernoulliConfidenceSequence(1 - BETA, 0.8, 10.0)
    for n in (5, 20, 40, 60):
        for s in range(n + 1):
            low, high = lower.interval(s, n)[0], upper.interval(s, n)[1]
            if min(abs(low - 0.8), abs(high - 0.9)) < 1e-9:
                continue
            expected = 1 if low >= 0.8 else -1 if high < 0.9 else 0
            assert int(legacy.decide_many(np.array([s]), n)[0]) == expected, (s, n)


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
    if method == "confidence-sequence":  # it stops exactly when the interval is on one side
        if state.decision is SequentialDecision.PASS:
            assert state.low >= 0.8 - 1e-9
        if state.decision is SequentialDecision.FAIL:
            assert state.high < 0.8 + 1e-9


def test_the_running_intersection_matches_the_pointwise_intervals_and_covers() -> None:
    sequence = pass_rate_sequence(0.8, 0.95, 60)
    rng = np.random.default_rng(3)
    outcomes = rng.random(60) < 0.85
    low, high = sequence.running_interval(outcomes)
    pointwise = [sequence.interval(int(outcomes[:k].sum()), k) for k in range(1, 61)]
    assert low == pytest.approx(max(a for a, _ in pointwise), abs=1e-9)
    assert high == pytest.approx(min(b for _, b in pointwise), abs=1e-9)
    assert sequence.running_interval([]) == (0.0, 1.0)
    # Coverage of the intersection at p = 0.8 (fixed-seed simulation): at least 95%.
    wide = pass_rate_sequence(0.8, 0.95, 100)
    streams = rng.random((500, 100)) < 0.8
    missed = [not (a <= 0.8 <= b) for a, b in map(wide.running_interval, streams)]
    assert np.mean(missed) <= 0.05


def test_stats_does_not_load_polars() -> None:
    code = "import sys, assay.stats; print('polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow  # a simulation of several seconds
def test_the_adaptive_benchmark_runs() -> None:
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_adaptive.py"
    done = subprocess.run(
        [sys.executable, str(script), "--reps", "300"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "== confidence-sequence, max 100" in done.stdout and "== fixed, max 200" in done.stdout
    assert " NO " not in done.stdout
    assert "rows with a wrong-verdict rate above the bound: 0" in done.stdout

"""Paired planning (Miller's decomposition), checked by simulation; pilot variances."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import paired_comparison, pilot_variances, plan_paired, sign_flip_power
from assay.stats.suites._paired_power import planned_betting_power


def test_each_option_is_the_smallest_number_of_cases() -> None:
    plan = plan_paired(0.05, between_case_sd=0.1, within_case_var=0.3)
    assert [o.trials_per_case for o in plan.options] == [1, 2, 3, 5, 10]
    for option in plan.options:
        assert option.cases is not None and option.power is not None
        assert option.power >= 0.8
        sd = option.sd_of_difference
        if option.trials_per_case == 1:  # McNemar, by the sign-flip approximation
            assert sign_flip_power(option.cases - 1, 0.05, sd, 0.05, False) < 0.8
        else:  # the betting test paired_comparison runs with K >= 2
            assert planned_betting_power(option.cases - 1, 0.05, sd, 0.05) < 0.8
        assert option.sd_of_difference == pytest.approx(
            np.sqrt(0.01 + 0.3 / option.trials_per_case)
        )
    cases = [o.cases for o in plan.options if o.trials_per_case >= 2]
    assert cases == sorted(cases, reverse=True)


@pytest.mark.slow
def test_planned_cases_reach_the_power_in_simulation() -> None:
    # Cases with difficulty Beta(2, 1), the current version 10 points lower on every case.
    rng = np.random.default_rng(1)
    k, delta = 3, 0.1
    pilot_p = rng.beta(2, 1, 20000)
    within = 2 * float(np.mean(pilot_p * (1 - pilot_p)))
    plan = plan_paired(delta, between_case_sd=0.0, within_case_var=within, trials_per_case=[k])
    cases = plan.options[0].cases
    assert cases is not None
    reps = 200
    n = np.full(cases, k)
    detected = 0
    for _ in range(reps):
        p = rng.beta(2, 1, cases)
        detected += (
            paired_comparison(
                rng.binomial(k, p), n, rng.binomial(k, np.clip(p - delta, 0, 1)), n, resamples=499
            ).p_value
            < 0.05
        )
    assert abs(detected / reps - 0.8) < 0.1


def test_pilot_recovers_the_variances() -> None:
    rng = np.random.default_rng(2)
    cases, k = 6000, 4
    p = rng.beta(2, 1, cases)
    shift = rng.normal(0, 0.1, cases)
    q = np.clip(p + shift, 0, 1)
    got = pilot_variances(
        rng.binomial(k, p), np.full(cases, k), rng.binomial(k, q), np.full(cases, k)
    )
    assert got.within_case_var == pytest.approx(np.mean(p * (1 - p) + q * (1 - q)), rel=0.05)
    assert got.between_case_sd == pytest.approx(np.std(q - p), rel=0.15)
    assert got.versions == 2 and got.note is None
    one = pilot_variances(rng.binomial(k, p), np.full(cases, k))
    assert one.between_case_sd == 0 and one.note is not None
    assert one.within_case_var == pytest.approx(2 * np.mean(p * (1 - p)), rel=0.05)


def test_refusals() -> None:
    with pytest.raises(ConfigError):
        plan_paired(0.05, between_case_sd=0.1, within_case_var=0.3, design="adaptive")
    with pytest.raises(ConfigError):
        plan_paired(0.0, between_case_sd=0.1, within_case_var=0.3)
    with pytest.raises(InsufficientDataError):
        pilot_variances([1, 0], [1, 1])


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(st.floats(0.02, 0.3), st.floats(0.0, 0.3), st.floats(0.01, 0.5))
def test_more_trials_never_need_more_cases_and_a_smaller_drop_needs_more(
    delta: float, between: float, within: float
) -> None:
    plan = plan_paired(delta, between_case_sd=between, within_case_var=within)
    cases = [o.cases for o in plan.options]
    assert all(c is not None for c in cases)
    # one test from K = 2 on (betting); K = 1 runs McNemar, which may need fewer cases
    assert cases[1:] == sorted(cases[1:], reverse=True)
    smaller = plan_paired(delta / 2, between_case_sd=between, within_case_var=within)
    assert all(
        (s.cases or 0) >= (o.cases or 0) for s, o in zip(smaller.options, plan.options, strict=True)
    )

"""The adaptive plan: its suite size, re-simulated independently, FAILs a drop with the power."""

from __future__ import annotations

import math

import numpy as np
import pytest

from assay.errors import ConfigError
from assay.stats import (
    PairedDecision,
    plan_adaptive_paired,
    plan_paired,
    simulate_paired_sequence,
)


@pytest.mark.slow
def test_the_planned_suite_fails_the_drop_with_the_power_asked() -> None:
    delta, within, between, k = 0.1, 0.3, 0.1, 3
    plan = plan_adaptive_paired(
        delta, between_case_sd=between, within_case_var=within, trials_per_case=[k]
    )
    (option,) = plan.options
    assert plan.design == "adaptive" and option.cases is not None and option.power is not None
    assert option.power >= 0.8 and option.trials == 2 * k * option.cases
    assert option.mean_cases_at_delta is not None and option.mean_cases_no_change is not None
    assert 0 < option.mean_cases_at_delta <= option.cases
    assert 0 < option.mean_cases_no_change <= option.cases
    # An independent simulation of suites of that size, drawn as the model says.
    rng = np.random.default_rng(99)
    rows, level = 400, (1 + math.sqrt(1 - 2 * within)) / 2
    current = np.clip(level - delta + between * rng.standard_normal((rows, option.cases)), 0, 1)
    d = (rng.binomial(k, current) - rng.binomial(k, level, (rows, option.cases))) / k
    share = simulate_paired_sequence(d, delta=delta).share(PairedDecision.DROP)
    # the plan's power has Monte Carlo error ±0.03 (200 suites), this one ±0.02
    assert share == pytest.approx(0.8, abs=0.1)
    # the price of stopping at any case: a larger suite than the fixed design's
    fixed = plan_paired(delta, between_case_sd=between, within_case_var=within, trials_per_case=[k])
    assert fixed.options[0].cases is not None and option.cases > fixed.options[0].cases


def test_a_within_variance_no_two_pass_rates_give_is_refused() -> None:
    with pytest.raises(ConfigError, match="exceeds 0.5"):
        plan_adaptive_paired(0.1, between_case_sd=0.0, within_case_var=0.6)

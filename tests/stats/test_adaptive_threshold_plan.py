"""The adaptive threshold plan: the run's own rule, exact, minimal, and checked by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from assay.errors import ConfigError
from assay.judge import SequentialDesign
from assay.run import RunOptions
from assay.stats import (
    adaptive_run_characteristics,
    operating_characteristics,
    plan_adaptive_threshold,
    simulate_sequential,
)


def _run_rule(threshold: float, max_trials: int, confidence: float):  # type: ignore[no-untyped-def]
    """The stopping rule ``assay run`` builds by default (no --fixed, no --sequential)."""
    method = RunOptions().method
    design = SequentialDesign.of(method, threshold, max_trials, confidence=confidence)
    return design.build(confidence)


@pytest.mark.parametrize(("threshold", "expected"), [(0.8, 0.9), (0.95, 0.99)])
def test_the_plan_is_the_runs_design_and_the_smallest_maximum(
    threshold: float, expected: float
) -> None:
    plan = plan_adaptive_threshold(threshold, expected, power=0.8)
    assert plan.max_trials is not None and plan.power is not None
    n = plan.max_trials
    run_oc = operating_characteristics(_run_rule(threshold, n, 0.95), expected)
    assert plan.power == pytest.approx(run_oc.pass_probability, abs=1e-12)
    assert plan.expected_trials == pytest.approx(run_oc.expected_trials, abs=1e-9)
    assert plan.power >= 0.8
    # Its predecessor does not reach the target.
    assert adaptive_run_characteristics(threshold, n - 1, expected).pass_probability < 0.8
    at_threshold = operating_characteristics(_run_rule(threshold, n, 0.95), threshold)
    assert plan.fail_at_threshold == pytest.approx(at_threshold.fail_probability, abs=1e-12)
    assert plan.pass_at_threshold == pytest.approx(at_threshold.pass_probability, abs=1e-12)
    assert plan.fail_at_threshold + plan.pass_at_threshold <= 0.05  # the sequence's α


def test_no_smaller_maximum_reaches_the_target_where_all_are_checked() -> None:
    plan = plan_adaptive_threshold(0.5, 0.7, power=0.8)
    assert plan.max_trials is not None
    below = [
        adaptive_run_characteristics(0.5, m, 0.7).pass_probability
        for m in range(1, plan.max_trials)
    ]
    assert max(below) < 0.8


def test_the_exact_pass_probability_matches_a_seeded_simulation() -> None:
    plan = plan_adaptive_threshold(0.8, 0.9, power=0.8)
    assert plan.max_trials is not None and plan.power is not None
    assert plan.expected_trials is not None
    reps = 20_000
    verdicts, trials = simulate_sequential(
        _run_rule(0.8, plan.max_trials, 0.95), 0.9, reps, seed=20261204
    )
    share = float(np.mean(verdicts == 1))
    se = np.sqrt(plan.power * (1 - plan.power) / reps)
    assert abs(share - plan.power) < 4 * se
    trials_se = float(np.std(trials)) / np.sqrt(reps)
    assert abs(float(np.mean(trials)) - plan.expected_trials) < 4 * trials_se


def test_a_maximum_of_100_falls_short_where_the_fixed_plan_would_not() -> None:
    # The figure the adaptive plan corrects: P(PASS) with the run's maximum of 100 at 0.9.
    short = adaptive_run_characteristics(0.8, 100, 0.9).pass_probability
    plan = plan_adaptive_threshold(0.8, 0.9, power=0.8)
    assert short < 0.8 and plan.max_trials is not None and plan.max_trials > 100


def test_unreachable_and_bad_arguments() -> None:
    plan = plan_adaptive_threshold(0.8, 0.8, power=0.8)
    assert plan.max_trials is None and plan.note and "no maximum" in plan.note
    with pytest.raises(ConfigError, match="threshold"):
        plan_adaptive_threshold(1.0, 1.0)
    with pytest.raises(ConfigError, match="power"):
        plan_adaptive_threshold(0.8, 0.9, power=1.0)

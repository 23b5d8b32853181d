import numpy as np
import pytest
from scipy.stats import binom

from assay.errors import ConfigError
from assay.stats import (
    METHODS,
    pass_probability,
    plan_regression,
    plan_threshold,
    regression_power,
    verdict_interval,
)


def brute_pass_probability(n: int, t: float, expected: float, method: str) -> float:
    return float(
        sum(
            binom.pmf(x, n, expected)
            for x in range(n + 1)
            if verdict_interval(x, n, t, 0.95, method).low >= t
        )
    )


@pytest.mark.parametrize("method", METHODS)
def test_pass_probability_equals_brute_force(method: str) -> None:
    ns = [1, 5, 16, 30, 47, 80]
    got = pass_probability(ns, 0.8, 0.9, 0.95, method)
    for n, value in zip(ns, got, strict=True):
        assert value == pytest.approx(brute_pass_probability(n, 0.8, 0.9, method), abs=1e-12)


def test_plan_threshold_is_smallest_and_reports_non_monotone_power() -> None:
    plan = plan_threshold(0.8, 0.9, power=0.8, max_n=400)
    assert plan.n is not None and plan.power is not None and plan.stable_n is not None
    curve = pass_probability(np.arange(1, 401), 0.8, 0.9)
    assert plan.power == pytest.approx(curve[plan.n - 1])
    assert plan.power >= 0.8 and np.all(curve[: plan.n - 1] < 0.8)
    assert np.all(curve[plan.stable_n - 1 :] >= 0.8)
    assert plan.stable_n == 1 or curve[plan.stable_n - 2] < 0.8
    assert (plan.note is None) == (plan.stable_n == plan.n)
    assert brute_pass_probability(plan.n, 0.8, 0.9, "wilson") == pytest.approx(plan.power)


def test_plan_threshold_unreachable() -> None:
    plan = plan_threshold(0.9, 0.85, max_n=300)
    assert plan.n is None and plan.note


def test_plan_regression_fisher_is_minimal_within_its_window() -> None:
    plan = plan_regression(0.9, 0.1, 0.05, 0.8, test="fisher")
    assert plan.n_per_arm is not None and plan.power is not None
    assert plan.power == regression_power(plan.n_per_arm, plan.n_per_arm, 0.9, 0.1, 0.05, "fisher")
    assert plan.power >= 0.8
    for m in range(plan.n_per_arm - 5, plan.n_per_arm):
        assert regression_power(m, m, 0.9, 0.1, 0.05, "fisher") < 0.8


def test_plan_regression_boschloo_needs_no_more_than_fisher() -> None:
    boschloo = plan_regression(0.8, 0.3, 0.05, 0.8, test="boschloo")
    fisher = plan_regression(0.8, 0.3, 0.05, 0.8, test="fisher")
    assert boschloo.n_per_arm is not None and fisher.n_per_arm is not None
    assert boschloo.n_per_arm <= fisher.n_per_arm
    assert boschloo.power is not None and boschloo.power >= 0.8


@pytest.mark.parametrize(
    "kwargs",
    [{"delta": 0.0}, {"delta": 0.95}, {"power": 1.0}, {"alpha": 0.0}, {"test": "z"}],
)
def test_plan_regression_rejects_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        plan_regression(0.9, **kwargs)  # type: ignore[arg-type]

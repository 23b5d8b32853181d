"""Regression tests at any size: Fisher's p-value and power, and the anytime test.

Above (n1 + 1)(n2 + 1) = 5,000,000 outcome tables the regions are summed row by row; where the
tables can still be enumerated the two ways agree, and at large sizes the exact type-I error
and a seeded simulation check the level.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from assay.judge import Verdict, regression_test
from assay.stats import (
    MAX_TABLES,
    enumerable,
    regression_p_value,
    regression_power,
    rejection_probability,
)
from assay.stats.two_sample._prefix_power import (
    fisher_boundary,
    fisher_p_value,
    prefix_power,
)

SIZES = [(40, 60), (300, 200), (700, 700)]
RATES = [(0.9, 0.8), (0.5, 0.5), (0.99, 0.95), (0.02, 0.0), (0.3, 0.45)]


@pytest.mark.parametrize(("n1", "n2"), SIZES)
@pytest.mark.parametrize(("p1", "p2"), RATES)
def test_row_sums_equal_the_enumerated_fisher_power(n1: int, n2: int, p1: float, p2: float) -> None:
    enumerated = rejection_probability(n1, n2, p1, p2, 0.05, "fisher")
    summed = prefix_power(n1, n2, p1, p2, lambda rows: fisher_boundary(n1, n2, 0.05, rows))
    assert summed == pytest.approx(enumerated, abs=1e-13)


def test_fisher_p_value_at_any_size_equals_scipy() -> None:
    for b, n1, c, n2 in [(8_050, 10_000, 7_900, 10_000), (9_990, 10_000, 9_985, 10_000)]:
        table = [[b, c], [n1 - b, n2 - c]]
        expected = sps.fisher_exact(table, alternative="greater").pvalue
        assert regression_p_value(b, n1, c, n2, "fisher") == pytest.approx(expected, rel=1e-9)
        assert fisher_p_value(b, n1, c, n2) == pytest.approx(expected, rel=1e-9)


def test_fisher_keeps_its_level_at_ten_thousand_trials() -> None:
    n = 10_000
    assert not enumerable(n, n) and (n + 1) ** 2 > MAX_TABLES
    # The exact type-I error at equal true rates, summed over every row with mass.
    for rate in (0.001, 0.01, 0.1, 0.5, 0.9, 0.999):
        assert rejection_probability(n, n, rate, rate, 0.05, "fisher") <= 0.05
    # A seeded simulation agrees with the exact value within 4 standard errors.
    rng = np.random.default_rng(47)
    reps = 4_000
    x1, x2 = rng.binomial(n, 0.9, reps), rng.binomial(n, 0.9, reps)
    rejected = sps.hypergeom.cdf(x2, 2 * n, x1 + x2, n) < 0.05
    exact = rejection_probability(n, n, 0.9, 0.9, 0.05, "fisher")
    assert abs(rejected.mean() - exact) <= 4 * np.sqrt(exact * (1 - exact) / reps)


@pytest.mark.parametrize("test", ["boschloo", "barnard"])
def test_an_enumerating_test_above_the_limit_is_replaced_and_says_so(test: str) -> None:
    found = regression_test(8_000, 10_000, 7_700, 10_000, test=test)
    assert found.test == "fisher" and found.test_reason is not None
    assert test in found.test_reason and "100,020,001" in found.test_reason
    assert found.p_value == pytest.approx(fisher_p_value(8_000, 10_000, 7_700, 10_000))
    assert found.verdict is Verdict.FAIL and found.power > 0.99
    # Below the limit the test asked for is the one used.
    small = regression_test(80, 100, 77, 100, test=test)
    assert small.test == test and small.test_reason is None


@pytest.mark.slow
def test_a_million_trials_per_version_gets_a_verdict() -> None:
    n = 1_000_000
    found = regression_test(500_000, n, 499_800, n)
    assert found.test == "fisher" and found.verdict is Verdict.PASS
    assert found.power == pytest.approx(1.0) and 0.05 < found.p_value < 1
    # At a million trials and a rate of 1/2 the normal approximation is accurate: a drop of
    # 0.1 points is 1.41 standard errors, power = Φ(1.41 − 1.645) ≈ 0.41.
    normal = sps.norm.cdf(0.001 / np.sqrt(2 * 0.25 / n) - sps.norm.ppf(0.95))
    assert regression_power(n, n, 0.5, 0.001, 0.05, "fisher") == pytest.approx(normal, abs=0.01)


def _outcomes(passed: int, n: int, seed: int) -> np.ndarray:
    outcomes = np.zeros(n, dtype=np.bool_)
    outcomes[:passed] = True
    return np.random.default_rng(seed).permutation(outcomes)


@pytest.mark.slow
def test_the_anytime_test_above_the_limit() -> None:
    # Paired in run order: 10,000 trials a version, beyond the exact tests' enumeration.
    baseline, current = _outcomes(8_000, 10_000, 1), _outcomes(7_700, 10_000, 2)
    found = regression_test(
        8_000,
        10_000,
        7_700,
        10_000,
        test="anytime",
        baseline_outcomes=baseline,
        current_outcomes=current,
    )
    assert found.test == "anytime" and found.verdict is Verdict.FAIL and found.power > 0.99


@pytest.mark.slow
def test_the_figures_docs_statistics_states_are_recomputed() -> None:
    # docs/statistics.md, "Regression at any size": every figure there, computed again.
    doc = (Path(__file__).parents[2] / "docs" / "statistics.md").read_text()
    for rate, drop in ((0.9, 0.02), (0.5, 0.03), (0.99, 0.005)):
        boschloo = rejection_probability(2_000, 2_000, rate, rate - drop, 0.05, "boschloo")
        fisher = rejection_probability(2_000, 2_000, rate, rate - drop, 0.05, "fisher")
        assert f"{boschloo:.3f} (Boschloo)" in doc or f"{boschloo:.3f} against" in doc
        assert f"against {fisher:.3f}" in doc and fisher < boschloo
    rates = (0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999)
    for n in (2_500, 10_000):
        sizes = [rejection_probability(n, n, p, p, 0.05, "fisher") for p in rates]
        assert f"{min(sizes):.3f}–{max(sizes):.3f} at {n:,}" in doc

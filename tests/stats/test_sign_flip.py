"""Two-sided sign-flip tests of many features at once and their power (suite behaviour diff)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from assay.errors import ConfigError
from assay.stats import (
    detectable_difference,
    mean_difference_power,
    sign_flip_p_value,
    sign_flip_two_sided,
)
from assay.stats.suites._paired import byte_sums


def _features(rng: np.random.Generator, cases: int) -> np.ndarray:
    """Columns like the behaviour diff's: shares of 5 trials, counts, tokens, a rare tool."""
    shares = (rng.binomial(5, 0.4, cases) - rng.binomial(5, 0.4, cases)) / 5
    counts = (rng.poisson(6, cases) - rng.poisson(6, cases)) / 5
    tokens = rng.normal(20.0, 300.0, cases)
    rare = np.zeros(cases)
    rare[rng.choice(cases, 12, replace=False)] = rng.choice([-0.2, 0.2, 0.4], 12)
    return np.column_stack([shares, counts, tokens, rare, np.zeros(cases)])


@pytest.mark.parametrize("cases", [15, 300, 2001])
def test_a_batch_gives_each_feature_the_p_value_it_has_alone(cases: int) -> None:
    rng = np.random.default_rng(cases)
    matrix = _features(rng, cases)
    batch = sign_flip_two_sided(matrix, seed=7, resamples=999)
    for j in range(matrix.shape[1]):
        alone = sign_flip_two_sided(matrix[:, j], seed=7, resamples=999)
        assert alone.p_values[0] == batch.p_values[j]  # bit for bit
        assert alone.tests[0] == batch.tests[j]
        np.testing.assert_array_equal(alone.errors[:1], batch.errors[j : j + 1])
    # Whatever the other columns, and in any order.
    reordered = sign_flip_two_sided(matrix[:, ::-1], seed=7, resamples=999)
    np.testing.assert_array_equal(reordered.p_values[::-1], batch.p_values)


def test_exact_enumeration_matches_the_definition() -> None:
    d = np.array([0.4, -0.2, 0.0, 0.6, 0.2, 0.2, -0.4, 0.8])
    flips = np.array(list(itertools.product([-1, 1], repeat=d.size)))
    expected = np.mean(np.abs(flips @ d) >= abs(d.sum()) - 1e-12)
    found = sign_flip_two_sided(d)
    assert found.tests == ("sign-flip-exact",)
    assert found.p_values[0] == pytest.approx(expected, abs=1e-15)
    assert np.isnan(found.errors[0])
    # Two-sided: about twice the one-sided p-value of the sign the data lean towards.
    one = sign_flip_p_value(-d)[0]
    assert found.p_values[0] == pytest.approx(min(1.0, 2 * one), abs=1e-12)


def test_monte_carlo_agrees_with_the_permutation_distribution_and_states_its_error() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.08, 1.0, 400)
    found = sign_flip_two_sided(d, seed=1, resamples=9999)
    assert found.tests == ("sign-flip-monte-carlo",)
    # The sign-flip distribution of the mean is close to normal with variance Σd² / C².
    z = abs(d.sum()) / np.sqrt(np.sum(d**2))
    assert found.p_values[0] == pytest.approx(2 * sps.norm.sf(z), abs=4 * found.errors[0] + 0.01)
    assert found.errors[0] == pytest.approx(
        np.sqrt(found.p_values[0] * (1 - found.p_values[0]) / 9999)
    )


def test_under_the_null_the_rejection_rate_stays_at_alpha() -> None:
    rng = np.random.default_rng(11)
    rejected = 0
    runs = 400
    for run in range(runs):
        d = rng.standard_t(3, 60)  # symmetric, heavy-tailed
        rejected += sign_flip_two_sided(d, seed=run, resamples=199).p_values[0] < 0.05
    # Binomial(400, 0.05): mean 20, the upper 0.999 quantile is 35.
    assert rejected <= sps.binom.ppf(0.999, runs, 0.05)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ConfigError, match="finite"):
        sign_flip_two_sided(np.array([1.0, np.nan]))
    with pytest.raises(ConfigError, match="resamples"):
        sign_flip_two_sided(np.ones(30), resamples=10)


@pytest.mark.parametrize(("cases", "spread", "effect"), [(60, 1.0, 0.45), (300, 0.8, 0.15)])
def test_the_power_approximation_matches_a_simulation_of_the_test(
    cases: int, spread: float, effect: float
) -> None:
    level = 0.05 / 6  # Holm's first step over six features
    predicted = mean_difference_power(cases, effect, spread, level, resamples=999)
    rng = np.random.default_rng(cases)
    runs = 300
    hits = sum(
        sign_flip_two_sided(rng.normal(effect, spread, cases), seed=r, resamples=999).p_values[0]
        < level
        for r in range(runs)
    )
    simulated = hits / runs
    assert 0.2 < predicted < 0.95  # a region where a wrong formula would show
    assert simulated == pytest.approx(predicted, abs=3 * np.sqrt(0.25 / runs) + 0.03)


def test_detectable_difference_is_where_the_power_reaches_the_required_power() -> None:
    level = 0.05 / 18
    size = detectable_difference(2000, 1.3, level, 0.8)
    assert size is not None
    assert mean_difference_power(2000, size, 1.3, level) == pytest.approx(0.8, abs=1e-9)


def test_a_test_that_cannot_reach_the_level_has_no_power() -> None:
    # Four cases: the smallest two-sided p-value is 2 / 16.
    assert mean_difference_power(4, 10.0, 0.1, 0.05) == 0.0
    assert detectable_difference(4, 0.1, 0.05, 0.8) is None
    # Monte Carlo with 999 resamples cannot go below 1 / 1000.
    assert mean_difference_power(500, 10.0, 0.1, 0.0005, resamples=999) == 0.0


def _reference_one_sided(d: np.ndarray, seed: int, resamples: int = 9999) -> float:
    """The one-sided Monte Carlo p-value as a product of the unpacked signs (the definition)."""
    nonzero = np.abs(d[d != 0])
    m, total, observed = nonzero.size, nonzero.sum(), d.sum()
    tolerance = 1e-9 * max(1.0, float(total))
    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // m)
    hits = 0
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        bits = rng.integers(0, 256, size=(rows, (m + 7) // 8), dtype=np.uint8)
        signs = np.unpackbits(bits, axis=1, count=m).astype(np.float64)
        hits += int(np.count_nonzero(2.0 * (signs @ nonzero) - total <= observed + tolerance))
    return (1 + hits) / (1 + resamples)


@pytest.mark.parametrize("seed", range(6))
def test_the_one_sided_test_by_byte_tables_is_the_product_of_the_signs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    cases = int(rng.integers(30, 2500))
    d = rng.normal(0.03, 1.0, cases)
    if seed % 2:  # ties (shares of five trials) in half the cases; the rest all distinct
        d[: cases // 2] = np.round(d[: cases // 2] * 5) / 5
    assert sign_flip_p_value(d, seed=seed)[0] == _reference_one_sided(d, seed)
    bits = rng.integers(0, 256, size=(50, (cases + 7) // 8), dtype=np.uint8)
    signs = np.unpackbits(bits, axis=1, count=cases).astype(np.float64)
    np.testing.assert_allclose(byte_sums(bits, np.abs(d)), signs @ np.abs(d), rtol=1e-12)

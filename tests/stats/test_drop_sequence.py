"""The anytime-valid drop test: its e-value, validity under optional stopping, interval, power."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special as sp

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import DropSequence, drop_sequence, pass_rate_sequence


def _log_mixture(s: float, n: float, p: npt.NDArray[np.float64], a: float, b: float) -> object:
    # Written out from Robbins' beta-binomial mixture, independently of the module.
    return sp.betaln(a + s, b + n - s) - sp.betaln(a, b) - s * np.log(p) - (n - s) * np.log1p(-p)


@pytest.mark.parametrize(
    ("sb", "nb", "sc", "nc"), [(28, 28, 89, 100), (45, 50, 30, 50), (9, 10, 2, 12), (3, 40, 0, 7)]
)
def test_the_e_value_is_the_smallest_product_over_the_null(
    sb: int, nb: int, sc: int, nc: int
) -> None:
    sequence = DropSequence(0.95, 0.8, 12.0)
    a, b = 0.8 * 12.0, 0.2 * 12.0
    # every (p_b, p_c) with p_c >= p_b on a fine grid
    grid = np.linspace(1e-6, 1 - 1e-6, 1201)
    pb, pc = np.meshgrid(grid, grid, indexing="ij")
    null = pc >= pb
    products = _log_mixture(sb, nb, pb, a, b) + _log_mixture(sc, nc, pc, a, b)
    brute = float(np.min(np.where(null, products, np.inf)))
    found = float(sequence.log_e_value(sb, nb, sc, nc))
    assert found <= brute + 1e-9  # never above the infimum
    assert found == pytest.approx(brute, abs=2e-3)


def test_no_evidence_when_the_current_rate_is_not_lower() -> None:
    sequence = drop_sequence(0.8, 0.95, 100)
    for sb, nb, sc, nc in [(20, 40, 30, 40), (10, 10, 10, 10), (0, 5, 0, 9)]:
        result = sequence.test(sb, nb, sc, nc)
        assert result.e_value <= 1
        assert result.p_value == 1
        assert result.low <= 0


def _stopped(
    rng: np.random.Generator, p: float, max_trials: int, reps: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Runs stopped as ``assay run`` stops them (threshold 0.8): passes and trials of each."""
    sequence = pass_rate_sequence(0.8, 0.95, max_trials)
    passes = np.cumsum(rng.random((reps, max_trials)) < p, axis=1)
    n = np.arange(1, max_trials + 1)
    moved = sequence.side(passes, n[None, :], 0.8) != 0
    moved[:, -1] = True
    stop = moved.argmax(axis=1)
    return passes[np.arange(reps), stop], stop + 1


@pytest.mark.parametrize("p", [0.6, 0.85, 0.95])
def test_type_one_error_on_two_adaptively_stopped_runs(p: float) -> None:
    # A lenient alpha (0.3) so that rejections are common enough to measure.
    rng = np.random.default_rng(40)
    reps = 4000
    sb, nb = _stopped(rng, p, 60, reps)
    sc, nc = _stopped(rng, p, 60, reps)
    sequence = DropSequence(0.7, 0.8, 8.0)
    rate = float(np.mean(sequence.log_e_value(sb, nb, sc, nc) >= -math.log(0.3)))
    assert rate <= 0.3 + 3 * math.sqrt(0.3 * 0.7 / reps)


def test_looking_after_every_interleaved_trial_keeps_the_level() -> None:
    # The strongest form: reject if the e-value ever reaches 1/alpha while the two versions'
    # trials interleave at random, looked at after every trial.
    rng = np.random.default_rng(7)
    reps, steps, alpha = 3000, 300, 0.2
    sequence = DropSequence(1 - alpha, 0.5, 2.0)
    for p in (0.3, 0.8):
        to_baseline = rng.random((reps, steps)) < 0.5
        passed = rng.random((reps, steps)) < p
        nb = np.cumsum(to_baseline, axis=1)
        sb = np.cumsum(to_baseline & passed, axis=1)
        nc = np.arange(1, steps + 1)[None, :] - nb
        sc = np.cumsum(~to_baseline & passed, axis=1)
        ever = (sequence.log_e_value(sb, nb, sc, nc) >= -math.log(alpha)).any(axis=1)
        assert ever.mean() <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


def test_the_drop_interval_covers_under_optional_stopping() -> None:
    rng = np.random.default_rng(3)
    reps = 300
    sequence = DropSequence(0.8, 0.8, 6.0)
    misses = 0
    for rates in ((0.9, 0.75), (0.7, 0.7)):
        sb, nb = _stopped(rng, rates[0], 50, reps)
        sc, nc = _stopped(rng, rates[1], 50, reps)
        for x in zip(sb, nb, sc, nc, strict=True):
            low, high = sequence.interval(*(int(v) for v in x))
            misses += not low <= rates[0] - rates[1] <= high
    assert misses / (2 * reps) <= 0.2 + 3 * math.sqrt(0.2 * 0.8 / (2 * reps))


@pytest.mark.parametrize(("sb", "nb", "sc", "nc"), [(48, 50, 30, 50), (90, 100, 80, 100)])
def test_the_interval_and_the_e_value_agree(sb: int, nb: int, sc: int, nc: int) -> None:
    sequence = drop_sequence(0.8, 0.95, 100)
    result = sequence.test(sb, nb, sc, nc)
    assert -1 <= result.low <= sb / nb - sc / nc <= result.high <= 1
    assert (result.low > 0) == (result.e_value >= 20)
    assert result.p_value == pytest.approx(min(1.0, 1 / result.e_value))


def test_exact_power_matches_a_simulation_and_equal_rates_keep_the_level() -> None:
    sequence = drop_sequence(0.8, 0.95, 200)
    power = sequence.power(150, 120, 0.9, 0.15)
    rng = np.random.default_rng(5)
    reps = 20_000
    xb, xc = rng.binomial(150, 0.9, reps), rng.binomial(120, 0.75, reps)
    simulated = float(np.mean(sequence.log_e_value(xb, 150, xc, 120) >= math.log(20)))
    assert power == pytest.approx(simulated, abs=4 * math.sqrt(power * (1 - power) / reps))
    assert 0.05 < power < 0.95  # a value the comparison can tell apart
    for rate in (0.5, 0.8, 0.95):
        assert sequence.rejection_probability(40, 60, rate, rate) <= 0.05


def test_bad_input_is_refused() -> None:
    sequence = drop_sequence()
    with pytest.raises(InsufficientDataError):
        sequence.test(0, 0, 1, 2)
    with pytest.raises(ConfigError):
        sequence.test(3, 2, 1, 2)
    with pytest.raises(ConfigError):
        sequence.power(10, 10, 0.9, 0.0)
    with pytest.raises(ConfigError):
        DropSequence(1.5)


@settings(max_examples=60, deadline=None)
@given(
    nb=st.integers(1, 120),
    nc=st.integers(1, 120),
    fb=st.floats(0, 1),
    fc=st.floats(0, 1),
)
def test_interval_properties(nb: int, nc: int, fb: float, fc: float) -> None:
    sb, sc = round(fb * nb), round(fc * nc)
    result = drop_sequence(0.8, 0.95, 100).test(sb, nb, sc, nc)
    assert -1 <= result.low <= sb / nb - sc / nc + 1e-12
    assert sb / nb - sc / nc - 1e-12 <= result.high <= 1
    assert 0 < result.p_value <= 1
    if result.low > 1e-9:
        assert result.e_value >= 20 * (1 - 1e-9)
    if result.e_value > 20 * (1 + 1e-9):
        assert result.low > 0

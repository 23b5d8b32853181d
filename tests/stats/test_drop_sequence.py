"""The anytime-valid drop test: its e-process, validity under any interleaving and stopping,
the drop's confidence sequence, its exact power, and its power against the test it replaced."""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special as sp
from scipy import stats as sps

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import DropSequence, pass_rate_sequence
from assay.stats._drop_sequence import (
    MAX_POWER_PAIRS,
    _crowd_bounds,
    _linear,
    _log_mean_exp,
    _rounding,
)

FRACTIONS = (np.arange(200) + 0.5) / 200
Bools = npt.NDArray[np.bool_]


def _capital(baseline: list[bool], current: list[bool], drop: float) -> list[float]:
    """The crowd's capital after each pair, written out bet by bet, independently."""
    capital = np.ones(FRACTIONS.size)
    out = []
    for x, y in zip(baseline, current, strict=False):
        capital = capital * (1 + FRACTIONS * ((int(x) - int(y)) - drop) / (1 + drop))
        out.append(float(capital.mean()))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_e_process_is_the_crowds_capital(seed: int) -> None:
    rng = np.random.default_rng(seed)
    baseline = list(rng.random(60) < 0.9)
    current = list(rng.random(45) < 0.7)
    sequence = DropSequence(0.95)
    found = np.exp(sequence.log_e_process(np.array(baseline), np.array(current)))
    direct = _capital(baseline, current, 0.0)
    np.testing.assert_allclose(found, direct, rtol=1e-10)
    result = sequence.test(baseline, current)
    assert result.pairs == 45
    assert result.e_value == pytest.approx(max([1.0, *direct]), rel=1e-10)
    assert result.p_value == pytest.approx(min(1.0, 1 / result.e_value))


def test_no_evidence_when_the_current_version_never_fails_alone() -> None:
    sequence = DropSequence(0.95)
    for baseline, current in [
        ([True] * 28, [True] * 89 + [False] * 11),
        ([False, True] * 20, [True] * 40),
        ([False] * 5, [False] * 9),
    ]:
        result = sequence.test(baseline, current)
        assert result.e_value == 1
        assert result.p_value == 1
        assert result.low <= 0


def _stopped(
    rng: np.random.Generator, p: float, max_trials: int, reps: int
) -> tuple[Bools, npt.NDArray[np.int64]]:
    """Runs stopped as ``assay run`` stops them (threshold 0.8): outcomes and trials of each."""
    sequence = pass_rate_sequence(0.8, 0.95, max_trials)
    outcomes = rng.random((reps, max_trials)) < p
    n = np.arange(1, max_trials + 1)
    moved = sequence.side(np.cumsum(outcomes, axis=1), n[None, :], 0.8) != 0
    moved[:, -1] = True
    return outcomes, moved.argmax(axis=1) + 1


@pytest.mark.parametrize(("rate_b", "rate_c"), [(0.5, 0.5), (0.8, 0.8), (0.9, 0.9), (0.7, 0.8)])
def test_the_level_holds_when_both_versions_stop_adaptively(rate_b: float, rate_c: float) -> None:
    # Runs stopped by run's own rule, the e-process read after every pair up to the shorter.
    rng = np.random.default_rng(40)
    reps, alpha = 4000, 0.05
    b, nb = _stopped(rng, rate_b, 100, reps)
    c, nc = _stopped(rng, rate_c, 100, reps)
    log_e = DropSequence(1 - alpha).log_e_process(b, c)
    seen = np.arange(100)[None, :] < np.minimum(nb, nc)[:, None]
    rate = float(np.mean((seen & (log_e >= -math.log(alpha))).any(axis=1)))
    assert rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


def _interleaved(
    rng: np.random.Generator, rate: float, reps: int, steps: int, chase: bool
) -> tuple[Bools, Bools, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Trials of two versions at one rate, interleaved at random or chasing a drop.

    ``chase``: the next trial is the baseline's while the baseline looks better than the
    current, the current's otherwise — an order that depends on everything seen.
    """
    b = rng.random((reps, steps)) < rate
    c = rng.random((reps, steps)) < rate
    nb, nc = np.zeros(reps, np.int64), np.zeros(reps, np.int64)
    sb, sc = np.zeros(reps), np.zeros(reps)
    pairs = np.zeros((reps, steps), np.int64)
    rows = np.arange(reps)
    for step in range(steps):
        if chase:
            ahead = sb * np.maximum(nc, 1) > sc * np.maximum(nb, 1)
            to_b = np.where(nb == nc, ahead, nb < nc) if step % 3 else ahead
        else:
            to_b = rng.random(reps) < 0.5
        sb += np.where(to_b, b[rows, np.minimum(nb, steps - 1)], 0)
        sc += np.where(~to_b, c[rows, np.minimum(nc, steps - 1)], 0)
        nb += to_b
        nc += ~to_b
        pairs[:, step] = np.minimum(nb, nc)
    return b, c, pairs, np.maximum(nb, nc)


@pytest.mark.parametrize("chase", [False, True])
def test_looking_after_every_interleaved_trial_keeps_the_level(chase: bool) -> None:
    # The strongest form: reject if the e-value ever reaches 1/alpha, looked at after every
    # trial of either version, the order of the versions at random or chasing a drop.
    rng = np.random.default_rng(7)
    reps, steps, alpha = 3000, 300, 0.2
    sequence = DropSequence(1 - alpha)
    for rate in (0.3, 0.8):
        b, c, pairs, _ = _interleaved(rng, rate, reps, steps, chase)
        log_e = np.concatenate([np.zeros((reps, 1)), sequence.log_e_process(b, c)], axis=1)
        seen = np.take_along_axis(log_e, pairs, axis=1)  # the value after each trial
        ever = (seen >= -math.log(alpha)).any(axis=1)
        assert ever.mean() <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)


def test_the_drop_interval_covers_under_optional_stopping() -> None:
    rng = np.random.default_rng(3)
    reps, alpha = 120, 0.2
    sequence = DropSequence(1 - alpha)
    misses = {"low": 0, "high": 0}
    for rates in ((0.9, 0.75), (0.7, 0.7)):
        b, nb = _stopped(rng, rates[0], 50, reps)
        c, nc = _stopped(rng, rates[1], 50, reps)
        for row in range(reps):
            low, high = sequence.interval(b[row, : nb[row]], c[row, : nc[row]])
            misses["low"] += low > rates[0] - rates[1]
            misses["high"] += high < rates[0] - rates[1]
    for missed in misses.values():  # each end alone is a one-sided bound at 1 - alpha
        assert missed / (2 * reps) <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / (2 * reps))


@pytest.mark.parametrize("seed", [4, 5])
def test_each_end_is_where_the_capital_first_stays_below_one_over_alpha(seed: int) -> None:
    rng = np.random.default_rng(seed)
    baseline, current = list(rng.random(80) < 0.9), list(rng.random(80) < 0.7)
    low, high = DropSequence(0.95).interval(baseline, current)
    flipped = [not x for x in baseline], [not y for y in current]
    for end, sign, (b, c) in ((low, 1, (baseline, current)), (-high, -1, flipped)):
        # the upper end of the drop is the lower end of the current's drop in failures
        assert max(_capital(b, c, end - 1e-6)) >= 20 > max(_capital(b, c, end + 1e-6)), sign


def _old_power(n: int, rate_b: float, rate_c: float) -> float:
    """The test this one replaced (the product of the versions' beta-binomial mixtures,
    prior mean 0.8 worth 10 trials, its infimum over the null), exact, written out."""
    a, b = 8.0, 2.0
    x = np.arange(n + 1, dtype=np.float64)
    xb, xc = x[:, None], x[None, :]
    pooled = np.clip((xb + xc) / (2 * n), 1e-12, 1 - 1e-12)

    def log_mixture(s: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        likelihood = s * np.log(pooled) + (n - s) * np.log1p(-pooled)
        return np.asarray(sp.betaln(a + s, b + n - s) - sp.betaln(a, b) - likelihood)

    rejects = (xc < xb) & (log_mixture(xb) + log_mixture(xc) >= math.log(20))
    pmf_b, pmf_c = sps.binom.pmf(x, n, rate_b), sps.binom.pmf(x, n, rate_c)
    return float(pmf_b @ rejects @ pmf_c)


def test_the_power_is_three_times_the_replaced_tests_at_100_trials_a_version() -> None:
    # The bar: 0.9 -> 0.8 at 100 trials a version (and more at 200, below 3x there).
    sequence = DropSequence(0.95)
    assert sequence.power(100, 100, 0.9, 0.10) >= 3 * _old_power(100, 0.9, 0.8)
    assert sequence.power(200, 200, 0.9, 0.10) >= 2 * _old_power(200, 0.9, 0.8)


def test_exact_power_matches_a_simulation_and_equal_rates_keep_the_level() -> None:
    sequence = DropSequence(0.95)
    power = sequence.power(150, 120, 0.9, 0.15)
    rng = np.random.default_rng(5)
    reps = 20_000
    b, c = rng.random((reps, 150)) < 0.9, rng.random((reps, 120)) < 0.75
    simulated = float(np.mean(sequence.log_e_process(b, c).max(axis=1) >= math.log(20)))
    assert power == pytest.approx(simulated, abs=4 * math.sqrt(power * (1 - power) / reps))
    assert 0.05 < power < 0.95  # a value the comparison can tell apart
    for rate in (0.5, 0.8, 0.95):
        assert sequence.rejection_probability(40, 60, rate, rate) <= 0.05
        assert sequence.rejection_probability(400, 400, rate, min(rate + 0.02, 1)) <= 0.05


def test_exact_power_equals_the_sum_over_every_sequence_of_pairs() -> None:
    # Eight pairs, each +1, 0 or -1: all 3^8 sequences, each crossing checked directly.
    sequence = DropSequence(0.5)  # a lenient level, so that eight pairs can reach it
    rate_b, rate_c = 0.8, 0.4
    chance = {1: rate_b * (1 - rate_c), -1: (1 - rate_b) * rate_c}
    chance[0] = 1 - chance[1] - chance[-1]
    signs = np.array(list(itertools.product((1, 0, -1), repeat=8)))
    plus, minus = np.cumsum(signs == 1, axis=1), np.cumsum(signs == -1, axis=1)
    crossed = (sequence.log_e_value(plus, minus) >= math.log(2)).any(axis=1)
    each = np.prod(np.vectorize(chance.get)(signs), axis=1)
    total = float(each[crossed].sum())
    assert 0.05 < total < 0.95
    assert sequence.rejection_probability(8, 11, rate_b, rate_c) == pytest.approx(total, abs=1e-12)


def test_the_boundary_is_where_the_e_value_reaches_one_over_alpha() -> None:
    sequence = DropSequence(0.95)
    boundary = sequence.boundary(60)
    plus, minus = np.meshgrid(np.arange(61), np.arange(61), indexing="ij")
    reaches = sequence.log_e_value(plus, minus) >= math.log(20)
    np.testing.assert_array_equal(reaches, plus >= boundary[None, :])


def test_bad_input_is_refused() -> None:
    sequence = DropSequence()
    with pytest.raises(InsufficientDataError):
        sequence.test([], [True, False])
    with pytest.raises(ConfigError):
        sequence.test([2, 1], [True])
    with pytest.raises(ConfigError):
        sequence.power(10, 10, 0.9, 0.0)
    # Above MAX_POWER_PAIRS the power within the first MAX_POWER_PAIRS pairs: a lower bound.
    assert sequence.power(100_000, 100_000, 0.9, 0.01) == sequence.power(
        MAX_POWER_PAIRS, MAX_POWER_PAIRS, 0.9, 0.01
    )
    with pytest.raises(ConfigError):
        DropSequence(1.5)


@settings(max_examples=60, deadline=None)
@given(
    baseline=st.lists(st.booleans(), min_size=1, max_size=120),
    current=st.lists(st.booleans(), min_size=1, max_size=120),
)
def test_interval_properties(baseline: list[bool], current: list[bool]) -> None:
    result = DropSequence(0.95).test(baseline, current)
    assert -1 <= result.low <= 1 and -1 <= result.high <= 1
    assert 0 < result.p_value <= 1
    assert (result.low > 0) == (result.e_value >= 20)
    assert (result.high < 0) == (DropSequence(0.95).test(current, baseline).e_value >= 20)


def _reference(sequence: DropSequence, baseline: Bools, current: Bools) -> tuple[float, ...]:
    """The test written out: every pair's crowd computed at every drop the root finder asks
    for (the per-pair definition is the module's), the e-value the largest at a drop of 0."""
    from scipy import optimize

    pairs = min(baseline.size, current.size)
    diff = baseline[:pairs].astype(int) - current[:pairs].astype(int)
    level = -math.log(sequence.alpha)

    def lower_end(counts: npt.NDArray[np.float64]) -> float:
        def excess(drop: float) -> float:
            return float(np.max(_log_mean_exp(_linear(counts, drop)))) - level

        if excess(-1 + 1e-9) < 0:
            return -1.0
        shown = excess(0.0) >= 0
        low, high = (0.0, 1 - 1e-9) if shown else (-1 + 1e-9, 0.0)
        end = float(optimize.brentq(excess, low, high, xtol=1e-12))
        while excess(end) >= 0 and end < high:
            end = min(end + 1e-12, high)
        return end if shown else min(end, 0.0)

    counts = np.stack([np.cumsum(diff == v) for v in (1, 0, -1)], axis=-1).astype(np.float64)
    top = max(float(np.max(_log_mean_exp(_linear(counts, 0.0)))), 0.0)
    low, high = lower_end(counts), -lower_end(counts[:, ::-1].copy())
    return math.exp(min(top, 700.0)), min(1.0, math.exp(-top)), low, high


@pytest.mark.parametrize("pairs", [1, 7, 90, 700, 3000])
def test_the_search_equals_computing_every_pairs_crowd(pairs: int) -> None:
    # The search computes only the crowds that can hold the maximum: its figures must be the
    # written-out test's, bit for bit, on drops, no drop, rises, and rates at the edges.
    rng = np.random.default_rng(pairs)
    for confidence in (0.95, 0.8):
        sequence = DropSequence(confidence)
        for rate_b, rate_c in ((0.9, 0.8), (0.9, 0.9), (0.5, 0.55), (1.0, 1.0), (0.02, 0.05)):
            baseline = rng.random(pairs) < rate_b
            current = rng.random(pairs + int(rng.integers(0, 3))) < rate_c
            found = sequence.test(baseline, current)
            expected = _reference(sequence, baseline, current)
            assert (found.e_value, found.p_value, found.low, found.high) == expected


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(0, 2_000_000), min_size=3, max_size=3),
    drop=st.one_of(
        st.floats(-1 + 1e-9, 1 - 1e-9), st.sampled_from([-1 + 1e-9, 0.0, 1e-13, 1 - 1e-9])
    ),
)
def test_the_bound_is_above_every_crowds_computed_log_capital(
    counts: list[int], drop: float
) -> None:
    # The search skips a pair only on this bound: it must hold for the crowd as computed,
    # rounding and all, or a skipped pair could have held the maximum.
    rows = np.array([counts, [max(c // 7, 1) for c in counts], [counts[0], 0, 0]], np.float64)
    rows = rows[rows.sum(axis=1) > 0]
    bound = _crowd_bounds(rows, drop) + _rounding(rows.sum(axis=1), drop)
    assert (bound >= _log_mean_exp(_linear(rows, drop))).all()

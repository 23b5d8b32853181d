import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import (
    MINIMAL_EFFECTS,
    binary_shift,
    continuous_shift,
    count_shift,
    count_shifts,
    difference_interval,
    equal_trials_guess,
    log_ratio_se,
    path_shift,
    ratio_power,
    share_power,
    trials_for_power,
)
from assay.stats.behaviour._behaviour_paths import FIRST_LOOK

# statsmodels is imported by the tests that use it: every xdist worker collects this module,
# and statsmodels.api costs a worker about a CPU-second.


def test_binary_shift_is_fisher_and_newcombe() -> None:
    from statsmodels.stats.proportion import confint_proportions_2indep

    shift = binary_shift(24, 30, 9, 30)
    table = [[9, 21], [24, 6]]
    assert shift.p_value == pytest.approx(sps.fisher_exact(table).pvalue)
    low, high = confint_proportions_2indep(9, 30, 24, 30, method="newcomb", compare="diff")
    assert (shift.ci_low, shift.ci_high) == pytest.approx((low, high))
    assert shift.effect == pytest.approx(9 / 30 - 24 / 30)
    assert (shift.baseline, shift.current, shift.method) == (0.8, 0.3, "fisher")


@given(
    st.integers(1, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
)
def test_difference_interval_contains_the_estimate_and_stays_in_range(
    base: tuple[int, int], cur: tuple[int, int]
) -> None:
    low, high = difference_interval(base[0], base[1], cur[0], cur[1])
    d = cur[0] / cur[1] - base[0] / base[1]
    assert -1 <= low <= d + 1e-12 and d - 1e-12 <= high <= 1


def test_log_ratio_se_is_the_poisson_sandwich() -> None:
    rng = np.random.default_rng(3)
    b = rng.poisson(2.0, 40).astype(float)
    c = rng.negative_binomial(2, 0.4, 35).astype(float)
    y = np.concatenate([b, c])
    statsmodels = pytest.importorskip("statsmodels.api")
    x = statsmodels.add_constant(np.r_[np.zeros(b.size), np.ones(c.size)])
    fit = statsmodels.GLM(y, x, family=statsmodels.families.Poisson()).fit(cov_type="HC0")
    se, _ = log_ratio_se(b, c, ddof=0)
    assert se == pytest.approx(fit.bse[1], rel=1e-6)
    assert math.log(c.mean() / b.mean()) == pytest.approx(fit.params[1], rel=1e-6)


def test_count_interval_covers_the_true_ratio_and_p_agrees() -> None:
    rng = np.random.default_rng(11)
    covered = rejected_null = 0
    runs = 600
    for _ in range(runs):
        # Over-dispersed counts (a retry now and then), true ratio 1.5.
        b = rng.negative_binomial(3, 3 / (3 + 2.0), 30)
        c = rng.negative_binomial(3, 3 / (3 + 3.0), 30)
        s = count_shift(b, c)
        assert s.ci_low is not None and s.ci_high is not None
        covered += s.ci_low <= 1.5 <= s.ci_high
        # The p-value and the interval are the same statistic.
        assert (s.p_value < 0.05) == (not s.ci_low <= 1 <= s.ci_high)
        same = count_shift(b, rng.negative_binomial(3, 3 / (3 + 2.0), 30))
        rejected_null += same.p_value < 0.05
    assert covered / runs == pytest.approx(0.95, abs=0.03)
    assert rejected_null / runs <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / runs)


def test_count_shift_edge_cases() -> None:
    zero = count_shift([0, 0, 0], [1, 2, 0])
    assert zero.effect is None and zero.p_value == 0.0
    assert count_shift([0, 0], [0, 0]).p_value == 1.0
    fixed = count_shift([3, 3, 3], [4, 4, 4])
    assert fixed.effect == pytest.approx(4 / 3) and fixed.p_value == _permutation_p(
        [3] * 3, [4] * 3
    )
    with pytest.raises(ConfigError, match="negative"):
        count_shift([-1, 2], [1, 2])
    with pytest.raises(InsufficientDataError):
        count_shift([], [1])


def _permutation_p(baseline: list[int], current: list[int]) -> float:
    """Every relabelling of the trials: the share moving the means at least as far apart."""
    values = [*baseline, *current]
    observed = abs(np.mean(current) - np.mean(baseline))
    splits = list(itertools.combinations(range(len(values)), len(baseline)))
    far = 0
    for chosen in splits:
        rest = [v for i, v in enumerate(values) if i not in chosen]
        far += abs(np.mean(rest) - np.mean([values[i] for i in chosen])) >= observed - 1e-12
    return far / len(splits)


@pytest.mark.parametrize(("baseline", "current"), [(5, 5), (4, 6), (7, 3), (2, 2)])
def test_counts_without_spread_take_the_exact_permutation_p_value(
    baseline: int, current: int
) -> None:
    """Each version repeating one value: no Wald statistic, and p = 0 would be certainty."""
    shift = count_shift([3] * baseline, [2] * current)
    assert shift.p_value == pytest.approx(_permutation_p([3] * baseline, [2] * current), rel=1e-12)
    assert shift.p_value == count_shifts([([3] * baseline, [2] * current)])[0].p_value
    assert count_shift([2] * baseline, [2] * current).p_value == 1.0


def test_continuous_shift_is_mann_whitney_with_a_ratio_of_means() -> None:
    rng = np.random.default_rng(5)
    b = rng.lognormal(7, 0.3, 30)
    c = rng.lognormal(7, 0.3, 30) * 1.4
    s = continuous_shift(b, c)
    assert s.p_value == pytest.approx(sps.mannwhitneyu(c, b, alternative="two-sided").pvalue)
    assert s.effect == pytest.approx(c.mean() / b.mean())
    assert s.ci_low is not None and s.ci_high is not None
    assert s.ci_low < s.effect < s.ci_high
    assert continuous_shift([2.0, 2.0], [2.0, 2.0]).p_value == 1.0


def _chi2(table: np.ndarray) -> float:
    return float(sps.chi2_contingency(table, correction=False).statistic)


def test_path_shift_matches_scipy_permutation_test() -> None:
    base = [("s", "v")] * 20 + [("s",)] * 6 + [("s", "s", "v")] * 4
    cur = [("s", "v")] * 12 + [("s",)] * 8 + [("s", "s", "v")] * 10
    result = path_shift(base, cur, n_resamples=1999, seed=1)
    keys = sorted(set(base + cur))
    codes_b = np.array([keys.index(p) for p in base])
    codes_c = np.array([keys.index(p) for p in cur])

    def statistic(x: np.ndarray, y: np.ndarray) -> float:
        table = np.array([np.bincount(x, minlength=3), np.bincount(y, minlength=3)])
        return _chi2(table)

    ref = sps.permutation_test(
        (codes_b, codes_c),
        statistic,
        permutation_type="independent",
        alternative="greater",
        n_resamples=1999,
        rng=np.random.default_rng(2),
    )
    # Two Monte Carlo estimates of one exact p-value (~0.06): within a few standard errors.
    assert result.shift.p_value == pytest.approx(ref.pvalue, abs=0.02)
    assert result.path == ("s", "v")
    assert (result.shift.baseline, result.shift.current) == pytest.approx((20 / 30, 12 / 30))
    assert result.distance == pytest.approx(0.5 * (8 + 2 + 6) / 30)
    assert result.variants == 3


def test_path_shift_is_reproducible_and_handles_one_variant() -> None:
    base = [("a",), ("b",)] * 10
    cur = [("a",)] * 15 + [("b",)] * 5
    assert (
        path_shift(base, cur, seed=4).shift.p_value == path_shift(base, cur, seed=4).shift.p_value
    )
    same = path_shift([("a",)] * 5, [("a",)] * 7)
    assert same.shift.p_value == 1.0 and same.distance == 0.0


def test_path_shift_type_one_error_by_simulation() -> None:
    rng = np.random.default_rng(8)
    paths = np.array([0, 1, 2, 3, 4])
    probs = np.array([0.55, 0.2, 0.15, 0.07, 0.03])
    runs = 400
    rejected = 0
    for _ in range(runs):
        b = [(int(p),) for p in rng.choice(paths, 30, p=probs)]
        c = [(int(p),) for p in rng.choice(paths, 30, p=probs)]
        rejected += (
            path_shift(b, c, n_resamples=499, seed=int(rng.integers(1 << 30))).shift.p_value < 0.05
        )
    assert rejected / runs <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / runs)


def test_a_screened_path_test_refines_only_p_values_at_or_below_the_screen() -> None:
    """Above the screen, the first look's p-value; at or below it, a fresh full draw's."""
    full = 10 * FIRST_LOOK
    moved = ([("a",)] * 12 + [("b",)] * 3, [("a",)] * 3 + [("b",)] * 12)
    still = ([("a",)] * 8 + [("b",)] * 7, [("a",)] * 7 + [("b",)] * 8)
    screened = path_shift(*moved, n_resamples=full, seed=3, screen=0.05).shift.p_value
    assert screened == path_shift(*moved, n_resamples=full, seed=4).shift.p_value < 0.05
    kept = path_shift(*still, n_resamples=full, seed=3, screen=0.05).shift.p_value
    assert kept == path_shift(*still, n_resamples=FIRST_LOOK, seed=3).shift.p_value > 0.05
    # Fewer than ten first looks asked for: no first look.
    assert (
        path_shift(*moved, n_resamples=full - 1, seed=3, screen=0.05).shift.p_value
        == path_shift(*moved, n_resamples=full - 1, seed=3).shift.p_value
    )


def test_a_screened_path_test_keeps_its_level_by_simulation() -> None:
    """P(p ≤ u) ≤ u under the null, at the screen and below and above it."""
    rng = np.random.default_rng(21)
    runs = 600
    found = []
    for _ in range(runs):
        b = [(int(p),) for p in rng.choice(4, 12, p=[0.4, 0.3, 0.2, 0.1])]
        c = [(int(p),) for p in rng.choice(4, 12, p=[0.4, 0.3, 0.2, 0.1])]
        seed = int(rng.integers(1 << 30))
        found.append(
            path_shift(b, c, n_resamples=10 * FIRST_LOOK, seed=seed, screen=0.1).shift.p_value
        )
    p = np.array(found)
    for u in (0.02, 0.05, 0.1, 0.3):
        assert np.mean(p <= u) <= u + 2.5 * math.sqrt(u * (1 - u) / runs)


def test_share_power_agrees_with_simulated_fisher() -> None:
    rng = np.random.default_rng(9)
    n, p0, d, alpha = 60, 0.5, 0.25, 0.05
    runs = 1000
    hits = 0
    for _ in range(runs):
        kb, kc = rng.binomial(n, p0), rng.binomial(n, p0 - d)
        hits += sps.fisher_exact([[kc, n - kc], [kb, n - kb]]).pvalue < alpha
    assert share_power(p0, n, n, d, alpha) == pytest.approx(hits / runs, abs=0.08)


def test_ratio_power_agrees_with_simulation() -> None:
    rng = np.random.default_rng(10)
    n, sigma, ratio, alpha = 40, 0.4, 1.25, 0.05
    cv = math.sqrt(math.exp(sigma**2) - 1)
    runs = 800
    hits = 0
    for _ in range(runs):
        b = rng.lognormal(0, sigma, n)
        c = rng.lognormal(0, sigma, n) * ratio
        hits += count_shift(b, c).p_value < alpha
    assert ratio_power(cv, n, n, ratio, alpha) == pytest.approx(hits / runs, abs=0.08)


def test_power_helpers() -> None:
    assert ratio_power(0.0, 5, 5, 1.3, 0.05) == 1.0
    assert share_power(0.5, 30, 30, 0.2, 0.05) < share_power(0.5, 100, 100, 0.2, 0.05)
    need = trials_for_power(lambda n: share_power(0.5, n, n, 0.2, 0.05))
    assert need is not None
    assert (
        share_power(0.5, need, need, 0.2, 0.05)
        >= 0.8
        > share_power(0.5, need - 1, need - 1, 0.2, 0.05)
    )
    assert trials_for_power(lambda n: 0.1) is None
    assert set(MINIMAL_EFFECTS) == {"path", "binary", "count", "continuous"}
    with pytest.raises(ConfigError):
        ratio_power(0.3, 10, 10, 0.9, 0.05)
    with pytest.raises(ConfigError):
        share_power(0.3, 10, 10, 0.2, 1.5)


def test_permutations_grow_with_the_family_and_work_in_blocks() -> None:
    from assay.stats import permutations_for

    assert permutations_for(1, 0.05) == 1999
    assert permutations_for(100, 0.05) == 20_000
    assert permutations_for(10_000, 0.05) == 50_000
    base = [("a",)] * 30
    cur = [("b",)] * 30
    result = path_shift(base, cur, n_resamples=4500, seed=3)
    assert result.shift.p_value == pytest.approx(1 / 4501)


@given(
    share=st.booleans(),
    spread=st.one_of(st.just(0.0), st.floats(1e-6, 3.0)),
    alpha=st.sampled_from([0.05, 0.01, 0.05 / 7, 0.001]),
    target=st.sampled_from([0.5, 0.8, 0.9]),
    wrong=st.integers(-40, 40),
)
def test_a_guess_never_changes_the_trials_for_power(
    share: bool, spread: float, alpha: float, target: float, wrong: int
) -> None:
    """The closed-form guess is checked, not trusted: a good or a wrong one, the same answer."""
    spread = min(spread, 1.0) if share else spread
    effect = MINIMAL_EFFECTS["binary" if share else "continuous"]

    def power_at(n: int) -> float:
        if share:
            return share_power(spread, n, n, effect, alpha)
        return ratio_power(spread, n, n, effect, alpha)

    searched = trials_for_power(power_at, target)
    guess = equal_trials_guess(share, spread, effect, alpha, target)
    assert trials_for_power(power_at, target, guess=guess) == searched
    assert trials_for_power(power_at, target, guess=max(1, guess + wrong)) == searched
    if searched is not None:
        # The normal approximations invert in closed form: the guess is (all but) the answer.
        assert abs(guess - searched) <= 1


def test_moments_of_many_samples_are_each_samples_own_bit_for_bit() -> None:
    """Row-wise numpy reductions of a stacked array equal each row's own mean and variance."""
    from assay.stats.behaviour._behaviour import _row_moments

    rng = np.random.default_rng(3)
    for size in [*range(1, 60), 127, 128, 129, 300]:
        for matrix in (rng.lognormal(0, 2, (20, size)), rng.integers(0, 4, (20, size)) * 1.0):
            for x, (mean, variance, n) in zip(matrix, _row_moments(matrix), strict=True):
                x = x.copy()  # the lone sample, as a feature holds it
                assert n == x.size and mean == float(x.mean())
                assert variance == (float(x.var(ddof=1)) if x.size > 1 else 0.0)


def test_count_shifts_of_many_features_are_each_features_shift() -> None:
    rng = np.random.default_rng(5)
    pairs = [
        (rng.poisson(2, int(a)).astype(float), rng.poisson(2.5, int(b)).astype(float))
        for a, b in rng.integers(1, 15, (300, 2))
    ]
    shifts = count_shifts(pairs, 0.9)
    assert [s.method for s in shifts] == ["robust-poisson"] * len(pairs)
    for (b, c), shift in zip(pairs, shifts, strict=True):
        assert shift == count_shift(b, c, 0.9)
        if b.mean() > 0 and c.mean() > 0 and (b.size > 1 or c.size > 1):
            se, df = log_ratio_se(b, c)  # each sample's own numpy mean and variance
            if se > 0:
                q = sps.t.ppf(0.95, df) if math.isfinite(df) else sps.norm.ppf(0.95)
                assert shift.ci_high == pytest.approx(shift.effect * math.exp(float(q) * se))


def test_path_shift_does_not_depend_on_cases_tested_before() -> None:
    # Cases sharing their path totals reuse one set of draws, and cases sharing their table
    # (whatever their paths are called) one test: each result must still be the one the case
    # gets alone, whatever was tested before it.
    from assay.stats.behaviour._behaviour_paths import _null_statistics, _table_shift

    rng = np.random.default_rng(7)
    paths = [("a",), ("a", "b"), ("b",), ("c", "a")]
    renamed = [("x",), ("y", "x"), ("z",), ("w",)]
    cases = [
        ([paths[i] for i in rng.integers(0, 4, 5)], [paths[i] for i in rng.integers(0, 4, 5)])
        for _ in range(40)
    ]
    cases += [
        ([renamed[paths.index(p)] for p in b], [renamed[paths.index(p)] for p in c])
        for b, c in cases
    ]
    first = [path_shift(b, c, seed=3) for b, c in cases]
    fresh = []
    for b, c in reversed(cases):
        _null_statistics.cache_clear()
        _table_shift.cache_clear()
        fresh.append(path_shift(b, c, seed=3))
    assert first == fresh[::-1]
    assert len({r.path for r in first}) > 4  # the renamed cases name their own variants


@pytest.mark.parametrize("kind", ["count", "continuous"])
def test_row_shifts_are_each_rows_own_ratio_shift(kind: str) -> None:
    # The rows' t and normal quantiles come from one scipy call each: every shift must be
    # the one the row's own moments give through the one-row path, bit for bit.
    from assay.stats import row_shifts
    from assay.stats.behaviour._behaviour import _ratio_shift, _row_moments

    rng = np.random.default_rng(11)
    for n_b, n_c in ((5, 5), (1, 4), (3, 1), (30, 30)):
        base = rng.poisson(1.5, (300, n_b)).astype(float)
        cur = rng.poisson(1.8, (300, n_c)).astype(float)
        base[:20] = 0.0  # zero means
        cur[20:40] = 2.0  # no spread on one side
        base[40:60], cur[40:60] = 3.0, 3.0  # no spread on either
        if kind == "continuous":
            base[60:], cur[60:] = base[60:] * rng.random(base[60:].shape), cur[60:] * 1.1
        shifts = row_shifts(kind, base, cur, 0.9)
        method = "robust-poisson" if kind == "count" else "mann-whitney"
        for row, shift in enumerate(shifts):
            b, c = _row_moments(base[row : row + 1])[0], _row_moments(cur[row : row + 1])[0]
            p = None if kind == "count" else shift.p_value  # Mann–Whitney's: tested above
            assert shift == _ratio_shift(kind, b, c, 0.9, method, p)  # type: ignore[arg-type]

"""The suite mean over cases: cluster-robust t (checked against statsmodels), bootstrap, pass@k."""

import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import clustered_mean, pass_at_k, pass_hat_k, suite_pass_at_k, suite_pass_hat_k


def suite(seed: int, cases: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, k + 1, cases)
    passed = rng.binomial(sizes, rng.beta(2, 1, cases))
    return passed, sizes


def test_t_interval_equals_statsmodels_cluster_ols_on_case_means() -> None:
    passed, sizes = suite(1, 40, 5)
    means = passed / sizes
    got = clustered_mean(means, sizes, 0.9, "t")
    fit = sm.OLS(means, np.ones(means.size)).fit(
        cov_type="cluster", cov_kwds={"groups": np.arange(means.size)}, use_t=True
    )
    low, high = fit.conf_int(alpha=0.1)[0]
    assert got.mean == pytest.approx(fit.params[0], abs=1e-12)
    assert got.std_error == pytest.approx(fit.bse[0], rel=1e-10)
    assert (got.interval.low, got.interval.high) == pytest.approx((low, high), rel=1e-10)
    assert got.interval.method == "cluster-t"
    assert got.observations == sizes.sum()


def test_standard_error_equals_statsmodels_on_trials_weighted_to_equal_cases() -> None:
    # Per-trial rows, each weighted 1 / n_c so that every case counts once, clustered by case.
    passed, sizes = suite(2, 30, 4)
    case = np.repeat(np.arange(sizes.size), sizes)
    outcome = np.concatenate(
        [np.r_[np.ones(x), np.zeros(n - x)] for x, n in zip(passed, sizes, strict=True)]
    )
    fit = sm.WLS(outcome, np.ones(outcome.size), weights=1 / sizes[case]).fit(
        cov_type="cluster", cov_kwds={"groups": case}
    )
    got = clustered_mean(passed / sizes, sizes)
    assert got.mean == pytest.approx(fit.params[0], abs=1e-12)
    assert got.std_error == pytest.approx(fit.bse[0], rel=1e-10)


def test_standard_error_equals_inspect_ai_form_when_cases_have_equal_trials() -> None:
    # inspect_ai's stderr(cluster=): sqrt(C / (C - 1) * sum_c (sum_i (s_ic - mean))^2) / N.
    rng = np.random.default_rng(3)
    scores = rng.binomial(1, rng.beta(2, 1, (25, 1)), (25, 3)).astype(float)
    centred = scores - scores.mean()
    c, n = scores.shape[0], scores.size
    inspect = math.sqrt((centred.sum(axis=1) ** 2).sum() * c / (c - 1)) / n
    got = clustered_mean(scores.mean(axis=1), np.full(c, 3))
    assert got.std_error == pytest.approx(inspect, rel=1e-12)


def test_zero_spread_gives_clopper_pearson_over_cases_never_a_point() -> None:
    got = clustered_mean(np.ones(30), np.full(30, 3), method="t")
    assert got.interval.method == "cluster-zero-spread"
    assert got.interval.high == 1.0
    assert got.interval.low == pytest.approx(0.025 ** (1 / 30), rel=1e-9)
    boot = clustered_mean(np.ones(30), np.full(30, 3), method="bootstrap")
    assert boot.interval == got.interval


def test_unbounded_scores_are_not_clipped() -> None:
    got = clustered_mean([10.0, 30.0, 50.0], [1, 1, 1], method="t", bounds=None)
    half = sps.t.ppf(0.975, 2) * 20 / math.sqrt(3)
    assert (got.interval.low, got.interval.high) == pytest.approx((30 - half, 30 + half))


def test_clipped_to_bounds_and_one_case() -> None:
    got = clustered_mean([1.0, 1.0, 0.0], [1, 1, 1], method="t")
    assert got.interval.low == 0.0 and got.interval.high == 1.0
    one = clustered_mean([0.5], [4])
    assert one.std_error is None and (one.interval.low, one.interval.high) == (0.0, 1.0)


def test_bootstrap_is_seeded_and_near_the_t_interval_for_many_cases() -> None:
    passed, sizes = suite(4, 400, 3)
    means = passed / sizes
    a = clustered_mean(means, sizes, method="bootstrap", seed=5)
    b = clustered_mean(means, sizes, method="bootstrap", seed=5)
    t = clustered_mean(means, sizes, method="t")
    assert a == b
    assert a.interval.method == "cluster-bootstrap"
    assert a.interval.low == pytest.approx(t.interval.low, abs=0.01)
    assert a.interval.high == pytest.approx(t.interval.high, abs=0.01)


@pytest.mark.parametrize("method", ["t", "bootstrap"])
def test_coverage_near_nominal_at_100_cases(method: str) -> None:
    # 400 suites of 100 cases x 3 trials, difficulty Beta(2, 1); MC error of coverage ~0.011.
    rng = np.random.default_rng(6)
    truth = 2 / 3  # E[p] for Beta(2, 1), the suite's true mean over cases
    hits = 0
    reps = 400 if method == "t" else 150
    for _ in range(reps):
        passed = rng.binomial(3, rng.beta(2, 1, 100))
        ci = clustered_mean(passed / 3, np.full(100, 3), method=method, resamples=1000).interval
        hits += ci.low <= truth <= ci.high
    se = math.sqrt(0.95 * 0.05 / reps)
    assert abs(hits / reps - 0.95) < 3.5 * se


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), st.integers(0, 6)), min_size=1, max_size=40),
    st.sampled_from(["t", "bootstrap"]),
)
def test_interval_contains_mean_and_lies_in_bounds(cases: list, method: str) -> None:
    sizes = np.array([n for n, _ in cases])
    passed = np.array([min(x, n) for n, x in cases])
    got = clustered_mean(passed / sizes, sizes, method=method, resamples=200)
    assert 0.0 <= got.interval.low <= got.mean <= got.interval.high <= 1.0


def test_bad_input() -> None:
    with pytest.raises(ConfigError):
        clustered_mean([0.5], [1], method="wald")
    with pytest.raises(ConfigError):
        clustered_mean([1.5], [1])
    with pytest.raises(ConfigError):
        clustered_mean([0.5, 0.5], [1])
    with pytest.raises(InsufficientDataError):
        clustered_mean([], [])


def test_suite_pass_at_k_averages_unbiased_per_case_estimates() -> None:
    passed = np.array([3, 1, 0, 5, 1])
    n = np.array([5, 5, 5, 5, 1])
    estimate, interval = suite_pass_at_k(passed, n, 2)
    per_case = [pass_at_k(int(a), int(b), 2).value for a, b in zip(n[:4], passed[:4], strict=True)]
    assert estimate == pytest.approx(np.mean(per_case))
    assert interval is not None and interval.low <= estimate <= interval.high
    assert interval.method == "cluster-betting"
    result = suite_pass_hat_k(passed, n, 2)
    hats = [pass_hat_k(int(a), int(b), 2).value for a, b in zip(n[:4], passed[:4], strict=True)]
    assert result.estimate == pytest.approx(np.mean(hats))
    assert (result.cases, result.excluded) == (4, 1)
    none = suite_pass_at_k([1], [1], 3)
    assert (none.estimate, none.interval, none.excluded) == (None, None, 1)


def test_suite_pass_at_1_is_the_mean_pass_rate() -> None:
    passed, sizes = suite(7, 50, 4)
    assert suite_pass_at_k(passed, sizes, 1).estimate == pytest.approx(np.mean(passed / sizes))


def test_inspect_ai_form_is_statsmodels_on_unweighted_trials() -> None:
    # With unequal trials per case inspect_ai estimates the trial-weighted mean: it is
    # statsmodels' unweighted OLS clustered by case, not ours (each case weighted once).
    passed, sizes = suite(8, 30, 5)
    case = np.repeat(np.arange(sizes.size), sizes)
    outcome = np.concatenate(
        [np.r_[np.ones(x), np.zeros(n - x)] for x, n in zip(passed, sizes, strict=True)]
    )
    fit = sm.OLS(outcome, np.ones(outcome.size)).fit(cov_type="cluster", cov_kwds={"groups": case})
    centred = outcome - outcome.mean()
    sums = np.bincount(case, weights=centred)
    c = sizes.size
    inspect = math.sqrt((sums**2).sum() * c / (c - 1)) / outcome.size
    assert fit.bse[0] == pytest.approx(inspect, rel=1e-10)
    assert clustered_mean(passed / sizes, sizes).mean != pytest.approx(outcome.mean())


def test_bootstrap_of_few_distinct_values_matches_resampling_cases() -> None:
    # The multinomial shortcut (few distinct case means) and resampling the cases themselves
    # give the same interval up to Monte Carlo error.
    from assay.stats.suites._clustered import bca_interval

    rng = np.random.default_rng(9)
    values = rng.binomial(3, rng.beta(2, 1, 400)) / 3
    few = bca_interval(values, 0.95, 1, 4000)
    jittered = values + rng.normal(0, 1e-9, values.size)  # all distinct: resamples cases
    many = bca_interval(jittered, 0.95, 1, 4000)
    assert few == pytest.approx(many, abs=0.006)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=30))
def test_unbounded_t_interval_is_symmetric_about_the_mean(values: list[float]) -> None:
    got = clustered_mean(values, [1] * len(values), method="t", bounds=None)
    assert got.interval.low <= got.mean <= got.interval.high
    assert got.mean - got.interval.low == pytest.approx(got.interval.high - got.mean, abs=1e-6)

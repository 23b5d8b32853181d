import numpy as np
import pytest
from scipy.stats import binom, binomtest

from assay.judge import (
    Verdict,
    more_trials_needed,
    settle_probability,
    threshold_test,
    threshold_verdict,
)
from assay.stats import (
    proportion_interval,
    verdict_interval,
    verdict_min_trials_for_pass,
    verdict_sides,
)


def test_threshold_verdict_keeps_its_signature() -> None:
    interval = proportion_interval(28, 30)
    result = threshold_verdict(interval, 0.8)
    assert result.verdict is Verdict.INCONCLUSIVE and result.more_trials_needed is None


@pytest.mark.parametrize(
    ("k", "n", "t"), [(28, 30, 0.8), (30, 30, 0.8), (10, 30, 0.8), (1, 1, 0.5)]
)
def test_threshold_test_matches_scipy_interval(k: int, n: int, t: float) -> None:
    wilson = binomtest(k, n).proportion_ci(0.95, "wilson")
    exact = binomtest(k, n).proportion_ci(0.95, "exact")
    lower_kept, upper_kept = (bool(side) for side in verdict_sides(n, t))
    low = wilson.low if lower_kept else exact.low
    high = wilson.high if upper_kept else exact.high
    result = threshold_test(k, n, t)
    assert (result.interval.low, result.interval.high) == pytest.approx((low, high), abs=1e-12)
    expected = Verdict.PASS if low >= t else Verdict.FAIL if high < t else Verdict.INCONCLUSIVE
    assert result.verdict is expected


def test_more_trials_follows_its_rule() -> None:
    k, n, t = 28, 30, 0.8
    extra = more_trials_needed(k, n, t)
    assert extra is not None and extra > 0
    assert settle_probability(k, n, extra, t) >= 0.5
    assert settle_probability(k, n, extra - 1, t) < 0.5


def test_settle_probability_equals_brute_force() -> None:
    k, n, t, m = 21, 25, 0.75, 40
    expected = 0.0
    for x in range(m + 1):
        ci = verdict_interval(k + x, n + m, t)
        if ci.low >= t or ci.high < t:
            expected += binom.pmf(x, m, k / n)
    assert settle_probability(k, n, m, t) == pytest.approx(expected, abs=1e-12)


def test_more_trials_none_when_rate_equals_threshold() -> None:
    assert more_trials_needed(8, 10, 0.8) is None
    assert threshold_test(8, 10, 0.8).more_trials_needed is None


def test_more_trials_zero_when_settled() -> None:
    assert more_trials_needed(30, 30, 0.5) == 0


def test_warning_when_pass_is_impossible() -> None:
    needed = verdict_min_trials_for_pass(0.9)
    assert needed is not None
    result = threshold_test(needed - 1, needed - 1, 0.9)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.note is not None and str(needed) in result.note
    assert result.min_trials_for_pass == needed
    assert threshold_test(needed, needed, 0.9).verdict is Verdict.PASS
    assert threshold_test(needed, needed, 0.9).note is None


def test_following_the_advice_settles_about_half_the_time_or_more() -> None:
    rng = np.random.default_rng(5)
    k, n, t = 27, 30, 0.75
    extra = more_trials_needed(k, n, t)
    assert extra is not None
    settled = 0
    for _ in range(2000):
        more = int(rng.binomial(extra, k / n))
        ci = verdict_interval(k + more, n + extra, t)
        settled += ci.low >= t or ci.high < t
    assert settled / 2000 >= 0.5 - 3 * np.sqrt(0.25 / 2000)


def test_settle_probability_with_many_further_trials_equals_the_full_sum() -> None:
    from assay.stats import verdict_bounds

    k, n, t, m = 85, 100, 0.83, 3000
    future = np.arange(m + 1)
    low, high = verdict_bounds(k + future, n + m, t)
    full = binom.pmf(future, m, k / n)[(low >= t) | (high < t)].sum()
    assert settle_probability(k, n, m, t) == pytest.approx(full, abs=1e-12)

import numpy as np
import pytest
from scipy.stats import binomtest

from assay.stats import min_trials_for_pass, proportion_interval
from assay.verdict import Verdict, more_trials_needed, threshold_test, threshold_verdict


def test_threshold_verdict_keeps_its_signature() -> None:
    interval = proportion_interval(28, 30)
    result = threshold_verdict(interval, 0.8)
    assert result.verdict is Verdict.INCONCLUSIVE and result.more_trials_needed is None


@pytest.mark.parametrize(
    ("k", "n", "t"), [(28, 30, 0.8), (30, 30, 0.8), (10, 30, 0.8), (1, 1, 0.5)]
)
def test_threshold_test_matches_scipy_interval(k: int, n: int, t: float) -> None:
    ci = binomtest(k, n).proportion_ci(0.95, "wilson")
    result = threshold_test(k, n, t)
    expected = (
        Verdict.PASS if ci.low >= t else Verdict.FAIL if ci.high < t else Verdict.INCONCLUSIVE
    )
    assert result.verdict is expected


def test_more_trials_follows_its_rule() -> None:
    k, n, t = 28, 30, 0.8
    extra = more_trials_needed(k, n, t)
    assert extra is not None and extra > 0
    m = n + extra
    ci = proportion_interval(round(k / n * m), m)
    assert ci.low >= t or ci.high < t
    for m in range(n + 1, n + extra):
        ci = proportion_interval(round(k / n * m), m)
        assert ci.low < t <= ci.high


def test_more_trials_none_when_rate_equals_threshold() -> None:
    assert more_trials_needed(8, 10, 0.8) is None
    assert threshold_test(8, 10, 0.8).more_trials_needed is None


def test_more_trials_zero_when_settled() -> None:
    assert more_trials_needed(30, 30, 0.5) == 0


def test_warning_when_pass_is_impossible() -> None:
    needed = min_trials_for_pass(0.9)
    assert needed is not None
    result = threshold_test(needed - 1, needed - 1, 0.9)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.note is not None and str(needed) in result.note
    assert result.min_trials_for_pass == needed
    assert threshold_test(needed, needed, 0.9).verdict is Verdict.PASS
    assert threshold_test(needed, needed, 0.9).note is None


def test_projection_settles_more_often_than_not_when_far_from_threshold() -> None:
    # The rule is a point projection; with the true rate at the observed one, running the
    # suggested number of further trials settles the verdict a fair share of the time.
    rng = np.random.default_rng(5)
    k, n, t = 27, 30, 0.75
    extra = more_trials_needed(k, n, t)
    assert extra is not None
    settled = 0
    for _ in range(400):
        more = int(rng.binomial(extra, k / n))
        ci = proportion_interval(k + more, n + extra)
        settled += ci.low >= t or ci.high < t
    assert settled / 400 >= 0.3

import numpy as np
import pytest
from scipy import stats as sps

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import score_summary


def test_summary_equals_numpy_and_scipy() -> None:
    x = np.array([55.0, 70, 72, 80, 81, 90, 99, 60, 65, 77])
    s = score_summary(x)
    assert (s.n, s.mean, s.min, s.max) == (10, x.mean(), 55.0, 99.0)
    assert s.std == pytest.approx(x.std(ddof=1))
    assert (s.p50, s.p90) == pytest.approx(tuple(np.percentile(x, [50, 90])))
    low, high = sps.t.interval(0.95, 9, loc=x.mean(), scale=sps.sem(x))
    assert (s.ci_low, s.ci_high) == pytest.approx((low, high))


def test_bootstrap_equals_scipy_with_the_same_seed() -> None:
    x = np.array([1.0, 2, 2, 3, 5, 8, 13, 21])
    s = score_summary(x, ci="bootstrap", seed=42, n_resamples=2000)
    ref = sps.bootstrap(
        (x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(42)
    ).confidence_interval
    assert (s.ci_low, s.ci_high) == pytest.approx((ref.low, ref.high))
    assert s.ci_method == "bootstrap"


def test_one_value_and_constant_values() -> None:
    one = score_summary([7.0])
    assert one.std is None and one.ci_low is None and one.ci_high is None
    assert (one.mean, one.p50, one.p90) == (7.0, 7.0, 7.0)
    same = score_summary([3.0, 3.0, 3.0], ci="bootstrap")
    assert same.std == 0.0 and same.ci_low == same.ci_high == 3.0


def test_t_interval_coverage_by_simulation() -> None:
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(1000):
        s = score_summary(rng.normal(50, 10, 15))
        assert s.ci_low is not None and s.ci_high is not None
        hits += s.ci_low <= 50 <= s.ci_high
    assert abs(hits / 1000 - 0.95) < 0.025


def test_bad_input() -> None:
    with pytest.raises(InsufficientDataError):
        score_summary([])
    with pytest.raises(ConfigError):
        score_summary([1.0, float("nan")])
    with pytest.raises(ConfigError):
        score_summary([1.0, 2.0], ci="normal")


def test_t_interval_is_scipys_to_the_bit_for_any_size_level_and_scale() -> None:
    # The t quantiles are cached by (confidence, df); the interval must stay scipy's own.
    rng = np.random.default_rng(3)
    for _ in range(2000):
        n = int(rng.integers(2, 60))
        x = rng.normal(rng.normal() * 5, rng.random() * 3 + 1e-9, n) * 10.0 ** rng.integers(-3, 3)
        confidence = float(rng.choice([0.9, 0.95, 0.99, rng.random() * 0.98 + 0.01]))
        summary = score_summary(x, confidence)
        scale = float(x.std(ddof=1)) / np.sqrt(n)
        low, high = sps.t.interval(confidence, n - 1, loc=float(x.mean()), scale=scale)
        assert (summary.ci_low, summary.ci_high) == (float(low), float(high))

import numpy as np
import pytest
from scipy import stats as sps

from assay.errors import ConfigError, InsufficientDataError
from assay.stats import score_summaries, score_summary


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
    # Tied values: no interval (a zero-width one would claim certainty), and a note says why.
    assert same.std == 0.0 and same.ci_low is None and same.ci_high is None
    assert same.note is not None and "all 3 scores equal 3" in same.note


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


def test_interval_cut_to_a_known_range_keeps_the_t_interval_inside_it() -> None:
    x = np.array([0.2, 1.0, 1.0])
    low, high = sps.t.interval(0.95, 2, loc=x.mean(), scale=sps.sem(x))
    assert high > 1.0  # the uncut t interval reaches past the scale
    cut = score_summary(x, bounds=(0.0, 1.0), bounds_source="assumed")
    assert cut.ci_low == pytest.approx(max(low, 0.0)) and cut.ci_high == 1.0
    assert cut.clipped and cut.range_source == "assumed"
    assert (cut.range_low, cut.range_high) == (0.0, 1.0)
    inside = score_summary(np.array([0.4, 0.5, 0.6]), bounds=(0.0, 1.0))
    assert not inside.clipped and inside.ci_low == pytest.approx(
        sps.t.interval(0.95, 2, loc=0.5, scale=sps.sem([0.4, 0.5, 0.6]))[0]
    )
    with pytest.raises(ConfigError):
        score_summary(x, bounds=(1.0, 0.0))


def test_cutting_to_the_range_never_lowers_coverage() -> None:
    # Seeded: skewed scores in [0, 100] near the top; the true mean is 100·a/(a+b).
    rng = np.random.default_rng(11)
    a, b = 8.0, 0.6
    truth = 100 * a / (a + b)
    hits_cut = hits_raw = 0
    for _ in range(2000):
        x = 100 * rng.beta(a, b, 5)
        raw = score_summary(x)
        cut = score_summary(x, bounds=(0.0, 100.0))
        assert raw.ci_low is not None and raw.ci_high is not None
        assert cut.ci_low is not None and cut.ci_high is not None
        assert 0.0 <= cut.ci_low <= cut.ci_high <= 100.0
        hits_raw += raw.ci_low <= truth <= raw.ci_high
        hits_cut += cut.ci_low <= truth <= cut.ci_high
    assert hits_cut == hits_raw


def test_many_summaries_agree_with_one_by_one_with_ranges_and_ties() -> None:
    samples = [
        np.array([0.2, 1.0, 1.0]),
        np.array([90.0, 100.0, 100.0, 99.0]),
        np.array([0.5, 0.5, 0.5, 0.5, 0.5]),
        np.array([3.0, 4.0]),
    ]
    ranges = [((0.0, 1.0), "assumed"), ((0.0, 100.0), "declared"), ((0.0, 1.0), "assumed"), None]
    many = score_summaries(samples, [0.95, 0.9, 0.95, 0.95], bounds=ranges)
    alone = [
        score_summary(
            x,
            c,
            bounds=None if r is None else r[0],
            bounds_source="declared" if r is None else r[1],
        )
        for x, c, r in zip(samples, [0.95, 0.9, 0.95, 0.95], ranges, strict=True)
    ]
    assert many == alone
    assert many[0].clipped and many[1].clipped and many[1].ci_high == 100.0
    assert many[2].ci_low is None and many[2].note is not None
    assert many[3].range_source is None and not many[3].clipped

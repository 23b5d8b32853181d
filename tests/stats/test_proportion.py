import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, binomtest

from assay.errors import ConfigError
from assay.stats import (
    METHODS,
    min_trials_for_pass,
    proportion_bounds,
    proportion_interval,
    wilson_interval,
)

GRID = [
    (k, n)
    for n in (1, 2, 3, 7, 30, 31, 200)
    for k in sorted({0, 1, n // 2, n - 1, n})
    if 0 <= k <= n
]
SCIPY = {"wilson": "wilson", "wilson-cc": "wilsoncc", "clopper-pearson": "exact"}
STATSMODELS = {"jeffreys": "jeffreys", "agresti-coull": "agresti_coull"}


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("method", sorted(SCIPY))
@pytest.mark.parametrize(("k", "n"), GRID)
def test_equals_scipy(k: int, n: int, method: str, confidence: float) -> None:
    ci = binomtest(k, n).proportion_ci(confidence, SCIPY[method])
    got = proportion_interval(k, n, confidence, method)
    assert got.low == pytest.approx(max(ci.low, 0.0), abs=1e-12)
    assert got.high == pytest.approx(min(ci.high, 1.0), abs=1e-12)
    assert (got.method, got.confidence) == (method, confidence)


@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
@pytest.mark.parametrize("method", sorted(STATSMODELS))
@pytest.mark.parametrize(("k", "n"), GRID)
def test_equals_statsmodels(k: int, n: int, method: str, confidence: float) -> None:
    from statsmodels.stats.proportion import proportion_confint  # not at collection: slow

    low, high = proportion_confint(k, n, alpha=1 - confidence, method=STATSMODELS[method])
    if method == "jeffreys":  # the boundary rule (Brown, Cai & DasGupta 2001)
        low = 0.0 if k == 0 else low
        high = 1.0 if k == n else high
    got = proportion_interval(k, n, confidence, method)
    assert got.low == pytest.approx(low, abs=1e-10)
    assert got.high == pytest.approx(high, abs=1e-10)


def test_wilson_interval_is_wilson_method() -> None:
    assert wilson_interval(28, 30) == proportion_interval(28, 30, 0.95, "wilson")


def test_design_md_example_is_inconclusive_at_80_percent() -> None:
    ci = binomtest(28, 30).proportion_ci(0.95, "wilson")
    got = wilson_interval(28, 30)
    assert (got.low, got.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert got.low < 0.8 <= got.high


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_vectorised_bounds_equal_scalar(method: str, confidence: float) -> None:
    ks, ns = zip(*GRID, strict=True)
    low, high = proportion_bounds(np.array(ks), np.array(ns), confidence, method)
    for i, (k, n) in enumerate(GRID):
        ci = proportion_interval(k, n, confidence, method)
        assert low[i] == pytest.approx(ci.low, abs=1e-9)
        assert high[i] == pytest.approx(ci.high, abs=1e-9)


@settings(deadline=None)  # CI machines are shared; no timing flakes
@given(
    n=st.integers(1, 2000),
    frac=st.floats(0, 1),
    confidence=st.floats(0.5, 0.999),
    method=st.sampled_from(METHODS),
)
def test_bounds_ordered_inside_unit_interval(
    n: int, frac: float, confidence: float, method: str
) -> None:
    k = round(frac * n)
    ci = proportion_interval(k, n, confidence, method)
    assert 0.0 <= ci.low <= k / n <= ci.high <= 1.0


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9, 0.95])
def test_min_trials_for_pass_is_the_boundary(method: str, threshold: float) -> None:
    n = min_trials_for_pass(threshold, 0.95, method)
    assert n is not None
    assert proportion_interval(n, n, 0.95, method).low >= threshold
    if n > 1:
        assert proportion_interval(n - 1, n - 1, 0.95, method).low < threshold


def test_min_trials_for_pass_wilson_closed_form() -> None:
    # Wilson's lower bound at n of n is n / (n + z^2), so n >= t z^2 / (1 - t).
    from scipy.stats import norm

    z2 = norm.isf(0.025) ** 2
    for t in (0.8, 0.9, 0.95):
        assert min_trials_for_pass(t) == int(np.ceil(t * z2 / (1 - t)))


def test_min_trials_for_pass_unreachable() -> None:
    assert min_trials_for_pass(1.0, max_n=1000) is None


def _coverage(n: int, p: float, method: str, confidence: float = 0.95) -> float:
    ks = np.arange(n + 1)
    low, high = proportion_bounds(ks, n, confidence, method)
    inside = (low <= p) & (p <= high)
    return float(binom.pmf(ks, n, p)[inside].sum())


@pytest.mark.parametrize("method", METHODS)
def test_exact_coverage_near_nominal(method: str) -> None:
    # Exact coverage (sum of binomial probabilities of the counts whose interval covers p),
    # averaged over true rates: close to 95% for every method; Clopper–Pearson never below.
    ps = np.linspace(0.05, 0.95, 91)
    for n in (20, 50, 100):
        cover = np.array([_coverage(n, p, method) for p in ps])
        assert 0.935 <= cover.mean() <= 0.985, (n, cover.mean())
        if method == "clopper-pearson":
            assert cover.min() >= 0.95 - 1e-9


@pytest.mark.parametrize("method", METHODS)
def test_simulated_coverage_with_fixed_seed(method: str) -> None:
    rng = np.random.default_rng(20261129)
    n, reps = 40, 4000
    ps = rng.uniform(0.1, 0.9, reps)
    ks = rng.binomial(n, ps)
    low, high = proportion_bounds(ks, n, 0.95, method)
    covered = ((low <= ps) & (ps <= high)).mean()
    se = np.sqrt(0.95 * 0.05 / reps)
    assert covered >= 0.95 - 4 * se - 0.01


@pytest.mark.parametrize(
    ("k", "n", "confidence", "method"),
    [
        (1, 0, 0.95, "wilson"),
        (-1, 5, 0.95, "wilson"),
        (6, 5, 0.95, "jeffreys"),
        (1, 5, 1.0, "wilson"),
        (1, 5, 0.95, "wald"),
    ],
)
def test_rejects_bad_arguments(k: int, n: int, confidence: float, method: str) -> None:
    with pytest.raises(ConfigError):
        proportion_interval(k, n, confidence, method)


def test_no_trials_is_insufficient_data() -> None:
    from assay.errors import InsufficientDataError

    with pytest.raises(InsufficientDataError):
        proportion_interval(0, 0)

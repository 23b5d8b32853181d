import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from assay.errors import ConfigError
from assay.stats import wilson_interval

GRID = [
    (k, n)
    for n in (1, 2, 3, 5, 10, 30, 31, 100, 1000)
    for k in sorted({0, 1, n // 2, n - 1, n})
    if 0 <= k <= n
]


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize(("k", "n"), GRID)
def test_wilson_equals_scipy(k: int, n: int, confidence: float) -> None:
    expected = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    got = wilson_interval(k, n, confidence)
    assert got.low == pytest.approx(expected.low, abs=1e-12)
    assert got.high == pytest.approx(expected.high, abs=1e-12)
    assert (got.method, got.confidence) == ("wilson", confidence)


@given(
    n=st.integers(1, 5000),
    frac=st.floats(0, 1),
    confidence=st.floats(0.5, 0.999),
)
def test_wilson_contains_estimate_and_stays_in_unit_interval(
    n: int, frac: float, confidence: float
) -> None:
    k = round(frac * n)
    interval = wilson_interval(k, n, confidence)
    assert 0.0 <= interval.low <= k / n <= interval.high <= 1.0


@pytest.mark.parametrize(
    ("k", "n", "confidence"), [(1, 0, 0.95), (-1, 5, 0.95), (6, 5, 0.95), (1, 5, 1.0)]
)
def test_wilson_rejects_bad_arguments(k: int, n: int, confidence: float) -> None:
    with pytest.raises(ConfigError):
        wilson_interval(k, n, confidence)

"""The beta-binomial confidence sequence: its martingale, its interval, its coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from assay.errors import ConfigError
from assay.stats import BernoulliConfidenceSequence


def _mixture_by_quadrature(s: int, n: int, p: float, a: float, b: float) -> float:
    """``∫ q^s (1-q)^(n-s) dBeta(a, b)(q) / (p^s (1-p)^(n-s))`` by numerical integration."""
    from scipy import special as sp

    def integrand(q: float) -> float:
        return math.exp(
            (s + a - 1) * math.log(q) + (n - s + b - 1) * math.log1p(-q) - sp.betaln(a, b)
        )

    value, _ = integrate.quad(integrand, 0, 1, epsabs=0, epsrel=1e-12, limit=200)
    return value / (p**s * (1 - p) ** (n - s))


@pytest.mark.parametrize(("s", "n", "p"), [(0, 1, 0.3), (7, 10, 0.5), (18, 20, 0.8), (3, 40, 0.2)])
@pytest.mark.parametrize(("mean", "strength"), [(0.5, 2.0), (0.8, 5.0), (0.3, 30.0)])
def test_log_evidence_is_the_mixture_integral(
    s: int, n: int, p: float, mean: float, strength: float
) -> None:
    cs = BernoulliConfidenceSequence(0.95, mean, strength)
    expected = _mixture_by_quadrature(s, n, p, mean * strength, (1 - mean) * strength)
    assert float(cs.log_evidence(s, n, p)) == pytest.approx(math.log(expected), rel=1e-9)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 400),
    share=st.floats(0, 1),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
    mean=st.floats(0.05, 0.95),
    strength=st.floats(0.5, 100),
)
def test_interval_ends_are_where_the_evidence_reaches_its_level(
    n: int, share: float, confidence: float, mean: float, strength: float
) -> None:
    s = round(share * n)
    cs = BernoulliConfidenceSequence(confidence, mean, strength)
    low, high = cs.interval(s, n)
    assert 0 <= low <= s / n <= high <= 1
    level = -math.log(1 - confidence)
    # Just inside each end the evidence is below its level, just outside it is above.
    step = 1e-9
    if low > 0:
        assert float(cs.log_evidence(s, n, low + step)) < level
        assert float(cs.log_evidence(s, n, max(low - step, 1e-15))) > level
    if high < 1:
        assert float(cs.log_evidence(s, n, high - step)) < level
        assert float(cs.log_evidence(s, n, min(high + step, 1 - 1e-15))) > level
    # side() agrees with the interval, read without root finding.
    for p in (0.05, 0.3, 0.5, 0.8, 0.95):
        if abs(p - low) > 1e-7 and abs(p - high) > 1e-7:
            expected = 1 if low > p else -1 if high < p else 0
            assert int(cs.side(s, n, p)) == expected


def test_side_is_vectorised_over_counts() -> None:
    cs = BernoulliConfidenceSequence(0.95, 0.8, 5.0)
    s = np.arange(0, 51)
    sides = cs.side(s, 50, 0.8)
    assert sides.dtype == np.int8
    assert [int(x) for x in sides] == [int(cs.side(int(k), 50, 0.8)) for k in s]
    assert sides[0] == -1 and sides[-1] == 1 and sides[40] == 0


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_covers_the_true_rate_at_every_trial_count(p: float) -> None:
    """Ville: P(the true rate ever leaves the sequence in 400 trials) <= 1 - confidence."""
    cs = BernoulliConfidenceSequence(0.9, 0.8, 5.0)
    rng = np.random.default_rng(20261202)
    streams, horizon = 2000, 400
    successes = np.cumsum(rng.random((streams, horizon)) < p, axis=1)
    n = np.arange(1, horizon + 1)
    missed = (cs.log_evidence(successes, n, p) >= -math.log(cs.alpha)).any(axis=1)
    # Binomial noise around a rate <= 0.1 over 2,000 streams: 3 standard errors is 0.02.
    assert missed.mean() <= cs.alpha + 0.02


def test_no_trials_is_the_whole_unit_interval() -> None:
    assert BernoulliConfidenceSequence().interval(0, 0) == (0.0, 1.0)
    assert int(BernoulliConfidenceSequence().side(0, 0, 0.5)) == 0


@pytest.mark.parametrize(
    "kwargs",
    [{"confidence": 1.0}, {"confidence": 0.0}, {"prior_mean": 0.0}, {"prior_strength": 0.0}],
)
def test_bad_designs_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        BernoulliConfidenceSequence(**kwargs)


def test_counts_out_of_range_are_refused() -> None:
    with pytest.raises(ConfigError, match="successes must lie in"):
        BernoulliConfidenceSequence().interval(5, 4)

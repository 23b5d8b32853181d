"""Mann–Whitney p-values of many pairs at once: each exactly scipy's one-call result."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from assay.stats import continuous_shift, continuous_shifts, mann_whitney_p_values


def _pairs(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of many sizes, some tied (small integers), some not, some sharing sizes."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(400):
        n1, n2 = (int(v) for v in rng.integers(1, 14, 2))
        if rng.random() < 0.5:
            x, y = rng.integers(0, 6, n1).astype(float), rng.integers(0, 6, n2).astype(float)
        else:
            x, y = rng.lognormal(0, 1, n1), rng.lognormal(0.3, 1, n2)
        pairs.append((x, y))
    # A tie only in sign (-0.0 and 0.0 are equal: scipy ranks them tied).
    pairs.append((np.array([-0.0, 1.5, 2.5]), np.array([0.0, 3.5, 4.5, 5.5])))
    return pairs


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_every_p_value_is_scipys_own(alternative: str) -> None:
    pairs = [(x, y) for x, y in _pairs(7) if np.ptp(np.concatenate([x, y])) > 0]
    batched = mann_whitney_p_values(pairs, alternative)
    single = [float(sps.mannwhitneyu(x, y, alternative=alternative).pvalue) for x, y in pairs]
    # Bit for bit: the same method, and the same floating-point operations, as one call each.
    assert batched == single


def test_both_of_scipys_methods_are_exercised() -> None:
    """The pairs above reach the exact and the asymptotic method, tied and untied."""
    pairs = _pairs(7)
    small_untied = [
        (x, y)
        for x, y in pairs
        if min(x.size, y.size) <= 8 and np.unique(np.concatenate([x, y])).size == x.size + y.size
    ]
    small_tied = [
        (x, y)
        for x, y in pairs
        if min(x.size, y.size) <= 8 and 1 < np.unique(np.concatenate([x, y])).size < x.size + y.size
    ]
    large = [(x, y) for x, y in pairs if min(x.size, y.size) > 8]
    assert len(small_untied) > 20 and len(small_tied) > 20 and len(large) > 10
    for group in (small_untied, small_tied, large):
        assert mann_whitney_p_values(group) == [
            float(sps.mannwhitneyu(x, y).pvalue) for x, y in group
        ]


def test_continuous_shifts_are_each_features_shift() -> None:
    pairs = [(np.abs(x), np.abs(y)) for x, y in _pairs(11)]
    pairs.append((np.full(5, 3.0), np.full(5, 3.0)))  # nothing varies: p = 1
    shifts = continuous_shifts(pairs, 0.9)
    assert len(shifts) == len(pairs)
    for (b, c), shift in zip(pairs, shifts, strict=True):
        varied = np.ptp(np.concatenate([b, c])) > 0
        expected = float(sps.mannwhitneyu(c, b).pvalue) if varied else 1.0
        assert shift.p_value == expected
        assert shift == continuous_shift(b, c, 0.9)
        if b.mean() > 0 and c.mean() > 0:
            assert shift.effect == pytest.approx(c.mean() / b.mean())


def test_no_pairs_no_p_values() -> None:
    assert mann_whitney_p_values([]) == []
    assert continuous_shifts([]) == []


def test_a_bad_value_is_named_whichever_pair_holds_it() -> None:
    from assay.errors import ConfigError, InsufficientDataError

    good = (np.ones(3), np.arange(3.0))
    with pytest.raises(ConfigError, match="current values must be finite"):
        continuous_shifts([good, (np.ones(3), np.array([1.0, np.nan]))])
    with pytest.raises(ConfigError, match="baseline values must not be negative"):
        continuous_shifts([good, good, (np.array([-1.0]), np.ones(2))])
    with pytest.raises(InsufficientDataError, match="no current values"):
        continuous_shifts([(np.ones(2), np.array([]))])


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_large_and_lopsided_pairs_are_scipys_too(alternative: str) -> None:
    # Past the rank cache: a small sample beside a large one (exact when untied, one scipy
    # call), both large (asymptotic, vectorised), tied and untied.
    rng = np.random.default_rng(3)
    pairs = []
    for n1, n2 in [(3, 90), (90, 3), (8, 70), (40, 60), (120, 9), (100, 100), (9, 9)]:
        pairs.append((rng.normal(size=n1), rng.normal(0.2, size=n2)))
        pairs.append((rng.integers(0, 5, n1) * 1.0, rng.integers(0, 6, n2) * 1.0))
    single = [float(sps.mannwhitneyu(x, y, alternative=alternative).pvalue) for x, y in pairs]
    assert mann_whitney_p_values(pairs, alternative) == single

"""Moments of many samples at once are numpy's of each sample alone, bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import ConfigError
from assay.stats import sample_moments, score_summaries, score_summary


def _alone(x: np.ndarray) -> tuple[float, ...]:
    if x.size == 0:
        return (0.0, *[math.nan] * 6)
    std = float(x.std(ddof=1)) if x.size > 1 else math.nan
    p50, p90 = np.percentile(x, [50, 90])
    return (
        float(x.sum()),
        float(x.mean()),
        std,
        float(x.min()),
        float(x.max()),
        float(p50),
        float(np.percentile(x, 90)) if p90 == p90 else float(p90),
    )


def _samples(seed: int, sizes: list[int]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for k, size in enumerate(sizes):
        kind = k % 4
        if kind == 0:
            x = rng.normal(size=size) * rng.uniform(1e-3, 1e3)
        elif kind == 1:  # scores with ties
            x = np.round(rng.uniform(0, 1, size), 2)
        elif kind == 2:  # one duration and rounding dust, as trace durations are
            x = np.full(size, 0.0201) + rng.normal(size=size) * 1e-17
        else:
            x = rng.integers(0, 5, size) * 1.0
        out.append(x)
    return out


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(0, 300), min_size=1, max_size=30))
def test_moments_are_each_samples_own(seed: int, sizes: list[int]) -> None:
    samples = _samples(seed, sizes + sizes)  # sizes repeat: samples stacked into one matrix
    m = sample_moments(samples)
    for i, x in enumerate(samples):
        got = (m.total[i], m.mean[i], m.std[i], m.min[i], m.max[i], m.p50[i], m.p90[i])
        assert repr(tuple(float(v) for v in got)) == repr(_alone(x))
        assert m.n[i] == x.size


@pytest.mark.parametrize("size", [127, 128, 129, 1023, 8191, 8192, 8193, 70_001])
def test_sizes_past_numpys_summation_blocks(size: int) -> None:
    samples = _samples(size, [size] * 8)
    m = sample_moments(samples)
    for i, x in enumerate(samples):
        got = (m.total[i], m.mean[i], m.std[i], m.min[i], m.max[i], m.p50[i], m.p90[i])
        assert repr(tuple(float(v) for v in got)) == repr(_alone(x))


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 60), min_size=1, max_size=20))
def test_score_summaries_are_score_summary_each(seed: int, sizes: list[int]) -> None:
    samples = _samples(seed, sizes)
    confidences = [0.9 if k % 2 else 0.95 for k in range(len(samples))]
    together = score_summaries(samples, confidences)
    alone = [score_summary(x, c) for x, c in zip(samples, confidences, strict=True)]
    assert [repr(s) for s in together] == [repr(s) for s in alone]


def test_score_summaries_refuse_what_score_summary_refuses() -> None:
    with pytest.raises(ConfigError, match="finite"):
        score_summaries([np.array([1.0, np.inf])], [0.95])
    with pytest.raises(ConfigError, match="confidence"):
        score_summaries([np.array([1.0, 2.0])], [1.5])
    bootstrap = score_summaries([np.array([1.0, 2.0, 4.0])], [0.95], ci="bootstrap", seed=3)
    assert bootstrap == [score_summary(np.array([1.0, 2.0, 4.0]), 0.95, "bootstrap", 3)]

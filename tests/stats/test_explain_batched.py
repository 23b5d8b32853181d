"""The failure explanations test many features at once; each p-value must be scipy's own."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from assay.stats import explain_failures
from assay.stats._explain import _rank_sum_p_values


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(2, 40), st.integers(2, 40))
def test_batched_rank_sums_equal_one_scipy_call_each(seed: int, fails: int, passes: int) -> None:
    rng = np.random.default_rng(seed)
    samples = []
    for k in range(4):
        if k % 2:  # counts, with ties
            samples.append((rng.integers(0, 4, fails) * 1.0, rng.integers(0, 5, passes) * 1.0))
        else:
            samples.append((rng.normal(size=fails), rng.normal(0.3, size=passes)))
    expected = [float(sps.mannwhitneyu(f, p, alternative="two-sided").pvalue) for f, p in samples]
    assert _rank_sum_p_values(samples) == expected


def test_explanations_do_not_depend_on_the_order_of_features() -> None:
    rng = np.random.default_rng(7)
    passed = rng.random(200) < 0.6
    features = {
        "uses:search": (~passed & (rng.random(200) < 0.8)).astype(float),
        "steps": np.where(passed, rng.poisson(3, 200), rng.poisson(6, 200)).astype(float),
        "latency": np.where(passed, 1.0, 1.6) + rng.random(200),
        "llm_calls": rng.poisson(2, 200).astype(float),
    }
    kinds = {
        "uses:search": "binary",
        "steps": "count",
        "latency": "continuous",
        "llm_calls": "count",
    }
    forward = explain_failures(passed, features, kinds=kinds)
    backward = explain_failures(passed, dict(reversed(features.items())), kinds=kinds)
    assert forward == backward
    assert {f.feature for f in forward} >= {"uses:search", "steps", "latency"}


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8), st.integers(1, 8))
def test_small_samples_of_one_rank_pattern_share_scipys_p_value(
    seed: int, fails: int, passes: int
) -> None:
    # Small tests are looked up by their pooled ranks: values of the same ranks (ties included)
    # must give each its own scipy p-value, bit for bit.
    rng = np.random.default_rng(seed)
    ranks = rng.integers(0, 4, fails + passes) * 1.0
    for scale in (1.0, 3.5, 1e-3):
        values = ranks * scale - 2.0  # the same ranks, other values
        fail_x, pass_x = values[:fails], values[fails:]
        if np.ptp(values) == 0:
            continue
        expected = float(sps.mannwhitneyu(fail_x, pass_x, alternative="two-sided").pvalue)
        assert _rank_sum_p_values([(fail_x, pass_x)]) == [expected]

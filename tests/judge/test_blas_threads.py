"""Judging runs numpy's BLAS on one thread: every figure is the one its default threads give."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from assay.judge._blas import one_blas_thread
from assay.stats import paired_comparison, paired_mean_difference


def _blas_threads() -> list[int]:
    return [int(p["num_threads"]) for p in threadpool_info() if p["user_api"] == "blas"]


def _figures(seed: int) -> list[object]:
    rng = np.random.default_rng(seed)
    # 2,000 cases of continuous differences: the sign-flip test's random signs times the
    # differences, a matrix product of 1,000 × 2,000 per block.
    base, cur = rng.gamma(2.0, 1.0, 2000), rng.gamma(2.0, 1.0, 2000) * 1.01
    passed_b, passed_c = rng.binomial(5, 0.8, 2000), rng.binomial(5, 0.77, 2000)
    n = np.full(2000, 5)
    return [
        paired_mean_difference(base, cur),
        paired_comparison(passed_b, n, passed_c, n),
    ]


def test_one_blas_thread_gives_the_figures_of_the_default_threads() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        assert all(t == 2 for t in _blas_threads())
        threaded = _figures(0)
        with one_blas_thread():
            assert all(t == 1 for t in _blas_threads())
            single = _figures(0)
        assert all(t == 2 for t in _blas_threads())  # as it was after the block
    assert single == threaded


def test_the_sign_flip_product_is_the_same_on_one_thread() -> None:
    # The product itself, not only the p-value counted from it: the same bits.
    rng = np.random.default_rng(1)
    signs = rng.integers(0, 2, size=(1000, 2000)).astype(np.float64)
    values = rng.gamma(2.0, 1.0, 2000)
    with threadpool_limits(limits=2, user_api="blas"):
        threaded = signs @ values
        with one_blas_thread():
            single = signs @ values
    assert np.array_equal(single, threaded)

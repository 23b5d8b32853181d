"""numpy's BLAS on one thread while assay judges: its matrices are small, and idle threads spin."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the BLAS library numpy uses on one thread inside the block, as it was after it.

    The matrix products of an analysis (the sign-flip test's random signs times the cases'
    differences, the exact tests' probability sums) are at most a few million cells, which one
    core does in a fraction of a millisecond. OpenBLAS's worker threads, which wait for work
    by spinning, cost far more CPU than the product itself: on 2,000 cases the sign-flip test
    took 0.19 CPU-s with numpy's default threads and 0.02 s on one
    (docs/analysis.md, issue 49). The products are the same IEEE operations either way:
    OpenBLAS gives each output element to one thread, so every figure is the same
    (``tests/judge/test_blas_threads.py``). Other threads of the process that use BLAS
    meanwhile run on one thread too.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield

"""pass@k and pass^k: how often k tries of an agent include one success, or are all successes."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from assay.errors import ConfigError

DEFAULT_KS = (1, 5, 10)
"""The ks reported when none are asked for."""


@dataclass(frozen=True, slots=True)
class PassAtK:
    """One pass@k or pass^k estimate, or the reason there is none."""

    k: int
    """Number of tries the estimate is about."""
    value: float | None
    """The unbiased estimate in [0, 1]; None when it cannot be estimated (k > n)."""
    reason: str | None = None
    """Why ``value`` is None, in a sentence; None when there is a value."""


def _check(n: int, c: int, k: int) -> None:
    if n < 0 or not 0 <= c <= n:
        raise ConfigError(f"need 0 <= passed <= n (got {c} of {n})")
    if k < 1:
        raise ConfigError(f"k must be at least 1 (got {k})")


def _too_few(n: int, k: int) -> str:
    return f"k = {k} needs at least {k} trials; only {n} were run"


def pass_at_k(n: int, c: int, k: int) -> PassAtK:
    """Unbiased estimate of pass@k: the chance that at least one of k tries passes.

    pass@k = 1 − C(n − c, k) / C(n, k), from n trials of which c passed (Chen et al. 2021,
    "Evaluating Large Language Models Trained on Code", arXiv:2107.03374), computed in the
    stable product form 1 − Π_{i = n − c + 1}^{n} (1 − k / i) that never forms a binomial
    coefficient.

    Args:
        n: Trials run.
        c: Trials passed, in [0, n].
        k: Tries, ≥ 1.

    Returns:
        The estimate; ``value`` is None with a reason when k > n.
    """
    _check(n, c, k)
    if k > n:
        return PassAtK(k, None, _too_few(n, k))
    if n - c < k:
        return PassAtK(k, 1.0)
    # The terms made by numpy (the same IEEE quotients and differences as Python's), then
    # multiplied in order, left to right, by math.prod: the loop's product, bit for bit, at
    # a fraction of its cost for tens of thousands of trials.
    terms = 1.0 - k / np.arange(n - c + 1, n + 1, dtype=np.int64)
    return PassAtK(k, 1.0 - math.prod(terms.tolist()))


def pass_hat_k(n: int, c: int, k: int) -> PassAtK:
    """Unbiased estimate of pass^k: the chance that all of k tries pass (reliability).

    pass^k = C(c, k) / C(n, k) (Yao et al. 2024, "τ-bench", arXiv:2406.12045), computed as the
    product Π_{i = 0}^{k − 1} (c − i) / (n − i).

    Args:
        n: Trials run.
        c: Trials passed, in [0, n].
        k: Tries, ≥ 1.

    Returns:
        The estimate; ``value`` is None with a reason when k > n.
    """
    _check(n, c, k)
    if k > n:
        return PassAtK(k, None, _too_few(n, k))
    if c < k:
        return PassAtK(k, 0.0)
    product = 1.0
    for i in range(k):
        product *= (c - i) / (n - i)
    return PassAtK(k, product)


def _ks(ks: Iterable[int]) -> list[int]:
    chosen = sorted(set(ks))
    if not chosen:
        raise ConfigError("at least one k is needed")
    return chosen


def pass_at_ks(n: int, c: int, ks: Iterable[int] = DEFAULT_KS) -> dict[int, PassAtK]:
    """:func:`pass_at_k` for each k in ``ks``, keyed by k in increasing order."""
    return {k: pass_at_k(n, c, k) for k in _ks(ks)}


def pass_hat_ks(n: int, c: int, ks: Iterable[int] = DEFAULT_KS) -> dict[int, PassAtK]:
    """:func:`pass_hat_k` for each k in ``ks``, keyed by k in increasing order."""
    return {k: pass_hat_k(n, c, k) for k in _ks(ks)}

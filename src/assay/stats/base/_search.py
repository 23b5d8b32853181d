"""The smallest whole number for which a rising yes/no question turns yes."""

from __future__ import annotations

from collections.abc import Callable


def smallest_passing(passes: Callable[[int], bool], limit: int) -> int | None:
    """The smallest n in [1, limit] with ``passes(n)``, by doubling and then bisection.

    ``passes`` should be False up to some n and True from there on; where it is not quite
    monotone (a probability with small saw-teeth), the answer is one n at which it turns True
    with every tried smaller n False, found in O(log n) calls.

    Args:
        passes: The question, asked of n ≥ 1.
        limit: The largest n considered.

    Returns:
        The n found, or None when ``passes(limit)`` is False too.
    """
    hi = 1
    while not passes(hi):
        if hi >= limit:
            return None
        hi = min(2 * hi, limit)
    lo = hi // 2  # passes(lo) is False (or lo == 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return hi

"""smallest_passing: the first n at which a rising question turns yes, in O(log n) questions."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from assay.stats import smallest_passing


@given(first=st.integers(1, 10_000), limit=st.integers(1, 10_000))
def test_finds_the_first_n_of_a_monotone_question(first: int, limit: int) -> None:
    asked: list[int] = []

    def passes(n: int) -> bool:
        asked.append(n)
        return n >= first

    found = smallest_passing(passes, limit)
    assert found == (first if first <= limit else None)
    assert all(1 <= n <= limit for n in asked)
    assert len(asked) <= 2 * math.ceil(math.log2(limit)) + 2


def test_a_limit_below_one_asks_once() -> None:
    assert smallest_passing(lambda n: n >= 1, 0) == 1
    assert smallest_passing(lambda n: False, 0) is None

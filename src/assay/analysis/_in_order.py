"""Calls over a list of large items, a few at a time in threads, results in the list's order.

For steps of the set's trials table that Polars runs without Python's lock (reordering its
columns): two at once keep both cores busy. The items are taken out of the caller's list as
they are handed over, and each call gets its item in a box it empties, so an item is freed as
soon as the call lets go of it, not when the call returns.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Final, TypeVar

T = TypeVar("T")
R = TypeVar("R")

AT_ONCE: Final = 2
"""Calls at once: one a core on the machines assay is measured on."""


def taken_in_order(
    items: list[T], call: Callable[[list[T]], R], name: str, at_once: int = AT_ONCE
) -> Iterator[R]:
    """``call`` of each item of ``items`` (in a one-item box), in order, ``at_once`` at a time.

    ``items`` is emptied as the calls are handed out: the caller must hold no other reference
    to an item for it to be freed early. ``call`` should ``pop`` its box.
    """
    items.reverse()
    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(at_once, thread_name_prefix=name) as pool:
        while items or pending:
            while items and len(pending) < at_once:
                pending.append(pool.submit(call, [items.pop()]))
            yield pending.popleft().result()

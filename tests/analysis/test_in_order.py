"""Calls a few at a time in threads: results in the items' order, items handed over."""

from __future__ import annotations

import threading
import time
import weakref

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis._in_order import taken_in_order


class Item:
    def __init__(self, value: int) -> None:
        self.value = value


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(), max_size=12), st.integers(1, 4))
def test_results_come_in_the_items_order_and_the_list_is_emptied(
    values: list[int], at_once: int
) -> None:
    items = list(values)

    def call(box: list[int]) -> int:
        value = box.pop()
        time.sleep(0.001 * (value % 3))  # calls end out of order
        return value * 2

    assert list(taken_in_order(items, call, "test", at_once)) == [v * 2 for v in values]
    assert items == []


def test_no_more_calls_run_at_once_than_asked() -> None:
    running, most = 0, 0
    lock = threading.Lock()

    def call(box: list[int]) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return box.pop()

    assert list(taken_in_order(list(range(8)), call, "test", 2)) == list(range(8))
    assert most == 2


def test_an_item_is_freed_once_its_call_lets_go_of_it() -> None:
    # The call empties its box, so nothing but the call holds the item while it runs.
    items = [Item(v) for v in range(3)]
    refs = [weakref.ref(item) for item in items]
    freed: list[bool] = []

    def call(box: list[Item]) -> int:
        item = box.pop()
        value = item.value
        del item
        freed.append(refs[value]() is None)
        return value

    assert list(taken_in_order(items, call, "test")) == [0, 1, 2]
    assert freed == [True, True, True]

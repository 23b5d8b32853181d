"""PathTable and PathView: lists held as codes read exactly as the tuples they stand for."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.judge._path_table import PathTable

NAMES = st.lists(st.sampled_from(["search", "read", "write", "ask"]), max_size=6).map(tuple)


def _table(lists: list[tuple[str, ...]], many_names: bool = False) -> PathTable:
    names = sorted({n for t in lists for n in t})
    if many_names:  # more than a byte's codes: the codes stay a numpy array
        names += [f"unused-{i}" for i in range(300)]
    code = {n: i for i, n in enumerate(names)}
    element = np.array([code[n] for t in lists for n in t], dtype=np.int32)
    bounds = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in lists], out=bounds[1:])
    return PathTable(names, element, bounds)


@settings(deadline=None)
@given(st.lists(NAMES, max_size=30), st.booleans(), st.data())
def test_a_table_and_its_views_read_as_their_tuples(
    lists: list[tuple[str, ...]], many_names: bool, data: st.DataObject
) -> None:
    table = _table(lists, many_names)
    assert len(table) == len(lists)
    assert list(table) == lists
    assert [table[k] for k in range(len(lists))] == lists
    assert [table[-k] for k in range(1, len(lists) + 1)] == [
        lists[-k] for k in range(1, len(lists) + 1)
    ]
    assert table[1:4] == tuple(lists[1:4])
    picks = data.draw(st.lists(st.integers(0, max(len(lists) - 1, 0)), max_size=20))
    if not lists:
        picks = []
    view = table.view(np.array(picks, dtype=np.intp))
    assert len(view) == len(picks)
    assert list(view) == [lists[k] for k in picks]
    assert [view[np.int64(i)] for i in range(len(picks))] == [lists[k] for k in picks]
    if picks:
        assert view[-1] == lists[picks[-1]]
        assert view[:2] == tuple(lists[k] for k in picks[:2])


def test_reading_past_the_end_is_an_index_error() -> None:
    table = _table([("a",), ("b", "a")])
    view = table.view(np.array([1], dtype=np.intp))
    for sequence in (table, view):
        with pytest.raises(IndexError):
            sequence[len(sequence)]
        with pytest.raises(IndexError):
            sequence[-len(sequence) - 1]
    with pytest.raises(TypeError):
        table[1.0]  # type: ignore[call-overload]

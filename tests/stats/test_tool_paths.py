"""ToolPaths: the distinct sequences and index must say exactly what the per-trial lists say."""

from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis import columns as tc
from assay.analysis._features import _IN_PYTHON, distinct_lists, tool_paths
from assay.stats import ToolPaths

TOOLS = st.lists(st.sampled_from(["search", "read", "write"]), max_size=6).map(tuple)


@settings(deadline=None)
@given(st.lists(TOOLS, max_size=40))
def test_paths_rebuild_every_trial_and_count_like_counter(seqs: list[tuple[str, ...]]) -> None:
    paths = ToolPaths.of(seqs)
    assert [paths.distinct[k] for k in paths.index] == seqs
    assert paths.most_common() == Counter(seqs).most_common()
    assert paths.most_common(2) == Counter(seqs).most_common(2)


@settings(deadline=None)
@given(st.lists(st.tuples(TOOLS, st.booleans()), max_size=40))
def test_most_common_among_kept_trials_is_counters_choice(
    rows: list[tuple[tuple[str, ...], bool]],
) -> None:
    seqs = [s for s, _ in rows]
    keep = np.array([k for _, k in rows], dtype=bool)
    kept = [s for s, k in rows if k]
    expected = Counter(kept).most_common(1)[0][0] if kept else None
    paths = ToolPaths.of(seqs)
    assert paths.most_common_among(keep) == expected
    at = paths.most_common_at(keep)
    assert (at is None) == (expected is None)
    assert at is None or paths.distinct[at] == expected


@settings(deadline=None)
@given(st.lists(TOOLS, max_size=40))
def test_polars_paths_equal_python_paths(seqs: list[tuple[str, ...]]) -> None:
    trials = pl.DataFrame(
        {tc.TOOL_SEQUENCE: [list(s) for s in seqs]},
        schema={tc.TOOL_SEQUENCE: pl.List(pl.String)},
    )
    made = tool_paths(trials)
    expected = ToolPaths.of(seqs)
    assert made.distinct == expected.distinct
    assert made.index.tolist() == expected.index.tolist()


def test_a_null_list_is_the_empty_list() -> None:
    distinct, index = distinct_lists(pl.Series([["a"], None, []], dtype=pl.List(pl.String)))
    assert distinct == [("a",), ()]
    assert index.tolist() == [0, 1, 1]


def test_only_empty_lists_are_one_empty_list() -> None:
    distinct, index = distinct_lists(pl.Series([[], None, []], dtype=pl.List(pl.String)))
    assert distinct == [()]
    assert index.tolist() == [0, 0, 0]
    distinct, index = distinct_lists(pl.Series([], dtype=pl.List(pl.String)))
    assert distinct == [] and index.tolist() == []


@settings(deadline=None, max_examples=30)
@given(st.lists(st.one_of(st.none(), TOOLS), min_size=1, max_size=40))
def test_large_and_small_columns_give_the_same_lists(seqs: list[tuple[str, ...] | None]) -> None:
    # Past _IN_PYTHON rows the lists are grouped by Polars, below read in Python: one answer.
    rows = [list(s) if s is not None else None for s in seqs]
    rows = rows * (_IN_PYTHON // len(rows) + 1)
    assert len(rows) > _IN_PYTHON
    column = pl.Series(rows, dtype=pl.List(pl.String))
    expected = ToolPaths.of([tuple(r) if r else () for r in rows])
    for values in (column, column.head(_IN_PYTHON)):
        distinct, index = distinct_lists(values)
        assert distinct == list(expected.distinct)
        assert index.tolist() == expected.index.tolist()[: values.len()]


@pytest.mark.parametrize(
    "lists",
    [
        [["gpt-4o"]],  # every trial one model: one list without a group-by
        [["a", "a"]],
        [["a", "a"], ["a"]],  # one value, lists of two lengths
        [["a", None], ["a", "a"]],  # a null element is a value of its own
        [[None]],
        [["a", "b"], ["a", "b"]],
        [["a"], None, ["a"]],  # a null list is the empty list
    ],
)
def test_lists_of_one_value_are_grouped_as_any_others(lists: list[list[str | None] | None]) -> None:
    rows = lists * (_IN_PYTHON // len(lists) + 1)
    distinct, index = distinct_lists(pl.Series(rows, dtype=pl.List(pl.String)))
    seen: dict[tuple[str | None, ...], int] = {}
    codes = [seen.setdefault(tuple(r) if r else (), len(seen)) for r in rows]
    assert distinct == list(seen)
    assert index.tolist() == codes

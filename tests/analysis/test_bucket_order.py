"""The buckets' trials tables, put together, come in one order whatever the bucketing.

``concat_trials`` sorts by test, start time and trial index, and compares the trace and span
ids only where rows tie on those three: the result must be the full five-key order either way.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis import columns as tc
from assay.analysis._per_bucket import concat_trials
from assay.analysis._trials import Trials
from assay.quality import DataQuality

ORDER = [tc.TEST_ID, tc.START_TIME, tc.TRIAL_INDEX, tc.TRACE_ID, tc.SPAN_ID]

_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", None]),
        st.integers(0, 3) | st.none(),
        st.integers(0, 2) | st.none(),
        st.sampled_from(["t1", "t2", "t3"]),
        st.sampled_from(["s1", "s2"]),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(rows=_rows, cuts=st.lists(st.integers(0, 40), max_size=4), distinct=st.booleans())
def test_buckets_concatenated_are_in_the_five_key_order(
    rows: list[tuple[str | None, int | None, int | None, str, str]],
    cuts: list[int],
    distinct: bool,
) -> None:
    if distinct:  # every trial its own start: no ties, the three-key order alone decides
        rows = [(t, k, i, tr, sp) for k, (t, _, i, tr, sp) in enumerate(rows)]
    table = pl.DataFrame(
        rows,
        schema={
            tc.TEST_ID: pl.String,
            tc.START_TIME: pl.Int64,
            tc.TRIAL_INDEX: pl.Int64,
            tc.TRACE_ID: pl.String,
            tc.SPAN_ID: pl.String,
        },
        orient="row",
    ).with_columns(
        pl.int_range(pl.len()).alias("row"), pl.lit([], pl.List(pl.String)).alias(tc.TOOL_SEQUENCE)
    )
    bounds = sorted({0, table.height, *(min(c, table.height) for c in cuts)})
    buckets = [
        Trials(table.slice(a, b - a), DataQuality(()))
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    got = concat_trials(buckets, lambda: 0, "assay.test.id").table
    expected = table.sort(ORDER, nulls_last=True, maintain_order=True)
    assert got.select(ORDER).equals(expected.select(ORDER))
    # Rows equal on all five keys are interchangeable; any other row is where it must be.
    if not table.select(ORDER).is_duplicated().any():
        assert got["row"].to_list() == expected["row"].to_list()


def test_buckets_of_different_schemas_are_put_together_by_name() -> None:
    """A bucket whose column holds only nulls may carry no type for it (as Spark's do)."""
    typed = pl.DataFrame(
        {
            tc.TEST_ID: ["a", "b"],
            tc.START_TIME: [2, 1],
            tc.TRIAL_INDEX: [0, 0],
            tc.TRACE_ID: ["t1", "t2"],
            tc.SPAN_ID: ["s1", "s2"],
            tc.SUITE: ["x", None],
            tc.TOOL_SEQUENCE: [["search"], []],
        }
    )
    untyped = pl.DataFrame(
        {
            tc.SUITE: [None],
            tc.TEST_ID: ["a"],
            tc.START_TIME: [1],
            tc.TRIAL_INDEX: [1],
            tc.TRACE_ID: ["t3"],
            tc.SPAN_ID: ["s3"],
            tc.TOOL_SEQUENCE: [["answer"]],
        }
    )
    assert untyped.schema[tc.SUITE] == pl.Null
    got = concat_trials(
        [Trials(typed, DataQuality(())), Trials(untyped, DataQuality(()))],
        lambda: 0,
        "assay.test.id",
    ).table
    assert got.columns == typed.columns
    assert got.schema[tc.SUITE] == pl.String
    assert got[tc.TRACE_ID].to_list() == ["t3", "t1", "t2"]
    assert got[tc.SUITE].to_list() == [None, "x", None]
    assert got[tc.TOOL_SEQUENCE].to_list() == [["answer"], ["search"], []]

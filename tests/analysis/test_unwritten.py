"""Columns that hold nothing are made anew in zeroed buffers: same values, no memory held."""

from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis import columns as tc
from assay.analysis._per_bucket import concat_trials
from assay.analysis._trials import Trials
from assay.analysis._unwritten import unwritten, with_unwritten_columns
from assay.quality import DataQuality

CHECK = pl.Struct({"name": pl.String, "passed": pl.Boolean})

NOTHING = [
    pl.Series("suite", [None, None, None], pl.String),
    pl.Series("retries", [0, 0, 0], pl.Int64),
    pl.Series("small", [0, 0], pl.Int32),
    pl.Series("agents", [[], [], []], pl.List(pl.String)),
    pl.Series("checks", [[], []], pl.List(CHECK)),
    pl.Series("models", [None, None], pl.List(pl.String)),
    pl.Series("duration", [None, None], pl.Float64),
]

SOMETHING = [
    pl.Series("suite", [None, "s", None], pl.String),
    pl.Series("retries", [0, 1, 0], pl.Int64),
    pl.Series("retries", [0, None, 0], pl.Int64),  # a null is not a zero
    pl.Series("agents", [[], ["a"], []], pl.List(pl.String)),
    pl.Series("agents", [[], None], pl.List(pl.String)),
    pl.Series("duration", [0.0, 0.0], pl.Float64),  # floats are kept: -0.0 is not 0.0 bitwise
    pl.Series("passed", [False, False], pl.Boolean),
    pl.Series("empty", [], pl.Int64),
]


@pytest.mark.parametrize("column", NOTHING, ids=lambda s: f"{s.name}-{s.dtype}")
def test_a_column_holding_nothing_is_made_anew_unchanged(column: pl.Series) -> None:
    made = unwritten(column)
    assert made is not None
    assert made.name == column.name
    assert made.dtype == column.dtype
    assert made.to_list() == column.to_list()
    assert made.equals(column, check_dtypes=True, check_names=True)


@pytest.mark.parametrize("column", SOMETHING, ids=lambda s: f"{s.name}-{s.dtype}")
def test_a_column_holding_something_is_kept(column: pl.Series) -> None:
    assert unwritten(column) is None


def test_a_table_keeps_its_values_types_and_order() -> None:
    three_rows = [s for s in NOTHING if s.len() == 3]
    table = pl.DataFrame([pl.Series("x", [1, 2, 3]), *three_rows, SOMETHING[1].alias("tries")])
    made = with_unwritten_columns(table)
    assert made.columns == table.columns
    assert made.equals(table)


# Run in a process of its own, its allocator returning freed pages at once: pages freed
# earlier in the process cannot then be reused and hide what a column takes.
_MEASURE = """
import gc, os, sys
import polars as pl
from assay.analysis._unwritten import unwritten

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

one = {
    "strings": pl.Series("suite", [None], pl.String),
    "counts": pl.Series("retries", [0], pl.Int64),
    "lists": pl.Series("agents", [[]], pl.List(pl.String)),
}[sys.argv[1]]
unwritten(one.new_from_index(0, 10))  # what it imports on first use is not counted
# 8M rows written, as a query writes them: 61 MiB of counts or offsets, 122 MiB of views.
column = pl.concat([one.new_from_index(0, 1000)] * 8000, rechunk=True)
gc.collect()
before = resident()
made = unwritten(column)
assert made is not None and made.equals(column)
del column
gc.collect()
print(round(before - resident(), 1))
"""


@pytest.mark.parametrize("kind", ["strings", "counts", "lists"])
def test_a_column_made_anew_frees_the_written_one(kind: str) -> None:
    env = {**os.environ, "_RJEM_MALLOC_CONF": "dirty_decay_ms:0,muzzy_decay_ms:0"}
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, kind], env=env, capture_output=True, text=True, check=True
    ).stdout
    freed = float(out)
    assert freed > 45, f"{kind}: {freed} MiB freed of the 61 MiB or more written"


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 9)), min_size=1, max_size=30
    ),
    cuts=st.lists(st.integers(0, 30), max_size=3),
    filled=st.sampled_from(["none", "some", "all"]),
)
def test_buckets_put_together_hold_the_same_values(
    rows: list[tuple[str, int]], cuts: list[int], filled: str
) -> None:
    """Some buckets hold nothing in a column, others something: the set's table is exact."""
    n = len(rows)
    marks = {"none": [], "some": [n // 2], "all": list(range(n))}[filled]
    table = pl.DataFrame(
        {
            tc.TEST_ID: [t for t, _ in rows],
            tc.START_TIME: [s for _, s in rows],
            tc.TRIAL_INDEX: list(range(n)),
            tc.TRACE_ID: [f"t{i}" for i in range(n)],
            tc.SPAN_ID: [f"s{i}" for i in range(n)],
            tc.TOOL_SEQUENCE: [["x"] if i in marks else [] for i in range(n)],
            tc.SUITE: ["s" if i in marks else None for i in range(n)],
            tc.RETRIES: [1 if i in marks else 0 for i in range(n)],
        },
        schema_overrides={tc.TOOL_SEQUENCE: pl.List(pl.String), tc.SUITE: pl.String},
    )
    bounds = sorted({0, n, *(min(c, n) for c in cuts)})
    buckets = [
        Trials(with_unwritten_columns(table.slice(a, b - a)), DataQuality(()))
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    got = concat_trials(buckets, lambda: 0, "assay.test.id").table
    order = [tc.TEST_ID, tc.START_TIME, tc.TRIAL_INDEX]
    assert got.equals(table.sort(order))

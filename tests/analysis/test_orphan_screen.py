"""The orphan screen is an upper bound, and ``count_orphans`` makes it exact, on any trace shape."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis import _columns as tc
from assay.analysis._work import _below_the_root, count_orphans

# Span ids of a trace are drawn from a small alphabet so that parents often exist, sometimes
# do not, a trace may have no root or several, and a span may name itself as its parent.
_IDS = st.sampled_from([f"{i:016x}" for i in range(6)])
_SPAN = st.tuples(_IDS, st.one_of(st.none(), _IDS))
_TRACE = st.lists(_SPAN, min_size=1, max_size=8)


def _spans(traces: list[list[tuple[str, str | None]]]) -> pl.DataFrame:
    rows = [(f"{t:032x}", span, parent) for t, spans in enumerate(traces) for span, parent in spans]
    return pl.DataFrame(rows, schema=["trace_id", "span_id", "parent_span_id"], orient="row")


def _expected(traces: list[list[tuple[str, str | None]]]) -> dict[str, int]:
    out = {}
    for t, spans in enumerate(traces):
        present = {span for span, _ in spans}
        out[f"{t:032x}"] = sum(1 for _, p in spans if p is not None and p not in present)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(_TRACE, min_size=1, max_size=6))
def test_screen_bounds_and_count_is_exact(traces: list[list[tuple[str, str | None]]]) -> None:
    spans = _spans(traces)
    screened = spans.group_by("trace_id").agg(_below_the_root().alias(tc.ORPHANS))
    expected = _expected(traces)
    for trace_id, bound in screened.select("trace_id", tc.ORPHANS).iter_rows():
        assert bound >= expected[trace_id]
    exact = count_orphans(spans.lazy(), screened)
    assert dict(exact.select("trace_id", tc.ORPHANS).iter_rows()) == expected

"""``count_orphans`` counts spans whose parent is missing exactly, on any trace shape."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.analysis import _columns as tc
from assay.analysis import _work
from assay.analysis._work import count_orphans, parent_range

# Span ids of a trace are drawn from a small alphabet so that parents often exist, sometimes
# do not, a trace may have no root or several, and a span may name itself as its parent.
_IDS = st.sampled_from([f"{i:016x}" for i in range(6)])
_SPAN = st.tuples(_IDS, st.one_of(st.none(), _IDS))
_TRACE = st.lists(_SPAN, min_size=1, max_size=8)


def _spans(traces: list[list[tuple[str, str | None]]]) -> pl.DataFrame:
    rows = [(f"{t:032x}", span, parent) for t, spans in enumerate(traces) for span, parent in spans]
    ids = {"trace_id": pl.String, "span_id": pl.String, "parent_span_id": pl.String}
    return pl.DataFrame(rows, schema=ids, orient="row")


def _expected(traces: list[list[tuple[str, str | None]]]) -> dict[str, int]:
    out = {}
    for t, spans in enumerate(traces):
        present = {span for span, _ in spans}
        out[f"{t:032x}"] = sum(1 for _, p in spans if p is not None and p not in present)
    return out


@settings(max_examples=100, deadline=None)
@given(st.lists(_TRACE, min_size=1, max_size=6), st.sampled_from([1_000_000, 7, 2]))
def test_orphans_are_counted_exactly(
    traces: list[list[tuple[str, str | None]]], chunk: int
) -> None:
    # Small chunks: the lookup is made a few traces at a time, with the same counts.
    _work.ORPHAN_CHUNK_SPANS, default = chunk, _work.ORPHAN_CHUNK_SPANS
    try:
        _check_counts(traces)
    finally:
        _work.ORPHAN_CHUNK_SPANS = default


def _check_counts(traces: list[list[tuple[str, str | None]]]) -> None:
    spans = _spans(traces)
    per_trace = spans.group_by("trace_id").agg(parent_range())
    counted = count_orphans(spans.lazy(), per_trace)
    assert counted.columns == ["trace_id", tc.ORPHANS]
    assert dict(counted.iter_rows()) == _expected(traces)


def test_only_traces_not_flat_under_a_root_are_read_again(monkeypatch) -> None:
    flagged: list[list[str]] = []
    exact = _work._exact_orphans

    def spy(spans: pl.LazyFrame, per_trace: pl.DataFrame) -> pl.DataFrame:
        flagged.append(sorted(per_trace.filter(pl.col(tc.ORPHANS) > 0)["trace_id"].to_list()))
        return exact(spans, per_trace)

    monkeypatch.setattr(_work, "_exact_orphans", spy)
    root, a, b = (f"{i:016x}" for i in range(3))
    flat = [(root, None), (a, root), (b, root)]
    nested = [(root, None), (a, root), (b, a)]
    lost = [(root, None), (a, "f" * 16)]  # one parent, never recorded
    spans = _spans([flat, nested, lost, [(root, None)]])
    counted = count_orphans(spans.lazy(), spans.group_by("trace_id").agg(parent_range()))
    assert flagged == [[f"{1:032x}", f"{2:032x}"]]
    assert dict(counted.iter_rows()) == {f"{t:032x}": int(t == 2) for t in range(4)}

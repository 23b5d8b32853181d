"""Calls are listed in start-time order; calls starting at the same instant in stored order."""

from __future__ import annotations

import pytest
from opentelemetry.trace import Status, StatusCode

from assay import conventions as c
from assay.analysis import columns as tc
from assay.analysis import read_trials
from assay.store import open_trace_set

_T0 = 1_700_000_000_000_000_000


def _tool(tracer, name: str, start: int, *, fails: bool = False) -> None:
    span = tracer.start_span(
        f"execute_tool {name}",
        start_time=start,
        attributes={c.GENAI_OPERATION: c.GENAI_EXECUTE_TOOL, c.GENAI_TOOL_NAME: name},
    )
    if fails:
        span.set_status(Status(StatusCode.ERROR, f"{name} broke"))
    span.end(end_time=start + 10)


@pytest.mark.parametrize("fails", [False, True], ids=["names only", "with statuses"])
def test_start_order_then_stored_order(parquet_sink, tracer, fails: bool) -> None:
    with tracer.start_as_current_span(
        "trial", start_time=_T0, attributes={c.TEST_ID: "t", c.TRIAL_INDEX: 0}
    ):
        # Ended (so stored) in this order; c and a start at the same instant.
        _tool(tracer, "late", _T0 + 300)
        _tool(tracer, "c", _T0 + 100, fails=fails)
        _tool(tracer, "a", _T0 + 100)
        _tool(tracer, "first", _T0 + 50)
    # The footers say whether any span failed: names alone, or calls with their statuses.
    trace_set = open_trace_set(parquet_sink.flush())
    table = read_trials(trace_set.scan(), contents=trace_set.contents()).table
    assert table[tc.TOOL_SEQUENCE].to_list() == [["first", "c", "a", "late"]]
    assert table[tc.TOOL_ERRORS].to_list() == [int(fails)]

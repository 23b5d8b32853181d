"""Tool errors reach every report: count, trials with one, first messages, the trace to open."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.trace import Status, StatusCode

from assay import conventions as c
from assay.analysis import columns as tc
from assay.cli import run
from assay.judge._tool_errors import tool_errors

AGENT = "gen_ai.agent.name"


def _runs(tracer, *, indexed: bool) -> list[str]:
    """Ten runs of one agent; runs 0, 3, 6, 9 have a failed tool (run 9 two): their traces."""
    failed = []
    for i in range(10):
        attributes: dict[str, object] = {c.GENAI_OPERATION: "invoke_agent", AGENT: "support"}
        if indexed:
            attributes[c.TRIAL_INDEX] = i
        with tracer.start_as_current_span("invoke_agent", attributes=attributes) as root:
            for call in range(2 if i == 9 else 1):
                with tracer.start_as_current_span(
                    "execute_tool",
                    attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: "flaky"},
                ) as tool:
                    if i % 3 == 0:
                        tool.set_status(Status(StatusCode.ERROR, f"RuntimeError: boom {i}.{call}"))
            if i % 3 == 0:
                failed.append(format(root.get_span_context().trace_id, "032x"))
    return failed


@pytest.mark.parametrize("indexed", [True, False])
def test_the_json_gives_count_trials_messages_and_trace(
    parquet_sink, tracer, capsys, indexed: bool
) -> None:
    failed = _runs(tracer, indexed=indexed)
    path = str(parquet_sink.flush())
    run(["analyze", path, "--test-attribute", AGENT, "--format", "json"])
    (test,) = json.loads(capsys.readouterr().out)["tests"]
    errors = test["tool_errors"]
    assert (errors["count"], errors["trials"]) == (5, 4)
    assert errors["messages"] == ["RuntimeError: boom 0.0", "RuntimeError: boom 3.0"] + [
        "RuntimeError: boom 6.0"
    ]
    assert errors["first_trace_id"] == failed[0]
    assert errors["first_trial_index"] == (0 if indexed else None)


def test_every_report_says_it(parquet_sink, tracer, capsys, tmp_path) -> None:
    failed = _runs(tracer, indexed=False)
    path = str(parquet_sink.flush())
    junit, markdown = tmp_path / "r.xml", tmp_path / "r.md"
    formats = ("console", f"junit:{junit}", f"markdown:{markdown}")
    run(
        ["analyze", path, "--test-attribute", AGENT, *(a for f in formats for a in ("--format", f))]
    )
    console = " ".join(capsys.readouterr().out.split())
    said = f"5 in 4 of 10 trials (the agent may have recovered); first in trace {failed[0]}"
    assert said in console and "RuntimeError: boom 0.0" in console
    texts = [e.text or "" for e in ET.parse(junit).getroot().iter() if e.tag == "failure"]
    texts += [e.text or "" for e in ET.parse(junit).getroot().iter("system-out")]
    assert any(f"tool errors: {said}" in t for t in texts)
    # the Markdown names the trace as code (a link with --trace-url)
    assert said.replace(failed[0], f"<code>{failed[0]}</code>") in markdown.read_text()


def test_no_tool_error_says_zero_and_prints_nothing(parquet_sink, tracer, capsys) -> None:
    for _ in range(3):
        with tracer.start_as_current_span("invoke_agent", attributes={AGENT: "support"}):
            with tracer.start_as_current_span(
                "execute_tool", attributes={c.GENAI_OPERATION: "execute_tool"}
            ):
                pass
    path = str(parquet_sink.flush())
    run(["analyze", path, "--test-attribute", AGENT, "--format", "json"])
    (test,) = json.loads(capsys.readouterr().out)["tests"]
    assert test["tool_errors"] == {
        "count": 0,
        "trials": 0,
        "messages": [],
        "first_trace_id": None,
        "first_trial_index": None,
    }
    run(["analyze", path, "--test-attribute", AGENT])
    assert "tool errors" not in capsys.readouterr().out


def test_a_tool_span_without_a_status_message_gives_its_exception(
    parquet_sink, tracer, capsys
) -> None:
    for i in range(3):
        with tracer.start_as_current_span("invoke_agent", attributes={AGENT: "support"}):
            with tracer.start_as_current_span(
                "execute_tool", attributes={c.GENAI_OPERATION: "execute_tool"}
            ) as tool:
                if i == 1:  # as pydantic-ai records a ModelRetry: an exception event only
                    tool.record_exception(ValueError("not yet"))
                    tool.set_status(Status(StatusCode.ERROR))
    run(["analyze", str(parquet_sink.flush()), "--test-attribute", AGENT, "--format", "json"])
    (test,) = json.loads(capsys.readouterr().out)["tests"]
    assert test["tool_errors"]["messages"] == ["ValueError: not yet"]


@settings(deadline=None, max_examples=80)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(0, 3)),  # tool errors
            st.one_of(st.none(), st.integers(0, 4)),  # trial index (ties, missing)
            st.sampled_from(["timeout", "bad args", "quota"]),
        ),
        max_size=12,
    )
)
def test_first_failing_trial_is_polars_sorts_first(rows: list[tuple]) -> None:
    trials = pl.DataFrame(
        {
            tc.TOOL_ERRORS: [r[0] for r in rows],
            tc.TRIAL_INDEX: [r[1] for r in rows],
            tc.TOOL_ERROR_MESSAGES: [[r[2], f"{r[2]} {i}"] for i, r in enumerate(rows)],
            tc.TRACE_ID: [f"t{i}" for i in range(len(rows))],
        },
        schema_overrides={tc.TOOL_ERRORS: pl.Int64, tc.TRIAL_INDEX: pl.Int64},
    )
    # The reference: a Polars filter and a stable sort, trials without an index last.
    failed = trials.filter(pl.col(tc.TOOL_ERRORS) > 0).sort(
        tc.TRIAL_INDEX, nulls_last=True, maintain_order=True
    )
    found = tool_errors(trials)
    assert found.trials == failed.height
    if failed.height:
        assert found.first_trace_id == failed[tc.TRACE_ID][0]
        assert found.first_trial_index == failed[tc.TRIAL_INDEX][0]
        assert found.count == failed[tc.TOOL_ERRORS].sum()
        messages = list(dict.fromkeys(m for ms in failed[tc.TOOL_ERROR_MESSAGES] for m in ms))
        assert found.messages == tuple(messages[:3])

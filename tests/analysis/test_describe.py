"""``assay describe``: a user finds the mapping of an unknown trace set in one step."""

from __future__ import annotations

import json

from assay import conventions as c
from assay.analysis import describe_spans
from assay.cli import run
from assay.store import open_trace_set


def _record(tracer) -> None:
    for agent in ("support", "support", "billing"):
        with tracer.start_as_current_span(
            "invoke_agent",
            attributes={
                c.GENAI_OPERATION: "invoke_agent",
                c.GENAI_AGENT_NAME: agent,
                "deployment": "prod",
            },
        ):
            with tracer.start_as_current_span(
                "execute_tool",
                attributes={
                    c.GENAI_OPERATION: "execute_tool",
                    c.GENAI_TOOL_NAME: "search",
                    c.GENAI_AGENT_NAME: agent,
                },
            ):
                pass


def test_describe_counts_names_conventions_and_candidates(parquet_sink, tracer) -> None:
    _record(tracer)
    described = describe_spans(open_trace_set(parquet_sink.flush()).scan())
    assert (described.spans, described.traces) == (6, 3)
    assert dict(described.span_names) == {"invoke_agent": 3, "execute_tool": 3}
    assert dict(described.conventions) == {"OpenTelemetry GenAI": 6}
    by_name = {k.attribute: k for k in described.candidates}
    agent = by_name[c.GENAI_AGENT_NAME]
    assert (agent.traces, agent.values, agent.spans, agent.on_roots) == (3, 2, 6, 3)
    assert (by_name["deployment"].values, by_name["deployment"].traces) == (1, 3)


def test_describe_command_prints_text_and_json(parquet_sink, tracer, capsys) -> None:
    _record(tracer)
    path = str(parquet_sink.flush())
    assert run(["describe", path]) == 0
    text = capsys.readouterr().out
    assert "gen_ai.agent.name: 2 values in 3 traces, on 6 spans (3 of them roots)" in text
    assert "try: assay analyze PATH --test-attribute gen_ai.agent.name" in text
    assert run(["describe", path, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["traces"] == 3

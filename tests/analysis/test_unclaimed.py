"""A trace set in a convention assay does not read is reported as such, never as "0 tools"."""

from __future__ import annotations

import json

import pytest

from assay import conventions as c
from assay.analysis import describe_spans, read_trials
from assay.analysis._unclaimed import SAMPLE_TRACES, unclaimed_work
from assay.cli import run
from assay.store import open_trace_set


def _unknown_run(tracer, case: str, *, tools: int = 2) -> None:
    """An agent in a made-up convention: its own span names, usage attributes, a tool error."""
    with tracer.start_as_current_span("acme.run", attributes={"acme.case": case}):
        for _ in range(tools):
            with tracer.start_as_current_span(
                "acme.model", attributes={"acme.usage.input": 10, "acme.model": "m"}
            ):
                pass
            with tracer.start_as_current_span("acme.toolCall", attributes={"acme.tool": "search"}):
                pass


def _genai_run(tracer, case: str) -> None:
    with tracer.start_as_current_span("run", attributes={"acme.case": case}):
        with tracer.start_as_current_span(
            "chat", attributes={c.GENAI_OPERATION: "chat", c.GENAI_INPUT_TOKENS: 5}
        ):
            pass


def _unclaimed(sink, **options):
    trials = read_trials(open_trace_set(sink.flush()).scan(), test_attribute="acme.case")
    return [f for f in trials.data_quality.findings if f.kind == "unclaimed_work"]


def test_unknown_work_is_a_warning_naming_the_spans(parquet_sink, tracer) -> None:
    for i in range(6):
        _unknown_run(tracer, f"case-{i % 2}")
    (finding,) = _unclaimed(parquet_sink)
    assert finding.severity == "warning"
    assert finding.count == 24
    assert "24 spans in 6 traces without recognised work" in finding.message
    assert "acme.model (12), acme.toolCall (12)" in finding.message
    assert "unknown, not zero" in finding.message
    assert len(finding.examples) == 3


def test_recognised_work_raises_nothing(parquet_sink, tracer) -> None:
    for i in range(4):
        _genai_run(tracer, f"case-{i % 2}")
    assert _unclaimed(parquet_sink) == []


def test_only_the_traces_without_recognised_work_are_looked_at(parquet_sink, tracer) -> None:
    _genai_run(tracer, "known")
    _unknown_run(tracer, "unknown", tools=1)
    (finding,) = _unclaimed(parquet_sink)
    assert finding.count == 2 and "in 1 trace without" in finding.message


def test_many_spans_and_no_recognised_work_is_suspect_on_its_own(parquet_sink, tracer) -> None:
    for i in range(3):
        with tracer.start_as_current_span("step", attributes={"acme.case": str(i)}):
            for _ in range(4):
                with tracer.start_as_current_span("step.inner"):
                    pass
    (finding,) = _unclaimed(parquet_sink)
    assert "no tool or LLM call was recognised in any of the 3 traces" in finding.message
    assert "5.0 spans each (step.inner (12), step (3))" in finding.message


def test_the_finding_reaches_the_json_and_describe_lists_the_spans(
    parquet_sink, tracer, capsys
) -> None:
    for i in range(4):
        _unknown_run(tracer, f"case-{i % 2}")
    path = str(parquet_sink.flush())
    run(["analyze", path, "--test-attribute", "acme.case", "--format", "json", "--inconclusive-ok"])
    document = json.loads(capsys.readouterr().out)
    kinds = {f["kind"] for f in document["data_quality"]["findings"]}
    assert "unclaimed_work" in kinds
    description = describe_spans(open_trace_set(path).scan())
    assert description.unclaimed is not None
    assert dict(description.unclaimed.names) == {"acme.model": 8, "acme.toolCall": 8}
    assert run(["describe", path]) == 0
    text = capsys.readouterr().out
    assert "spans that look like work but no convention assay reads claims" in text
    assert "8  acme.toolCall" in text


@pytest.mark.parametrize("extra", [0, 5])
def test_a_large_set_is_sampled(parquet_sink, tracer, extra: int) -> None:
    for i in range(SAMPLE_TRACES + extra):
        with tracer.start_as_current_span("acme.toolCall", attributes={"acme.case": str(i % 3)}):
            pass
    found = unclaimed_work(open_trace_set(parquet_sink.flush()).scan())
    assert found is not None
    assert (found.looked_at, found.of, found.spans) == (
        SAMPLE_TRACES,
        SAMPLE_TRACES + extra,
        SAMPLE_TRACES,
    )

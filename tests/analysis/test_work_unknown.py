"""Work no convention claims is reported as unknown, never as "1 path, 100% agreement, $0"."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from test_unclaimed import _unknown_run as _acme_run

from assay import conventions as c
from assay.analysis import _unclaimed
from assay.cli import run

CASE = "acme.case"


def _genai_run(tracer, case: str, tool: str = "search") -> None:
    with tracer.start_as_current_span("run", attributes={CASE: case}):
        with tracer.start_as_current_span(
            "chat",
            attributes={
                c.GENAI_OPERATION: "chat",
                c.GENAI_INPUT_TOKENS: 5,
                c.GENAI_REQUEST_MODEL: "gpt-4o-mini",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "tool", attributes={c.GENAI_OPERATION: "execute_tool", c.GENAI_TOOL_NAME: tool}
        ):
            pass


def _json(capsys, *args: str) -> dict:
    run([*args, "--test-attribute", CASE, "--format", "json", "--inconclusive-ok"])
    return json.loads(capsys.readouterr().out)


def test_unknown_work_is_unknown_in_the_json(parquet_sink, tracer, capsys) -> None:
    for i in range(8):
        _acme_run(tracer, "acme", tools=1 + i % 3)
        _genai_run(tracer, "known", tool="search" if i % 2 else "fetch")
    document = _json(capsys, "analyze", str(parquet_sink.flush()))
    tests = {t["test_id"]: t for t in document["tests"]}
    acme, known = tests["acme"], tests["known"]
    assert acme["work_unknown"] == 8
    for field in ("tool_consistency", "usage", "cost", "tool_errors"):
        assert acme[field] is None, field
    factors = {f["name"] for f in acme["flakiness"]["factors"]}
    assert "tool_path_inconsistency" not in factors
    assert known["work_unknown"] == 0
    assert known["tool_consistency"]["distinct"] == 2
    assert known["usage"]["input_tokens"] == 40 and known["cost"] is not None
    (finding,) = [f for f in document["data_quality"]["findings"] if f["kind"] == "unclaimed_work"]
    assert finding["tests"] == ["acme"]


def test_no_report_claims_one_path_or_zero_cost(parquet_sink, tracer, capsys, tmp_path) -> None:
    for i in range(6):
        _acme_run(tracer, f"case-{i % 2}")
    path = str(parquet_sink.flush())
    junit, markdown, html = tmp_path / "r.xml", tmp_path / "r.md", tmp_path / "r.html"
    formats = ("console", f"junit:{junit}", f"markdown:{markdown}", f"html:{html}")
    run(["analyze", path, "--test-attribute", CASE, *(a for f in formats for a in ("--format", f))])
    console = " ".join(capsys.readouterr().out.split())
    junit_text = " ".join(e.text or "" for e in ET.parse(junit).getroot().iter())
    for text in (console, junit_text, markdown.read_text(), html.read_text()):
        text = " ".join(text.split())
        assert "tools: unknown: 3 of 3 trials" in text or "tools unknown: 3 of 3 trials" in text
        assert "100% of trial pairs took the same path" not in text
        assert "distinct sequence" not in text
        assert "$0.0000" not in text
    page = html.read_text()
    assert "Tool-sequence variants" not in page and "(no tool calls)" not in page
    assert "<i>unknown</i>" in page


def test_the_behaviour_diff_leaves_unknown_work_out(switch_sink, tracer, capsys) -> None:
    # The baseline's work is read (one `search` call a trial); the current version's is in a
    # convention assay does not read. "It stopped calling search" would be a false change.
    base = switch_sink("base")
    for _ in range(8):
        _genai_run(tracer, "agent")
    base_path = str(base.flush())
    current = switch_sink("current")
    for _ in range(8):
        _acme_run(tracer, "agent", tools=3)
    document = _json(capsys, "compare", base_path, str(current.flush()))
    (test,) = document["tests"]
    compared = {f["feature"] for f in test["behaviour"]["features"]}
    assert compared and compared <= {"latency", "error_spans"}


def test_traces_beyond_the_sample_are_unknown_too(
    parquet_sink, tracer, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_unclaimed, "SAMPLE_TRACES", 3)
    for i in range(10):
        _acme_run(tracer, f"case-{i % 2}")
    document = _json(capsys, "analyze", str(parquet_sink.flush()))
    assert [t["work_unknown"] for t in document["tests"]] == [5, 5]


def test_failure_explanations_leave_unknown_work_out(parquet_sink, tracer, capsys) -> None:
    from opentelemetry.trace import Status, StatusCode

    # Passing trials' work is read; the failing ones' is in a convention assay does not read:
    # "failing trials never call search" would be an artefact of what assay can read.
    for i in range(20):
        if i % 2:
            _genai_run(tracer, "agent")
            continue
        with tracer.start_as_current_span("acme.run", attributes={CASE: "agent"}) as root:
            with tracer.start_as_current_span("acme.toolCall", attributes={"acme.tool": "x"}):
                pass
            root.set_status(Status(StatusCode.ERROR, "crashed"))
    (test,) = _json(capsys, "analyze", str(parquet_sink.flush()))["tests"]
    assert test["work_unknown"] == 10
    features = [f["feature"] for f in test["failure_explanations"]]
    assert not any("search" in f or f in ("steps", "llm_calls") for f in features), features

"""Evaluations the traces hold that no rule reads are named, with a --pass-when that reads them."""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET

import pytest

from assay import conventions as c
from assay.analysis import describe_spans
from assay.cli import run
from assay.store import open_trace_set

AGENT = "gen_ai.agent.name"


def _agent_run(tracer, *, labels: dict[str, str] | None = None, **scores: float) -> None:
    """One agent run carrying evaluations (labels) and scores as GenAI evaluation events."""
    with tracer.start_as_current_span(
        "invoke_agent", attributes={c.GENAI_OPERATION: "invoke_agent", AGENT: "support"}
    ) as span:
        with tracer.start_as_current_span("chat", attributes={c.GENAI_OPERATION: "chat"}):
            pass
        for name, label in (labels or {}).items():
            span.add_event(c.EVALUATION_EVENT, {c.EVALUATION_NAME: name, c.EVALUATION_LABEL: label})
        for name, value in scores.items():
            span.add_event(c.EVALUATION_EVENT, {c.EVALUATION_NAME: name, c.EVALUATION_SCORE: value})


def _analyze(capsys, path: str, *extra: str) -> dict:
    run(["analyze", path, "--test-attribute", AGENT, "--format", "json", *extra])
    return json.loads(capsys.readouterr().out)


def _unused(document: dict) -> list[dict]:
    return [f for f in document["data_quality"]["findings"] if f["kind"] == "unused_evaluations"]


def _suggested(message: str) -> list[str]:
    """The ``--pass-when`` the finding suggests, as command-line words."""
    found = re.search(r"--pass-when ('[^']*'|\S+)", message)
    assert found, message
    return ["--pass-when", *shlex.split(found.group(1))]


def test_the_issue_row_is_no_longer_a_silent_100_percent(parquet_sink, tracer, capsys) -> None:
    for i in range(30):
        _agent_run(tracer, labels={"correctness": "fail" if i < 10 else "pass"})
    path = str(parquet_sink.flush())
    document = _analyze(capsys, path)
    assert document["tests"][0]["passed"] == 30  # the default rule does not read labels
    (finding,) = _unused(document)
    assert finding["severity"] == "warning"
    assert finding["count"] == 30 and finding["tests"] == ["support"]
    assert "correctness in 30 trials (labels pass 20, fail 10)" in finding["message"]
    flag = _suggested(finding["message"])
    assert flag == ["--pass-when", "correctness.label == pass"]
    # The suggested flag runs and gives what the traces say: 20 of 30.
    judged = _analyze(capsys, path, *flag)
    assert (judged["tests"][0]["passed"], judged["tests"][0]["n"]) == (20, 30)
    assert _unused(judged) == []


def test_every_report_shows_it(parquet_sink, tracer, capsys, tmp_path) -> None:
    for i in range(6):
        _agent_run(tracer, labels={"correctness": "fail" if i < 2 else "pass"})
    path = str(parquet_sink.flush())
    junit, markdown, html = tmp_path / "r.xml", tmp_path / "r.md", tmp_path / "r.html"
    run(
        [
            "analyze",
            path,
            "--test-attribute",
            AGENT,
            "--inconclusive-ok",
            "--format",
            "console",
            "--format",
            f"junit:{junit}",
            "--format",
            f"markdown:{markdown}",
            "--format",
            f"html:{html}",
            "--format",
            "github",
        ]
    )
    shown = capsys.readouterr()  # the report on stdout, its warnings on stderr
    assert "::warning title=assay data quality%3A unused_evaluations::" in shown.out
    console = " ".join(shown.err.split())
    said = "carry evaluations that no rule reads"
    assert said in console
    errs = [e.text or "" for e in ET.parse(junit).getroot().iter("system-err")]
    assert any(said in text for text in errs)
    assert said in markdown.read_text()
    assert said in html.read_text()


def test_a_rule_that_names_it_reads_it(parquet_sink, tracer, capsys) -> None:
    for i in range(4):
        _agent_run(tracer, labels={"correctness": "pass", "tone": "rude" if i else "polite"})
    document = _analyze(capsys, str(parquet_sink.flush()), "--pass-when", "correctness == pass")
    (finding,) = _unused(document)
    assert "tone in 4 trials (labels rude 3, polite 1)" in finding["message"]
    assert "correctness in" not in finding["message"]
    # Neither label is a known passing or failing word: the most common is proposed, with the
    # user's own rule kept.
    assert _suggested(finding["message"]) == [
        "--pass-when",
        "correctness == pass and tone.label == rude",
    ]


def test_a_failing_label_alone_is_proposed_as_not_that(parquet_sink, tracer, capsys) -> None:
    for i in range(4):
        _agent_run(tracer, labels={"grounding": "hallucinated" if i == 0 else "partial"})
    (finding,) = _unused(_analyze(capsys, str(parquet_sink.flush()), "--inconclusive-ok"))
    assert _suggested(finding["message"]) == ["--pass-when", "grounding.label != hallucinated"]


def test_scores_are_read_by_min_score_else_named(parquet_sink, tracer, capsys) -> None:
    for value in (0.2, 0.4, 0.6, 0.8, 0.9):
        _agent_run(tracer, quality=value)
    path = str(parquet_sink.flush())
    assert _unused(_analyze(capsys, path, "--min-score", "0.5", "--inconclusive-ok")) == []
    (finding,) = _unused(_analyze(capsys, path))
    assert "quality in 5 trials (scores, median 0.6)" in finding["message"]
    flag = _suggested(finding["message"])
    assert flag == ["--pass-when", "quality.score >= 0.6"]
    judged = _analyze(capsys, path, *flag, "--inconclusive-ok")
    assert judged["tests"][0]["passed"] == 3


def test_recorded_outcomes_decide_and_raise_nothing(parquet_sink, tracer, capsys) -> None:
    for _ in range(3):
        with tracer.start_as_current_span(
            "trial", attributes={AGENT: "support", c.TRIAL_OUTCOME: "pass"}
        ) as span:
            span.add_event(
                c.EVALUATION_EVENT, {c.EVALUATION_NAME: "correctness", c.EVALUATION_LABEL: "fail"}
            )
    assert _unused(_analyze(capsys, str(parquet_sink.flush()), "--inconclusive-ok")) == []


@pytest.mark.parametrize("where", ["trial", "inner"])
def test_a_check_below_the_trial_span_is_named(parquet_sink, tracer, capsys, where) -> None:
    for i in range(3):
        with tracer.start_as_current_span("trial", attributes={AGENT: "support"}) as trial:
            with tracer.start_as_current_span("step") as step:
                span = trial if where == "trial" else step
                span.add_event(c.CHECK_EVENT, {c.CHECK_NAME: "cited", c.CHECK_PASSED: i > 0})
    path = str(parquet_sink.flush())
    found = _unused(_analyze(capsys, path, "--inconclusive-ok"))
    if where == "trial":
        assert found == []  # a failed check on the trial span fails the trial
        return
    (finding,) = found
    flag = _suggested(finding["message"])
    assert flag == ["--pass-when", "cited.passed == true"]
    assert _analyze(capsys, path, *flag, "--inconclusive-ok")["tests"][0]["passed"] == 2


def test_describe_lists_evaluations_with_labels(parquet_sink, tracer, capsys) -> None:
    for i in range(5):
        _agent_run(tracer, labels={"correctness": "fail" if i < 2 else "pass"}, quality=0.5)
    path = str(parquet_sink.flush())
    described = describe_spans(open_trace_set(path).scan())
    by_name = {e.name: e for e in described.evaluations}
    assert by_name["correctness"].labels == (("pass", 3), ("fail", 2))
    assert (by_name["quality"].records, by_name["quality"].labels) == (5, ())
    assert run(["describe", path]) == 0
    assert "5  correctness (evaluation, in 5 traces; labels pass 3, fail 2)" in (
        capsys.readouterr().out
    )


def test_evaluation_log_records_are_named_too(parquet_sink, tracer, capsys, tmp_path) -> None:
    """Evaluations sent as OTLP log records (joined to their span on import) count the same."""
    records = []
    for i in range(6):
        with tracer.start_as_current_span(
            "invoke_agent", attributes={c.GENAI_OPERATION: "invoke_agent", AGENT: "support"}
        ) as span:
            context = span.get_span_context()
        label = "fail" if i < 2 else "pass"
        records.append(
            {
                "timeUnixNano": str(1_700_000_000_000_000_000 + i),
                "eventName": c.EVALUATION_EVENT,
                "traceId": format(context.trace_id, "032x"),
                "spanId": format(context.span_id, "016x"),
                "attributes": [
                    {"key": c.EVALUATION_NAME, "value": {"stringValue": "correctness"}},
                    {"key": c.EVALUATION_LABEL, "value": {"stringValue": label}},
                ],
            }
        )
    request = {"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": records}]}]}
    logs = tmp_path / "logs.jsonl"
    logs.write_text(json.dumps(request) + "\n")
    evaluations = tmp_path / "evaluations"
    assert run(["import", str(logs), "--out", str(evaluations)]) == 0
    capsys.readouterr()
    paths = (str(parquet_sink.flush()), str(evaluations))
    run(["analyze", *paths, "--test-attribute", AGENT, "--format", "json", "--inconclusive-ok"])
    (finding,) = _unused(json.loads(capsys.readouterr().out))
    assert "correctness in 6 trials (labels pass 4, fail 2)" in finding["message"]
    flag = _suggested(finding["message"])
    run(["analyze", *paths, "--test-attribute", AGENT, "--format", "json", *flag])
    assert json.loads(capsys.readouterr().out)["tests"][0]["passed"] == 4

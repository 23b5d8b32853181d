"""People's labels recorded in the traces: a person's evaluation is a label of the judge, never
the judge's record; ``--labels traces`` reads them, also from a Langfuse export on import."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from assay import conventions as c
from assay.cli import run

RULE = ["--pass-when", "correctness.label == pass"]


def _json(capsys, *argv: str) -> tuple[int, dict]:
    code = run([*argv, "--format", "json"])
    captured = capsys.readouterr()
    assert code in (0, 1, 3), captured.err
    return code, json.loads(captured.out)


def test_a_persons_evaluation_is_not_read_as_the_judges(parquet_sink, tracer, capsys) -> None:
    # Ten trials the judge passes; people fail four of them, recorded after the judge.
    for i in range(10):
        with tracer.start_as_current_span("trial", attributes={c.TEST_ID: "t"}) as span:
            judge = {c.EVALUATION_NAME: "correctness", c.EVALUATION_LABEL: "pass"}
            span.add_event(c.EVALUATION_EVENT, judge)
            if i < 6:
                person = {
                    c.EVALUATION_NAME: "correctness",
                    c.EVALUATION_LABEL: "fail" if i < 4 else "pass",
                    c.EVALUATION_SOURCE: c.EVALUATION_SOURCE_HUMAN,
                    c.EVALUATION_LABELLER: "ana",
                }
                span.add_event(c.EVALUATION_EVENT, person)
    traces = str(parquet_sink.flush())
    _, alone = _json(capsys, "analyze", traces, *RULE)
    assert alone["tests"][0]["passed"] == 10  # the judge's view: people's records left out
    assert alone["judge"] is None
    _, labelled = _json(capsys, "analyze", traces, *RULE, "--labels", "traces")
    table = labelled["judge"]["agreement"]["table"]
    assert table == {"true_pass": 2, "false_fail": 0, "false_pass": 4, "true_fail": 0}


def test_labels_traces_on_a_set_without_any_is_one_line_exit_2(parquet_sink, tracer, capsys):
    with tracer.start_as_current_span("trial", attributes={c.TEST_ID: "t"}):
        pass
    code = run(["analyze", str(parquet_sink.flush()), "--labels", "traces"])
    err = capsys.readouterr().err
    assert code == 2 and "records no human label" in err and err.count("\n") == 1


def _langfuse_export(path: Path, trials: int, labelled: int, seed: int = 5) -> None:
    """A Langfuse export: agent runs graded by an LLM judge (scores of source EVAL), some of
    them annotated by a person (source ANNOTATION) — a judge of Se 0.95, Sp 0.7, a 70% agent."""
    rng = np.random.default_rng(seed)
    truly = rng.random(trials) < 0.7
    says = np.where(truly, rng.random(trials) < 0.95, rng.random(trials) >= 0.7)
    chosen = set(rng.choice(trials, size=labelled, replace=False).tolist())
    rows = []
    for i in range(trials):
        trace_id = f"{i + 1:032x}"
        start = f"2025-11-24 16:{i // 60 % 60:02d}:{i % 60:02d}.000000"
        rows.append(
            {
                "id": f"run-{i}",
                "trace_id": trace_id,
                "type": "AGENT",
                "parent_observation_id": None,
                "start_time": start,
                "end_time": start.replace(".000000", ".500000"),
                "name": "support",
                "level": "DEFAULT",
            }
        )
        scores = [("EVAL", says[i], "judge")] + (
            [("ANNOTATION", truly[i], "ana")] if i in chosen else []
        )
        for source, passed, author in scores:
            rows.append(
                {
                    "id": f"score-{source}-{i}",
                    "timestamp": start.replace(".000000", ".900000"),
                    "trace_id": trace_id,
                    "observation_id": f"run-{i}",
                    "name": "correctness",
                    "value": None,
                    "data_type": "CATEGORICAL",
                    "string_value": "pass" if passed else "fail",
                    "source": source,
                    "author_user_id": author,
                    "comment": None,
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.slow  # an import and two analyses
def test_a_langfuse_export_with_annotations_is_corrected_end_to_end(tmp_path, capsys) -> None:
    export = tmp_path / "langfuse.jsonl"
    _langfuse_export(export, trials=600, labelled=150)
    assert run(["import", str(export), "--out", str(tmp_path / "traces")]) == 0
    capsys.readouterr()
    traces = str(tmp_path / "traces")
    common = [traces, "--test-attribute", "gen_ai.agent.name", *RULE, "--threshold", "0.71"]
    _, alone = _json(capsys, "analyze", *common)
    (judged,) = alone["tests"]
    assert judged["n"] == 600 and judged["ci"]["low"] > 0.71  # the judge alone: PASS
    _, document = _json(capsys, "analyze", *common, "--labels", "traces")
    (test,) = document["tests"]
    assert test["verdict"] != "PASS"
    assert test["ci"]["low"] <= 0.70 <= test["ci"]["high"]
    assert document["judge"]["labelled_trials"] == 150
    assert test["judge_error"]["judge_only"]["verdict"] == "PASS"


def test_describe_lists_peoples_labels_apart(parquet_sink, tracer, capsys) -> None:
    with tracer.start_as_current_span("trial", attributes={c.TEST_ID: "t"}) as span:
        span.add_event(
            c.EVALUATION_EVENT, {c.EVALUATION_NAME: "correctness", c.EVALUATION_LABEL: "pass"}
        )
        person = {
            c.EVALUATION_NAME: "correctness",
            c.EVALUATION_LABEL: "fail",
            c.EVALUATION_SOURCE: c.EVALUATION_SOURCE_HUMAN,
        }
        span.add_event(c.EVALUATION_EVENT, person)
    assert run(["describe", str(parquet_sink.flush())]) == 0
    out = capsys.readouterr().out
    assert "correctness (evaluation, in 1 traces; labels pass 1)" in out
    assert "correctness (human label, in 1 traces; labels fail 1)" in out


def test_phoenix_annotations_by_a_person_are_human_labels_on_import(tmp_path, capsys) -> None:
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    fixtures = Path(__file__).parents[1] / "ingest" / "formats" / "phoenix"
    folder = tmp_path / "phoenix"
    shutil.copytree(fixtures, folder)
    (evaluations,) = folder.glob("evaluations-*.parquet")
    table = pq.read_table(evaluations)
    kinds = ["HUMAN" if i % 2 else "LLM" for i in range(table.num_rows)]
    table = table.append_column("annotator_kind", pa.array(kinds)).replace_schema_metadata(
        table.schema.metadata
    )
    pq.write_table(table, evaluations)
    (dataset,) = folder.glob("trace_dataset-*.parquet")
    assert run(["import", str(dataset), "--out", str(tmp_path / "traces")]) == 0
    capsys.readouterr()
    assert run(["describe", str(tmp_path / "traces")]) == 0
    out = capsys.readouterr().out
    humans = table.num_rows // 2
    assert f"(human label, in {humans} traces" in out

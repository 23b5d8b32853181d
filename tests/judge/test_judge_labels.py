"""``--labels``: people's labels measure the judge, and each verdict reads the corrected rate."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from assay import conventions as c
from assay.cli import run

RULE = ["--pass-when", "correctness.label == pass"]
EXAMPLE = Path(__file__).parents[2] / "examples" / "judge_labels.py"


def _example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("judge_labels", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def flattered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The worked example: 3,000 trials of a 70% agent, a judge showing 75.5%, 200 labels."""
    module = _example()
    where = tmp_path_factory.mktemp("flattered")
    module.main(str(where / "traces"), str(where / "labels.jsonl"))
    return where / "traces", where / "labels.jsonl"


def _json(capsys, *argv: str) -> tuple[int, dict]:
    code = run([*argv, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out)


@pytest.mark.slow  # two analyses of 3,000 trials, the first paying for every import
def test_the_issues_command_is_not_a_pass_and_reports_the_judge(flattered, capsys) -> None:
    traces, labels = flattered
    code, alone = _json(capsys, "analyze", str(traces), *RULE, "--threshold", "0.72")
    assert alone["tests"][0]["verdict"] == "PASS" and code == 0  # exactly, and wrongly
    code, document = _json(
        capsys, "analyze", str(traces), *RULE, "--threshold", "0.72", "--labels", str(labels)
    )
    (test,) = document["tests"]
    assert test["verdict"] != "PASS" and code == 3
    assert test["ci"]["method"] == "rogan-gladen-mover"
    assert test["ci"]["low"] <= 0.70 <= test["ci"]["high"]
    judge = test["judge_error"]
    assert judge["judge_only"]["verdict"] == "PASS"
    assert judge["judge_only"]["pass_rate"] == alone["tests"][0]["pass_rate"]
    agreement = document["judge"]["agreement"]
    assert agreement["labelled"] == 200 == document["judge"]["labelled_trials"]
    table = agreement["table"]
    assert sum(table.values()) == 200
    se = table["true_pass"] / (table["true_pass"] + table["false_fail"])
    assert agreement["sensitivity"]["estimate"] == pytest.approx(se)
    assert agreement["kappa"]["ci"]["low"] < agreement["kappa"]["estimate"]
    assert document["options"]["labels"] == str(labels)


def _trials(tracer, outcomes: list[tuple[str, str | None]], test: str = "t") -> list[str]:
    """One trial per (judge label, recorded outcome); their trace ids."""
    ids = []
    for i, (label, outcome) in enumerate(outcomes):
        attributes: dict[str, str | int] = {c.TEST_ID: test, c.TRIAL_INDEX: i}
        if outcome is not None:
            attributes[c.TRIAL_OUTCOME] = outcome
        with tracer.start_as_current_span("trial", attributes=attributes) as span:
            span.add_event(
                c.EVALUATION_EVENT, {c.EVALUATION_NAME: "correctness", c.EVALUATION_LABEL: label}
            )
            ids.append(f"{span.get_span_context().trace_id:032x}")
    return ids


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_labels_no_trial_or_evaluation_carries_are_named(
    parquet_sink, tracer, tmp_path, capsys
) -> None:
    ids = _trials(tracer, [("pass", None)] * 6 + [("fail", None)] * 4)
    traces = parquet_sink.flush()
    rows = [{"trace_id": t, "evaluation": "correctness", "label": "pass"} for t in ids[:5]]
    rows += [{"trace_id": ids[6], "evaluation": "correctness", "label": "FAIL".lower()}]
    rows += [{"trace_id": "ab" * 16, "evaluation": "correctness", "label": "pass"}]
    rows += [{"trace_id": ids[7], "evaluation": "corectness", "label": "fail"}]
    labels = _write(tmp_path / "labels.jsonl", rows)
    _, document = _json(capsys, "analyze", str(traces), *RULE, "--labels", str(labels))
    kinds = {f["kind"]: f for f in document["data_quality"]["findings"]}
    assert kinds["labels_without_trial"]["examples"] == ["ab" * 16]
    assert "corectness" in kinds["labels_unknown_evaluation"]["message"]
    assert document["judge"]["labelled_trials"] == 6  # the misspelt one is not used


def test_true_and_false_are_read_in_the_judges_words(parquet_sink, tracer, tmp_path, capsys):
    ids = _trials(tracer, [("pass", None)] * 6 + [("fail", None)] * 4)
    traces = parquet_sink.flush()
    rows = [{"trace_id": t, "evaluation": "correctness", "label": "true"} for t in ids[:6]]
    rows += [{"trace_id": t, "evaluation": "correctness", "label": "false"} for t in ids[6:]]
    labels = _write(tmp_path / "labels.jsonl", rows)
    _, document = _json(capsys, "analyze", str(traces), *RULE, "--labels", str(labels))
    table = document["judge"]["agreement"]["table"]
    assert table == {"true_pass": 6, "false_fail": 0, "false_pass": 0, "true_fail": 4}
    assert any("'true' of correctness read as the judge's 'pass'" in n for n in document["notes"])


def test_a_recorded_outcome_is_compared_with_the_label_itself(
    parquet_sink, tracer, tmp_path, capsys
) -> None:
    # A harness recorded the outcome from its judge; people disagree on two passes.
    ids = _trials(tracer, [("pass", "pass")] * 6 + [("fail", "fail")] * 4)
    traces = parquet_sink.flush()
    rows = [
        {"trace_id": t, "evaluation": "correctness", "label": "fail" if i < 2 else "pass"}
        for i, t in enumerate(ids[:6])
    ]
    rows += [{"trace_id": t, "evaluation": "correctness", "label": "fail"} for t in ids[6:]]
    labels = _write(tmp_path / "labels.jsonl", rows)
    _, document = _json(capsys, "analyze", str(traces), "--labels", str(labels))
    table = document["judge"]["agreement"]["table"]
    assert table == {"true_pass": 4, "false_fail": 0, "false_pass": 2, "true_fail": 4}


def test_a_judge_no_better_than_chance_is_inconclusive_with_the_reason(
    parquet_sink, tracer, tmp_path, capsys
) -> None:
    ids = _trials(tracer, [("pass", None)] * 40)
    traces = parquet_sink.flush()
    rows = [
        {"trace_id": t, "evaluation": "correctness", "label": "pass" if i % 2 else "fail"}
        for i, t in enumerate(ids[:20])
    ]
    labels = _write(tmp_path / "labels.jsonl", rows)
    code, document = _json(
        capsys, "analyze", str(traces), *RULE, "--threshold", "0.5", "--labels", str(labels)
    )
    (test,) = document["tests"]
    assert test["verdict"] == "INCONCLUSIVE" and code == 3
    assert "cannot be recovered" in test["verdict_reason"]
    assert (test["ci"]["low"], test["ci"]["high"]) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("l.csv", "trace_id,label\nab,pass\n", "l.csv:1: the header lacks evaluation"),
        ("l.jsonl", '{"trace_id": "ab", "evaluation": "c"}\n', "l.jsonl:1: no label"),
        ("l.jsonl", '{"trace_id": "ab", "evaluation": "c", "label": "pass"}\n{oops\n', "l.jsonl:2"),
        ("l.jsonl", "", "no labels in the file"),
    ],
)
def test_a_bad_labels_file_is_one_line_and_exit_2(
    flattered, tmp_path, capsys, name: str, text: str, said: str
) -> None:
    traces, _ = flattered
    bad = tmp_path / name
    bad.write_text(text)
    code = run(["analyze", str(traces), *RULE, "--labels", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1


def test_a_missing_labels_file_is_exit_2(flattered, tmp_path, capsys) -> None:
    traces, _ = flattered
    code = run(["analyze", str(traces), *RULE, "--labels", str(tmp_path / "none.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot read the labels" in err


def test_csv_labels_read_as_jsonl_do(flattered, tmp_path, capsys) -> None:
    traces, labels = flattered
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    csv = tmp_path / "labels.csv"
    csv.write_text(
        "trace_id,evaluation,label,labeller\n"
        + "".join(f"{r['trace_id'].upper()},{r['evaluation']},{r['label']},x\n" for r in rows)
    )
    _, a = _json(capsys, "analyze", str(traces), *RULE, "--labels", str(labels))
    _, b = _json(capsys, "analyze", str(traces), *RULE, "--labels", str(csv))
    assert a["judge"]["agreement"] == b["judge"]["agreement"]
    assert a["tests"][0]["ci"] == b["tests"][0]["ci"]


def test_compare_corrects_with_one_agreement_and_a_drop_shrunk_by_the_judge(tmp_path, capsys):
    example = _example()
    example.main(str(tmp_path / "base"), str(tmp_path / "b.jsonl"), seed=1, trials=400, labelled=60)
    example.main(str(tmp_path / "cur"), str(tmp_path / "c.jsonl"), seed=2, trials=400, labelled=60)
    labels = tmp_path / "labels.jsonl"
    labels.write_text((tmp_path / "b.jsonl").read_text() + (tmp_path / "c.jsonl").read_text())
    argv = ["compare", str(tmp_path / "base"), str(tmp_path / "cur"), *RULE, "--threshold", "0.6"]
    _, alone = _json(capsys, *argv)
    _, document = _json(capsys, *argv, "--labels", str(labels))
    assert document["judge"]["labelled_trials"] == 120  # labels of both versions, one judge
    (test,) = document["tests"]
    assert test["judge_error"]["agreement_used"]["labelled"] == 120
    # The judge shows a true drop of 10 points as about half of it: its power at 10 points
    # on the judge's scale overstated the power to see a true one.
    assert alone["tests"][0]["regression"]["verdict"] == "PASS"
    assert test["regression"]["power"] < alone["tests"][0]["regression"]["power"]
    assert test["regression"]["verdict"] == "INCONCLUSIVE" == test["verdict"]
    assert any("shows in the judge's rates as at least" in n for n in test["notes"])


def test_the_judges_flips_on_trials_it_graded_twice_and_a_stated_agreement(
    parquet_sink, tracer, tmp_path, capsys
) -> None:
    ids = []
    for i in range(20):
        with tracer.start_as_current_span("trial", attributes={c.TEST_ID: "t"}) as span:
            first = "pass" if i % 2 else "fail"
            span.add_event(
                c.EVALUATION_EVENT, {c.EVALUATION_NAME: "correctness", c.EVALUATION_LABEL: first}
            )
            if i < 10:  # graded again; it changes its mind on 3 of the 10
                again = ("fail" if first == "pass" else "pass") if i < 3 else first
                span.add_event(
                    c.EVALUATION_EVENT,
                    {c.EVALUATION_NAME: "correctness", c.EVALUATION_LABEL: again},
                )
            ids.append(f"{span.get_span_context().trace_id:032x}")
    traces = parquet_sink.flush()
    rows = [
        {"trace_id": t, "evaluation": "correctness", "label": "pass" if i % 3 else "fail"}
        for i, t in enumerate(ids)
    ]
    labels = _write(tmp_path / "labels.jsonl", rows)
    argv = ["analyze", str(traces), *RULE, "--labels", str(labels), "--min-agreement", "0.9"]
    _, document = _json(capsys, *argv)
    (own,) = document["judge"]["self_agreement"]
    assert (own["evaluation"], own["trials"], own["flipped"]) == ("correctness", 10, 3)
    exact = sps.binomtest(3, 10).proportion_ci(0.95, "exact")
    assert own["ci"]["low"] == pytest.approx(exact.low)
    kinds = {f["kind"]: f for f in document["data_quality"]["findings"]}
    assert "below --min-agreement 0.9" in kinds["judge_below_agreement"]["message"]
    assert document["judge"]["min_agreement"] == 0.9


def test_reports_say_which_judge_graded(parquet_sink, tracer, tmp_path, capsys) -> None:
    ids = []
    for i in range(8):
        with tracer.start_as_current_span("trial", attributes={c.TEST_ID: "t"}) as span:
            record = {
                c.EVALUATION_NAME: "correctness",
                c.EVALUATION_LABEL: "pass" if i < 5 else "fail",
                c.EVALUATION_JUDGE_MODEL: "gpt-4o",
                c.EVALUATION_JUDGE_PROMPT: "v3",
            }
            span.add_event(c.EVALUATION_EVENT, record)
            ids.append(f"{span.get_span_context().trace_id:032x}")
    traces = parquet_sink.flush()
    rows = [
        {"trace_id": t, "evaluation": "correctness", "label": "pass" if i < 5 else "fail"}
        for i, t in enumerate(ids)
    ]
    labels = _write(tmp_path / "labels.jsonl", rows)
    _, document = _json(capsys, "analyze", str(traces), *RULE, "--labels", str(labels))
    (grader,) = document["judge"]["graders"]
    assert grader == {
        "evaluation": "correctness",
        "model": "gpt-4o",
        "prompt_version": "v3",
        "records": 8,
    }
    assert any("graded correctness by gpt-4o (prompt v3)" in n for n in document["notes"])


def test_peoples_scores_correct_the_judges_mean_score(parquet_sink, tracer, tmp_path, capsys):
    from assay.stats.judges import ppi_mean

    rng = np.random.default_rng(3)
    truth = rng.uniform(0.2, 0.9, size=60)
    judged = np.clip(truth + 0.15 + rng.normal(0, 0.03, size=60), 0, 1)  # a generous judge
    ids = []
    for value in judged:
        with tracer.start_as_current_span("trial", attributes={c.TEST_ID: "t"}) as span:
            record = {c.EVALUATION_NAME: "quality", c.EVALUATION_SCORE: float(value)}
            span.add_event(c.EVALUATION_EVENT, record)
            ids.append(f"{span.get_span_context().trace_id:032x}")
    traces = parquet_sink.flush()
    rows = [
        {"trace_id": t, "evaluation": "quality", "label": str(truth[i])}
        for i, t in enumerate(ids[:20])
    ]
    labels = _write(tmp_path / "labels.jsonl", rows)
    _, plain = _json(capsys, "analyze", str(traces))
    _, document = _json(capsys, "analyze", str(traces), "--labels", str(labels))
    (test,) = document["tests"]
    assert test["judge_error"] is None  # no pass/fail label: the pass rate stays the judge's
    assert test["ci"] == plain["tests"][0]["ci"]
    (score,) = test["judge_scores"]
    expected = ppi_mean(truth[:20], judged[:20], judged[20:])
    assert score["estimate"] == pytest.approx(expected.estimate)
    assert score["ci"]["low"] == pytest.approx(expected.interval.low)
    assert score["judge_mean"] == pytest.approx(judged.mean())
    assert score["ci"]["low"] <= truth.mean() <= score["ci"]["high"] < judged.mean()
    assert not [f for f in document["data_quality"]["findings"] if f["kind"].startswith("labels")]


def test_a_suites_mean_over_cases_is_corrected_as_one_rate(
    parquet_sink, tracer, tmp_path, capsys
) -> None:
    from assay.stats.judges import rogan_gladen

    rng = np.random.default_rng(11)
    rows = []
    for case, rate in (("a", 0.6), ("b", 0.7), ("c", 0.8), ("d", 0.75)):
        for i in range(80):
            truly = rng.random() < rate
            says = rng.random() < (0.95 if truly else 0.3)
            attributes = {c.TEST_ID: case, c.SUITE: "s", c.TRIAL_INDEX: i}
            with tracer.start_as_current_span("trial", attributes=attributes) as span:
                record = {
                    c.EVALUATION_NAME: "correctness",
                    c.EVALUATION_LABEL: "pass" if says else "fail",
                }
                span.add_event(c.EVALUATION_EVENT, record)
                if i < 30:
                    trace = f"{span.get_span_context().trace_id:032x}"
                    label = "pass" if truly else "fail"
                    rows.append({"trace_id": trace, "evaluation": "correctness", "label": label})
    traces = parquet_sink.flush()
    labels = _write(tmp_path / "labels.jsonl", rows)
    _, plain = _json(capsys, "analyze", str(traces), *RULE)
    _, document = _json(capsys, "analyze", str(traces), *RULE, "--labels", str(labels))
    (before,) = plain["suites"]
    (suite,) = document["suites"]
    assert suite["interval"]["method"] == "rogan-gladen-mover"
    agreement = document["judge"]["agreement"]
    se, sp = agreement["sensitivity"]["estimate"], agreement["specificity"]["estimate"]
    assert suite["pass_rate"] == pytest.approx(rogan_gladen(before["pass_rate"], se, sp))
    assert any(n.startswith("judge only (uncorrected)") for n in suite["notes"])
    assert suite["interval"]["low"] <= suite["pass_rate"] <= suite["interval"]["high"]


def test_several_labellers_the_majority_counts_and_a_tie_is_named(
    parquet_sink, tracer, tmp_path, capsys
) -> None:
    ids = _trials(tracer, [("pass", None)] * 4 + [("fail", None)] * 4)
    traces = parquet_sink.flush()
    rows = []
    for i, t in enumerate(ids):
        truth = "pass" if i < 4 else "fail"
        rows += [
            {"trace_id": t, "evaluation": "correctness", "label": truth, "labeller": w}
            for w in "ab"
        ]
        if i == 0:  # a third labeller disagrees: the majority still says pass
            rows.append(
                {"trace_id": t, "evaluation": "correctness", "label": "fail", "labeller": "c"}
            )
    rows.append({"trace_id": ids[7], "evaluation": "correctness", "label": "pass", "labeller": "c"})
    rows.append({"trace_id": ids[7], "evaluation": "correctness", "label": "pass", "labeller": "d"})
    labels = _write(tmp_path / "labels.jsonl", rows)  # trial 7: two fail, two pass
    _, document = _json(capsys, "analyze", str(traces), *RULE, "--labels", str(labels))
    table = document["judge"]["agreement"]["table"]
    assert table == {"true_pass": 4, "false_fail": 0, "false_pass": 0, "true_fail": 3}
    kinds = {f["kind"]: f for f in document["data_quality"]["findings"]}
    assert kinds["labels_tied"]["examples"] == [ids[7]]


@pytest.mark.slow  # 600 judged trials, analysed twice
def test_a_suite_comparison_passes_only_if_it_can_see_the_true_drop_through_the_judge(
    parquet_sink, tracer, tmp_path, capsys
) -> None:
    # 300 cases, one trial a version, the same agent twice; a flattering judge (Se 0.95,
    # Sp 0.7) grades every trial and people label 100 of them. The judge passes on only about
    # 0.65 of a true drop, so "no drop, and power to see 10 points" on its scale is not power
    # to see 10 true points.
    rng = np.random.default_rng(47)
    truth = rng.random(300) < 0.7
    rows = []
    for version in ("v1", "v2"):
        for case in range(300):
            truly = bool(truth[case] if rng.random() < 0.95 else not truth[case])
            says = rng.random() < (0.95 if truly else 0.3)
            attributes = {
                c.TEST_ID: f"case-{case:03d}",
                c.SUITE: "s",
                c.AGENT_VERSION: version,
            }
            with tracer.start_as_current_span("trial", attributes=attributes) as span:
                span.add_event(
                    c.EVALUATION_EVENT,
                    {
                        c.EVALUATION_NAME: "correctness",
                        c.EVALUATION_LABEL: "pass" if says else "fail",
                    },
                )
                trace_id = f"{span.get_span_context().trace_id:032x}"
            if len(rows) < 100 and rng.random() < 0.2:
                label = "pass" if truly else "fail"
                rows.append({"trace_id": trace_id, "evaluation": "correctness", "label": label})
    traces = parquet_sink.flush()
    labels = _write(tmp_path / "labels.jsonl", rows)
    argv = ["analyze", str(traces), *RULE, "--baseline-version", "v1"]
    _, alone = _json(capsys, *argv)
    code, document = _json(capsys, *argv, "--labels", str(labels))
    (before,) = alone["suites"]
    (after,) = document["suites"]
    assert before["comparison"]["verdict"] == "PASS"
    assert after["comparison"]["verdict"] == "INCONCLUSIVE" and code == 3
    reason = after["comparison"]["reason"]
    assert "shows in the judge's rates as at least" in reason and "error at most 0.1" in reason

"""``assay plan`` speaks the flags of the commands that judge: their help, types and defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import run
from assay.judge import DEFAULT_CONFIDENCE, AnalyzeOptions
from assay.run import PairedRunOptions
from assay.stats import plan_adaptive_threshold, plan_regression

THRESHOLD = ["plan", "--threshold", "0.8", "--expected", "0.9"]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert run(list(argv)) == 0
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    return document


def test_not_given_a_plan_reads_the_defaults_analyze_judges_with(
    capsys: pytest.CaptureFixture[str],
) -> None:
    judged = AnalyzeOptions()
    document = _json(capsys, "plan", "--baseline-rate", "0.9", "--format", "json")
    expected = plan_regression(
        0.9, judged.delta, judged.alpha, judged.power, judged.regression_test.value
    )
    assert (document["delta"], document["alpha"]) == (judged.delta, judged.alpha)
    assert document["n_per_arm"] == expected.n_per_arm and document["power"] == expected.power
    document = _json(capsys, *THRESHOLD, "--format", "json")
    adaptive = plan_adaptive_threshold(0.8, 0.9, judged.power, DEFAULT_CONFIDENCE)
    assert document["max_trials"] == adaptive.max_trials
    # an adaptive comparison's --delta and --alpha default alike (assay run --baseline-agent)
    paired = PairedRunOptions()
    assert (paired.delta, paired.alpha) == (judged.delta, judged.alpha)


def test_a_plan_renders_to_several_formats_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    document = json.dumps(_json(capsys, *THRESHOLD, "--format", "json"), indent=2) + "\n"
    assert run(THRESHOLD) == 0
    lines = capsys.readouterr().out.splitlines()
    file = tmp_path / "plan.json"
    assert run([*THRESHOLD, "--format", f"json:{file}", "--format", "markdown"]) == 0
    out, err = capsys.readouterr()
    assert file.read_text() == document and err == f"wrote {file}\n"
    head, blank, *items = out.splitlines()
    assert (head, blank) == (f"### {lines[0]}", "")
    assert items == [f"- {line}" for line in lines[1:]]
    # -o names the file of the one format given without a PATH
    assert run([*THRESHOLD, "--format", "markdown", "-o", str(tmp_path / "plan.md")]) == 0
    assert capsys.readouterr().out == "" and (tmp_path / "plan.md").read_text() == out
    # in a GitHub job, markdown without a PATH is appended to the step summary
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert run([*THRESHOLD, "--format", "markdown"]) == 0
    assert summary.read_text() == "earlier step\n" + out and capsys.readouterr().out == ""


def test_a_paired_plan_keeps_its_table_monospaced_in_markdown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["plan", "--paired", "--delta", "0.2", "--between-sd", "0.1", "--within-var", "0.3"]
    assert run([*args, "--trials-per-case", "1,3"]) == 0
    console = capsys.readouterr().out.splitlines()
    assert run([*args, "--trials-per-case", "1,3", "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out.split("\n")
    table = console[console.index("") + 1 : -1]
    start = markdown.index("```text")
    assert markdown[start + 1 : start + 1 + len(table)] == table
    assert markdown[start + 1 + len(table)] == "```"
    assert markdown[-2] == f"- {console[-1]}"


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--format", "junit"], "--format junit: plan writes console, json or markdown"),
        (["--format", "html:x.html"], "--format html: plan writes console, json or markdown"),
        (
            ["--format", "json", "--format", "markdown"],
            "--format: json and markdown would all write to stdout; give all but one a file "
            "(NAME:PATH)",
        ),
        (
            ["--baseline-rate", "0.9", "--test", "anytime"],
            "--test anytime: plan plans the exact tests only (boschloo, fisher or barnard)",
        ),
        (["--baseline-rate", "0.9", "--power", "1.5"], "--power must lie strictly between"),
        (["--baseline-rate", "0.9", "--delta", "0"], "--delta must lie in (0, 1] (got 0.0)"),
    ],
)
def test_a_bad_plan_flag_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str, monkeypatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert run(["plan", *argv] if "--baseline-rate" in argv else [*THRESHOLD, *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"assay: error: {error}") and err.count("\n") == 1

"""One judgement: ``assay analyze`` on the traces of ``assay run`` says what the run said.

This is what a CI pipeline does: run the suite, keep the traces, analyse them later. Test by
test, the verdict, its reason, every figure and the exit code must be the same, whether the
run stopped adaptively or ran every trial, and whatever thresholds the suite set per test (the
traces record them: ``assay.judgement.*``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.cli import run as cli
from assay.stats import tuned_prior_strength

ROOT = Path(__file__).resolve().parents[2]

PER_TEST = """
name: thresholds
tests:
  - {name: lenient, input: {p: 0.7}, expected: {output: {contains: ["yes"]}},
     variance: {runs: 40, pass_rate: 0.6}}
  - {name: strict, input: {p: 0.3}, expected: {output: {contains: ["yes"]}},
     variance: {runs: 60, pass_rate: 0.9}}
  - {name: middling, input: {p: 0.85}, expected: {output: {contains: ["yes"]}},
     variance: {runs: 30, pass_rate: 0.8, confidence_level: 0.9}}
"""


def _tests(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["test_id"]: t for t in document["tests"]}


def _run_then_analyze(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: str, agent: str, *flags: str
) -> tuple[int, dict[str, Any], int, dict[str, Any], str]:
    traces, ran, analysed = tmp_path / "T", tmp_path / "run.json", tmp_path / "analyze.json"
    run_code = cli(
        ["run", suite, "--agent", agent, "--out", str(traces), "--seed", "7", "--quiet",
         "--format", "console", "--format", f"json:{ran}", *flags]
    )  # fmt: skip
    capsys.readouterr()
    analyze_code = cli(
        ["analyze", str(traces), "--format", "console", "--format", f"json:{analysed}"]
    )
    console = capsys.readouterr().out
    return (
        run_code,
        json.loads(ran.read_text()),
        analyze_code,
        json.loads(analysed.read_text()),
        console,
    )


@pytest.mark.slow
@pytest.mark.parametrize("flags", [(), ("--fixed",)], ids=["adaptive", "fixed"])
def test_analyze_reproduces_the_example_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    suite = str(ROOT / "examples" / "suite.yaml")
    run_code, ran, analyze_code, analysed, console = _run_then_analyze(
        tmp_path, capsys, suite, "examples.agent:run", *flags
    )
    assert analyze_code == run_code
    assert _tests(analysed) == _tests(ran)  # every figure, verdict and reason, test by test
    assert analysed["summary"] == ran["summary"]
    if flags:
        assert all(t["sequential"] is None and t["n"] == 60 for t in ran["tests"])
    else:
        settled = [t for t in ran["tests"] if t["sequential"]["decided_at"] is not None]
        assert settled, "the adaptive run settled no test early"
        words = " ".join(console.split())
        for test in settled:  # the reason and the anytime-valid interval are printed beside it
            assert "confidence sequence stopped after " in test["verdict_reason"]
            assert test["ci"]["method"] == "confidence-sequence"
            assert " ".join(test["verdict_reason"].split()) in words, test["test_id"]
        assert "anytime [" in console and "anytime-valid interval [" in words


def test_analyze_reproduces_a_run_with_per_test_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(PER_TEST)
    run_code, ran, analyze_code, analysed, _ = _run_then_analyze(
        tmp_path, capsys, str(suite), "assay_test_agents:bernoulli"
    )
    assert analyze_code == run_code
    tests = _tests(ran)
    assert _tests(analysed) == tests
    assert {name: t["threshold"] for name, t in tests.items()} == {
        "lenient": 0.6,
        "strict": 0.9,
        "middling": 0.8,
    }
    assert tests["middling"]["ci"]["confidence"] == 0.9
    # A p = 0.3 agent against 0.9: its anytime interval falls below 90% within a few trials,
    # in both commands; the design recorded is the confidence sequence tuned to 60 trials.
    strict = tests["strict"]
    assert strict["verdict"] == "FAIL" and strict["sequential"]["decided_at"] <= 12
    assert strict["ci"]["method"] == "confidence-sequence" and strict["ci"]["high"] < 0.9
    assert strict["sequential"]["prior_strength"] == pytest.approx(tuned_prior_strength(60))
    assert strict["sequential"]["p1"] is None  # no indifference zone: that is the SPRT's


def test_a_flag_overrides_what_the_traces_record_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(PER_TEST)
    traces = tmp_path / "T"
    cli(["run", str(suite), "--agent", "assay_test_agents:bernoulli", "--out", str(traces),
         "--seed", "7", "--quiet"])  # fmt: skip
    capsys.readouterr()
    cli(["analyze", str(traces), "--threshold", "0.5", "--format", "json"])
    tests = _tests(json.loads(capsys.readouterr().out))
    strict = tests["strict"]
    assert strict["threshold"] == 0.5 and strict["sequential"] is None
    assert "--threshold 0.5 overrides the recorded 0.9" in strict["notes"]
    assert any("design is not replayed (another threshold)" in n for n in strict["notes"])
    assert strict["verdict_reason"].startswith("pass rate ")  # the interval decides
    # The trials were still collected adaptively: the interval stays the anytime-valid one.
    assert strict["ci"]["method"] == "confidence-sequence"

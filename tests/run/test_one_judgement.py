"""One judgement: ``assay analyze`` on the traces of ``assay run`` says what the run printed.

This is what a CI pipeline does: run the suite, keep the traces, analyse them later, in
another process that knows only the files. Test by test, the verdicts ``assay run`` printed
(its console table, read back cell by cell) are the ones the separate ``assay analyze`` process
prints and writes, with every figure of the JSON document and the exit code the same, whether
the run stopped adaptively or ran every trial, and whatever thresholds the suite set per test
(the traces record them: ``assay.judgement.*``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.cli import run as cli
from console_table import table_rows

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


@dataclass
class Output:
    """What one command printed and wrote."""

    code: int
    console: str
    """The console report: the verdict table, each test's figures, the summary."""
    document: dict[str, Any]
    """Its JSON document."""


def _run_then_analyze(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suite: str, agent: str, *flags: str
) -> tuple[Output, Output]:
    traces, ran = tmp_path / "T", tmp_path / "run.json"
    code = cli(
        ["run", suite, "--agent", agent, "--out", str(traces), "--seed", "7",
         "--format", "console", "--format", f"json:{ran}", *flags]
    )  # fmt: skip
    run = Output(code, capsys.readouterr().out, json.loads(ran.read_text()))
    # A separate process: nothing of the run's is shared but the files it wrote.
    console = tmp_path / "analyze.txt"
    analyzed = subprocess.run(
        [sys.executable, "-m", "assay", "analyze", str(traces),
         "--format", "json", "--format", f"console:{console}"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert analyzed.returncode in (0, 1, 3), analyzed.stderr
    return run, Output(analyzed.returncode, console.read_text(), json.loads(analyzed.stdout))


def _assert_one_judgement(run: Output, analyzed: Output) -> None:
    """The run's printed verdicts are the separate analysis's, figure by figure."""
    assert analyzed.code == run.code
    printed, again = table_rows(run.console), table_rows(analyzed.console)
    # Every column the run printed but its trials (used of the most) is in the analysis's too.
    shared = [header for header in printed[0] if header in again[0]]
    assert set(printed[0]) - set(shared) == {"trials"}
    assert {"test", "verdict", "rate (passed/n)", "errors"} <= set(shared)
    assert [{h: r[h] for h in shared} for r in printed] == [
        {h: r[h] for h in shared} for r in again
    ]
    verdicts = {t["test_id"]: t["verdict"] for t in analyzed.document["tests"]}
    assert {r["test"]: r["verdict"] for r in printed} == verdicts
    assert _tests(analyzed.document) == _tests(run.document)  # every figure, test by test
    assert analyzed.document["summary"] == run.document["summary"]
    counts = analyzed.document["summary"]
    box = f"{counts['tests']} tests: {counts['PASS']} PASS · {counts['FAIL']} FAIL · "
    box += f"{counts['INCONCLUSIVE']} INCONCLUSIVE"
    assert box in run.console and box in analyzed.console


@pytest.mark.slow
@pytest.mark.parametrize("flags", [(), ("--fixed",)], ids=["adaptive", "fixed"])
def test_analyze_reproduces_the_example_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    suite = str(ROOT / "examples" / "suite.yaml")
    run, analyzed = _run_then_analyze(tmp_path, capsys, suite, "examples.agent:run", *flags)
    _assert_one_judgement(run, analyzed)
    tests = run.document["tests"]
    if flags:
        assert all(t["sequential"] is None and t["n"] == 60 for t in tests)
    else:
        settled = [t for t in tests if t["sequential"]["decided_at"] is not None]
        assert settled, "the adaptive run settled no test early"
        for console in (run.console, analyzed.console):
            words = " ".join(console.split())
            for test in settled:  # the reason and the anytime-valid interval beside it
                assert test["verdict_reason"].startswith("SPRT settled after ")
                assert " ".join(test["verdict_reason"].split()) in words, test["test_id"]
            assert "anytime [" in console and "anytime-valid interval [" in words


def test_analyze_reproduces_a_run_with_per_test_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(PER_TEST)
    run, analyzed = _run_then_analyze(tmp_path, capsys, str(suite), "assay_test_agents:bernoulli")
    _assert_one_judgement(run, analyzed)
    tests = _tests(analyzed.document)
    assert {name: t["threshold"] for name, t in tests.items()} == {
        "lenient": 0.6,
        "strict": 0.9,
        "middling": 0.8,
    }
    assert tests["middling"]["ci"]["confidence"] == 0.9
    # A p = 0.3 agent against 0.9: the SPRT fails it within a few trials, in both commands.
    strict = tests["strict"]
    assert strict["verdict"] == "FAIL" and strict["sequential"]["decided_at"] <= 6
    assert strict["sequential"]["p1"] == pytest.approx(1.0 - (1 - 0.9) / 2)


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
    assert strict["verdict_reason"].startswith("pass rate ")  # the interval decides now

"""The issue's adaptive rows, run as a user runs them: every verdict follows from its interval.

``assay run`` (adaptive by default) with agents passing 86%, 30% and 97% of the time against
``--pass-rate 0.8 --runs 200``, three seeds: before, the SPRT's decision was the verdict (an 86%
agent FAILed beside [72.8%, 90.5%], a 30% one beside [0.1%, 86.3%], a 97% one PASSed beside
[78.8%, 100%]). Now the verdict is the anytime-valid interval printed beside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay.cli import run as cli

SUITE = """
name: rows
tests:
  - {name: agent-86, input: {p: 0.86}, expected: {output: {contains: ["yes"]}}}
  - {name: agent-30, input: {p: 0.30}, expected: {output: {contains: ["yes"]}}}
  - {name: agent-97, input: {p: 0.97}, expected: {output: {contains: ["yes"]}}}
"""


def _side(ci: dict[str, Any], threshold: float) -> str:
    if ci["low"] >= threshold:
        return "PASS"
    return "FAIL" if ci["high"] < threshold else "INCONCLUSIVE"


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[dict, str]:
    suite = tmp_path / "rows.yaml"
    suite.write_text(SUITE)
    document = tmp_path / "run.json"
    cli(
        ["run", str(suite), "--agent", "assay_test_agents:bernoulli", "--pass-rate", "0.8",
         "--runs", "200", "--out", str(tmp_path / "T"), "--format", "console",
         "--format", f"json:{document}", *flags]
    )  # fmt: skip
    console = capsys.readouterr().out
    return {t["test_id"]: t for t in json.loads(document.read_text())["tests"]}, console


@pytest.mark.slow
@pytest.mark.parametrize("seed", ["1", "2", "3"])
def test_each_verdict_is_the_interval_printed_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: str
) -> None:
    tests, console = _run(tmp_path, capsys, "--seed", seed)
    for name, test in tests.items():
        ci = test["ci"]
        assert ci["method"] == "confidence-sequence" and ci["confidence"] == 0.95, name
        assert test["verdict"] == _side(ci, 0.8), (name, test["verdict"], ci)
        # the console shows that interval beside the verdict
        row = re.search(rf"│ {name}\s+│ (\w+)\s+│.*?│\s+anytime \[([\d.]+)%, ([\d.]+)%\]", console)
        assert row is not None, console
        assert row[1] == test["verdict"]
        assert float(row[2]) == pytest.approx(100 * ci["low"], abs=0.051)
        assert float(row[3]) == pytest.approx(100 * ci["high"], abs=0.051)
    assert tests["agent-86"]["verdict"] != "FAIL"  # it meets its threshold
    assert tests["agent-30"]["verdict"] == "FAIL" and tests["agent-30"]["n"] < 60
    assert tests["agent-97"]["verdict"] == "PASS" and tests["agent-97"]["n"] < 200


@pytest.mark.slow
def test_an_sprt_stop_the_interval_does_not_support_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tests, _ = _run(tmp_path, capsys, "--seed", "1", "--sequential", "sprt")
    bad = tests["agent-30"]
    assert bad["sequential"]["method"] == "sprt" and bad["sequential"]["decision"] == "FAIL"
    assert bad["verdict"] == _side(bad["ci"], 0.8)
    if bad["verdict"] == "INCONCLUSIVE":  # stopped before its interval fell below 80%
        assert (
            ", deciding FAIL (pass rate below 90% with error ≤ 20%), which the interval "
            in (bad["verdict_reason"])
        )
    for test in tests.values():
        assert test["verdict"] == _side(test["ci"], 0.8)

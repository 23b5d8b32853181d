"""Evaluations from plain OpenTelemetry (docs/integrations.md) reach a verdict through
``--pass-when``: span events and log records alike, sent by the real SDK exporters."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from collector_process import AnyCollector

from assay.cli import run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "otel_evaluations.py"
DOC = ROOT / "docs" / "integrations.md"


def test_the_docs_code_is_the_example_that_runs() -> None:
    section = DOC.read_text().split("## Evaluations from plain OpenTelemetry")[1].split("\n## ")[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "the section shows no code"
    example = EXAMPLE.read_text()
    for block in blocks:
        # each block is the example's own lines (indented as there or not at all)
        assert block in example or textwrap.indent(block, "    ") in example, block[:80]


def test_span_events_and_log_records_decide_the_verdict_with_pass_when(
    collector: AnyCollector, capsys: pytest.CaptureFixture[str]
) -> None:
    sent = subprocess.run(
        [sys.executable, str(EXAMPLE), collector.url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert sent.returncode == 0, sent.stderr
    assert collector.terminate() == 0  # drain: everything acknowledged is in Parquet
    argv = ["analyze", str(collector.out), "--test-attribute", "gen_ai.agent.name"]
    code = run([*argv, "--pass-when", "correctness.label == pass", "--format", "json"])
    (test,) = json.loads(capsys.readouterr().out)["tests"]
    # 20 trials, every fifth judged fail; half judged by span events, half by log records:
    # were either kind not read, its 10 trials would fail the rule (nothing recorded)
    assert (test["test_id"], test["n"], test["passed"]) == ("support-bot", 20, 16)
    assert code in (1, 3)
    # the scores are read too: the mean correctness is the share judged pass
    run([*argv, "--format", "json"])
    (scored,) = json.loads(capsys.readouterr().out)["tests"]
    assert scored["score"]["mean"] == pytest.approx(0.8)

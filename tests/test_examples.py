"""Every example runs (typer's docs_src habit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli import run
from docs_examples import check_console_sample, docs_block


def test_example_agent_shows_all_three_verdicts(
    traces: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the script is run by the session fixture; the analysis runs in process (the console
    # script and `python -m assay` are run as processes in test_cli.py and run/test_cli_run.py)
    code = run(["analyze", str(traces), "--format", "json"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    document = json.loads(captured.out)
    verdicts = {t["test_id"]: t["verdict"] for t in document["tests"]}
    assert set(verdicts.values()) == {"PASS", "FAIL", "INCONCLUSIVE"}
    assert all(t["n"] == 30 for t in document["tests"])
    assert all(t["usage"]["llm_calls"] == 60 for t in document["tests"])


def test_the_docs_console_sample_is_what_analyze_prints(
    traces: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = docs_block("reports.md", "On the example trace set")
    assert run(["analyze", str(traces)]) == 1
    check_console_sample(sample, capsys.readouterr().out)

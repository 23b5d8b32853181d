"""examples/github-actions.yml: valid YAML whose assay command runs as written."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from assay.cli import run

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "github-actions.yml"


def _steps() -> dict[str, dict[str, object]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    return {step.get("name", step.get("uses")): step for step in workflow["jobs"]["assay"]["steps"]}


def test_the_assay_step_runs(
    traces: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys,
) -> None:
    steps = _steps()
    argv = shlex.split(str(steps["Verdicts"]["run"]))
    assert argv[:3] == ["assay", "analyze", "traces/"]
    # Run it from a checkout-like folder, as the runner would.
    (tmp_path / "traces").symlink_to(traces, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run(argv[1:]) == 1
    assert "::error title=assay FAIL" in capsys.readouterr().out
    assert summary.read_text().startswith("## assay:")
    uploaded = Path(str(steps["Upload the HTML report"]["with"]["path"]))  # type: ignore[index]
    assert (tmp_path / uploaded / "assay-report.html").is_file()
    assert (tmp_path / uploaded / "assay-junit.xml").is_file()

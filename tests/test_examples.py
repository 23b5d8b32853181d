"""Every example runs (typer's docs_src habit)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_example_agent_shows_all_three_verdicts(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "agent.py"), "--out", str(out), "--trials", "30"],
        check=True,
        timeout=120,
        capture_output=True,
    )
    result = subprocess.run(
        [sys.executable, "-m", "assay", "analyze", str(out), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    verdicts = {t["test_id"]: t["verdict"] for t in document["tests"]}
    assert set(verdicts.values()) == {"PASS", "FAIL", "INCONCLUSIVE"}
    assert all(t["n"] == 30 for t in document["tests"])
    assert all(t["usage"]["llm_calls"] == 60 for t in document["tests"])

"""A folder per run: ``assay run`` without ``--out`` never adds its trials to an earlier set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import assay
from assay.cli import run as cli

SUITE = "tests:\n  - {name: echo, input: {text: hi}, variance: {runs: 3}}\n"


def test_each_run_writes_a_folder_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_RUN_ID", raising=False)
    (tmp_path / "suite.yaml").write_text(SUITE)
    argv = ["run", "suite.yaml", "--agent", "assay_test_agents:echo", "--fixed", "--quiet"]
    assert cli([*argv, "--dry-run"]) == 0
    assert "traces to runs/RUN_ID (a folder per run)" in capsys.readouterr().out
    said = []
    for _ in range(2):
        cli(argv)
        found = re.search(r"^traces: (runs/(\w+)) \(run id (\w+)\)$", capsys.readouterr().out, re.M)
        assert found is not None and found[2] == found[3]
        said.append(found[1])
    assert said[0] != said[1]
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == sorted(
        Path(s).name for s in said
    )
    for folder in said:  # each set holds its own run's three trials, nothing else
        trials = assay.analyze(tmp_path / folder).trials
        assert trials.height == 3 and trials["run_id"].n_unique() == 1
    assert not (tmp_path / "traces").exists()


def test_a_run_id_names_the_folder_and_out_still_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(SUITE)
    argv = ["run", "suite.yaml", "--agent", "assay_test_agents:echo", "--fixed", "--quiet"]
    assert cli([*argv, "--assign-run-id", "nightly", "--dry-run"]) == 0
    assert "traces to runs/nightly\n" in capsys.readouterr().out
    cli([*argv, "--assign-run-id", "nightly"])
    assert "traces: runs/nightly (run id nightly)" in capsys.readouterr().out
    cli([*argv, "--out", "mine"])
    assert (tmp_path / "mine").is_dir() and sorted(
        p.name for p in (tmp_path / "runs").iterdir()
    ) == ["nightly"]

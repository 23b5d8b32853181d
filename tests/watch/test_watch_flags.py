"""``--delta`` means one thing: watch's drift margin is ``--drift-margin`` (docs/cli.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streams import write_trials

from assay.cli import run


def test_the_drift_margin_has_its_own_name_and_delta_is_its_deprecated_alias(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_trials(tmp_path, [True] * 30)
    path = str(tmp_path)
    assert run(["watch", path, "--once", "--drift-margin", "0.05"]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert run(["watch", path, "--once", "--delta", "0.05"]) == 0
    err = capsys.readouterr().err
    assert "assay watch: --delta is deprecated, use --drift-margin" in err
    # the old name reaches the same option: its range error names the new one
    assert run(["watch", path, "--once", "--delta", "2"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "assay: error: --drift-margin must lie strictly between 0 and 1 (got 2.0)"
    )
    assert run(["watch", path, "--once", "--delta", "0.05", "--drift-margin", "0.1"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        "assay: error: --delta is the deprecated name of --drift-margin: give --drift-margin alone"
    )


def test_help_shows_the_new_name_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["watch", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--drift-margin" in shown and "--delta" not in shown


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("--alpha", "--drift-alpha", "0.01"),
        ("--max-cost", "--trial-cost-bound", "0.5"),
        ("--interval", "--poll-interval", "0.5"),
    ],
)
def test_every_renamed_flag_still_works_and_says_its_new_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, value: str
) -> None:
    write_trials(tmp_path, [True] * 30)
    path = str(tmp_path)
    assert run(["watch", path, "--once", new, value]) == 0
    expected = capsys.readouterr()
    assert "deprecated" not in expected.err
    assert run(["watch", path, "--once", f"{old}={value}"]) == 0
    given = capsys.readouterr()
    assert given.out == expected.out
    (line,) = [line for line in given.err.splitlines() if "deprecated" in line]
    assert line.startswith(f"assay watch: {old} is deprecated, use {new} (")
    assert given.err.replace(line + "\n", "") == expected.err
    assert run(["watch", "--help"]) == 0
    shown = capsys.readouterr().out
    assert new in shown and f"{old} " not in shown

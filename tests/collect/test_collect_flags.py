"""A bad value of a collector setting is refused under the flag the user typed."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path

import pytest
import typer.main

from assay._cli.collect import _PARAMETER_OF_FIELD
from assay.cli import app, run
from assay.collect import CollectorConfig


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--roll-age", "0"], "--roll-age must be positive"),
        (["--roll-mb", "0"], "--roll-mb must be positive"),
        (["--max-body-mb", "-1"], "--max-body-mb must be positive"),
        (["--header-timeout", "0"], "--header-timeout must be positive"),
        (["--idle-flush", "-1"], "--idle-flush must not be negative"),
        (["--log-file-mb", "0"], "--log-file-mb must be positive"),
        (["--max-connections", "0"], "--max-connections must be at least 1"),
        (["--workers", "-1"], "--workers must be between 0 and 64, not -1"),
        (["--http-port", "70000"], "--http-port 70000 is not a TCP port"),
    ],
)
def test_a_bad_setting_is_one_line_naming_its_flag(
    tmp_path: Path, args: list[str], said: str
) -> None:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = run(["collect", "--out", str(tmp_path / "traces"), "--grpc-port", "0", *args])
    assert code == 2
    assert stderr.getvalue().strip() == f"assay: error: {said}"
    assert not (tmp_path / "traces").exists()  # refused before anything was written


def test_every_renamed_setting_has_its_flag() -> None:
    fields = {f.name for f in dataclasses.fields(CollectorConfig)}
    command = typer.main.get_command(app).commands["collect"]  # type: ignore[attr-defined]
    parameters = {p.name for p in command.params}
    assert set(_PARAMETER_OF_FIELD) <= fields
    assert set(_PARAMETER_OF_FIELD.values()) <= parameters

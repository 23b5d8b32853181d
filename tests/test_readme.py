"""The README is true: its tour runs as written, in order, and prints what it shows.

When a command's output changes on purpose, regenerate the README's output blocks with one
command, then read the diff::

    PYTHONPATH=src .venv/bin/python tests/readme_tour.py --update

(``tests/readme_tour.py`` explains how the tour is read from README.md and what is normalised.)
The docs are self-contained: they cite no design file outside the repository, and every command
``assay -h`` lists is documented in docs/cli.md.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import readme_tour as tour  # noqa: E402

pytestmark = pytest.mark.slow


def test_the_tour_runs_and_prints_what_the_readme_shows(tmp_path: Path) -> None:
    steps = tour.steps(tour.README.read_text())
    assert [s.kind for s in steps].count("sh") >= 5
    assert sum(s.shown is not None for s in steps) >= 6
    folder = tour.tour_folder(tmp_path)
    said: list[str] = []
    for step in steps:
        printed = tour.shown_as(tour.run(step, folder, said), folder)
        if step.shown is None:
            continue
        shown, actual = tour.compared(step.shown, printed)
        assert tour.normalised(actual) == tour.normalised(shown), (
            f"README output of\n{step.code}\ndiffers from what it prints; if the change is "
            "intended, run: PYTHONPATH=src .venv/bin/python tests/readme_tour.py --update"
        )
    # the tour causes no warning: the example's models cost what it records, its score says
    # its range (a warning the reader did not cause teaches them to ignore warnings)
    warned = [
        line
        for line in "".join(said).splitlines()
        if "warning" in line.lower() or line.startswith("note:")
    ]
    assert warned == []
    # the tour wrote what it says, each step in its own folder
    for written in ("my-traces", "otel-traces", "traces", "v1", "v2", "runs"):
        assert any((folder / written).rglob("*.parquet")), written
    assert (folder / "report.html").read_text().startswith("<!DOCTYPE html>")
    # and a reader who follows the tour in the checkout leaves git nothing new to track
    for entry in folder.iterdir():
        if entry.name in ("examples", "_step.py"):
            continue
        name = entry.name + ("/" if entry.is_dir() else "")
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", name], cwd=tour.ROOT, check=False
        )
        assert ignored.returncode == 0, f"the tour writes {name}, which .gitignore misses"


def test_an_output_block_that_differs_is_caught(tmp_path: Path) -> None:
    readme = (
        "<!-- tour -->\n```sh\nassay plan --threshold 0.8 --expected 0.9\n```\n\n"
        "```text\nthreshold check: PASS at 0.8 when the true rate is 0.95\n…\n```\n<!-- /tour -->\n"
    )
    (step,) = tour.steps(readme)
    folder = tour.tour_folder(tmp_path)
    shown, actual = tour.compared(step.shown or "", tour.shown_as(tour.run(step, folder), folder))
    assert actual == "threshold check: PASS at 0.8 when the true rate is 0.9"
    assert tour.normalised(actual) != tour.normalised(shown)


def test_the_docs_cite_no_design_file_and_their_links_resolve() -> None:
    files = [tour.README, *sorted((tour.ROOT / "docs").glob("*.md"))]
    for path in files:
        text = path.read_text()
        assert "DESIGN.md" not in text and "../shared" not in text, path
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            assert (path.parent / target).exists(), f"{path.name}: {target}"


def test_every_command_is_in_the_cli_doc() -> None:
    listed = subprocess.run(
        [tour.ASSAY, "-h"], capture_output=True, text=True, check=True, env=tour.environment()
    ).stdout
    commands = re.findall(r"^  (\w+)  ", listed.split("Commands:")[1], re.M)
    assert len(commands) >= 8
    cli = (tour.ROOT / "docs" / "cli.md").read_text()
    for command in commands:
        assert f"`assay {command}" in cli, command


def test_what_the_tour_and_a_build_write_is_ignored_by_git() -> None:
    written = ["build/", "dist/", "src/assay_otel.egg-info/", "demo-traces/", "report.html"]
    written += [f"{name}/" for name in ("traces", "my-traces", "otel-traces", "v1", "v2")]
    written += ["run-traces/", "eval-traces/", "runs/", "runs/0123abcd/", "examples/runs/"]
    for path in written:
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", path], cwd=tour.ROOT, check=False
        )
        assert ignored.returncode == 0, f"{path} is not in .gitignore"

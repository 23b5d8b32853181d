"""Run the README's tour as written, and check (or regenerate) the outputs it shows.

The tour is the part of README.md between ``<!-- tour -->`` and ``<!-- /tour -->``. In it:

- a ```` ```sh ```` block is commands, run in order, one a line (``#`` starts a comment), in one
  folder that holds the repository's ``examples/`` — a fresh checkout, as the reader has;
- a ```` ```python ```` block is a script, run there with ``python``;
- a ```` ```text ```` block right after one of those is what it prints on stdout. A last line
  ``…`` means the output goes on: the lines above are its first lines.

Regenerate the output blocks from the program (after a change to what a command prints)::

    PYTHONPATH=src .venv/bin/python tests/readme_tour.py --update

``tests/test_readme.py`` runs the same tour and fails where the README differs from the program.
What must vary between runs is normalised on both sides: the tour's folder, durations, and the
time-dependent figures named in :data:`_VARYING`.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ASSAY = str(Path(sys.executable).parent / "assay")
MORE = "…"
_TOUR = re.compile(r"<!-- tour -->\n(.*?)<!-- /tour -->", re.S)
_BLOCK = re.compile(r"^```(sh|python|text)\n(.*?)^```\n", re.S | re.M)
_VARYING = (
    (re.compile(r"\b\d+:\d\d:\d\d\b"), "0:00:00"),  # elapsed times
    (re.compile(r"\b\d+(\.\d+)? ?(s|ms)\b"), "1 s"),  # durations
)


@dataclass
class Step:
    """One runnable block of the tour and the output block after it (if any)."""

    kind: str
    """``sh`` or ``python``."""
    code: str
    shown: str | None
    """The output block's text, or None when the README shows none."""
    span: tuple[int, int] | None
    """Where the output block's text lies in README.md."""


def steps(readme: str) -> list[Step]:
    """The tour's runnable blocks, in order."""
    tour = _TOUR.search(readme)
    if tour is None:
        raise ValueError("README.md has no <!-- tour --> … <!-- /tour --> section")
    found: list[Step] = []
    for block in _BLOCK.finditer(readme, tour.start(1), tour.end(1)):
        kind, text = block.group(1), block.group(2)
        if kind != "text":
            found.append(Step(kind, text, None, None))
            continue
        previous = found[-1] if found else None
        if previous is None or previous.shown is not None:
            raise ValueError(f"an output block not right after a command: {text[:60]!r}")
        between = readme[_end_of(readme, previous, block.start()) : block.start()]
        if between.strip():
            raise ValueError(f"text between a command and its output: {between[:60]!r}")
        previous.shown, previous.span = text, (block.start(2), block.end(2))
    return found


def _end_of(readme: str, step: Step, before: int) -> int:
    """Where ``step``'s block ends (the last fence before ``before``)."""
    return readme.rindex("```\n", 0, before) + len("```\n")


def environment() -> dict[str, str]:
    """The tour's environment: this checkout's sources first, a fixed console width."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    env.update({"COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"})
    env.pop("GITHUB_ACTIONS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def _argv(line: str) -> list[str]:
    argv = shlex.split(line, comments=True)
    if argv[0] == "assay":
        return [ASSAY, *argv[1:]]
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    raise ValueError(f"the tour runs assay and python commands only, not {argv[0]!r}")


def run(step: Step, folder: Path, stderr: list[str] | None = None) -> str:
    """Run one step in ``folder``; its stdout. A crash or a usage error (exit 2) raises.

    ``stderr``, when given, receives what each command wrote there.
    """
    env = environment()
    outputs = []
    if step.kind == "python":
        script = folder / "_step.py"
        script.write_text(step.code)
        commands = [[sys.executable, str(script)]]
    else:
        commands = [_argv(line) for line in step.code.splitlines() if line.split("#")[0].strip()]
    for argv in commands:
        done = subprocess.run(
            argv, cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        if done.returncode not in (0, 1, 3):
            shown = " ".join(argv)
            raise AssertionError(f"{shown}: exit {done.returncode}\n{done.stderr[-3000:]}")
        outputs.append(done.stdout)
        if stderr is not None:
            stderr.append(done.stderr)
    return "".join(outputs)


def shown_as(text: str, folder: Path) -> str:
    """``text`` as the README shows it: paths relative to the tour's folder, no trailing blanks."""
    text = text.replace(str(folder) + os.sep, "").replace(str(folder), ".")
    return "\n".join(line.rstrip() for line in text.splitlines())


def normalised(text: str) -> str:
    """``text`` with what must vary between runs (durations) made the same."""
    for pattern, replacement in _VARYING:
        text = pattern.sub(replacement, text)
    return text


def compared(shown: str, printed: str) -> tuple[str, str]:
    """The shown block and the printed output, cut to what the block claims to show."""
    lines = shown.rstrip("\n").split("\n")
    if lines[-1] == MORE:
        lines = lines[:-1]
        return "\n".join(lines), "\n".join(printed.split("\n")[: len(lines)])
    return "\n".join(lines), printed.rstrip("\n")


def tour_folder(parent: Path) -> Path:
    """A folder like a fresh checkout, as far as the tour reads it: ``examples/``."""
    folder = parent / "tour"
    folder.mkdir()
    (folder / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    return folder


def update(readme_path: Path = README) -> int:
    """Rewrite the README's output blocks from what the program prints; the number changed."""
    readme = readme_path.read_text()
    changed = 0
    with tempfile.TemporaryDirectory() as temp:
        folder = tour_folder(Path(temp))
        edits: list[tuple[tuple[int, int], str]] = []
        for step in steps(readme):
            printed = shown_as(run(step, folder), folder)
            if step.shown is None or step.span is None:
                continue
            keep = step.shown.rstrip("\n").split("\n")
            if keep[-1] == MORE:
                text = "\n".join([*printed.split("\n")[: len(keep) - 1], MORE]) + "\n"
            else:
                text = printed + "\n"
            if normalised(text) != normalised(step.shown):
                changed += 1
                edits.append((step.span, text))
    for (start, end), text in sorted(edits, reverse=True):
        readme = readme[:start] + text + readme[end:]
    readme_path.write_text(readme)
    return changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", action="store_true", help="rewrite the output blocks")
    args = parser.parse_args()
    if not args.update:
        parser.error("run tests/test_readme.py to check; --update rewrites the README")
    print(f"README.md: {update()} output block(s) rewritten")


if __name__ == "__main__":
    main()

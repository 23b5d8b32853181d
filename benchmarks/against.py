"""The code at another git rev, for a benchmark's ``--against REV`` (issue 49).

A benchmark given ``--against REV`` runs the command of this tree and the same command from the
code at ``REV`` in the same run, interleaved, so that a change is measured against its parent
before it lands (``bench_shapes.py``, ``bench_tool_heavy.py``). Both trees are compiled to
bytecode first, as an installed copy is (:func:`compiled`).
"""

from __future__ import annotations

import filecmp
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
"""This tree: its ``src`` is the code measured as ``analyze``."""


def cpu_model() -> str:
    """The CPU model, as ``lscpu`` names it (every figure is recorded with it)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    name = fields.get("Model name", "unknown").strip()
    return f"{name}, {fields.get('CPU(s)', '?').strip()} CPUs"


def checkout(rev: str, into: Path) -> Path:
    """The code at ``rev`` in a new detached worktree ``into``; its ``src``."""
    subprocess.run(
        ["git", "-C", str(HERE), "worktree", "add", "--detach", "--quiet", str(into), rev],
        check=True,
    )
    return into / "src"


@contextmanager
def tree_at(rev: str, into: Path) -> Iterator[Path]:
    """The compiled ``src`` of ``rev`` in a worktree ``into``, removed afterwards."""
    src = compiled(checkout(rev, into))
    try:
        yield src
    finally:
        subprocess.run(
            ["git", "-C", str(HERE), "worktree", "remove", "--force", str(into)], check=False
        )


def compiled(src: Path) -> Path:
    """``src`` compiled to bytecode, as an installed assay is (``make`` and pip compile it).

    Where ``PYTHONDONTWRITEBYTECODE`` is set, as on this project's machines, a tree never
    compiled would compile its every module in every timed run (0.15–0.3 CPU-s here), a cost
    no user's installed copy pays, and a fresh ``--against`` worktree would pay it too.
    """
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)
    return src


def environment(src: Path) -> dict[str, str]:
    """This process's environment with ``src`` first on the path."""
    return {**os.environ, "PYTHONPATH": str(src)}


def same_document(ours: Path, theirs: Path) -> str:
    """Whether two JSON documents hold the same values: ``identical`` (the same bytes), ``same
    values`` (the same once parsed: a rev before orjson wrote the text, docs/architecture.md),
    or ``DIFFER``."""
    if filecmp.cmp(ours, theirs, shallow=False):
        return "identical"
    with ours.open("rb") as a, theirs.open("rb") as b:
        return "same values" if json.load(a) == json.load(b) else "DIFFER"

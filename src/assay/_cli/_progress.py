"""A live progress display on stderr while a command reads a trace set.

Shown only where a person watches it: stderr is a terminal and ``-q`` was not given. It is
drawn on stderr and erased when done, so stdout (a table, ``--format json``) is never mixed
with it, and a CI log or a pipe gets nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

__all__ = ["described", "working"]


@contextmanager
def working(what: str, *, quiet: bool = False) -> Iterator[None]:
    """While the block runs, a spinner saying ``what`` and the time taken (on a terminal)."""
    console = Console(stderr=True)
    if quiet or not console.is_terminal:
        yield
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        progress.add_task(what, total=None)
        yield


def described(paths: object) -> str:
    """``what`` for reading ``paths``: the path, or how many."""
    if isinstance(paths, list | tuple) and len(paths) != 1:
        return f"{len(paths)} paths"
    only = paths[0] if isinstance(paths, list | tuple) else paths
    return str(only)

"""``assay compact``: merge a trace set's small files, for sets written by other tools."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from assay._cli import _common as o
from assay.errors import ConfigError, InputError


def compact(
    paths: Annotated[
        list[Path],
        typer.Argument(help="Trace-set folders; every partition folder under each is compacted."),
    ],
    fanout: o.Fanout = o.FANOUT,
) -> None:
    """Merge each partition's small spans files into few, crash-safe.

    The exporter and the collector do this as they write; this does it for a trace set
    written elsewhere (or by an earlier version). Safe while readers read and writers write:
    a merged file appears complete, names the files it replaces, and readers count each span
    once even if the command is killed midway. A set already compacted is left as it is.
    """
    from assay.store import compact_tree

    if fanout < 2:
        raise ConfigError(f"--fanout must be at least 2 (got {fanout})")
    for path in paths:
        if "://" in str(path):
            raise InputError(f"{path}: compact works on local folders only")
        if not path.is_dir():
            raise InputError(f"{path}: not a folder (compact takes a trace set's folder)")
        if not os.access(path, os.W_OK):
            raise InputError(f"{path}: folder is not writable")
    for path in paths:
        try:
            done = compact_tree(path, fanout)
        except OSError as exc:
            raise InputError(f"{path}: could not compact ({exc.strerror or exc})") from exc
        for bad, reason in done.unreadable:
            typer.echo(f"{bad}: not a readable Parquet file, left as it is ({reason})", err=True)
        for folder in done.busy:
            typer.echo(f"{folder}: another process is compacting it, left to that one", err=True)
        if done.leftovers:
            typer.echo(
                f"{path}: deleted {done.leftovers} file(s) an interrupted compaction had merged "
                "already"
            )
        typer.echo(f"{path}: merged {done.replaced} file(s) into {len(done.merged)}")

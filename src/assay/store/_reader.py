"""Reading a trace set: a folder, a glob or a list of spans files, scanned lazily with Polars."""

from __future__ import annotations

import glob as globlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from assay.errors import InputError, SchemaError
from assay.store import _schema as s
from assay.store._writer import TEMP_SUFFIX

_REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_GLOB_CHARS = set("*?[")


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file left out of a trace set because it could not be read."""

    path: str
    """The file."""
    reason: str
    """Why it was skipped, in words."""


@dataclass(frozen=True, slots=True)
class TraceSet:
    """The spans files that make up a trace set, checked and ready to scan."""

    files: tuple[str, ...]
    """Every file that will be read (local paths or object-store URLs)."""
    skipped: tuple[SkippedFile, ...] = ()
    """Files left out under ``skip_bad_files``, with the reason."""

    def scan(self) -> pl.LazyFrame:
        """A lazy scan of every span in the set, with the spans-table schema."""
        return pl.scan_parquet(
            list(self.files),
            schema=polars_schema(),
            hive_partitioning=False,
            missing_columns="insert",
            extra_columns="ignore",
        )


@cache
def polars_schema() -> pl.Schema:
    """The spans-table schema as Polars types."""
    # Not ``empty_table()``: that makes pyarrow import pandas (about 1 s) when it is installed.
    frame = pl.from_arrow(pa.Table.from_batches([], schema=s.SPANS_SCHEMA))
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


def _expand(path: str) -> list[str]:
    if _REMOTE.match(path):
        return [path]
    if _GLOB_CHARS & set(path):
        found = sorted(p for p in globlib.glob(path, recursive=True) if os.path.isfile(p))
        if not found:
            raise InputError(f"{path}: no file matches this pattern")
        return [p for p in found if not _hidden_or_temp(p)]
    p = Path(path)
    if p.is_dir():
        files = sorted(
            str(f)
            for f in p.rglob("*.parquet")
            if f.is_file() and not _hidden_or_temp(str(f.relative_to(p)))
        )
        if not files:
            raise InputError(f"{path}: folder holds no .parquet files")
        return files
    if p.is_file():
        return [str(p)]
    raise InputError(f"{path}: no such file or folder")


def _hidden_or_temp(relative: str) -> bool:
    return relative.endswith(TEMP_SUFFIX) or any(
        part.startswith((".", "_")) for part in Path(relative).parts
    )


def check_spans_file(path: str) -> None:
    """Raise :class:`InputError` / :class:`SchemaError` unless ``path`` is a readable spans file.

    Reads only the Parquet footer, so a truncated or non-Parquet file is caught cheaply.
    """
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({_first_line(exc)})") from exc
    metadata = schema.metadata or {}
    version = metadata.get(s.SCHEMA_VERSION_KEY)
    if version is None:
        raise SchemaError(f"{path}: not an assay spans file (no {s.SCHEMA_VERSION_KEY.decode()})")
    if not version.isdigit() or int(version) > s.SCHEMA_VERSION:
        raise SchemaError(
            f"{path}: spans schema version {version.decode(errors='replace')} is newer than this "
            f"assay understands ({s.SCHEMA_VERSION}); upgrade assay"
        )
    missing = [c for c in s.REQUIRED_COLUMNS if c not in schema.names]
    if missing:
        raise SchemaError(f"{path}: missing column(s) {', '.join(missing)}")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def open_trace_set(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    skip_bad_files: bool = False,
) -> TraceSet:
    """Resolve folders, globs and files into a checked :class:`TraceSet`.

    Args:
        paths: One or more folders (searched recursively, Hive partitions included), glob
            patterns, files, or object-store URLs (passed to Polars unchecked).
        skip_bad_files: Leave out unreadable files (listed in ``TraceSet.skipped``) instead of
            failing on the first.

    Raises:
        InputError: A path does not exist, a folder is empty, or a file is unreadable.
    """
    items: Iterable[str | os.PathLike[str]] = (
        [paths] if isinstance(paths, str | os.PathLike) else paths
    )
    names = [os.fspath(p) for p in items]
    if not names:
        raise InputError("no trace set given")
    files: list[str] = []
    for name in names:
        files.extend(_expand(name))
    good: list[str] = []
    skipped: list[SkippedFile] = []
    for f in dict.fromkeys(files):
        if _REMOTE.match(f):
            good.append(f)
            continue
        try:
            check_spans_file(f)
        except InputError as exc:
            if not skip_bad_files:
                raise
            skipped.append(SkippedFile(f, str(exc).removeprefix(f"{f}: ")))
            continue
        good.append(f)
    if not good:
        raise InputError(f"{', '.join(names)}: no readable spans file")
    return TraceSet(tuple(good), tuple(skipped))


def scan_spans(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    skip_bad_files: bool = False,
) -> pl.LazyFrame:
    """A lazy Polars scan of the spans in ``paths`` (see :func:`open_trace_set`)."""
    return open_trace_set(paths, skip_bad_files=skip_bad_files).scan()


def read_spans(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> pl.DataFrame:
    """Read every span in ``paths`` into memory (convenient for small sets and tests)."""
    return scan_spans(paths).collect()

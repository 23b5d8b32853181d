"""Following a growing trace set: each new complete Parquet file read once.

The collector writes every file under a temporary name and renames it when complete
(``assay.store.TEMP_SUFFIX``), so a listing never shows a half-written file. A file is known by
its path, size and modification time; one that changes after it was read is not read again
(the collector never rewrites a file) and is named instead, never silently counted twice.
A new path to a file already read (a hard link: the same device and inode) is named and not
read; a copy is read, and its spans are counted once (:mod:`assay.watch._seen`).

A compaction (:mod:`assay.store._compact`) replaces files by one holding their rows, in order,
and names them with their row counts in its metadata. The rows of the files it replaces that
were read already are skipped when it is read, and a replaced file still present (a compaction
interrupted before its deletions) is not read: its rows are read from the merged file. So a
compaction never counts a span twice, whatever the span memory's bound.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

import polars as pl

from assay.errors import InputError
from assay.store import (
    READ_ERRORS,
    list_files,
    merged_inputs,
    one_copy_each,
    open_trace_set,
    read_failure,
)

__all__ = ["UNREADABLE", "FileFollower", "NewSpans"]

UNREADABLE: tuple[type[BaseException], ...] = (InputError, *READ_ERRORS)
"""What reading a file can raise; a file gone when it is read was merged away by a compaction."""


@dataclass(frozen=True, slots=True)
class NewSpans:
    """What one look at the trace set found."""

    spans: pl.DataFrame
    """The spans of the files not read before (the spans-table schema)."""
    files: tuple[str, ...]
    """Those files, in the order read (oldest first)."""
    skipped: tuple[tuple[str, str], ...] = ()
    """Unreadable files left out (``--skip-bad-files``), with the reason."""
    linked: tuple[tuple[str, str], ...] = ()
    """New paths of a file already read (a hard link), with the path it was read by."""


@dataclass(slots=True)
class FileFollower:
    """The complete spans files under ``paths`` that have not been read yet, oldest first."""

    paths: tuple[str, ...]
    """Folders, globs or files, as ``assay analyze`` takes them."""
    skip_bad_files: bool = False
    """Leave out an unreadable file (named) instead of failing."""
    _seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    _inodes: dict[tuple[int, int, int, int], str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    """Files that changed after they were read (not read again)."""
    _read: set[str] = field(default_factory=set)
    """Paths whose rows were counted (read, or a link to a file read)."""
    _replaced: set[str] = field(default_factory=set)
    """Paths a merged file claimed holds (never read on their own)."""
    _skip_rows: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Merged files claimed, with the row ranges of their inputs read already."""

    def __post_init__(self) -> None:
        for name in self.paths:
            if "://" in name:
                raise InputError(f"{name}: watch follows local folders and files only")
            if not os.path.exists(name) and not any(ch in name for ch in "*?["):
                raise InputError(f"{name}: no such file or folder")

    def _listing(self) -> list[str]:
        files: list[str] = []
        for name in self.paths:
            try:
                listing = list_files([name])
            except InputError:
                # An empty folder (a collector that has written nothing yet) or a pattern
                # matching nothing yet: files will come. A missing path was refused at start.
                if os.path.isdir(name) or any(ch in name for ch in "*?["):
                    continue
                raise
            for path, reason in listing.unreadable:
                if not self.skip_bad_files:
                    raise InputError(f"{path}: {reason}")
            files.extend(listing.files)
        return files

    def claim_new(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The complete files not read before (oldest first), now counted as read.

        Also the new paths of files already read (hard links), each with the path read.
        """
        fresh: list[tuple[int, str]] = []
        linked: list[tuple[str, str]] = []
        for path in self._listing():
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                continue  # removed between listing and reading (a compaction): nothing to read
            identity = (stat.st_size, stat.st_mtime_ns)
            known = self._seen.get(path)
            if known is None:
                self._seen[path] = identity
                # A hard link to a file read: the same inode, size and time (an inode freed by
                # a removed file and reused has another time).
                inode = (stat.st_dev, stat.st_ino, *identity)
                first = self._inodes.setdefault(inode, path)
                if first != path:
                    linked.append((path, first))
                    continue
                fresh.append((stat.st_mtime_ns, path))
            elif known != identity and path not in self.changed:
                self.changed.append(path)
        fresh.sort()
        claimed = self._merged_first([path for _, path in fresh])
        self._read.update(claimed)
        self._read.update(path for path, _ in linked)
        return claimed, linked

    def forget(self, paths: list[str]) -> None:
        """Count ``paths`` as never read: a compaction removed them before they were.

        Their rows are then read from the merged file, which names them, when it is found.
        """
        for path in paths:
            self._seen.pop(path, None)
            self._read.discard(path)
            self._skip_rows.pop(path, None)

    def _merged_first(self, fresh: list[str]) -> list[str]:
        """``fresh`` less files a merged file replaces; each merged file's read rows noted."""
        merged: list[tuple[str, list[tuple[str, int]]]] = []
        for path in fresh:
            try:
                inputs = merged_inputs(path)
            except READ_ERRORS:
                continue  # reading it will say what is wrong
            if inputs:
                merged.append((path, inputs))
        for _, inputs in merged:
            self._replaced.update(p for p, _ in inputs)
        for path, inputs in merged:
            skip: list[tuple[int, int]] = []
            offset = 0
            for source, rows in inputs:
                if source in self._read:
                    skip.append((offset, rows))
                offset += rows
            if skip:
                self._skip_rows[path] = skip
        return [p for p in fresh if p not in self._replaced]

    def _read_one(self, path: str) -> pl.DataFrame:
        """A file's spans, less the rows of the files it replaces that were read already."""
        trace_set = open_trace_set([path])
        skip = self._skip_rows.pop(path, None)
        if not skip:
            return trace_set.scan().collect()
        row = pl.int_range(pl.len())
        read_before = pl.any_horizontal(
            [(row >= start) & (row < start + rows) for start, rows in skip]
        )
        scan = replace(trace_set, deduplicate=False).scan().filter(~read_before)
        return (one_copy_each(scan) if trace_set.deduplicate else scan).collect()

    def read_new(self, files: list[str] | None = None) -> NewSpans:
        """Read every complete file not read before (or ``files``, claimed already)."""
        linked: list[tuple[str, str]] = []
        if files is None:
            files, linked = self.claim_new()
        frames: list[pl.DataFrame] = []
        read: list[str] = []
        skipped: list[tuple[str, str]] = []
        for path in files:
            try:
                frames.append(self._read_one(path))
            except UNREADABLE as exc:
                if not os.path.exists(path):
                    self.forget([path])  # merged away meanwhile: read from the merged file
                    continue
                if not isinstance(exc, InputError):
                    failure = read_failure(exc, [path])
                    if not self.skip_bad_files:
                        raise failure from exc
                    skipped.append((path, str(failure)))
                    continue
                if not self.skip_bad_files:
                    raise
                skipped.append((path, str(exc).removeprefix(f"{path}: ")))
                continue
            read.append(path)
        spans = pl.concat(frames, how="vertical") if frames else _empty()
        return NewSpans(spans, tuple(read), tuple(skipped), tuple(linked))


def _empty() -> pl.DataFrame:
    from assay.store import polars_schema

    return pl.DataFrame(schema=polars_schema())

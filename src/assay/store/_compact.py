"""Compaction: a partition's small spans files merged into one, crash-safe, few files kept.

An exporter that flushes after every pause writes one small file per trial; a day of sporadic
trials is tens of thousands of files, and a reader pays per file. Compaction merges them,
size-tiered as Cassandra's and the OTel Collector's file exporters do: a file's *tier* is how
many times ``fanout`` its size is above ``SMALL_BYTES``; once a partition folder holds
``fanout`` files of one tier they become one file of the next. A partition then holds fewer
than ``fanout`` files per tier, and each span is rewritten once per tier (docs/scale.md).

Crash safety, in order: the merged file is written under a hidden temporary name (readers
never list it), fsynced, renamed into place (the folder fsynced), then its inputs are deleted.
Its Parquet metadata names each input and its row count (:data:`REPLACES_KEY`), in the order
their rows were copied. A crash leaves either the inputs alone, or the merged file beside
some inputs: readers drop an input a present merged file replaces (``_reader``), ``assay
watch`` skips the rows of the inputs it already read (``watch._follow``), and the next
compaction deletes the leftovers first. Memory is bounded by one row group: inputs are
streamed row group by row group.

Two processes (exporters of parallel test workers, a collector and ``assay compact``) never
compact the same folder at once: each holds an exclusive ``flock`` on its ``_compact.lock``
(readers skip ``_`` names), and one that finds it held leaves the folder to the other.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import pyarrow as pa
import pyarrow.parquet as pq

from assay.store._contents import ATTRIBUTE_FAMILIES_KEY
from assay.store._footers import Footer, read_footer
from assay.store._paths import TEMP_SUFFIX

__all__ = [
    "DEFAULT_FANOUT",
    "REPLACES_KEY",
    "Compaction",
    "compact_folder",
    "compact_tree",
    "merged_inputs",
    "replaced_inputs",
]

REPLACES_KEY: Final = b"assay.compact.replaces"
"""Parquet metadata of a merged file: JSON ``[[name, rows], ...]`` of the files (same folder)
whose rows it holds, in the order it holds them."""
DEFAULT_FANOUT: Final = 10
"""Files of one tier merged at once (and the most a folder holds per tier, less one)."""
SMALL_BYTES: Final = 256 * 1024
"""Files up to this size are tier 0."""
LARGE_BYTES: Final = 128 * 1024 * 1024
"""Files this large are never merged again (the writers' ``max_file_bytes``)."""
ROW_GROUP_ROWS: Final = 128 * 1024
ROW_GROUP_BYTES: Final = 64 * 1024 * 1024
LOCK_FILE: Final = "_compact.lock"
_TEMP_PREFIX: Final = ".compact-"
"""A merged file being written: only a compaction, under the folder's lock, writes one, so one
found by the next is what a killed compaction left (a writer's own temporaries are not)."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """What one compaction pass did."""

    merged: tuple[Path, ...] = ()
    """The files written."""
    replaced: int = 0
    """Input files deleted (their rows are in ``merged``)."""
    leftovers: int = 0
    """Inputs of an earlier, interrupted compaction deleted (their rows were merged already)."""
    busy: tuple[Path, ...] = ()
    """Folders left alone: another process was compacting them."""
    unreadable: tuple[tuple[Path, str], ...] = ()
    """Files left as they are because they cannot be read as Parquet, with the reason."""


def replaced_inputs(footer: Footer) -> list[tuple[str, int]]:
    """The ``(name, rows)`` of the files a merged file replaces (empty for any other file)."""
    raw = footer.file_metadata.get(REPLACES_KEY)
    if raw is None:
        return []
    return [(str(name), int(rows)) for name, rows in json.loads(raw)]


def merged_inputs(path: str) -> list[tuple[str, int]]:
    """The files (paths beside ``path``) and row counts a merged file replaces, in its order.

    Empty for a file no compaction wrote.

    Raises:
        OSError, pyarrow.ArrowException: The file cannot be read as Parquet.
    """
    folder = os.path.dirname(path)
    return [(os.path.join(folder, n), rows) for n, rows in replaced_inputs(read_footer(path))]


def tier(size: int, fanout: int) -> int:
    """A file's size tier: how many times ``fanout`` it is above :data:`SMALL_BYTES`."""
    if size <= SMALL_BYTES:
        return 0
    return 1 + int(math.log(size / SMALL_BYTES, fanout))


@contextmanager
def _folder_lock(folder: Path) -> Iterator[bool]:
    """Hold the folder's compaction lock if free; yield whether it is held."""
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the flock


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _spans_files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if p.name.endswith(".parquet") and not p.name.startswith((".", "_")) and p.is_file()
    )


def _delete(paths: Iterable[Path]) -> int:
    gone = 0
    for path in paths:
        try:
            path.unlink()
            gone += 1
        except FileNotFoundError:
            pass
    return gone


def _merge(folder: Path, inputs: Sequence[tuple[Path, Footer]], schema: pa.Schema) -> Path:
    """Write ``inputs``' rows, in order, as one visible file; the inputs stay."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    name = f"spans-{stamp}-{uuid.uuid4().hex[:12]}.parquet"
    final, temp = folder / name, folder / f"{_TEMP_PREFIX}{name}{TEMP_SUFFIX}"
    families: set[str] = set()
    for _, footer in inputs:
        recorded = footer.file_metadata.get(ATTRIBUTE_FAMILIES_KEY)
        families |= set(filter(None, (recorded or b"").decode().split(",")))
    metadata = {
        k: v
        for k, v in inputs[0][1].file_metadata.items()
        if k not in (ATTRIBUTE_FAMILIES_KEY, REPLACES_KEY)
    }
    metadata[ATTRIBUTE_FAMILIES_KEY] = ",".join(sorted(families)).encode()
    metadata[REPLACES_KEY] = json.dumps([[p.name, f.rows] for p, f in inputs]).encode()
    try:
        with pq.ParquetWriter(temp, schema, compression="zstd") as writer:
            pending: list[pa.Table] = []
            rows = size = 0
            for path, _ in inputs:
                source = pq.ParquetFile(path)
                for group in range(source.num_row_groups):
                    table = source.read_row_group(group)
                    pending.append(table)
                    rows, size = rows + table.num_rows, size + table.nbytes
                    if rows >= ROW_GROUP_ROWS or size >= ROW_GROUP_BYTES:
                        writer.write_table(pa.concat_tables(pending), row_group_size=rows)
                        pending, rows, size = [], 0, 0
            if pending:
                writer.write_table(pa.concat_tables(pending), row_group_size=rows)
            writer.add_key_value_metadata(metadata)
        _fsync(temp)
        os.replace(temp, final)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync(folder)
    return final


def _by_schema(
    members: list[tuple[Path, Footer]],
) -> list[tuple[pa.Schema, list[tuple[Path, Footer]]]]:
    """``members`` grouped by Arrow schema (metadata included): only equals are merged."""
    groups: list[tuple[pa.Schema, list[tuple[Path, Footer]]]] = []
    for path, footer in members:
        schema = pq.read_schema(path)
        for known, same in groups:
            if known.equals(schema, check_metadata=True):
                same.append((path, footer))
                break
        else:
            groups.append((schema, [(path, footer)]))
    return groups


def compact_folder(folder: Path, fanout: int = DEFAULT_FANOUT) -> Compaction:
    """Merge the files of each size tier of which ``folder`` holds ``fanout`` or more.

    Only the folder's own files are considered (a partition folder is a leaf), and only files
    of one Arrow schema are merged together. Leftover inputs of an interrupted compaction are
    deleted first. A folder another process is compacting is left alone (``busy``).
    """
    if fanout < 2:
        raise ValueError("fanout must be at least 2")
    with _folder_lock(folder) as held:
        if not held:
            return Compaction(busy=(folder,))
        for stale in folder.glob(f"{_TEMP_PREFIX}*{TEMP_SUFFIX}"):
            stale.unlink(missing_ok=True)
        footers: dict[Path, Footer] = {}
        unreadable: list[tuple[Path, str]] = []
        for path in _spans_files(folder):
            try:
                footers[path] = read_footer(str(path))
            except (OSError, pa.ArrowException) as exc:
                unreadable.append((path, str(exc).strip().splitlines()[0] if str(exc) else ""))
        leftovers = {folder / n for f in footers.values() for n, _ in replaced_inputs(f)}
        gone = _delete(p for p in leftovers if p in footers)
        if gone:
            _fsync(folder)
        tiers: dict[int, list[tuple[Path, Footer]]] = {}
        for path, footer in footers.items():
            if path not in leftovers and footer.size < LARGE_BYTES:
                tiers.setdefault(tier(footer.size, fanout), []).append((path, footer))
        merged: list[Path] = []
        replaced = 0
        for members in tiers.values():
            if len(members) < fanout:
                continue  # the common case, decided from the cached footers alone
            for schema, same in _by_schema(members):
                if len(same) >= fanout:
                    merged.append(_merge(folder, same, schema))
                    replaced += _delete(p for p, _ in same)
                    _fsync(folder)
        return Compaction(tuple(merged), replaced, gone, (), tuple(unreadable))


def compact_tree(
    root: Path, fanout: int = DEFAULT_FANOUT, folders: Iterable[Path] | None = None
) -> Compaction:
    """:func:`compact_folder` on every folder under ``root`` holding spans files (or ``folders``).

    Hidden and ``_`` folders (writers' staging, logs) are skipped.
    """
    if folders is None:
        folders = sorted(
            {
                Path(dirpath)
                for dirpath, dirnames, filenames in os.walk(root)
                if not any(
                    part.startswith((".", "_")) for part in Path(dirpath).relative_to(root).parts
                )
                and any(f.endswith(".parquet") for f in filenames)
            }
        )
    merged: list[Path] = []
    busy: list[Path] = []
    unreadable: list[tuple[Path, str]] = []
    replaced = leftovers = 0
    for folder in folders:
        done = compact_folder(folder, fanout)
        merged.extend(done.merged)
        busy.extend(done.busy)
        unreadable.extend(done.unreadable)
        replaced += done.replaced
        leftovers += done.leftovers
    return Compaction(tuple(merged), replaced, leftovers, tuple(busy), tuple(unreadable))

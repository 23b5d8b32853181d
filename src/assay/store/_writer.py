"""Writing spans-table files: atomic, rolled by size and age, Hive-partitioned, bucketed.

A file is either complete or invisible: it is written under a hidden temporary name, fsynced,
then renamed into place (and the folder fsynced), so a reader never sees half a file.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from assay.errors import ConfigError
from assay.store import _buckets as b
from assay.store import _schema as s
from assay.store._contents import attribute_families, families_metadata
from assay.store._paths import TEMP_SUFFIX

PARTITION_KEYS = ("date", "service")
_DAY_NS = 86_400 * 10**9
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DOTS = re.compile(r"\.{2,}")
_UNDERSCORES = re.compile(r"_{2,}")


def sanitize_partition_value(value: str | None) -> str:
    """Make a value safe as one folder name: no separators, no ``..``, never empty.

    Anything outside ``[A-Za-z0-9._-]`` and any run of dots becomes ``_``, runs of ``_`` shrink
    to one, and leading or trailing dots and underscores go, so no value can name a parent
    folder, a hidden file or a path outside the output folder.
    """
    cleaned = _UNSAFE.sub("_", value or "")
    cleaned = _UNDERSCORES.sub("_", _DOTS.sub("_", cleaned)).strip("._")[:100]
    return cleaned or "unknown"


def fsync_dir(path: Path) -> None:
    """Flush a folder's entries (a rename) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(slots=True)
class _OpenFile:
    final_path: Path
    temp_path: Path
    writer: pq.ParquetWriter
    opened_at: float
    rows: int = 0
    pending: list[pa.Table] = field(default_factory=list)
    pending_rows: int = 0
    pending_bytes: int = 0
    families: set[str] = field(default_factory=set)
    """The attribute families its spans carry, recorded in its footer (see ``_contents``)."""


class SpanWriter:
    """Write spans-table batches into a folder of Parquet files.

    Args:
        root: Output folder (created if missing).
        partition_by: Hive partition keys, from ``("date", "service")``; ``date`` is the span's
            UTC start date, ``service`` its sanitised ``service_name``.
        max_file_bytes: Roll to a new file once a file reaches this size on disk.
        max_file_age_s: Roll a file at the next write or :meth:`roll_aged` once it is this old.
        row_group_rows: Rows buffered before a row group is written.
        row_group_bytes: Bytes buffered before a row group is written, whatever its rows (an
            import of large spans holds no more); None: rows alone decide.
        compression: The Parquet codec.
        buckets: Also split by trace into this many ``bucket=NN`` folders (the last level), so
            that each bucket holds whole traces (see ``docs/scale.md``); None: no buckets.
        on_roll: Called with the path and row count of every file made visible.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        partition_by: Sequence[str] = ("date",),
        max_file_bytes: int = 128 * 1024 * 1024,
        max_file_age_s: float | None = None,
        row_group_rows: int = 128 * 1024,
        row_group_bytes: int | None = None,
        compression: str = "zstd",
        on_roll: Callable[[Path, int], None] | None = None,
        buckets: int | None = None,
    ) -> None:
        unknown = set(partition_by) - set(PARTITION_KEYS)
        if unknown:
            raise ConfigError(f"unknown partition key(s) {sorted(unknown)}; use {PARTITION_KEYS}")
        self.buckets = b.check_bucket_count(buckets) if buckets is not None else None
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.partition_by = tuple(partition_by)
        self._schema = s.SPANS_SCHEMA
        if self.buckets is not None:
            count = str(self.buckets).encode()
            metadata = {**(s.SPANS_SCHEMA.metadata or {}), b.BUCKET_COUNT_KEY: count}
            self._schema = s.SPANS_SCHEMA.with_metadata(metadata)
        self.max_file_bytes = max_file_bytes
        self.max_file_age_s = max_file_age_s
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes
        self.compression = compression
        self.on_roll = on_roll
        self._open: dict[tuple[str, ...], _OpenFile] = {}
        self.rows_written = 0
        self.files_written = 0

    # --- public API ---------------------------------------------------------------------------
    def write(self, table: pa.Table) -> None:
        """Buffer a spans-table batch; full row groups and full files are written as they fill."""
        if table.num_rows == 0:
            return
        if not table.schema.equals(s.SPANS_SCHEMA, check_metadata=True):
            table = table.select(s.SPANS_SCHEMA.names).cast(s.SPANS_SCHEMA)
        for key, part in self._split(table):
            handle = self._open.get(key) or self._start(key)
            handle.families |= attribute_families(part[s.ATTRIBUTES])
            handle.pending.append(part)
            handle.pending_rows += part.num_rows
            handle.pending_bytes += part.nbytes
            if handle.pending_rows >= self.row_group_rows or (
                self.row_group_bytes is not None and handle.pending_bytes >= self.row_group_bytes
            ):
                self._write_pending(handle)
                if handle.temp_path.stat().st_size >= self.max_file_bytes:
                    self._finish(key)
        self.roll_aged()

    def roll_aged(self) -> None:
        """Make every file older than ``max_file_age_s`` visible."""
        if self.max_file_age_s is None:
            return
        now = time.monotonic()
        for key in [k for k, h in self._open.items() if now - h.opened_at >= self.max_file_age_s]:
            self._finish(key)

    def oldest_open(self) -> float | None:
        """When (``time.monotonic()``) the oldest file not yet visible was opened; None: none."""
        return min((h.opened_at for h in self._open.values()), default=None)

    def flush(self) -> list[Path]:
        """Write everything buffered and make every open file visible; return their paths."""
        return [p for p in (self._finish(k) for k in list(self._open)) if p is not None]

    def close(self) -> None:
        """Flush; the writer may be used again afterwards (it opens new files)."""
        self.flush()

    def abort(self) -> None:
        """Drop everything not yet visible (buffered rows, temporary files); stay usable.

        For a writer that failed (a full disk): files already made visible are the caller's.
        """
        for handle in self._open.values():
            try:
                handle.writer.close()
            except (OSError, pa.ArrowException):
                pass  # the file is being thrown away
            handle.temp_path.unlink(missing_ok=True)
        self._open.clear()

    # --- internals ----------------------------------------------------------------------------
    def _split(self, table: pa.Table) -> list[tuple[tuple[str, ...], pa.Table]]:
        parts = self._split_partitions(table)
        if self.buckets is None:
            return parts
        return [
            ((*key, b.bucket_folder(number, self.buckets)), bucket)
            for key, part in parts
            for number, bucket in b.split_by_bucket(part, self.buckets)
        ]

    def _split_partitions(self, table: pa.Table) -> list[tuple[tuple[str, ...], pa.Table]]:
        if not self.partition_by:
            return [((), table)]
        single = self._single_key(table)
        if single is not None:
            return [(single, table)]
        columns: list[pa.Array] = []
        for key in self.partition_by:
            if key == "date":
                ts = pc.cast(table[s.START_TIME], pa.timestamp("ns", tz="UTC"))
                columns.append(pc.strftime(ts, format="%Y-%m-%d"))
            else:
                names = table[s.SERVICE_NAME].to_pylist()
                columns.append(pa.array([sanitize_partition_value(n) for n in names]))
        keys = list(zip(*(c.to_pylist() for c in columns), strict=True))
        if len(set(keys)) == 1:
            return [(tuple(keys[0]), table)]
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, k in enumerate(keys):
            groups.setdefault(tuple(k), []).append(i)
        return [(k, table.take(pa.array(idx))) for k, idx in groups.items()]

    def _single_key(self, table: pa.Table) -> tuple[str, ...] | None:
        """The partition key when the whole batch shares one (the common case), else None.

        Decided from the min/max start time and the distinct service names, so a batch from one
        service on one day is not split row by row.
        """
        key: list[str] = []
        for name in self.partition_by:
            if name == "date":
                bounds = pc.min_max(table[s.START_TIME])
                low, high = bounds["min"].as_py(), bounds["max"].as_py()
                if low // _DAY_NS != high // _DAY_NS:
                    return None
                key.append(datetime.fromtimestamp(low // 10**9, UTC).strftime("%Y-%m-%d"))
            else:
                services = pc.unique(table[s.SERVICE_NAME])
                if len(services) != 1:
                    return None
                key.append(sanitize_partition_value(services[0].as_py()))
        return tuple(key)

    def _start(self, key: tuple[str, ...]) -> _OpenFile:
        partitions = zip(self.partition_by, key[: len(self.partition_by)], strict=True)
        folder = self.root.joinpath(
            *(f"{n}={v}" for n, v in partitions), *key[len(self.partition_by) :]
        )
        # Defence in depth: a partition folder must stay inside the output folder.
        if not folder.resolve().is_relative_to(self.root.resolve()):
            raise ConfigError(f"partition folder {folder} escapes {self.root}")
        folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        name = f"spans-{stamp}-{uuid.uuid4().hex[:12]}.parquet"
        final = folder / name
        temp = folder / f".{name}{TEMP_SUFFIX}"
        writer = pq.ParquetWriter(temp, self._schema, compression=self.compression)
        handle = _OpenFile(final, temp, writer, time.monotonic())
        self._open[key] = handle
        return handle

    def _write_pending(self, handle: _OpenFile) -> None:
        if not handle.pending:
            return
        batch = pa.concat_tables(handle.pending)
        handle.writer.write_table(batch, row_group_size=self.row_group_rows)
        handle.rows += batch.num_rows
        handle.pending.clear()
        handle.pending_rows = 0
        handle.pending_bytes = 0

    def _finish(self, key: tuple[str, ...]) -> Path | None:
        handle = self._open.pop(key)
        self._write_pending(handle)
        handle.writer.add_key_value_metadata(families_metadata(handle.families))
        handle.writer.close()
        if handle.rows == 0:
            handle.temp_path.unlink(missing_ok=True)
            return None
        fd = os.open(handle.temp_path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(handle.temp_path, handle.final_path)
        fsync_dir(handle.final_path.parent)
        self.rows_written += handle.rows
        self.files_written += 1
        if self.on_roll is not None:
            self.on_roll(handle.final_path, handle.rows)
        return handle.final_path


def write_spans(
    table: pa.Table,
    root: str | os.PathLike[str],
    *,
    partition_by: Sequence[str] = ("date",),
    buckets: int | None = None,
) -> list[Path]:
    """Write one spans table into ``root`` as complete files; return the paths written."""
    writer = SpanWriter(root, partition_by=partition_by, buckets=buckets)
    writer.write(table)
    return writer.flush()

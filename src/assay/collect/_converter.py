"""The converter: write-ahead log records → Parquet files, checkpointed exactly once.

Records are decoded and handed to a :class:`assay.store.SpanWriter` that writes into a hidden
staging folder (``OUT/_staging``; readers skip folders starting with ``_``). At a checkpoint —
when enough bytes or enough time have passed — the converter asks the log to seal its segment,
and once it has converted every record of the sealed segments it commits:

1. flush the writer: every staged file is complete, fsynced and renamed inside staging;
2. write ``_staging/COMMIT`` (fsynced) listing those files and the last sealed segment;
3. move each staged file to its final place in ``OUT`` (one line logged per file);
4. delete the sealed log segments, then the ``COMMIT`` marker;
5. compact the partition folders it wrote into (``assay.store.compact_folder``), so that a
   collector receiving sporadic trials keeps a few files per partition, not one per pause.

A checkpoint is due after ``roll_age_s`` or ``roll_bytes``, or as soon as nothing new has
arrived for ``idle_flush_s``: a pause in traffic makes what was acknowledged readable within a
second, while steady traffic still makes few, large files.

A crash before step 2 leaves staged files that recovery deletes (the log still holds their
spans); after it, recovery finishes steps 3–4. So every acknowledged span reaches a visible file
exactly once, and no visible file is ever half-written.

A full disk is the same story without the crash: the converter drops what it staged since the
last commit, waits (backing off up to 10 s), and converts those records again from the log —
which holds them until a commit — as soon as there is room; ``disk_full`` is 1 meanwhile.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from assay.collect._config import CollectorConfig
from assay.collect._counters import Counters
from assay.collect._decoding import DecodePool, decode_record
from assay.collect._wal import disk_full, list_segments, read_segment, segment_name
from assay.store import SpanWriter, compact_tree, fsync_dir

__all__ = ["Converter", "recover"]

_log = logging.getLogger("assay.collect")
STAGING = "_staging"
COMMIT = "COMMIT"
#: Rows buffered per open file before a row group is written: bounds the converter's memory
#: (about 1 KiB per span with ten attributes, per partition being written).
ROW_GROUP_ROWS = 32 * 1024


def _staging(config: CollectorConfig) -> Path:
    return config.out / STAGING


class _Staged:
    """The files a writer made visible in staging, with their row counts (its ``on_roll``)."""

    def __init__(self) -> None:
        self.files: dict[Path, int] = {}

    def __call__(self, path: Path, rows: int) -> None:
        self.files[path] = rows


def _convert(writer: SpanWriter, kind: int, payload: bytes, counters: Counters | None) -> int:
    """Decode one logged request into the writer; return the spans written (0 if broken)."""
    try:
        table = decode_record(kind, payload)
    except Exception as exc:
        # Receivers validate before logging, so this means a bug; never die on it.
        _log.error("skipping a logged request that cannot be converted: %s", exc)
        if counters is not None:
            counters.add("conversion_errors")
        return 0
    writer.write(table)
    return int(table.num_rows)


def _publish(config: CollectorConfig, counters: Counters | None) -> None:
    """Steps 3–4 of a commit whose ``COMMIT`` marker is on disk (idempotent)."""
    staging = _staging(config)
    marker = staging / COMMIT
    document = json.loads(marker.read_text())
    folders: set[Path] = set()
    for relative in document["files"]:
        source = staging / relative
        target = config.out / relative
        if not source.exists():
            continue  # moved before a crash
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        folders.add(target.parent)
        rows = int(document["rows"].get(relative, 0))
        _log.info("wrote %s (%d spans)", target, rows)
        if counters is not None:
            counters.add("files_written")
            counters.add("spans_written", rows)
    for folder in folders:
        fsync_dir(folder)
    for number, path in list_segments(config.wal_path):
        if number <= int(document["sealed"]):
            path.unlink()
    fsync_dir(config.wal_path)
    marker.unlink()
    fsync_dir(staging)
    for folder in sorted((p for p in staging.rglob("*") if p.is_dir()), reverse=True):
        try:
            folder.rmdir()  # empty partition folders only
        except OSError:
            pass
    _compact(config, folders, counters)


def _compact(config: CollectorConfig, folders: set[Path], counters: Counters | None) -> None:
    """Step 5: merge small files of the folders just written into; never fails a commit.

    It runs after the commit, on visible files only: the spans are acknowledged and stored
    already, and a compaction that fails or is killed leaves its inputs (or its merged file
    beside inputs readers then skip), so nothing acknowledged can be lost by it.
    """
    if config.compact_fanout is None or not folders:
        return
    try:
        done = compact_tree(config.out, config.compact_fanout, sorted(folders))
    except (OSError, pa.ArrowException) as exc:
        _log.warning("could not compact files in %s (kept as they are): %s", config.out, exc)
        return
    for path in done.merged:
        _log.info("compacted into %s", path)
    if counters is not None and done.replaced:
        counters.add("files_compacted", done.replaced)


def _commit(
    config: CollectorConfig,
    writer: SpanWriter,
    staged: _Staged,
    sealed: int,
    counters: Counters | None,
) -> None:
    writer.flush()
    staging = _staging(config)
    staging.mkdir(parents=True, exist_ok=True)
    document = {
        "sealed": sealed,
        "files": [str(p.relative_to(staging)) for p in staged.files],
        "rows": {str(p.relative_to(staging)): n for p, n in staged.files.items()},
    }
    temp = staging / f".{COMMIT}.tmp"
    with temp.open("w") as handle:
        json.dump(document, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, staging / COMMIT)
    fsync_dir(staging)
    staged.files.clear()
    _publish(config, counters)


def recover(config: CollectorConfig, counters: Counters | None = None) -> int:
    """Finish an interrupted commit and convert every record left in the log.

    Run before the receivers start. Returns the number of spans recovered from the log.
    """
    staging = _staging(config)
    if (staging / COMMIT).exists():
        _log.info("finishing a checkpoint interrupted by a crash")
        _publish(config, counters)
    if staging.exists():
        shutil.rmtree(staging)  # files never committed: the log still holds their spans
    segments = list_segments(config.wal_path)
    if not segments:
        return 0
    staged = _Staged()
    writer = SpanWriter(
        staging,
        partition_by=config.partition_by,
        buckets=config.buckets,
        max_file_bytes=config.roll_bytes,
        row_group_rows=ROW_GROUP_ROWS,
        on_roll=staged,
    )
    spans = 0
    newest = segments[-1][0]
    for number, path in segments:
        on_lost = None if counters is None else counters.lost
        for kind, payload in read_segment(path, newest=number == newest, on_lost=on_lost):
            spans += _convert(writer, kind, payload, counters)
    _commit(config, writer, staged, segments[-1][0], counters)
    _log.info("recovered %d spans from %d log segment(s)", spans, len(segments))
    return spans


class Converter:
    """The background thread that turns logged requests into Parquet files.

    Args:
        config: The collector settings (output folder, roll size and age).
        counters: Where to count files and spans written.
        request_rotation: Asks the log to seal its current segment (see ``WriteAheadLog``).
        release: Called with a record's size once it is converted (frees queue budget).
        workers: Decode worker processes (see ``_decoding``); 0 decodes in this thread.
    """

    def __init__(
        self,
        config: CollectorConfig,
        counters: Counters,
        request_rotation: Callable[[], None],
        release: Callable[[int], None],
        workers: int = 0,
    ) -> None:
        self._config = config
        self._pool = DecodePool(workers)
        self._counters = counters
        self._request_rotation = request_rotation
        self._release = release
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, int, bytes] | int] = deque()
        self._stopping = False
        self._staged = _Staged()
        self._writer = SpanWriter(
            _staging(config),
            partition_by=config.partition_by,
            buckets=config.buckets,
            max_file_bytes=config.roll_bytes,
            row_group_rows=ROW_GROUP_ROWS,
            on_roll=self._staged,
        )
        self._pending_bytes = 0
        # Records written into the current writer, per log segment, since the last commit:
        # what a full disk makes us convert again (they are the first records of each segment).
        self._consumed: dict[int, int] = {}
        self._inflight_segments: deque[int] = deque()
        self._commit_pending: int | None = None
        self.disk_full = False
        self._rotation_requested = False
        self._first_uncommitted: float | None = None
        self._last_written = 0.0
        self._thread = threading.Thread(target=self._run, name="assay-converter", daemon=True)
        self.failed: BaseException | None = None

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def queued(self) -> int:
        """Records waiting to be converted."""
        with self._cond:
            return len(self._queue)

    def on_durable(self, segment: int, records: list[tuple[int, bytes]]) -> None:
        """Queue records the log made durable (called by the log's flusher)."""
        with self._cond:
            for kind, payload in records:
                self._queue.append((segment, kind, payload))
            self._cond.notify_all()

    def on_sealed(self, segment: int) -> None:
        """Queue the mark that ``segment`` is complete (called by the log's flusher)."""
        with self._cond:
            self._queue.append(segment)
            self._cond.notify_all()

    def stop(self) -> None:
        """Convert and commit everything queued (the log must be closed first), then stop."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join()

    def _run(self) -> None:
        try:
            self._loop()
            self._pool.close()
        except BaseException as exc:  # pragma: no cover - disk full and the like
            self.failed = exc
            _log.exception("converter failed; the log keeps every acknowledged span")
            raise

    def _loop(self) -> None:
        pool = self._pool
        while True:
            with self._cond:
                while not self._queue and not self._stopping and not pool:
                    self._cond.wait(timeout=self._until_due())
                    if self._due(idle=True):
                        break
                item = self._queue.popleft() if self._queue else None
                if item is None and not pool and self._stopping:
                    return
            if isinstance(item, int):
                while pool:
                    self._write_next()
                self._rotation_requested = False
                self._commit_pending = item
                self._guarded(self._commit_sealed)
                self._pending_bytes = 0
                self._first_uncommitted = None
            elif item is not None:
                segment, kind, payload = item
                self._inflight_segments.append(segment)
                pool.submit(kind, payload)
                if len(pool) > pool.depth:
                    self._write_next()
            elif pool:
                self._write_next()  # nothing new queued: finish what is being decoded
            if self._due(idle=item is None and not pool) and not self._rotation_requested:
                self._rotation_requested = True
                self._request_rotation()

    def _write_next(self) -> None:
        table, size = self._pool.next()
        segment = self._inflight_segments.popleft()
        self._consumed[segment] = self._consumed.get(segment, 0) + 1
        try:
            if table is None:
                self._counters.add("conversion_errors")
            else:
                self._guarded(lambda: self._writer.write(table))
        finally:
            self._release(size)
        self._pending_bytes += size
        self._last_written = time.monotonic()
        if self._first_uncommitted is None:
            self._first_uncommitted = self._last_written

    def _commit_sealed(self) -> None:
        sealed = self._commit_pending
        assert sealed is not None
        _commit(self._config, self._writer, self._staged, sealed, self._counters)
        self._committed(sealed)

    def _committed(self, sealed: int) -> None:
        self._consumed = {n: c for n, c in self._consumed.items() if n > sealed}
        if self._commit_pending is not None and self._commit_pending <= sealed:
            self._commit_pending = None

    def _guarded(self, action: Callable[[], None]) -> None:
        """Run ``action``; on a full disk, wait for room and rebuild from the log instead.

        After a rebuild the writer holds every consumed record again (the one ``action`` was
        writing included) and a pending commit is done, so ``action`` is not repeated.
        """
        try:
            action()
        except OSError as exc:
            if not disk_full(exc):
                raise
            self._wait_for_room(exc)

    def _wait_for_room(self, exc: OSError) -> None:
        delay = 0.5
        self.disk_full = True
        _log.warning("disk full while writing Parquet (%s); the log keeps every span", exc)
        while True:
            with self._cond:
                if self._stopping:
                    raise exc  # the log keeps everything for the next start
                self._cond.wait(timeout=delay)
            delay = min(2 * delay, 10.0)
            try:
                self._rebuild()
            except OSError as again:
                if not disk_full(again):
                    raise
                exc = again
                continue
            self.disk_full = False
            _log.info("disk has room again; conversion resumed")
            return

    def _rebuild(self) -> None:
        """Drop what was staged since the last commit and convert it again from the log."""
        config = self._config
        staging = _staging(config)
        marker = staging / COMMIT
        if marker.exists():  # the commit got as far as its marker: finish it
            sealed = int(json.loads(marker.read_text())["sealed"])
            _publish(config, self._counters)
            self._committed(sealed)
        self._writer.abort()
        self._staged.files.clear()
        shutil.rmtree(staging, ignore_errors=True)
        for number, count in sorted(self._consumed.items()):
            records = read_segment(config.wal_path / segment_name(number))
            for _, (kind, payload) in zip(range(count), records, strict=False):
                _convert(self._writer, kind, payload, None)
        if self._commit_pending is not None:
            self._commit_sealed()

    def _due(self, idle: bool = False) -> bool:
        """Whether to checkpoint now; ``idle``: nothing is queued or being decoded."""
        if self._rotation_requested or self._first_uncommitted is None:
            return False
        config = self._config
        now = time.monotonic()
        quiet = idle and 0 < config.idle_flush_s <= now - self._last_written
        return (
            quiet
            or now - self._first_uncommitted >= config.roll_age_s
            or self._pending_bytes >= config.roll_bytes
        )

    def _until_due(self) -> float:
        """Seconds to wait for records before checking again whether a checkpoint is due."""
        config = self._config
        if self._rotation_requested or self._first_uncommitted is None:
            return min(1.0, config.roll_age_s / 4)
        deadlines = [self._first_uncommitted + config.roll_age_s]
        if config.idle_flush_s > 0:
            deadlines.append(self._last_written + config.idle_flush_s)
        return min(1.0, max(0.01, min(deadlines) - time.monotonic()))

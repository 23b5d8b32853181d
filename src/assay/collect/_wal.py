"""The write-ahead log: append, fsync with group commit, then acknowledge.

A request is appended as one record to the current segment file; a single flusher thread
writes every record waiting at that moment with one ``write`` and one ``fdatasync`` (group
commit), and only then wakes the senders, so an acknowledged request is on disk.

Segments are numbered files ``wal-000000000001.log``. The converter asks for a *rotation* when
it wants to checkpoint: the flusher seals the current segment, opens the next, and reports the
sealed number in order with the records, so the converter knows when it has seen every record of
the sealed segments and may delete them once their spans are in visible Parquet files.

**Format 2** (``_records``): a segment starts with :data:`FILE_MAGIC`; each record is a header
— a sync marker, the payload's length, its kind, how many spans (or log records) it holds, the
payload's CRC-32, and a CRC-32 of those fields — then the payload. A damaged payload fails its
own CRC and only that record is skipped; a damaged header fails the header CRC and the reader
finds the next record by its marker. Either way the segment is copied to ``quarantine/`` (kept,
not deleted) and the log says how many acknowledged records and spans were lost. Only an
incomplete record at the very end of the newest segment is a write cut by a crash — never
acknowledged, ignored.

Segments of format 1 (no file header: ``length · kind · crc32 · payload``), left by an older
version that stopped without converting them, are read as that version read them. Their
records carry no marker to resynchronise on, so a damaged one ends what can be read of the
segment; the segment is quarantined and the loss logged, rather than dropped as before.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assay.collect._records import FILE_MAGIC, encode_record, scan_records
from assay.errors import WalClosedError
from assay.store import fsync_dir

__all__ = ["KIND_LOGS", "KIND_TRACES", "WalClosedError", "WriteAheadLog", "read_segment"]

KIND_TRACES = 1
KIND_LOGS = 2
_NAME = re.compile(r"^wal-(\d{12})\.log$")
_log = logging.getLogger("assay.collect")


class WalFullError(WalClosedError):
    """The disk is full: this record was not stored, but the log takes the next one."""


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def segment_name(number: int) -> str:
    """The file name of segment ``number``."""
    return f"wal-{number:012d}.log"


def list_segments(folder: Path) -> list[tuple[int, Path]]:
    """The segments in ``folder``, oldest first."""
    found: list[tuple[int, Path]] = []
    if folder.is_dir():
        for p in folder.iterdir():
            m = _NAME.match(p.name)
            if m:
                found.append((int(m.group(1)), p))
    return sorted(found)


ROOM = 256 * 1024
"""Free bytes on the log's disk from which it is reported to have room again."""
QUARANTINE = "quarantine"
"""Folder of the log holding copies of damaged segments (never deleted by assay)."""


def read_segment(
    path: Path,
    *,
    newest: bool = True,
    on_lost: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(kind, payload)`` of every readable record of a segment.

    Args:
        path: The segment.
        newest: Whether it is the newest segment, the only one a crash can leave with an
            incomplete last record (a cut write, never acknowledged, ignored). In any other
            segment an incomplete record is damage.
        on_lost: Called with the records and spans (or log records) lost to damage, if any.

    Damage skips only the damaged records; the segment is then copied to ``quarantine/`` and
    the loss logged (see the module docstring).
    """
    with path.open("rb") as handle:
        data = handle.read()
    report = scan_records(data, newest=newest)
    yield from report.records
    if report.torn:
        _log.info("%s: ignoring an incomplete last record (a cut write, never acknowledged)", path)
    if not report.damage:
        return
    copy = _quarantine(path)
    records = sum(d.records for d in report.damage)
    known = sum(d.items for d in report.damage if d.items is not None)
    unknown = sum(d.records for d in report.damage if d.items is None)
    spans = f"{known} acknowledged span(s)" + (
        f" and those of {unknown} record(s) that cannot be counted (a damaged header)"
        if unknown
        else ""
    )
    where = ", ".join(f"byte {d.offset} ({d.size} bytes: {d.what})" for d in report.damage[:5])
    _log.error(
        "%s: %d damaged record(s) skipped, %s lost, at %s; the segment is kept in %s",
        path,
        records,
        spans,
        where,
        copy,
    )
    if on_lost is not None:
        on_lost(records, known)


def _quarantine(path: Path) -> Path:
    """Copy a damaged segment into ``quarantine/`` (fsynced), once; return the copy."""
    folder = path.parent / QUARANTINE
    folder.mkdir(exist_ok=True)
    target = folder / path.name
    if not target.exists():
        temp = folder / f".{path.name}.tmp"
        shutil.copyfile(path, temp)
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
        fsync_dir(folder)
    return target


@dataclass(slots=True)
class _Batch:
    records: list[tuple[int, bytes, int]] = field(default_factory=list)
    """``(kind, payload, items)``: items is how many spans or log records it holds."""
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class WriteAheadLog:
    """An append-only log of OTLP requests with group-committed fsync.

    Args:
        folder: Where the segments live (created if missing).
        on_durable: Called by the flusher, in order, with the segment number and the records
            just made durable (before their senders are woken).
        on_sealed: Called by the flusher, in order with ``on_durable``, with the number of a
            segment that will receive no more records.
        fsync: ``fdatasync`` each group before acknowledging it.
    """

    def __init__(
        self,
        folder: Path,
        *,
        on_durable: Callable[[int, list[tuple[int, bytes]]], None],
        on_sealed: Callable[[int], None],
        fsync: bool = True,
    ) -> None:
        self.folder = folder
        self._on_durable = on_durable
        self._on_sealed = on_sealed
        self._fsync = fsync
        self._cond = threading.Condition()
        self._batch = _Batch()
        self._rotate = False
        self._closing = False
        self._broken: BaseException | None = None
        self.bytes_appended = 0
        folder.mkdir(parents=True, exist_ok=True)
        existing = list_segments(folder)
        self.segment = (existing[-1][0] + 1) if existing else 1
        self._fd = self._open(self.segment)
        self._size = len(FILE_MAGIC)  # bytes of complete records in the current segment
        self.disk_full = False
        """Whether the last write found the disk full (requests are refused until one fits)."""
        self._rotate_later = False
        self._thread = threading.Thread(target=self._run, name="assay-wal", daemon=True)
        self._thread.start()

    def _open(self, number: int) -> int:
        path = self.folder / segment_name(number)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            if os.fstat(fd).st_size == 0:
                os.write(fd, FILE_MAGIC)  # format 2; an empty segment holds nothing either way
                if self._fsync:
                    os.fdatasync(fd)
            fsync_dir(self.folder)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        return fd

    def full_now(self) -> bool:
        """Whether the disk is full *now*.

        True when the last write found it full and it still has less than :data:`ROOM` free,
        so ``/health`` turns ok as soon as space is freed, not at the next request (it once
        stayed 503 with 17.9 MB free until a POST arrived).
        """
        if not self.disk_full:
            return False
        try:
            stat = os.statvfs(self.folder)
        except OSError:
            return True
        return stat.f_bavail * stat.f_frsize < ROOM

    @property
    def failed(self) -> bool:
        """Whether a write or fsync failed (the log then refuses every append)."""
        return self._broken is not None

    def append(self, kind: int, payload: bytes, items: int = 0) -> None:
        """Append one record and return once it is durable.

        ``items`` (how many spans or log records it holds) is stored in the record's header, so
        that a record damaged later on disk is counted in spans.

        Raises:
            WalClosedError: The log is closing or a write failed; the record is not stored.
        """
        with self._cond:
            if self._closing or self._broken is not None:
                raise WalClosedError("the write-ahead log is closed")
            batch = self._batch
            batch.records.append((kind, payload, items))
            self._cond.notify_all()
        batch.done.wait()
        if batch.error is not None:
            if disk_full(batch.error):
                raise WalFullError(f"disk full, nothing stored; retry later ({batch.error})")
            raise WalClosedError(f"write-ahead log write failed: {batch.error}")

    def request_rotation(self) -> None:
        """Seal the current segment after the group being written (reported via on_sealed)."""
        with self._cond:
            self._rotate = True
            self._cond.notify_all()

    def close(self) -> None:
        """Write what is waiting, seal the last segment (reported via on_sealed) and stop."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._batch.records and not self._rotate and not self._closing:
                    self._cond.wait()
                batch, self._batch = self._batch, _Batch()
                rotate, self._rotate = self._rotate or self._rotate_later, False
                self._rotate_later = False
                closing = self._closing
            if batch.records:
                self._write(batch)
            if closing:
                os.close(self._fd)
                self._on_sealed(self.segment)
                return
            if rotate and self._broken is None:
                self._seal()

    def _seal(self) -> None:
        """Start the next segment; on a full disk keep this one and try at the next write."""
        try:
            fd = self._open(self.segment + 1)
        except OSError as exc:
            if not disk_full(exc):
                raise
            _log.warning("cannot start a new log segment (%s); will retry", exc)
            self._rotate_later = True
            return
        os.close(self._fd)
        sealed = self.segment
        self.segment += 1
        self._fd, self._size = fd, len(FILE_MAGIC)
        self._on_sealed(sealed)

    def _cut_back(self) -> bool:
        """Truncate a partly written group off the segment; False if even that fails."""
        try:
            os.ftruncate(self._fd, self._size)
            if self._fsync:
                os.fdatasync(self._fd)
        except OSError as exc:
            _log.error("cannot truncate the log after a failed write: %s", exc)
            return False
        return True

    def _write(self, batch: _Batch) -> None:
        data = b"".join(
            encode_record(kind, payload, items) for kind, payload, items in batch.records
        )
        try:
            if self._broken is not None:
                raise self._broken
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self._fsync:
                os.fdatasync(self._fd)
        except OSError as exc:
            batch.error = exc
            if disk_full(exc) and self._cut_back():
                # Nothing of this group is acknowledged; the segment ends with the last good
                # record again, so the next group (once space returns) goes on from there.
                if not self.disk_full:
                    _log.warning("disk full: refusing requests until there is room (%s)", exc)
                self.disk_full = True
            else:
                # A failed write or fsync leaves the file in an unknown state: stop accepting.
                _log.error("write-ahead log write failed, refusing further requests: %s", exc)
                self._broken = exc
        else:
            if self.disk_full:
                _log.info("disk has room again; accepting requests")
            self.disk_full = False
            self._size += len(data)
            self.bytes_appended += len(data)
            self._on_durable(self.segment, [(kind, payload) for kind, payload, _ in batch.records])
        batch.done.set()

"""The write-ahead log: append, fsync with group commit, then acknowledge.

A request is appended as one record to the current segment file; a single flusher thread
writes every record waiting at that moment with one ``write`` and one ``fdatasync`` (group
commit), and only then wakes the senders, so an acknowledged request is on disk. Records are
``length (u32) · kind (u8) · crc32 (u32) · payload``; a torn tail left by a crash fails its
length or CRC check and is ignored (it was never acknowledged).

Segments are numbered files ``wal-000000000001.log``. The converter asks for a *rotation* when
it wants to checkpoint: the flusher seals the current segment, opens the next, and reports the
sealed number in order with the records, so the converter knows when it has seen every record of
the sealed segments and may delete them once their spans are in visible Parquet files.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import WalClosedError
from assay.store import fsync_dir

__all__ = ["KIND_LOGS", "KIND_TRACES", "WalClosedError", "WriteAheadLog", "read_segment"]

KIND_TRACES = 1
KIND_LOGS = 2
_HEADER = struct.Struct("<IBI")
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


def read_segment(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(kind, payload)`` of every complete record; stop at a torn or corrupt tail."""
    with path.open("rb") as handle:
        data = handle.read()
    offset = 0
    while offset + _HEADER.size <= len(data):
        length, kind, crc = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        payload = data[start : start + length]
        if len(payload) != length or zlib.crc32(payload, kind) != crc:
            _log.warning("%s: ignoring a torn record at byte %d (never acknowledged)", path, offset)
            return
        yield kind, payload
        offset = start + length


@dataclass(slots=True)
class _Batch:
    records: list[tuple[int, bytes]] = field(default_factory=list)
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
        self._size = 0  # bytes of complete records in the current segment
        self.disk_full = False
        """Whether the last write found the disk full (requests are refused until one fits)."""
        self._rotate_later = False
        self._thread = threading.Thread(target=self._run, name="assay-wal", daemon=True)
        self._thread.start()

    def _open(self, number: int) -> int:
        fd = os.open(self.folder / segment_name(number), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        fsync_dir(self.folder)
        return fd

    @property
    def failed(self) -> bool:
        """Whether a write or fsync failed (the log then refuses every append)."""
        return self._broken is not None

    def append(self, kind: int, payload: bytes) -> None:
        """Append one record and return once it is durable.

        Raises:
            WalClosedError: The log is closing or a write failed; the record is not stored.
        """
        with self._cond:
            if self._closing or self._broken is not None:
                raise WalClosedError("the write-ahead log is closed")
            batch = self._batch
            batch.records.append((kind, payload))
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
        self._fd, self._size = fd, 0
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
        parts: list[bytes] = []
        for kind, payload in batch.records:
            parts.append(_HEADER.pack(len(payload), kind, zlib.crc32(payload, kind)))
            parts.append(payload)
        data = b"".join(parts)
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
            self._on_durable(self.segment, batch.records)
        batch.done.set()

"""The collector's own log: it must never compete with acknowledged spans for the disk.

Three bounds, each counted in ``/metrics``:

- **Space on the disk.** While the disk a log file lives on has less than
  :func:`keep_free` bytes free, lines are dropped, not written (``log_lines_dropped``); one
  line says so when dropping starts and one how many were dropped when it stops. So the
  space a full disk gets back goes to the write-ahead log and the Parquet files first. This
  applies to ``--log-file`` and to stderr redirected to a file (``2>> collector.log``);
  stderr into a pipe (journald, Docker, Kubernetes) is bounded by whoever reads it.
- **A budget for ``--log-file``**: the file is rotated at half the budget, keeping one
  older copy (``PATH.1``), as Kubernetes rotates container logs at a fixed size.
- **Repeated lines**: one message (its template, logger and level) is written at most
  :data:`BURST` times per :data:`WINDOW_S` seconds; the next one written says how many
  like it were left out (``log_lines_suppressed``). Off with ``--verbose``, which asks for
  every request's line.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from assay.errors import ConfigError

__all__ = ["BURST", "WINDOW_S", "GuardedHandler", "keep_free", "open_log"]

BURST = 20
"""Lines of one message written per window; more are counted, not written."""
WINDOW_S = 10.0
"""The window of :data:`BURST`, in seconds."""
_KEEP_FREE_SHARE = 0.15
_KEEP_FREE_CAP = 4 * 1024**3
_RESUME = 1.1
"""Writing resumes at 110% of :func:`keep_free`, so it does not flap around the mark."""
_KEYS = 1024
"""Messages remembered at once by the rate limit (templates are few; this bounds memory)."""
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def keep_free(total: int) -> int:
    """Bytes the log leaves free on a disk of ``total`` bytes: 15%, at most 4 GiB.

    systemd-journald's default (``SystemKeepFree=``): a log that stops there leaves the
    disk's last sixth to the data.
    """
    return min(int(total * _KEEP_FREE_SHARE), _KEEP_FREE_CAP)


FreeSpace = Callable[[], tuple[int, int]]
"""Returns the free and total bytes of the disk a log writes to."""


class GuardedHandler(logging.Handler):
    """A handler that writes through ``inner`` within the bounds of this module.

    Args:
        inner: The handler that writes (a file or a stream).
        free_space: The disk's free and total bytes; None when the log does not go to a
            file this process can see (a pipe, a terminal).
        rate_limit: Bound repeated lines (off for ``--verbose``).
    """

    def __init__(
        self, inner: logging.Handler, free_space: FreeSpace | None, *, rate_limit: bool
    ) -> None:
        super().__init__()
        self.inner = inner
        self._free_space = free_space
        self._rate_limit = rate_limit
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, int, str], tuple[float, int, int]] = {}
        self._low_since: float | None = None
        self._dropped_now = 0
        self.dropped = 0
        """Lines not written because the disk was nearly full."""
        self.suppressed = 0
        """Lines not written because the same message repeated too often."""

    def emit(self, record: logging.LogRecord) -> None:
        """Write ``record`` unless the disk is nearly full or it repeats too often."""
        notice = self._disk_notice()
        if notice == "drop":
            return
        if notice is not None:
            self.inner.handle(_note(record, logging.WARNING, notice))
        limited = self._limited(record)
        if limited is not None:
            self.inner.handle(limited)

    def _disk_notice(self) -> str | None:
        """``"drop"``, a line to write first (dropping starts or ends), or None."""
        if self._free_space is None:
            return None
        try:
            free, total = self._free_space()
        except OSError:
            return None  # the write itself will say what is wrong
        floor = keep_free(total)
        with self._lock:
            if self._low_since is None:
                if free >= floor:
                    return None
                self._low_since = time.monotonic()
                return (
                    f"the log's disk has {free} bytes free, under the {floor} kept for the data: "
                    "log lines are dropped (counted as log_lines_dropped in /metrics) until "
                    f"{int(floor * _RESUME)} bytes are free"
                )
            if free < floor * _RESUME:
                self.dropped += 1
                self._dropped_now += 1
                return "drop"
            dropped, self._dropped_now = self._dropped_now, 0
            seconds = time.monotonic() - self._low_since
            self._low_since = None
        return (
            f"{dropped} log line(s) dropped over {seconds:.0f} s while the log's disk was "
            "nearly full; writing again"
        )

    def _limited(self, record: logging.LogRecord) -> logging.LogRecord | None:
        if not self._rate_limit:
            return record
        key = (record.name, record.levelno, str(record.msg))
        now = time.monotonic()
        with self._lock:
            start, written, left_out = self._windows.get(key, (now, 0, 0))
            if now - start >= WINDOW_S:
                start, written = now, 0
            if written >= BURST:
                self.suppressed += 1
                self._windows[key] = (start, written, left_out + 1)
                return None
            if len(self._windows) >= _KEYS and key not in self._windows:
                self._windows = {k: v for k, v in self._windows.items() if now - v[0] < WINDOW_S}
            self._windows[key] = (start, written + 1, 0)
        if not left_out:
            return record
        more = f" [{left_out} more like this not logged: at most {BURST} per {WINDOW_S:g} s]"
        return _note(record, record.levelno, record.getMessage() + more, exc=True)

    def setFormatter(self, fmt: logging.Formatter | None) -> None:  # noqa: N802 - stdlib name
        """Format through the inner handler."""
        self.inner.setFormatter(fmt)

    def close(self) -> None:
        """Close the inner handler too."""
        self.inner.close()
        super().close()


def _note(
    like: logging.LogRecord, level: int, message: str, *, exc: bool = False
) -> logging.LogRecord:
    """A record of ``message`` at ``level``, from where ``like`` was logged."""
    record = logging.makeLogRecord(like.__dict__)
    record.levelno, record.levelname = level, logging.getLevelName(level)
    record.msg, record.args = message, None
    if not exc:
        record.exc_info, record.exc_text, record.stack_info = None, None, None
    return record


def open_log(log_file: Path | None, budget_bytes: int, *, verbose: bool) -> GuardedHandler:
    """The collector's log handler: ``log_file`` (rotated within ``budget_bytes``) or stderr.

    Raises:
        ConfigError: ``log_file`` cannot be opened for writing (one line naming it).
    """
    inner: logging.Handler
    free_space: FreeSpace | None
    if log_file is not None:
        try:
            inner = logging.handlers.RotatingFileHandler(
                log_file, maxBytes=max(1, budget_bytes // 2), backupCount=1, encoding="utf-8"
            )
        except OSError as exc:
            raise ConfigError(
                f"--log-file {log_file}: cannot write ({exc.strerror or exc})"
            ) from None
        folder = str(log_file.resolve().parent)
        free_space = lambda: _space(os.statvfs(folder))  # noqa: E731
    else:
        inner = logging.StreamHandler(sys.stderr)
        free_space = _stderr_space()
    handler = GuardedHandler(inner, free_space, rate_limit=not verbose)
    handler.setFormatter(logging.Formatter(_FORMAT))
    return handler


def _stderr_space() -> FreeSpace | None:
    """How full stderr's disk is, when stderr is redirected to a file; else None."""
    try:
        fd = sys.stderr.fileno()
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
    except (OSError, ValueError, AttributeError):
        return None  # not a real file descriptor (a test's capture, a closed stream)
    return lambda: _space(os.fstatvfs(fd))


def _space(result: os.statvfs_result) -> tuple[int, int]:
    # f_bavail: what this (unprivileged) process may still use, as the log's writes see it
    return result.f_bavail * result.f_frsize, result.f_blocks * result.f_frsize

"""SIGINT and SIGTERM as a stop that a main loop can wait on without hanging.

A Python signal handler runs in the main thread between two of its bytecodes, which can be
inside ``threading.Event.wait`` while that thread holds the event's (non-reentrant) lock. A
handler that calls ``Event.set()`` then waits forever for a lock its own thread holds: a loop
of ``stop.wait(0)`` hung on about half of 300 SIGTERMs. Here the handler takes no lock: it
notes the signal and writes one byte to a socket the loop waits on with ``select``.
"""

from __future__ import annotations

import select
import signal
import socket
from types import FrameType, TracebackType
from typing import Any

__all__ = ["StopSignal"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class StopSignal:
    """Handles SIGTERM and SIGINT while entered (main thread only); restores the old handlers after.

    ``wait(timeout)`` returns early once either signal has come; ``received`` names the first.
    """

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> StopSignal:
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_write.setblocking(False)
        try:
            self._previous = {s: signal.signal(s, self._note) for s in _SIGNALS}
        except ValueError:  # not the main thread: no handler can be set there
            self._close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._close()

    @property
    def requested(self) -> bool:
        """Whether SIGTERM or SIGINT has come."""
        return self.received is not None

    def wait(self, timeout: float) -> signal.Signals | None:
        """Wait up to ``timeout`` seconds, less once a signal comes; return :attr:`received`."""
        if self.received is None:
            select.select([self._wake_read], [], [], timeout)
        return self.received

    def _close(self) -> None:
        self._wake_read.close()
        self._wake_write.close()

    def _note(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signal.Signals(signum)
        try:
            self._wake_write.send(b"\0")
        except OSError:  # the socket is full (or closed): the loop is awake already
            pass

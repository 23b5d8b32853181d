"""SIGTERM and SIGINT during ``assay import``: stop, remove the staging folder, say so.

A CI job cancelled with SIGTERM once left a hidden ``_import-*`` staging folder behind and
exited 143 without a word. While an import runs (in the main thread), either signal raises
:class:`ImportInterrupted` where the import is, so its clean-up runs; during the few renames
that publish the files and during the clean-up itself, the signal waits for them, so an
import is never left half published.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["ImportInterrupted", "Interruptible"]

_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class ImportInterrupted(Exception):  # noqa: N818 - what happened, as KeyboardInterrupt
    """SIGTERM or SIGINT stopped an import; nothing was imported (the output is as it was)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.signal_name = name
        """``SIGTERM`` or ``SIGINT``."""


class Interruptible:
    """While entered in the main thread, SIGTERM and SIGINT raise :class:`ImportInterrupted`.

    Elsewhere (another thread, where no handler can be set) it does nothing.
    """

    def __init__(self) -> None:
        self._previous: dict[signal.Signals, Any] = {}
        self._holding = 0
        self._held: str | None = None

    def __enter__(self) -> Interruptible:
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: signal.signal(s, self._stop) for s in _SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)

    @contextmanager
    def held(self, *, then_raise: bool = True) -> Iterator[None]:
        """A signal during this block waits for its end.

        Then it raises (``then_raise``) or is dropped: once the files are published, the
        import is done, and is reported as done.
        """
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
        if not self._holding and self._held is not None:
            name, self._held = self._held, None
            if then_raise:
                raise ImportInterrupted(name)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self._holding:
            self._held = self._held or name
            return
        raise ImportInterrupted(name)

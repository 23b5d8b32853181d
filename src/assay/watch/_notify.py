"""Waking ``assay watch`` when a spans file lands, by file-system notification.

Writers (the exporter, the collector, ``assay import``) write each file under a temporary name
and rename it when complete, so a file lands by a rename (or, copied in, by a creation) of a
``.parquet`` name. The notifier watches the followed folders, recursively, through watchdog
(inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows) and notes such an
event; the watch loop then looks at once instead of at its next ``--poll-interval``. Where no
notification can be had (watchdog missing, a file system that gives none, the system's limit
of inotify watches reached), the loop looks every ``--poll-interval`` as before, and says so.
A notification only starts a look: what a look reads is decided by listing the folders, as
always, so a missed or spurious event costs time, never a file.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from assay.store import TEMP_SUFFIX

__all__ = ["FileNotifier"]


def _folders(paths: tuple[str, ...]) -> list[str]:
    """The existing folders to watch for ``paths`` (folders, files or glob patterns)."""
    folders = set()
    for name in paths:
        wildcards = [name.index(ch) for ch in "*?[" if ch in name]
        if wildcards:
            # The files of a pattern lie below the folder before its first wildcard.
            folder = os.path.dirname(name[: min(wildcards)]) or "."
        elif os.path.isdir(name):
            folder = name
        else:
            folder = os.path.dirname(name) or "."
        if os.path.isdir(folder):
            folders.add(os.path.abspath(folder))
    # A folder inside another is watched through it (recursively).
    ordered = sorted(folders)
    return [f for f in ordered if not any(f.startswith(o + os.sep) for o in ordered if o != f)]


def _lands(path: str | bytes) -> bool:
    """Whether an event on ``path`` can be a spans file landing (not one being written)."""
    name = os.path.basename(os.fsdecode(path))
    return name.endswith(".parquet") and not name.endswith(TEMP_SUFFIX)


class FileNotifier:
    """Notes spans files landing under the followed folders; see the module docstring."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        self._landed = threading.Event()
        self._observer: Any = None
        self.why_not: str | None = None
        """Why there is no notification (the loop polls), or None."""
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            self.why_not = "watchdog is not installed"
            return
        landed = self._landed

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                target = getattr(event, "dest_path", "") or event.src_path
                if not event.is_directory and _lands(target):
                    landed.set()

        folders = _folders(paths)
        if not folders:
            self.why_not = "no folder to watch yet"
            return
        observer = Observer()
        try:
            for folder in folders:
                observer.schedule(_Handler(), folder, recursive=True)
            observer.start()
        except OSError as exc:  # e.g. the inotify watch limit reached
            self.why_not = f"file-system notification unavailable ({exc})"
            return
        self._observer = observer

    @property
    def active(self) -> bool:
        """Whether notifications come (else the loop polls)."""
        return self._observer is not None

    def landed(self) -> bool:
        """Whether a file landed since the last call (the note is cleared)."""
        if self._landed.is_set():
            self._landed.clear()
            return True
        return False

    def close(self) -> None:
        """Stop watching."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None

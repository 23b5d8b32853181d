"""``--webhook URL``: each event POSTed as JSON from a background thread, retried with backoff.

The watch never waits for the receiver: :meth:`WebhookSender.send` puts the event on a bounded
queue and returns. A failed POST (no answer, or a status other than 2xx) is retried with
exponential backoff; an event that still fails, or that a full queue pushes out, is counted
and named on the console, never silently lost.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

__all__ = ["WebhookSender"]


@dataclass(slots=True)
class WebhookSender:
    """Posts events to ``url`` on a daemon thread (start with :meth:`start`)."""

    url: str
    """Where to POST each event (``Content-Type: application/json``)."""
    attempts: int = 6
    """Tries per event before giving up."""
    backoff: float = 0.5
    """Seconds before the first retry; doubled at each further one (at most 30 s)."""
    timeout: float = 5.0
    """Seconds to wait for the receiver's answer."""
    capacity: int = 1000
    """Events queued at most; past this the oldest is dropped (and counted)."""
    delivered: int = 0
    """Events the receiver accepted."""
    failed: int = 0
    """Events given up after every attempt, or dropped from a full queue."""
    _queue: queue.Queue[dict[str, Any] | None] = field(init=False)
    _thread: threading.Thread | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._queue = queue.Queue(self.capacity)

    def start(self) -> WebhookSender:
        """Start the sending thread; returns itself."""
        self._thread = threading.Thread(target=self._run, name="assay-webhook", daemon=True)
        self._thread.start()
        return self

    def send(self, event: dict[str, Any]) -> None:
        """Queue ``event``; returns at once."""
        while True:
            try:
                self._queue.put_nowait(event)
                return
            except queue.Full:
                try:
                    self._queue.get_nowait()
                    self.failed += 1
                except queue.Empty:
                    pass

    def stop(self, timeout: float = 10.0) -> None:
        """Send what is queued (for at most ``timeout`` seconds), then stop the thread."""
        if self._thread is None:
            return
        self._queue.put(None)
        self._thread.join(timeout)
        self._stopping.set()
        self._thread.join(1.0)
        self._thread = None

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            if self._post(event):
                self.delivered += 1
            else:
                self.failed += 1
                print(
                    f"assay watch: webhook {self.url}: gave up on a {event.get('event')} event "
                    f"after {self.attempts} attempts",
                    file=sys.stderr,
                )

    def _post(self, event: dict[str, Any]) -> bool:
        body = json.dumps(event).encode()
        delay = self.backoff
        for attempt in range(self.attempts):
            request = urllib.request.Request(
                self.url, body, {"Content-Type": "application/json"}, method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    if 200 <= response.status < 300:
                        return True
            except (urllib.error.URLError, OSError, ValueError):
                pass  # no answer, or an HTTP error status: retried below
            if attempt + 1 < self.attempts and self._stopping.wait(delay):
                return False  # stopping: the rest is given up
            delay = min(delay * 2, 30.0)
        return False

"""``--webhook URL``: each event POSTed as JSON from a background thread, retried with backoff.

The watch never waits for the receiver: :meth:`WebhookSender.send` puts the event on a bounded
queue and returns. What counts, as Alertmanager's webhook notifier counts it:

* a 2xx answer delivers; a 5xx or a 429 (the receiver may recover) is retried with
  exponential backoff, as is no answer at all; any other status — a 4xx, and a 3xx, whose
  redirect is never followed (following a 302 turns the POST into a bodiless GET) — fails the
  event at once: retrying cannot change it;
* each attempt has a **total** deadline (``timeout``): connecting, sending and reading the
  answer together, so a receiver that answers one byte every few seconds is cut off at it;
* the queue holds ``capacity`` events; a full queue drops its oldest event, named at once;
* at exit, every event not delivered (given up, dropped, or still queued) is named on stderr
  with its true number of attempts, then one line counts them. None is lost silently.
"""

from __future__ import annotations

import http.client
import json
import queue
import socket
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from assay.report import visible

__all__ = ["WebhookSender"]

_ANSWER_BYTES = 64 * 1024
"""The most of a receiver's answer body that is read (it is not used)."""


@dataclass(slots=True)
class _Pending:
    event: dict[str, Any]
    attempts: int = 0


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
    """Seconds one attempt may take in all (connect, send, answer): its total deadline."""
    capacity: int = 1000
    """Events queued at most; past this the oldest is dropped (and named)."""
    delivered: int = 0
    """Events the receiver accepted."""
    failed: int = 0
    """Events not delivered: given up, dropped from a full queue, or still queued at exit."""
    undelivered: list[str] = field(default_factory=list)
    """One line per event not delivered: what it was, how many attempts, why."""
    _queue: queue.Queue[_Pending | None] = field(init=False)
    _thread: threading.Thread | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _current: _Pending | None = None
    _connection: http.client.HTTPConnection | None = None

    def __post_init__(self) -> None:
        self._queue = queue.Queue(self.capacity)

    def start(self) -> WebhookSender:
        """Start the sending thread; returns itself."""
        self._thread = threading.Thread(target=self._run, name="assay-webhook", daemon=True)
        self._thread.start()
        return self

    def send(self, event: dict[str, Any]) -> None:
        """Queue ``event``; returns at once (a full queue drops its oldest, named)."""
        while True:
            try:
                self._queue.put_nowait(_Pending(event))
                return
            except queue.Full:
                try:
                    dropped = self._queue.get_nowait()
                except queue.Empty:
                    continue
                if dropped is not None:
                    self._give_up(dropped, f"dropped: the queue of {self.capacity} was full")

    def stop(self, timeout: float = 10.0) -> None:
        """Send what is queued for at most ``timeout`` seconds, then stop; name the rest."""
        if self._thread is None:
            return
        try:
            self._queue.put(None, timeout=0.1)
        except queue.Full:
            pass  # the thread is stopped below all the same
        self._thread.join(timeout)
        self._stopping.set()
        self._abort()  # an attempt in flight ends now
        self._thread.join(1.0)
        self._thread = None
        with self._lock:
            current, self._current = self._current, None
        if current is not None:
            self._give_up(current, "the watch stopped during it")
        while True:
            try:
                left = self._queue.get_nowait()
            except queue.Empty:
                break
            if left is not None:
                self._give_up(left, "the watch stopped first")
        if self.failed:
            print(
                f"assay watch: webhook {visible(self.url)}: {self.delivered} event(s) "
                f"delivered, {self.failed} not (each named above)",
                file=sys.stderr,
            )

    def _run(self) -> None:
        while not self._stopping.is_set():
            pending = self._queue.get()
            if pending is None:
                return
            with self._lock:
                self._current = pending
            delivered, why = self._post(pending)
            with self._lock:
                if self._current is None:
                    return  # stop() named it already
                self._current = None
            if delivered:
                self.delivered += 1
            else:
                self._give_up(pending, why)

    def _give_up(self, pending: _Pending, why: str) -> None:
        event = pending.event
        line = (
            f"assay watch: webhook {visible(self.url)}: not delivered: {event.get('event')} "
            f"event of test {visible(event.get('test'))} ({event.get('time')}) after "
            f"{pending.attempts} attempt(s): {why}"
        )
        self.failed += 1
        self.undelivered.append(line)
        print(line, file=sys.stderr)

    def _post(self, pending: _Pending) -> tuple[bool, str]:
        """Try ``pending`` until delivered, refused, out of attempts or stopping."""
        body = json.dumps(pending.event).encode()
        delay = self.backoff
        why = "no attempt"
        while pending.attempts < self.attempts and not self._stopping.is_set():
            pending.attempts += 1
            status, why = self._attempt(body)
            if status is not None and 200 <= status < 300:
                return True, ""
            if status is not None and status != 429 and status < 500:
                return False, why  # refused, or a redirect: a retry cannot change it
            if pending.attempts < self.attempts and self._stopping.wait(delay):
                break
            delay = min(delay * 2, 30.0)
        return False, why

    def _attempt(self, body: bytes) -> tuple[int | None, str]:
        """One POST within the total deadline: (status or None, why it did not deliver)."""
        parts = urllib.parse.urlsplit(self.url)
        kind = (
            http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        )
        path = parts.path or "/"
        if parts.query:
            path += f"?{parts.query}"
        connection = kind(parts.hostname or "", parts.port, timeout=self.timeout)
        with self._lock:
            self._connection = connection
        # The socket timeout bounds each read; the timer bounds the whole attempt (a receiver
        # that sends a byte every second never trips a per-read timeout).
        watchdog = threading.Timer(self.timeout, self._abort)
        watchdog.daemon = True
        started = time.monotonic()
        watchdog.start()
        try:
            connection.request("POST", path, body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read(_ANSWER_BYTES)
            status = response.status
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if self._stopping.is_set():
                return None, "the watch stopped during it"
            if time.monotonic() - started >= self.timeout:
                return None, f"no answer within {self.timeout:g} s"
            return None, f"no answer ({visible(exc)})"
        finally:
            watchdog.cancel()
            with self._lock:
                self._connection = None
            connection.close()
        if 300 <= status < 400:
            return status, f"HTTP {status}: a redirect, not followed"
        return status, f"HTTP {status}"

    def _abort(self) -> None:
        """End the attempt in flight: its socket shut, its blocked read returns."""
        with self._lock:
            connection = self._connection
        sock = connection.sock if connection is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

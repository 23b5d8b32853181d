"""Logging each refused request with its reason, without letting a flood of them flood the log.

A counter alone (``requests_refused``) says that something is wrong but not what: an exporter
that gets a 4xx it does not retry drops its spans, so the reason must reach the operator where
they look (the log, stderr by default). A sender repeating a bad request many times a second
would turn that into a flood: each refusal (its status and reason) is logged at most once per
``interval_s``, and the next line it gets says how many like it were left out meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time

__all__ = ["RefusalLog"]

_log = logging.getLogger("assay.collect")
_KEYS = 1024
"""Refusals remembered at once; older ones are forgotten first."""


class RefusalLog:
    """Rate-limited log lines for refused and throttled requests.

    Args:
        interval_s: Least time between two lines of the same status.
    """

    def __init__(self, interval_s: float = 5.0) -> None:
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._last: dict[tuple[str, str], float] = {}
        self._left_out: dict[tuple[str, str], int] = {}

    def refused(self, status: str, peer: str, what: str, reason: str, *, throttled: bool) -> None:
        """Log one refusal: ``status`` (``"415"``, ``"UNAUTHENTICATED"``), who, what and why.

        Throttling (429, 503, RESOURCE_EXHAUSTED) is the sender being asked to retry, logged
        at INFO; anything else loses the request unless the sender changes, logged as WARNING.
        """
        key = (status, reason)
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(key, -self._interval_s) < self._interval_s:
                self._left_out[key] = self._left_out.get(key, 0) + 1
                return
            if len(self._last) >= _KEYS:  # reasons carry sizes and names: keep memory bounded
                self._last = {k: t for k, t in self._last.items() if now - t < self._interval_s}
            self._last[key] = now
            left_out = self._left_out.pop(key, 0)
        more = f" ({left_out} more like it not logged)" if left_out else ""
        level = logging.INFO if throttled else logging.WARNING
        _log.log(level, "refused %s from %s with %s: %s%s", what, peer, status, reason, more)

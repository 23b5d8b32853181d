"""Counters of what the collector received, wrote and refused."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Counters"]

_HELP = {
    "requests": "OTLP export requests answered",
    "spans_received": "spans in requests that were decoded",
    "spans_accepted": "spans acknowledged (durable in the write-ahead log)",
    "spans_rejected": "spans refused (invalid IDs, reported as partial success)",
    "spans_written": "spans written to visible Parquet files",
    "log_records_accepted": "evaluation log records acknowledged",
    "log_records_rejected": "log records refused (not an evaluation result)",
    "requests_refused": "requests answered with an error status",
    "requests_throttled": "requests pushed back (429 / RESOURCE_EXHAUSTED / 503)",
    "tls_handshakes_failed": "HTTP connections closed because their TLS handshake failed",
    "files_written": "Parquet files made visible",
    "files_compacted": "Parquet files merged into compacted files and deleted",
    "conversion_errors": "logged requests that could not be converted (should stay 0)",
    "wal_bytes": "bytes appended to the write-ahead log",
    "wal_damaged_records": "acknowledged records found damaged on disk (kept in quarantine)",
    "wal_lost_spans": "acknowledged spans in damaged records (counted from intact headers)",
    "log_lines_dropped": "log lines not written: the log's disk was nearly full",
    "log_lines_suppressed": "log lines not written: the same message repeated too often",
}


class Counters:
    """Thread-safe monotonic counters, plus gauges read on demand.

    Args:
        gauges: Name → function returning the current value (queue depth and the like).
    """

    def __init__(self, gauges: dict[str, Callable[[], int]] | None = None) -> None:
        self._lock = threading.Lock()
        self._values = dict.fromkeys(_HELP, 0)
        self._gauges = dict(gauges or {})

    def add(self, name: str, amount: int = 1) -> None:
        """Add ``amount`` to counter ``name``."""
        with self._lock:
            self._values[name] += amount

    def lost(self, records: int, spans: int) -> None:
        """Count acknowledged records (and their spans) found damaged in the log."""
        self.add("wal_damaged_records", records)
        self.add("wal_lost_spans", spans)

    def add_gauge(self, name: str, read: Callable[[], int]) -> None:
        """Register a gauge, read at every snapshot.

        A name among the counters above is a counter kept elsewhere (typed as a counter).
        """
        self._gauges[name] = read

    def snapshot(self) -> dict[str, int]:
        """Every counter and gauge, by name."""
        with self._lock:
            values = dict(self._values)
        for name, read in self._gauges.items():
            values[name] = read()
        return values

    def prometheus(self) -> str:
        """The counters in the Prometheus text exposition format."""
        lines: list[str] = []
        for name, value in self.snapshot().items():
            metric = f"assay_collector_{name}"
            kind = "counter" if name in _HELP else "gauge"
            lines.append(f"# HELP {metric} {_HELP.get(name, name.replace('_', ' '))}")
            lines.append(f"# TYPE {metric} {kind}")
            lines.append(f"{metric} {value}")
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        """One line: every counter as ``name=value``."""
        return " ".join(f"{k}={v}" for k, v in self.snapshot().items())

"""What both receivers share: authentication, decoding, backpressure and the durable append.

A receiver turns its transport's request into a call of :meth:`Intake.traces` or
:meth:`Intake.logs` and maps the outcome (a result or one of the exceptions below) onto its own
status codes.
"""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass

from assay.collect._config import CollectorConfig
from assay.collect._counters import Counters
from assay.collect._wal import KIND_LOGS, KIND_TRACES, WriteAheadLog
from assay.errors import InputError, OverloadedError, UnavailableError, WalClosedError
from assay.ingest import (
    count_log_records,
    count_spans,
    parse_logs_json,
    parse_logs_protobuf,
    parse_traces_json,
    parse_traces_protobuf,
)

__all__ = ["Accepted", "Intake", "OverloadedError", "UnavailableError"]


@dataclass(frozen=True, slots=True)
class Accepted:
    """The outcome of an accepted request."""

    accepted: int
    """Spans (or log records) now durable."""
    rejected: int
    """Spans (or log records) refused, for ``partial_success``."""
    message: str
    """Why some were refused (empty when none were)."""


class Intake:
    """Decode, check and durably log OTLP requests, with a bounded queue.

    Args:
        config: Limits and the token.
        wal: The write-ahead log to append to.
        counters: Where to count.
    """

    def __init__(self, config: CollectorConfig, wal: WriteAheadLog, counters: Counters) -> None:
        self._config = config
        self._wal = wal
        self._counters = counters
        self._lock = threading.Lock()
        self._queued_bytes = 0
        self.draining = False
        self._token = config.token.encode() if config.token is not None else None

    # --- queue budget -------------------------------------------------------------------------
    def queued_bytes(self) -> int:
        """Request bytes appended or waiting to be converted."""
        with self._lock:
            return self._queued_bytes

    def release(self, size: int) -> None:
        """Return ``size`` bytes of budget (a record was converted)."""
        with self._lock:
            self._queued_bytes -= size

    def check_room(self, size: int) -> None:
        """Refuse early, before decoding, when a request of ``size`` bytes would not fit.

        Raises:
            OverloadedError: The queue is full.
            UnavailableError: The collector is shutting down.
        """
        if self.draining:
            raise UnavailableError("the collector is shutting down; retry against another")
        with self._lock:
            full = self._queued_bytes > 0 and (
                self._queued_bytes + size > self._config.max_queue_bytes
            )
        if full:
            raise OverloadedError("queue full; retry later")

    def _reserve(self, size: int) -> None:
        with self._lock:
            if self._queued_bytes > 0 and self._queued_bytes + size > self._config.max_queue_bytes:
                raise OverloadedError(
                    f"queue full ({self._queued_bytes} bytes waiting); retry later"
                )
            self._queued_bytes += size

    # --- checks -------------------------------------------------------------------------------
    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header value carries the configured token."""
        if self._token is None:
            return True
        if header is None:
            return False
        scheme, _, credentials = header.strip().partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            credentials.strip().encode(), self._token
        )

    # --- requests -----------------------------------------------------------------------------
    def traces(self, body: bytes, *, json: bool = False) -> Accepted:
        """Accept an ``ExportTraceServiceRequest`` (protobuf or OTLP/JSON bytes).

        Raises:
            InputError: Undecodable (400 / INVALID_ARGUMENT).
            OverloadedError: The queue is full.
            UnavailableError: Shutting down, or the log cannot be written.
        """
        self.check_room(len(body))
        request = parse_traces_json(body) if json else parse_traces_protobuf(body)
        valid, invalid, problem = count_spans(request)
        self._counters.add("spans_received", valid + invalid)
        if invalid and not valid:
            # Nothing in it can be stored: a bad request (400 / INVALID_ARGUMENT), named.
            self._counters.add("spans_rejected", invalid)
            raise InputError(
                f"no span can be stored: {invalid} invalid span(s); the first: {problem}"
            )
        if valid:
            payload = request.SerializeToString() if json else body
            self._append(KIND_TRACES, payload, valid)
            self._counters.add("spans_accepted", valid)
        if invalid:
            self._counters.add("spans_rejected", invalid)
        message = f"{invalid} invalid span(s) not stored; the first: {problem}" if invalid else ""
        return Accepted(valid, invalid, message)

    def logs(self, body: bytes, *, json: bool = False) -> Accepted:
        """Accept an ``ExportLogsServiceRequest``; only GenAI evaluation results are stored.

        Raises:
            InputError: Undecodable (400 / INVALID_ARGUMENT).
            OverloadedError: The queue is full.
            UnavailableError: Shutting down, or the log cannot be written.
        """
        self.check_room(len(body))
        request = parse_logs_json(body) if json else parse_logs_protobuf(body)
        stored, refused = count_log_records(request)
        if stored:
            payload = request.SerializeToString() if json else body
            self._append(KIND_LOGS, payload, stored)
            self._counters.add("log_records_accepted", stored)
        if refused:
            self._counters.add("log_records_rejected", refused)
        message = (
            f"{refused} log record(s) not stored: only gen_ai.evaluation.result events with a "
            "valid trace and span ID and a timestamp in the int64 nanosecond range are kept"
            if refused
            else ""
        )
        return Accepted(stored, refused, message)

    def _append(self, kind: int, payload: bytes, items: int) -> None:
        if self.draining:
            raise UnavailableError("the collector is shutting down; retry against another")
        self._reserve(len(payload))
        try:
            self._wal.append(kind, payload, items)
        except WalClosedError as exc:
            self.release(len(payload))
            raise UnavailableError(str(exc)) from exc
        self._counters.add("wal_bytes", len(payload))

"""Which OTLP spans and log records the spans table can hold: one rule, two places.

It is applied before a request is acknowledged and again when the request is converted.

A span is stored only if every field that becomes a typed column fits it:

* ``trace_id`` 16 bytes and ``span_id`` 8 bytes, not all zero (the OTLP rule; an empty id is
  an invalid id, never a key two spans could share); a ``parent_span_id`` empty or 8 bytes,
  each link's ids 16 and 8 bytes;
* ``start_time_unix_nano``, ``end_time_unix_nano`` and every event's time within the int64
  nanosecond range of the table (up to 2262-04-11): OTLP carries them as unsigned 64-bit, so a
  timestamp in the year 2300 is valid protobuf that no int64 column can hold.

Attribute values need no check: every OTLP ``AnyValue`` is encoded losslessly, and promotion
(``assay.store._coercion``) turns what does not fit a typed column into null (an integer
beyond int64 in a string or a double included).

The collector refuses such a span in an OTLP partial success naming it (its siblings are
stored); ``assay import`` stops with one line naming the file and the span; the converter,
which decodes by the same rule, skips it — so one span can never stop a batch or a restart.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["INT64_MAX", "describe", "log_record_problem", "span_problem"]

INT64_MAX: Final = (1 << 63) - 1
"""The largest timestamp the spans table holds, in ns since the epoch (2262-04-11)."""


def _id_problem(value: bytes, size: int, name: str) -> str | None:
    if len(value) != size or not any(value):
        return f"{name} {value.hex() or '(empty)'} is not {size} bytes, not all zero"
    return None


def _time_problem(value: int, name: str) -> str | None:
    if value > INT64_MAX:
        return f"{name} {value} is beyond the int64 nanosecond range (after 2262-04-11)"
    return None


def span_problem(span: Any) -> str | None:
    """Why an OTLP ``Span`` cannot be stored, or None if it can."""
    # The common case in one expression: this runs for every span received (twice).
    t, s = span.trace_id, span.span_id
    if (
        len(t) == 16
        and len(s) == 8
        and span.start_time_unix_nano <= INT64_MAX
        and span.end_time_unix_nano <= INT64_MAX
        and len(span.parent_span_id) in (0, 8)
        and not span.events
        and not span.links
        and any(t)
        and any(s)
    ):
        return None
    return _span_problem(span)


def _span_problem(span: Any) -> str | None:
    problem = _id_problem(span.trace_id, 16, "trace_id") or _id_problem(span.span_id, 8, "span_id")
    if problem:
        return problem
    parent = span.parent_span_id
    if parent and len(parent) != 8:
        return f"parent_span_id {parent.hex()} is not 8 bytes"
    problem = _time_problem(span.start_time_unix_nano, "start_time_unix_nano") or _time_problem(
        span.end_time_unix_nano, "end_time_unix_nano"
    )
    if problem:
        return problem
    for event in span.events:
        problem = _time_problem(event.time_unix_nano, f"event {event.name!r} time_unix_nano")
        if problem:
            return problem
    for link in span.links:
        if len(link.trace_id) != 16 or len(link.span_id) != 8:
            return (
                f"a link's ids ({link.trace_id.hex()}, {link.span_id.hex()}) are not 16 and 8 bytes"
            )
    return None


def log_record_problem(record: Any) -> str | None:
    """Why an evaluation ``LogRecord`` cannot be stored as a span, or None if it can."""
    problem = _id_problem(record.trace_id, 16, "trace_id") or _id_problem(
        record.span_id, 8, "span_id"
    )
    if problem:
        return problem
    return _time_problem(record.time_unix_nano, "time_unix_nano") or _time_problem(
        record.observed_time_unix_nano, "observed_time_unix_nano"
    )


def describe(kind: str, trace_id: bytes, span_id: bytes, problem: str) -> str:
    """``problem`` naming the span (or log record) it is about."""
    span = span_id.hex() or "(no span_id)"
    return f"{kind} {span} of trace {trace_id.hex() or '(no trace_id)'}: {problem}"

"""Building OTLP messages from other tools' JSON: values, ids and times, checked.

The readers of foreign formats (``_jaeger``, ``_zipkin``, ``_tempo``) translate each document
into an OTLP ``ExportTraceServiceRequest`` and hand it to the same decoder as ``assay collect``,
so one rule (``_validate``) decides what the spans table can hold. What they share is here: a
field of the wrong type is an :class:`~assay.errors.InputError` naming the field, never a
``KeyError`` or a silently empty value.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from assay.conventions import EARLIEST_START
from assay.errors import InputError
from assay.ingest._ids import base64_bytes

__all__ = [
    "FORMAT_ATTRIBUTE",
    "MAX_VALUE_DEPTH",
    "SCOPE_NAME_TAGS",
    "SCOPE_VERSION_TAGS",
    "any_value",
    "as_list",
    "as_object",
    "bytes_id",
    "checked_time",
    "json_value",
    "key_value",
    "lone_surrogate",
    "micros",
    "span_kind",
    "time_micros",
]

SCOPE_NAME_TAGS = ("otel.scope.name", "otel.library.name")
"""Tags in which the OpenTelemetry → Jaeger and → Zipkin translations keep the scope's name."""
SCOPE_VERSION_TAGS = ("otel.scope.version", "otel.library.version")
"""… and its version."""

FORMAT_ATTRIBUTE = "assay.import.format"
"""Resource attribute naming the format an imported span was read from (``jaeger``, …)."""

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_MAX_MICROS = ((1 << 63) - 1) // 1000
_MAX_NANOS = (1 << 63) - 1


MAX_VALUE_DEPTH = 32
"""Most levels of arrays and objects in one attribute value. An ``AnyValue`` level is two
protobuf messages, and protobuf reads at most 100 nested messages (a value nested 90 levels
deep once stopped the import with protobuf's DecodeError traceback)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _TooDeep(Exception):
    """A value nested beyond :data:`MAX_VALUE_DEPTH` (named by :func:`key_value`)."""


def lone_surrogate(document: Any) -> str | None:
    r"""Where a decoded JSON document holds a lone UTF-16 surrogate, or None.

    ``"\ud800"`` decodes to one, which is not text: no UTF-8 can hold it. Iterative, so a deep
    document costs no recursion.
    """
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return path or "the document"
        elif isinstance(value, dict):
            for key, inner in value.items():
                here = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and _SURROGATE.search(key):
                    return f"a key in {path or 'the document'}"
                stack.append((inner, here))
        elif isinstance(value, list):
            stack.extend((inner, f"{path}[{i}]") for i, inner in enumerate(value))
    return None


def may_hold_surrogate(text: str | bytes) -> bool:
    r"""Whether JSON text escapes a UTF-16 surrogate (``\ud800``).

    Only then can decoding it give a lone one, so only then is the decoded document walked
    (:func:`lone_surrogate`).
    """
    if isinstance(text, bytes):
        return _SURROGATE_ESCAPE.search(text.decode("latin-1")) is not None
    return _SURROGATE_ESCAPE.search(text) is not None


def json_value(text: str) -> Any:
    """JSON text held in a field (metadata, an annotation, MLflow's attribute values), decoded.

    Raises:
        ValueError: Not JSON, nested beyond what the decoder reads, or holding a lone
            surrogate: the caller keeps the text as it is.
    """
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    if may_hold_surrogate(text) and lone_surrogate(value) is not None:
        raise ValueError("a lone UTF-16 surrogate")
    return value


def any_value(value: Any, _depth: int = 0) -> AnyValue:
    """The OTLP ``AnyValue`` of a JSON value (objects become kvlists, arrays arrays).

    Raises:
        InputError: Nested deeper than :data:`MAX_VALUE_DEPTH`, or holding a lone surrogate.
    """
    if _depth > MAX_VALUE_DEPTH:
        raise _TooDeep
    out = AnyValue()
    if isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            out.int_value = value
        else:
            out.string_value = str(value)  # beyond int64: kept, as text
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, bytes):
        out.bytes_value = value
    elif isinstance(value, list):
        out.array_value.values.extend(any_value(v, _depth + 1) for v in value)
    elif isinstance(value, dict):
        out.kvlist_value.values.extend(
            KeyValue(key=str(k), value=any_value(v, _depth + 1)) for k, v in value.items()
        )
    # None: an empty AnyValue, as OTLP has it
    return out


def key_value(key: str, value: Any) -> KeyValue:
    """An OTLP attribute.

    Raises:
        InputError: Its value is nested deeper than :data:`MAX_VALUE_DEPTH`, or it holds a lone
            UTF-16 surrogate, which no UTF-8 can hold (both named by the key).
    """
    try:
        return KeyValue(key=key, value=any_value(value))
    except _TooDeep:
        raise InputError(
            f"attribute {key!r}: its value is nested deeper than {MAX_VALUE_DEPTH} levels"
        ) from None
    except UnicodeEncodeError:
        raise InputError(
            f"attribute {ascii(key)}: holds a lone UTF-16 surrogate, which is not text"
        ) from None


def as_object(value: Any, where: str) -> dict[str, Any]:
    """``value`` if it is a JSON object.

    Raises:
        InputError: It is not, naming ``where``.
    """
    if not isinstance(value, dict):
        raise InputError(f"{where} is not a JSON object")
    return value


def as_list(value: Any, where: str) -> list[Any]:
    """``value`` if it is a JSON array; an absent (null) field is an empty one.

    Raises:
        InputError: It is something else, naming ``where``.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"{where} is not a JSON array")
    return value


def bytes_id(value: Any, size: int, where: str) -> bytes:
    """A trace or span id given as hex (shorter ids zero-padded on the left) or base64.

    Jaeger and Zipkin write 64-bit trace ids as 16 hex digits and may drop leading zeros;
    padding on the left is how both widen them to 128 bits.

    Raises:
        InputError: Not hex of at most ``2 * size`` digits nor base64 of ``size`` bytes.
    """
    if isinstance(value, str) and value:
        if _HEX.match(value) and len(value) <= 2 * size:
            return bytes.fromhex(value.rjust(2 * size, "0"))
        raw = base64_bytes(value)
        if len(raw) == size:
            return raw
    raise InputError(f"{where} {value!r} is not an id of up to {2 * size} hex digits")


def micros(value: Any, where: str) -> int:
    """Nanoseconds of a time or duration given in whole microseconds.

    Raises:
        InputError: Not a non-negative integer (numbers written as strings are read), or
            beyond the int64 nanosecond range of the spans table.
    """
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{where} {value!r} is not a whole number of microseconds")
    if value > _MAX_MICROS:
        raise InputError(f"{where} {value} µs is beyond the int64 nanosecond range (2262-04-11)")
    return value * 1000


def moment(nanos: int) -> str:
    """``nanos`` since the epoch as a UTC time, for a message (the number when out of range)."""
    try:
        when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=nanos // 1000)
    except OverflowError:
        return f"{nanos} ns since 1970"
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def checked_time(nanos: int, raw: Any, where: str, read_as: str) -> int:
    """``nanos`` if it is a time a span can have: from 2000 to the table's end (2262-04-11).

    Args:
        nanos: The time read, in nanoseconds since the epoch.
        raw: The value as the file gives it (named in the message).
        where: The field, by its path.
        read_as: How the value was read (``microseconds``, ``a time without a zone, as UTC``),
            so that a time in another unit says which unit was assumed.

    Raises:
        InputError: Before 2000 (a time in another unit, or none), or beyond the int64
            nanosecond range of the spans table.
    """
    if nanos < EARLIEST_START:
        raise InputError(
            f"{where} {raw!r}, read as {read_as}, is {moment(nanos)}: before 2000, so not a "
            "time of a span (a time in another unit?)"
        )
    if nanos > _MAX_NANOS:
        raise InputError(
            f"{where} {raw!r}, read as {read_as}, is beyond the int64 nanosecond range of the "
            "spans table (2262-04-11)"
        )
    return nanos


def time_micros(value: Any, where: str) -> int:
    """Nanoseconds of a time given in whole microseconds since the epoch (Jaeger, Zipkin).

    Raises:
        InputError: As :func:`micros`, or before 2000 (:func:`checked_time`: milliseconds read
            as microseconds are January 1970).
    """
    return checked_time(micros(value, where), value, where, "microseconds")


_KINDS = {
    "SERVER": Span.SPAN_KIND_SERVER,
    "CLIENT": Span.SPAN_KIND_CLIENT,
    "PRODUCER": Span.SPAN_KIND_PRODUCER,
    "CONSUMER": Span.SPAN_KIND_CONSUMER,
}


def span_kind(value: Any) -> Span.SpanKind.ValueType:
    """The OTLP kind of a Jaeger ``span.kind`` tag or a Zipkin ``kind`` (either case).

    Anything else, absent included, is INTERNAL: both translations leave an internal span's
    kind out (Zipkin has no INTERNAL kind).
    """
    return _KINDS.get(str(value or "").upper(), Span.SPAN_KIND_INTERNAL)

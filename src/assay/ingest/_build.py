"""Building OTLP messages from other tools' JSON: values, ids and times, checked.

The readers of foreign formats (``_jaeger``, ``_zipkin``, ``_tempo``) translate each document
into an OTLP ``ExportTraceServiceRequest`` and hand it to the same decoder as ``assay collect``,
so one rule (``_validate``) decides what the spans table can hold. What they share is here: a
field of the wrong type is an :class:`~assay.errors.InputError` naming the field, never a
``KeyError`` or a silently empty value.
"""

from __future__ import annotations

import re
from typing import Any

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from assay.errors import InputError
from assay.ingest._ids import base64_bytes

__all__ = [
    "FORMAT_ATTRIBUTE",
    "SCOPE_NAME_TAGS",
    "SCOPE_VERSION_TAGS",
    "any_value",
    "as_list",
    "as_object",
    "bytes_id",
    "key_value",
    "micros",
    "span_kind",
]

SCOPE_NAME_TAGS = ("otel.scope.name", "otel.library.name")
"""Tags in which the OpenTelemetry → Jaeger and → Zipkin translations keep the scope's name."""
SCOPE_VERSION_TAGS = ("otel.scope.version", "otel.library.version")
"""… and its version."""

FORMAT_ATTRIBUTE = "assay.import.format"
"""Resource attribute naming the format an imported span was read from (``jaeger``, …)."""

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_MAX_MICROS = ((1 << 63) - 1) // 1000


def any_value(value: Any) -> AnyValue:
    """The OTLP ``AnyValue`` of a JSON value (objects become kvlists, arrays arrays)."""
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
        out.array_value.values.extend(any_value(v) for v in value)
    elif isinstance(value, dict):
        out.kvlist_value.values.extend(key_value(str(k), v) for k, v in value.items())
    # None: an empty AnyValue, as OTLP has it
    return out


def key_value(key: str, value: Any) -> KeyValue:
    """An OTLP attribute."""
    return KeyValue(key=key, value=any_value(value))


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

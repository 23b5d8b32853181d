"""Parsing one OTLP export request, protobuf or OTLP/JSON, into its message type.

Traces and logs requests differ only in their message type and top-level field, so both
signals parse through these two functions.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message

from assay.errors import InputError
from assay.ingest._ids import fix_json_ids

M = TypeVar("M", bound=Message)


def parse_protobuf(message_type: type[M], data: bytes) -> M:
    """Parse ``data`` as a protobuf ``message_type``.

    Raises:
        InputError: The bytes are not a valid message.
    """
    request: M = message_type()
    try:
        request.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError, RecursionError) as exc:
        raise InputError(f"not an OTLP protobuf {message_type.__name__} ({exc})") from exc
    return request


def parse_json(
    message_type: type[M], data: bytes | str | dict[str, Any], camel: str, snake: str
) -> M:
    """Parse OTLP/JSON ``data`` (hex IDs, or base64 tolerated) as ``message_type``.

    Args:
        message_type: The request message class.
        data: JSON text, or the already-decoded document.
        camel: The top-level field in OTLP/JSON spelling (``resourceSpans``).
        snake: The same in protobuf spelling (``resource_spans``).

    Raises:
        InputError: The text is not JSON, or not a ``message_type``.
    """
    if isinstance(data, dict):
        document: Any = data
    else:
        try:
            document = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise InputError(f"not valid JSON ({exc})") from exc
    if not isinstance(document, dict):
        raise InputError("OTLP/JSON request must be a JSON object")
    request: M = message_type()
    try:
        fix_json_ids(document, camel, snake)
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError, AttributeError, RecursionError) as exc:
        raise InputError(f"not an OTLP/JSON {message_type.__name__} ({_short(exc)})") from exc
    return request


def _short(exc: BaseException) -> str:
    """``exc``'s message, its middle cut when long.

    Protobuf names every level of a deep value ("Failed to parse values field: " 90 times), and
    one line must stay readable.
    """
    text = str(exc)
    return text if len(text) <= 300 else f"{text[:100]} … {text[-180:]}"

"""OTLP/JSON IDs: hex as the specification says, base64 tolerated.

Protobuf's canonical JSON mapping encodes ``bytes`` as base64, but OTLP/JSON encodes trace and
span IDs as hex. We rewrite the ID fields of a parsed document to base64 before handing it to
``json_format`` so both spellings are accepted.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

_HEX = re.compile(r"^[0-9a-fA-F]*$")
#: ID field (both JSON spellings) → length in bytes.
_ID_FIELDS = {
    "traceId": 16,
    "trace_id": 16,
    "spanId": 8,
    "span_id": 8,
    "parentSpanId": 8,
    "parent_span_id": 8,
}


def base64_bytes(value: str) -> bytes:
    """The bytes ``value`` encodes in base64, or ``b""`` when it is not base64."""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _id_to_base64(value: Any, field: str) -> Any:
    if not isinstance(value, str) or not value:
        return value
    expected = _ID_FIELDS[field]
    if len(value) == 2 * expected and _HEX.match(value):
        return base64.b64encode(bytes.fromhex(value)).decode()
    if len(base64_bytes(value)) == expected:
        return value
    raise ValueError(f"{field} {value!r} is neither {2 * expected} hex digits nor base64")


def _fix_ids(item: Any) -> None:
    if not isinstance(item, dict):
        return
    for field in _ID_FIELDS:
        if field in item:
            item[field] = _id_to_base64(item[field], field)


def _items(container: Any, *names: str) -> list[Any]:
    if not isinstance(container, dict):
        return []
    for name in names:
        value = container.get(name)
        if isinstance(value, list):
            return value
    return []


def fix_json_ids(document: dict[str, Any], *top: str) -> None:
    """Rewrite every span, link and log-record ID in an OTLP/JSON document in place.

    Args:
        document: A parsed ``Export*ServiceRequest`` document.
        top: The names of its top-level list (``resourceSpans`` / ``resourceLogs``, both
            spellings).

    Raises:
        ValueError: An ID is neither hex nor base64 of the right length.
    """
    for resource in _items(document, *top):
        for scope in _items(resource, "scopeSpans", "scope_spans", "scopeLogs", "scope_logs"):
            for item in _items(scope, "spans", "logRecords", "log_records"):
                _fix_ids(item)
                for link in _items(item, "links"):
                    _fix_ids(link)

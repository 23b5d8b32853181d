"""Building spans-table batches row by row, from Python values.

Every writer (the embedded exporter, the collector, the importer) funnels its spans through
:class:`SpanRows`, so that attribute typing and promotion are decided in one place.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from assay.store import _schema as s
from assay.store._coercion import coerce

#: One encoded attribute, shaped like :data:`assay.store.ATTRIBUTE_TYPE`.
EncodedAttribute = dict[str, Any]

_ARRAY_TYPES: dict[type, str] = {str: "string[]", bool: "bool[]", int: "int[]", float: "double[]"}


def _empty(key: str, type_: str) -> EncodedAttribute:
    return {
        "key": key,
        "type": type_,
        "string_value": None,
        "bool_value": None,
        "int_value": None,
        "double_value": None,
        "bytes_value": None,
        "json_value": None,
    }


def _any_value_json(value: Any) -> Any:
    """Encode a Python value as an OTLP/JSON ``AnyValue`` (used for mixed or nested arrays)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, Mapping):
        return {
            "kvlistValue": {
                "values": [{"key": str(k), "value": _any_value_json(v)} for k, v in value.items()]
            }
        }
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [_any_value_json(v) for v in value]}}
    if value is None:
        return {}
    raise TypeError(f"unsupported attribute value type {type(value).__name__}")


def encode_value(key: str, value: Any) -> EncodedAttribute:
    """Encode one attribute from a Python value, keeping its type.

    Args:
        key: The attribute name.
        value: ``str``, ``bool``, ``int``, ``float``, ``bytes``, ``None`` (an empty value), a
            mapping (an OTLP ``kvlist``) or a sequence of these.

    Returns:
        A dict shaped like :data:`assay.store.ATTRIBUTE_TYPE`.
    """
    # bool before int: bool is a subclass of int.
    if isinstance(value, bool):
        out = _empty(key, "bool")
        out["bool_value"] = value
    elif isinstance(value, int):
        out = _empty(key, "int")
        out["int_value"] = value
    elif isinstance(value, float):
        out = _empty(key, "double")
        out["double_value"] = value
    elif isinstance(value, str):
        out = _empty(key, "string")
        out["string_value"] = value
    elif isinstance(value, bytes | bytearray):
        out = _empty(key, "bytes")
        out["bytes_value"] = bytes(value)
    elif value is None:
        out = _empty(key, "empty")
    elif isinstance(value, Mapping):
        out = _empty(key, "kvlist")
        out["json_value"] = json.dumps(_any_value_json(value)["kvlistValue"])
    elif isinstance(value, Sequence):
        types = {type(v) for v in value}
        homogeneous = _ARRAY_TYPES.get(next(iter(types))) if len(types) == 1 else None
        if homogeneous is not None:
            out = _empty(key, homogeneous)
            out["json_value"] = json.dumps(list(value))
        else:
            out = _empty(key, "array")
            out["json_value"] = json.dumps(_any_value_json(list(value))["arrayValue"])
    else:
        raise TypeError(f"attribute {key!r}: unsupported value type {type(value).__name__}")
    return out


def encode_attributes(attributes: Mapping[str, Any] | None) -> list[EncodedAttribute]:
    """Encode a mapping of attributes (as the OTel SDK holds them) into typed structs."""
    if not attributes:
        return []
    return [encode_value(k, v) for k, v in attributes.items()]


def decode_value(attribute: Mapping[str, Any]) -> Any:
    """Return the Python value of one encoded attribute (the inverse of :func:`encode_value`)."""
    type_ = attribute["type"]
    if type_ == "string":
        return attribute["string_value"]
    if type_ == "bool":
        return attribute["bool_value"]
    if type_ == "int":
        return attribute["int_value"]
    if type_ == "double":
        return attribute["double_value"]
    if type_ == "bytes":
        return attribute["bytes_value"]
    if type_ == "empty":
        return None
    return json.loads(attribute["json_value"])


def decode_attributes(attributes: Iterable[Mapping[str, Any]] | None) -> dict[str, Any]:
    """Return encoded attributes as a ``{key: value}`` dict."""
    return {a["key"]: decode_value(a) for a in attributes or ()}


_PROMOTED = {a: (s.promoted_column(a), t) for a, t in s.PROMOTED_ATTRIBUTES.items()}


class SpanRows:
    """A batch of spans being built, column by column, for one spans-table write.

    Example:
        >>> rows = SpanRows()
        >>> rows.append(trace_id="0" * 32, span_id="1" * 16, name="trial", start_time=1,
        ...             end_time=2, attributes=encode_attributes({"assay.test.id": "t1"}))
        >>> rows.to_table().num_rows
        1
    """

    def __init__(self) -> None:
        self._columns: dict[str, list[Any]] = {f.name: [] for f in s.SPANS_SCHEMA}

    def __len__(self) -> int:
        return len(self._columns[s.TRACE_ID])

    def append(
        self,
        *,
        trace_id: str,
        span_id: str,
        name: str,
        start_time: int,
        end_time: int,
        parent_span_id: str | None = None,
        trace_state: str | None = None,
        kind: str = "INTERNAL",
        status_code: str = "UNSET",
        status_message: str | None = None,
        service_name: str | None = None,
        scope_name: str | None = None,
        scope_version: str | None = None,
        attributes: list[EncodedAttribute] | None = None,
        resource_attributes: list[EncodedAttribute] | None = None,
        events: list[dict[str, Any]] | None = None,
        links: list[dict[str, Any]] | None = None,
    ) -> None:
        """Add one span. IDs are lowercase hex; attributes come from :func:`encode_attributes`.

        ``events`` are dicts with ``time_unix_nano``, ``name`` and encoded ``attributes``;
        ``links`` have ``trace_id``, ``span_id``, ``trace_state`` and encoded ``attributes``.
        """
        c = self._columns
        c[s.TRACE_ID].append(trace_id)
        c[s.SPAN_ID].append(span_id)
        c[s.PARENT_SPAN_ID].append(parent_span_id or None)
        c[s.TRACE_STATE].append(trace_state or None)
        c[s.NAME].append(name)
        c[s.KIND].append(kind)
        c[s.START_TIME].append(start_time)
        c[s.END_TIME].append(end_time)
        c[s.STATUS_CODE].append(status_code)
        c[s.STATUS_MESSAGE].append(status_message or None)
        c[s.SERVICE_NAME].append(service_name)
        c[s.SCOPE_NAME].append(scope_name)
        c[s.SCOPE_VERSION].append(scope_version)
        attributes = attributes or []
        promoted: dict[str, Any] = {}
        for attribute in attributes:
            target = _PROMOTED.get(attribute["key"])
            if target is not None:
                promoted[target[0]] = coerce(attribute, target[1])
        for column, _ in _PROMOTED.values():
            c[column].append(promoted.get(column))
        c[s.ATTRIBUTES].append(attributes)
        c[s.RESOURCE_ATTRIBUTES].append(resource_attributes or [])
        c[s.EVENTS].append(events or [])
        c[s.LINKS].append(links or [])

    def to_table(self) -> pa.Table:
        """Return the rows appended so far as a table with :data:`SPANS_SCHEMA`."""
        return pa.Table.from_pydict(self._columns, schema=s.SPANS_SCHEMA)

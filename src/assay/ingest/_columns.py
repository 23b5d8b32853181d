"""A fast columnar builder: OTLP protobuf spans straight into spans-table columns.

:class:`assay.store.SpanRows` builds one dict per attribute, which is clear but too slow for a
collector taking tens of thousands of spans a second. This builder keeps one flat Python list per
struct field and assembles the nested arrow arrays from offsets, so that an attribute costs a
handful of list appends. Promotion of hot attributes reuses the store's rules
(``assay.store._rows._coerce``), so both builders fill the promoted columns identically.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from assay.store import _schema as s
from assay.store._rows import _coerce, encode_value

_KINDS = ("INTERNAL", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
_STATUS = ("UNSET", "OK", "ERROR")
_PROMOTED = {a: (s.promoted_column(a), t) for a, t in s.PROMOTED_ATTRIBUTES.items()}
_SCALARS = {"string_value", "bool_value", "int_value", "double_value", "bytes_value"}


def any_value_to_python(value: Any) -> Any:
    """Return the Python value of an OTLP ``AnyValue`` message (kvlists become dicts)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which in _SCALARS:
        return getattr(value, which)
    if which == "array_value":
        return [any_value_to_python(v) for v in value.array_value.values]
    return {kv.key: any_value_to_python(kv.value) for kv in value.kvlist_value.values}


def _kind_name(kind: int) -> str:
    return _KINDS[kind] if 0 <= kind < len(_KINDS) else "INTERNAL"


def _status_name(code: int) -> str:
    return _STATUS[code] if 0 <= code < len(_STATUS) else "UNSET"


class _AttributeColumns:
    """Flat columns of a list of attribute structs, plus the offsets of each list."""

    __slots__ = (
        "bools",
        "bytes_",
        "doubles",
        "ints",
        "jsons",
        "keys",
        "offsets",
        "strings",
        "types",
    )

    def __init__(self) -> None:
        self.offsets: list[int] = [0]
        self.keys: list[str] = []
        self.types: list[str] = []
        self.strings: list[str | None] = []
        self.bools: list[bool | None] = []
        self.ints: list[int | None] = []
        self.doubles: list[float | None] = []
        self.bytes_: list[bytes | None] = []
        self.jsons: list[str | None] = []

    def add(self, key: str, value: Any) -> tuple[str, Any] | None:
        """Append one attribute from an ``AnyValue``; return ``(type, value)`` for promotion."""
        which = value.WhichOneof("value")
        self.keys.append(key)
        if which == "string_value":
            v: Any = value.string_value
            self.types.append("string")
            self.strings.append(v)
            self.bools.append(None)
            self.ints.append(None)
            self.doubles.append(None)
            self.bytes_.append(None)
            self.jsons.append(None)
            return None if key not in _PROMOTED else ("string", v)
        self.strings.append(None)
        if which == "int_value":
            v = value.int_value
            self.types.append("int")
            self.bools.append(None)
            self.ints.append(v)
            self.doubles.append(None)
            self.bytes_.append(None)
            self.jsons.append(None)
            return None if key not in _PROMOTED else ("int", v)
        self.ints.append(None)
        if which == "bool_value":
            self.types.append("bool")
            self.bools.append(value.bool_value)
            self.doubles.append(None)
            self.bytes_.append(None)
            self.jsons.append(None)
            return None if key not in _PROMOTED else ("bool", value.bool_value)
        self.bools.append(None)
        if which == "double_value":
            self.types.append("double")
            self.doubles.append(value.double_value)
            self.bytes_.append(None)
            self.jsons.append(None)
            return None if key not in _PROMOTED else ("double", value.double_value)
        self.doubles.append(None)
        if which == "bytes_value":
            self.types.append("bytes")
            self.bytes_.append(value.bytes_value)
            self.jsons.append(None)
            return None
        self.bytes_.append(None)
        if which is None:
            self.types.append("empty")
            self.jsons.append(None)
            return None
        # Arrays and kvlists are rare: encode them exactly as the store's own encoder does.
        encoded = encode_value(key, any_value_to_python(value))
        self.types.append(encoded["type"])
        self.jsons.append(encoded["json_value"])
        return None

    def add_all(self, attributes: Any) -> dict[str, Any] | None:
        """Append a repeated ``KeyValue`` as one list; return promoted column values, if any."""
        promoted: dict[str, Any] | None = None
        for kv in attributes:
            hit = self.add(kv.key, kv.value)
            if hit is not None:
                column, target = _PROMOTED[kv.key]
                encoded = {"type": hit[0], f"{hit[0]}_value": hit[1]}
                if promoted is None:
                    promoted = {}
                promoted[column] = _coerce(encoded, target)
        self.offsets.append(len(self.keys))
        return promoted

    def end_list(self) -> None:
        """Close an empty or externally-filled list."""
        self.offsets.append(len(self.keys))

    def values(self) -> pa.StructArray:
        return pa.StructArray.from_arrays(
            [
                pa.array(self.keys, pa.string()),
                pa.array(self.types, pa.string()),
                pa.array(self.strings, pa.string()),
                pa.array(self.bools, pa.bool_()),
                pa.array(self.ints, pa.int64()),
                pa.array(self.doubles, pa.float64()),
                pa.array(self.bytes_, pa.binary()),
                pa.array(self.jsons, pa.string()),
            ],
            fields=list(s.ATTRIBUTE_TYPE),
        )

    def lists(self) -> pa.ListArray:
        return pa.ListArray.from_arrays(
            pa.array(self.offsets, pa.int32()), self.values(), type=s.ATTRIBUTE_LIST_TYPE
        )


class SpanColumns:
    """Spans-table columns built from OTLP protobuf messages.

    Call :meth:`add_resource` for each resource, then :meth:`add_span` for each of its spans;
    :meth:`to_table` returns a table with exactly :data:`assay.store.SPANS_SCHEMA`.
    """

    def __init__(self) -> None:
        self._trace_ids: list[str] = []
        self._span_ids: list[str] = []
        self._parents: list[str | None] = []
        self._states: list[str | None] = []
        self._names: list[str] = []
        self._kinds: list[str] = []
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._status: list[str] = []
        self._messages: list[str | None] = []
        self._services: list[str | None] = []
        self._scope_names: list[str | None] = []
        self._scope_versions: list[str | None] = []
        self._promoted: dict[str, dict[int, Any]] = {c: {} for c, _ in _PROMOTED.values()}
        self._attributes = _AttributeColumns()
        self._resource_attributes = _AttributeColumns()
        self._resource_of_span: list[int] = []
        self._resource_count = 0
        self._service: str | None = None
        # events: span → event offsets; event fields; event → attribute lists
        self._event_offsets: list[int] = [0]
        self._event_times: list[int] = []
        self._event_names: list[str] = []
        self._event_attributes = _AttributeColumns()
        self._link_offsets: list[int] = [0]
        self._link_traces: list[str] = []
        self._link_spans: list[str] = []
        self._link_states: list[str | None] = []
        self._link_attributes = _AttributeColumns()

    def __len__(self) -> int:
        return len(self._trace_ids)

    def add_resource(self, resource: Any) -> None:
        """Start a resource: its attributes apply to the spans added next."""
        self._resource_attributes.add_all(resource.attributes)
        self._service = None
        for kv in resource.attributes:
            if kv.key == "service.name":
                py = any_value_to_python(kv.value)
                self._service = py if isinstance(py, str) else str(py)
        self._resource_count += 1

    def add_span(self, span: Any, scope_name: str | None, scope_version: str | None) -> bool:
        """Add one span (a ``Span`` message); return False if its IDs are invalid."""
        trace_id = span.trace_id
        span_id = span.span_id
        if len(trace_id) != 16 or len(span_id) != 8 or not any(trace_id) or not any(span_id):
            return False
        parent = span.parent_span_id
        row = len(self._trace_ids)
        self._trace_ids.append(trace_id.hex())
        self._span_ids.append(span_id.hex())
        self._parents.append(parent.hex() if len(parent) == 8 and any(parent) else None)
        self._states.append(span.trace_state or None)
        self._names.append(span.name)
        self._kinds.append(_kind_name(span.kind))
        self._starts.append(span.start_time_unix_nano)
        self._ends.append(span.end_time_unix_nano)
        status = span.status
        self._status.append(_status_name(status.code))
        self._messages.append(status.message or None)
        self._services.append(self._service)
        self._scope_names.append(scope_name)
        self._scope_versions.append(scope_version)
        self._resource_of_span.append(self._resource_count - 1)
        promoted = self._attributes.add_all(span.attributes)
        if promoted:
            for column, value in promoted.items():
                self._promoted[column][row] = value
        for event in span.events:
            self._event_times.append(event.time_unix_nano)
            self._event_names.append(event.name)
            self._event_attributes.add_all(event.attributes)
        self._event_offsets.append(len(self._event_times))
        for link in span.links:
            self._link_traces.append(link.trace_id.hex())
            self._link_spans.append(link.span_id.hex())
            self._link_states.append(link.trace_state or None)
            self._link_attributes.add_all(link.attributes)
        self._link_offsets.append(len(self._link_traces))
        return True

    def add_row(self, **fields: Any) -> None:
        """Add one span from plain values (used for synthetic spans; see ``_logs``)."""
        row = len(self._trace_ids)
        self._trace_ids.append(fields["trace_id"])
        self._span_ids.append(fields["span_id"])
        self._parents.append(fields.get("parent_span_id"))
        self._states.append(None)
        self._names.append(fields["name"])
        self._kinds.append(fields.get("kind", "INTERNAL"))
        self._starts.append(fields["start_time"])
        self._ends.append(fields["end_time"])
        self._status.append("UNSET")
        self._messages.append(None)
        self._services.append(self._service)
        self._scope_names.append(fields.get("scope_name"))
        self._scope_versions.append(fields.get("scope_version"))
        self._resource_of_span.append(self._resource_count - 1)
        promoted = self._attributes.add_all(fields.get("attributes", ()))
        if promoted:
            for column, value in promoted.items():
                self._promoted[column][row] = value
        for time_unix_nano, name, attributes in fields.get("events", ()):
            self._event_times.append(time_unix_nano)
            self._event_names.append(name)
            self._event_attributes.add_all(attributes)
        self._event_offsets.append(len(self._event_times))
        self._link_offsets.append(len(self._link_traces))

    def to_table(self) -> pa.Table:
        """Return the spans added so far as a table with :data:`assay.store.SPANS_SCHEMA`."""
        n = len(self._trace_ids)
        columns: dict[str, pa.Array] = {
            s.TRACE_ID: pa.array(self._trace_ids, pa.string()),
            s.SPAN_ID: pa.array(self._span_ids, pa.string()),
            s.PARENT_SPAN_ID: pa.array(self._parents, pa.string()),
            s.TRACE_STATE: pa.array(self._states, pa.string()),
            s.NAME: pa.array(self._names, pa.string()),
            s.KIND: pa.array(self._kinds, pa.string()),
            s.START_TIME: pa.array(self._starts, pa.int64()),
            s.END_TIME: pa.array(self._ends, pa.int64()),
            s.STATUS_CODE: pa.array(self._status, pa.string()),
            s.STATUS_MESSAGE: pa.array(self._messages, pa.string()),
            s.SERVICE_NAME: pa.array(self._services, pa.string()),
            s.SCOPE_NAME: pa.array(self._scope_names, pa.string()),
            s.SCOPE_VERSION: pa.array(self._scope_versions, pa.string()),
        }
        for column, target in _PROMOTED.values():
            values = self._promoted[column]
            if values:
                dense: list[Any] = [None] * n
                for i, v in values.items():
                    dense[i] = v
                columns[column] = pa.array(dense, target)
            else:
                columns[column] = pa.nulls(n, target)
        columns[s.ATTRIBUTES] = self._attributes.lists()
        resource_lists = self._resource_attributes.lists()
        columns[s.RESOURCE_ATTRIBUTES] = resource_lists.take(
            pa.array(self._resource_of_span, pa.int32())
        )
        events = pa.StructArray.from_arrays(
            [
                pa.array(self._event_times, pa.int64()),
                pa.array(self._event_names, pa.string()),
                self._event_attributes.lists(),
            ],
            fields=list(s.EVENT_TYPE),
        )
        columns[s.EVENTS] = pa.ListArray.from_arrays(
            pa.array(self._event_offsets, pa.int32()), events, type=pa.list_(s.EVENT_TYPE)
        )
        links = pa.StructArray.from_arrays(
            [
                pa.array(self._link_traces, pa.string()),
                pa.array(self._link_spans, pa.string()),
                pa.array(self._link_states, pa.string()),
                self._link_attributes.lists(),
            ],
            fields=list(s.LINK_TYPE),
        )
        columns[s.LINKS] = pa.ListArray.from_arrays(
            pa.array(self._link_offsets, pa.int32()), links, type=pa.list_(s.LINK_TYPE)
        )
        return pa.Table.from_arrays(
            [columns[f.name] for f in s.SPANS_SCHEMA], schema=s.SPANS_SCHEMA
        )

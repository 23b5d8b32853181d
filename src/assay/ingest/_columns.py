"""A fast columnar builder: OTLP protobuf spans straight into spans-table columns.

:class:`assay.store.SpanRows` builds one dict per attribute, which is clear but too slow for a
collector taking tens of thousands of spans a second. This builder appends each value to a flat
list of its type (with its position) and assembles the nested Arrow arrays from offsets, so that
an attribute costs a few list appends. Hot attributes are promoted afterwards, column-wise, by
the store's own rule (``assay.store.coerce`` for any value whose type differs from the
column's), so both builders fill the promoted columns identically — a test compares them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from assay.ingest._validate import describe, span_problem
from assay.store import coerce, encode_value
from assay.store import schema as s

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
    return _KINDS[kind] if 0 <= kind < 6 else "INTERNAL"


def _status_name(code: int) -> str:
    return _STATUS[code] if 0 <= code < 3 else "UNSET"


class _AttributeColumns:
    """Flat columns of lists of attribute structs, plus the offsets of each list.

    Each value is appended to the list of its own type together with its position; the struct
    fields are scattered into full-length arrays with numpy at the end. This keeps the per-
    attribute Python work (the hot loop of the collector) to a few appends; promotion happens
    afterwards, column-wise (:func:`_promoted_columns`).
    """

    __slots__ = ("keys", "offsets", "pos", "types", "vals")

    def __init__(self) -> None:
        self.offsets: list[int] = [0]
        self.keys: list[str] = []
        self.types: list[str] = []
        #: per field (string, bool, int, double, bytes, json): positions and values
        self.pos: tuple[list[int], ...] = ([], [], [], [], [], [])
        self.vals: tuple[list[Any], ...] = ([], [], [], [], [], [])

    def add_all(self, attributes: Any) -> None:
        """Append a repeated ``KeyValue`` message field as one list."""
        keys = self.keys
        types = self.types
        pos_s, pos_b, pos_i, pos_d, pos_y, pos_j = self.pos
        val_s, val_b, val_i, val_d, val_y, val_j = self.vals
        position = len(keys)
        for kv in attributes:
            value = kv.value
            which = value.WhichOneof("value")
            keys.append(kv.key)
            if which == "string_value":
                types.append("string")
                pos_s.append(position)
                val_s.append(value.string_value)
            elif which == "int_value":
                types.append("int")
                pos_i.append(position)
                val_i.append(value.int_value)
            elif which == "double_value":
                types.append("double")
                pos_d.append(position)
                val_d.append(value.double_value)
            elif which == "bool_value":
                types.append("bool")
                pos_b.append(position)
                val_b.append(value.bool_value)
            elif which == "bytes_value":
                types.append("bytes")
                pos_y.append(position)
                val_y.append(value.bytes_value)
            elif which is None:
                types.append("empty")
            else:
                # Arrays and kvlists are rare: encode them exactly as the store's encoder does.
                encoded = encode_value(kv.key, any_value_to_python(value))
                types.append(encoded["type"])
                pos_j.append(position)
                val_j.append(encoded["json_value"])
            position += 1
        self.offsets.append(position)

    def values(self) -> pa.StructArray:
        n = len(self.keys)
        fields = [
            _scatter(n, pos, val, t)
            for pos, val, t in zip(self.pos, self.vals, _FIELD_TYPES, strict=True)
        ]
        return pa.StructArray.from_arrays(
            [pa.array(self.keys, pa.string()), pa.array(self.types, pa.string()), *fields],
            fields=list(s.ATTRIBUTE_TYPE),
        )

    def lists(self) -> pa.ListArray:
        return pa.ListArray.from_arrays(
            pa.array(self.offsets, pa.int32()), self.values(), type=s.ATTRIBUTE_LIST_TYPE
        )


_FIELD_TYPES = (pa.string(), pa.bool_(), pa.int64(), pa.float64(), pa.binary(), pa.string())
#: The attribute type a promoted column takes as is; any other type goes through ``coerce``.
_NATIVE = {pa.string(): ("string", "string_value"), pa.int64(): ("int", "int_value")}


def _promoted_columns(attributes: pa.ListArray, n: int) -> dict[str, pa.Array]:
    """The promoted columns of ``n`` spans, from their attribute lists.

    Same rule as :class:`assay.store.SpanRows`: for each promoted attribute, the last occurrence
    in a span wins, and its value is ``coerce``-d to the column type. Done column-wise with
    Arrow kernels; only attributes whose type differs from the column's go through Python.
    """
    flat = attributes.flatten()
    keys = flat.field("key")
    rows_of = pc.list_parent_indices(attributes).to_numpy()
    out: dict[str, pa.Array] = {}
    present = set(pc.unique(keys).to_pylist()) if len(keys) else set()
    for attribute, (column, target) in _PROMOTED.items():
        if attribute not in present:
            out[column] = pa.nulls(n, target)
            continue
        where = np.flatnonzero(pc.equal(keys, attribute).to_numpy(zero_copy_only=False))
        rows = rows_of[where]
        last = np.append(rows[1:] != rows[:-1], True)  # the last occurrence in each span wins
        where, rows = where[last], rows[last]
        picked = flat.take(pa.array(where))
        native = _NATIVE.get(target)
        if native is not None and pc.all(pc.equal(picked.field("type"), native[0])).as_py():
            values = picked.field(native[1])
        else:
            values = pa.array([coerce(a, target) for a in picked.to_pylist()], target)
        out[column] = _scatter(n, rows, values, target)
    return out


def _scatter(n: int, positions: Any, values: list[Any] | pa.Array, type_: pa.DataType) -> pa.Array:
    """A length-``n`` array holding ``values`` at ``positions`` and nulls elsewhere."""
    count = len(positions)
    if count == 0:
        return pa.nulls(n, type_)
    dense = values if isinstance(values, pa.Array) else pa.array(values, type_)
    if count == n:
        return dense
    indices = np.full(n, -1, dtype=np.int64)
    indices[np.asarray(positions, dtype=np.int64)] = np.arange(count, dtype=np.int64)
    return dense.take(pa.array(indices, mask=indices < 0))


class SpanColumns:
    """Spans-table columns built from OTLP protobuf messages.

    Call :meth:`add_resource` for each resource, then :meth:`add_spans` for each of its scopes;
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
        self.first_problem = ""
        """The first span skipped by :meth:`add_spans` and why (empty when none was)."""

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

    def add_spans(self, spans: Any, scope_name: str | None, scope_version: str | None) -> int:
        """Add the ``Span`` messages of one scope; return how many the table cannot hold.

        Those are skipped (``_validate``); the first is described in :attr:`first_problem`.
        """
        rejected = 0
        trace_ids = self._trace_ids
        span_ids = self._span_ids
        parents = self._parents
        states = self._states
        names = self._names
        kinds = self._kinds
        starts = self._starts
        ends = self._ends
        statuses = self._status
        messages = self._messages
        services = self._services
        scope_names = self._scope_names
        scope_versions = self._scope_versions
        resource_of_span = self._resource_of_span
        add_attributes = self._attributes.add_all
        event_times = self._event_times
        event_names = self._event_names
        event_offsets = self._event_offsets
        add_event_attributes = self._event_attributes.add_all
        link_offsets = self._link_offsets
        service = self._service
        resource = self._resource_count - 1
        for span in spans:
            trace_id = span.trace_id
            span_id = span.span_id
            problem = span_problem(span)
            if problem is not None:
                rejected += 1
                if not self.first_problem:
                    self.first_problem = describe("span", trace_id, span_id, problem)
                continue
            trace_ids.append(trace_id.hex())
            span_ids.append(span_id.hex())
            parent = span.parent_span_id
            parents.append(parent.hex() if len(parent) == 8 and any(parent) else None)
            states.append(span.trace_state or None)
            names.append(span.name)
            kinds.append(_kind_name(span.kind))
            starts.append(span.start_time_unix_nano)
            ends.append(span.end_time_unix_nano)
            status = span.status
            statuses.append(_status_name(status.code))
            messages.append(status.message or None)
            services.append(service)
            scope_names.append(scope_name)
            scope_versions.append(scope_version)
            resource_of_span.append(resource)
            add_attributes(span.attributes)
            if span.events:
                for event in span.events:
                    event_times.append(event.time_unix_nano)
                    event_names.append(event.name)
                    add_event_attributes(event.attributes)
            event_offsets.append(len(event_times))
            if span.links:
                self._add_links(span.links)
            link_offsets.append(len(self._link_traces))
        return rejected

    def _add_links(self, links: Any) -> None:
        for link in links:
            self._link_traces.append(link.trace_id.hex())
            self._link_spans.append(link.span_id.hex())
            self._link_states.append(link.trace_state or None)
            self._link_attributes.add_all(link.attributes)

    def add_row(self, **fields: Any) -> None:
        """Add one span from plain values (used for synthetic spans; see ``_logs``)."""
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
        self._attributes.add_all(fields.get("attributes", ()))
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
        attributes = self._attributes.lists()
        columns.update(_promoted_columns(attributes, n))
        columns[s.ATTRIBUTES] = attributes
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

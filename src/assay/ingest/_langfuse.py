"""Langfuse blob-storage exports (JSONL, JSON or CSV, gzip or not) → OTLP.

The export writes ``observations_v2/`` (enriched), or ``observations/`` and ``traces/`` (legacy),
and ``scores/``. Each row is a record of one of three kinds, told by its fields (Langfuse's
"Blob Storage Export Field Reference"): an observation (``id``, ``trace_id``, ``type``,
``start_time``), a trace of the legacy export (``id``, ``timestamp``, ``bookmarked``, no
``trace_id``) or a score (``name``, ``value``, ``data_type``). Timestamps are
``YYYY-MM-DD HH:MM:SS.ffffff`` in UTC.

- An observation is a span. Its ``type`` says what it is: ``GENERATION`` an LLM call (model and
  ``usage_details`` as the GenAI attributes), ``TOOL`` a tool call, ``AGENT`` an agent run,
  ``EMBEDDING`` an embedding; level ``ERROR`` is the ERROR status.
- A trace row (legacy export) carries the trace's name, user, session, tags, release and
  metadata; :class:`LangfuseJoin` holds them and puts them on the trace's root observations
  (``import_files`` reads trace files first). The enriched export has them on every row.
- A score is an evaluation: a zero-length ``gen_ai.evaluation.result`` span, a child of the
  observation it scores, or — for a trace-level score — of the trace's first root observation,
  known once every file was read (:meth:`LangfuseJoin.finish`).

Ids: Langfuse's OpenTelemetry ids (32 and 16 hex digits) are kept; a UUID trace id loses its
dashes; any other id (Langfuse accepts any string) becomes its BLAKE2b hash, 16 or 8 bytes,
the same in every file, so parents and scores still find their observation.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from assay import conventions as c
from assay.errors import InputError
from assay.ingest._build import FORMAT_ATTRIBUTE, key_value

__all__ = ["LangfuseJoin", "is_langfuse", "langfuse_kind", "langfuse_to_request"]

_HEX32 = re.compile(r"^[0-9a-fA-F]{32}$")
_HEX16 = re.compile(r"^[0-9a-fA-F]{16}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_EVALUATION = "gen_ai.evaluation.result"
#: Trace-level fields (enriched rows, legacy trace rows) → span attributes.
_TRACE_FIELDS = {
    "trace_name": "langfuse.trace.name",
    "user_id": "user.id",
    "session_id": "session.id",
    "tags": "langfuse.trace.tags",
    "release": "langfuse.release",
}
_LEGACY_TRACE_FIELDS = {
    "name": "langfuse.trace.name",
    "user_id": "user.id",
    "session_id": "session.id",
    "tags": "langfuse.trace.tags",
    "release": "langfuse.release",
    "version": "langfuse.trace.version",
}


def langfuse_kind(row: Any) -> str | None:
    """``observation``, ``trace`` or ``score`` for a Langfuse export row, else None."""
    if not isinstance(row, dict) or "id" not in row:
        return None
    if {"trace_id", "type", "start_time"} <= row.keys():
        return "observation"
    if {"name", "value", "data_type"} <= row.keys():
        return "score"
    if {"timestamp", "bookmarked"} <= row.keys() and "trace_id" not in row:
        return "trace"
    return None


def is_langfuse(document: Any) -> bool:
    """One Langfuse row, or a non-empty JSON array of them (the ``json`` export)."""
    if isinstance(document, list):
        return bool(document) and all(langfuse_kind(r) is not None for r in document)
    return langfuse_kind(document) is not None


def _trace_id(value: Any, where: str) -> bytes:
    text = _text(value, where)
    if _HEX32.match(text):
        return bytes.fromhex(text)
    if _UUID.match(text):
        return bytes.fromhex(text.replace("-", ""))
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def _span_id(value: Any, where: str) -> bytes:
    text = _text(value, where)
    if _HEX16.match(text):
        return bytes.fromhex(text)
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"{where} {value!r} is not an id")
    return value


def _nanos(value: Any, where: str) -> int:
    """Nanoseconds of ``YYYY-MM-DD HH:MM:SS.ffffff`` (UTC), or ISO 8601 with a zone."""
    if not isinstance(value, str) or not value:
        raise InputError(f"{where} {value!r} is not a time")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputError(f"{where} {value!r} is not a time (YYYY-MM-DD HH:MM:SS.ffffff)") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # the export's times are UTC
    seconds = int((moment - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() // 1)
    return seconds * 1_000_000_000 + moment.microsecond * 1000


def _json(value: Any) -> Any:
    """A field CSV holds as JSON text (objects, arrays), decoded; other values as they are."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.strip():
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _filled(value: Any) -> bool:
    return value is not None and value != "" and value != [] and value != {}


@dataclass
class LangfuseJoin:
    """What rows of one kind need from rows of another, across the files of one import.

    Held in memory, bounded by ``limit`` bytes: the legacy traces' own fields (by trace) and the
    trace-level scores waiting for the trace's root observation (its id and start, by trace).
    """

    limit: int
    """Most bytes held for joining (``--max-message-mb``)."""
    traces: dict[bytes, list[KeyValue]] = field(default_factory=dict)
    roots: dict[bytes, tuple[int, bytes]] = field(default_factory=dict)
    pending: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    held: int = 0
    unmatched: int = 0
    """Scores not imported: of a trace with no observation in the input, or of a session."""

    def _hold(self, size: int, where: str) -> None:
        self.held += size
        if self.held > self.limit:
            raise InputError(
                f"{where}: the Langfuse trace rows and trace-level scores held to join them to "
                f"observations pass {self.limit // (1 << 20)} MB (raise --max-message-mb)"
            )

    def finish(self) -> ExportTraceServiceRequest:
        """The trace-level scores, each a child of its trace's first root observation."""
        request, scope = _request()
        for row, where in self.pending:
            trace_id = _trace_id(row.get("trace_id"), f"{where} trace_id")
            root = self.roots.get(trace_id)
            if root is None:
                self.unmatched += 1
                continue
            scope.spans.append(_score_span(row, where, trace_id, root[1]))
        self.pending.clear()
        return request


def _request() -> tuple[ExportTraceServiceRequest, Any]:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.append(key_value(FORMAT_ATTRIBUTE, "langfuse"))
    return request, resource.scope_spans.add()


def _usage(row: dict[str, Any]) -> list[tuple[str, Any]]:
    usage = _json(row.get("usage_details"))
    out: list[tuple[str, Any]] = []
    if isinstance(usage, dict):
        for key, attribute in (
            ("input", "gen_ai.usage.input_tokens"),
            ("output", "gen_ai.usage.output_tokens"),
        ):
            number = _number(usage.get(key))
            if number is not None and number.is_integer():
                out.append((attribute, int(number)))
    return out


def _typed(kind: str, name: str, row: dict[str, Any]) -> list[tuple[str, Any]]:
    """The GenAI attributes an observation's ``type`` stands for."""
    if kind == "GENERATION":
        out: list[tuple[str, Any]] = [("gen_ai.operation.name", "chat")]
        if _filled(row.get("provided_model_name")):
            out.append(("gen_ai.request.model", str(row["provided_model_name"])))
        return out + _usage(row)
    if kind == "TOOL":
        return [("gen_ai.operation.name", "execute_tool"), ("gen_ai.tool.name", name)]
    if kind == "AGENT":
        return [("gen_ai.operation.name", "invoke_agent"), ("gen_ai.agent.name", name)]
    if kind == "EMBEDDING":
        return [("gen_ai.operation.name", "embeddings")] + _usage(row)
    return []


def _observation(row: dict[str, Any], where: str, join: LangfuseJoin) -> Span:
    span = Span()
    span.trace_id = _trace_id(row.get("trace_id"), f"{where} trace_id")
    span.span_id = _span_id(row.get("id"), f"{where} id")
    if _filled(row.get("parent_observation_id")):
        span.parent_span_id = _span_id(row["parent_observation_id"], f"{where} parent")
    name = str(row.get("name") or "")
    span.name = name
    span.start_time_unix_nano = _nanos(row.get("start_time"), f"{where} start_time")
    end = row.get("end_time")
    span.end_time_unix_nano = (
        _nanos(end, f"{where} end_time") if _filled(end) else span.start_time_unix_nano
    )
    kind = str(row.get("type") or "").upper()
    pairs: list[tuple[str, Any]] = [("langfuse.observation.type", kind)]
    if str(row.get("level") or "").upper() == "ERROR":
        span.status.code = Status.STATUS_CODE_ERROR
        if _filled(row.get("status_message")):
            span.status.message = str(row["status_message"])
    elif _filled(row.get("status_message")):
        pairs.append(("langfuse.observation.status_message", str(row["status_message"])))
    if _filled(row.get("level")):
        pairs.append(("langfuse.observation.level", str(row["level"])))
    pairs += _typed(kind, name, row)
    for column, attribute in (("input", "input.value"), ("output", "output.value")):
        if _filled(row.get(column)):
            value = row[column]
            pairs.append((attribute, value if isinstance(value, str) else json.dumps(value)))
    metadata = _json(row.get("metadata"))
    if isinstance(metadata, dict):
        pairs += [(f"langfuse.observation.metadata.{k}", v) for k, v in metadata.items()]
    if _filled(row.get("model_id")):  # Langfuse priced it: a matched model definition
        cost = _number(row.get("total_cost"))
        if cost is not None:
            pairs.append(("gen_ai.usage.cost", cost))
    for column, attribute in _TRACE_FIELDS.items():
        if _filled(row.get(column)):
            value = _json(row[column])
            pairs.append((attribute, value))
    if _filled(row.get("environment")):
        pairs.append(("deployment.environment.name", str(row["environment"])))
    span.attributes.extend(key_value(k, v) for k, v in pairs)
    if not span.parent_span_id:
        held = {kv.key for kv in span.attributes}
        span.attributes.extend(
            kv for kv in join.traces.get(span.trace_id, ()) if kv.key not in held
        )
        first = join.roots.get(span.trace_id)
        if first is None or (span.start_time_unix_nano, span.span_id) < first:
            if first is None:
                join._hold(32, where)
            join.roots[span.trace_id] = (span.start_time_unix_nano, span.span_id)
    return span


def _score_span(row: dict[str, Any], where: str, trace_id: bytes, parent: bytes) -> Span:
    """A score as a zero-length evaluation span under ``parent`` (as the collector's logs)."""
    time = _nanos(row.get("timestamp"), f"{where} timestamp")
    attributes = [key_value("gen_ai.evaluation.name", str(row.get("name") or ""))]
    kind = str(row.get("data_type") or "").upper()
    value = _number(row.get("value"))
    if kind == "BOOLEAN" and value is not None:
        attributes.append(key_value("gen_ai.evaluation.score.label", str(value == 1).lower()))
        attributes.append(key_value("gen_ai.evaluation.score.value", value))
    elif kind == "CATEGORICAL" and _filled(row.get("string_value")):
        attributes.append(key_value("gen_ai.evaluation.score.label", str(row["string_value"])))
    elif kind == "NUMERIC" and value is not None:
        attributes.append(key_value("gen_ai.evaluation.score.value", value))
    explanation = [str(row[c]) for c in ("string_value", "comment") if _filled(row.get(c))]
    if kind == "TEXT" or (kind != "CATEGORICAL" and explanation):
        attributes.append(key_value("gen_ai.evaluation.explanation", "; ".join(explanation)))
    elif _filled(row.get("comment")):
        attributes.append(key_value("gen_ai.evaluation.explanation", str(row["comment"])))
    for column in ("source", "dataset_run_id"):
        if _filled(row.get(column)):
            attributes.append(key_value(f"langfuse.score.{column}", str(row[column])))
    if str(row.get("source") or "").upper() == "ANNOTATION":
        # A person's annotation: a label of the judge, not the judge's record (docs/analysis.md).
        attributes.append(key_value(c.EVALUATION_SOURCE, c.EVALUATION_SOURCE_HUMAN))
        if _filled(row.get("author_user_id")):
            attributes.append(key_value(c.EVALUATION_LABELLER, str(row["author_user_id"])))
    span = Span()
    span.trace_id = trace_id
    span.span_id = _span_id(f"score:{_text(row.get('id'), f'{where} id')}", where)
    span.parent_span_id = parent
    span.name = _EVALUATION
    span.start_time_unix_nano = span.end_time_unix_nano = time
    span.attributes.append(key_value("assay.synthetic", "langfuse"))
    event = span.events.add()
    event.name = _EVALUATION
    event.time_unix_nano = time
    event.attributes.extend(attributes)
    return span


def _trace_row(row: dict[str, Any], where: str, join: LangfuseJoin) -> None:
    trace_id = _trace_id(row.get("id"), f"{where} id")
    pairs = [
        (attribute, _json(row[column]))
        for column, attribute in _LEGACY_TRACE_FIELDS.items()
        if _filled(row.get(column))
    ]
    metadata = _json(row.get("metadata"))
    if isinstance(metadata, dict):
        pairs += [(f"langfuse.trace.metadata.{k}", v) for k, v in metadata.items()]
    if _filled(row.get("environment")):
        pairs.append(("deployment.environment.name", str(row["environment"])))
    attributes = [key_value(k, v) for k, v in pairs]
    join._hold(sum(a.ByteSize() for a in attributes) + 16, where)
    join.traces[trace_id] = attributes


def langfuse_to_request(
    rows: list[Any], where: str, join: LangfuseJoin
) -> ExportTraceServiceRequest:
    """The spans of Langfuse rows: observations, and scores of an observation.

    Trace rows go to ``join``; trace-level scores wait there for :meth:`LangfuseJoin.finish`.

    Raises:
        InputError: A row of no known kind, or an invalid id or time (named).
    """
    request, scope = _request()
    for i, row in enumerate(rows):
        here = f"{where}row {i}" if len(rows) > 1 else where.rstrip(": ") or "row"
        kind = langfuse_kind(row)
        if kind == "observation":
            scope.spans.append(_observation(row, here, join))
        elif kind == "trace":
            _trace_row(row, here, join)
        elif kind == "score":
            if _filled(row.get("observation_id")):
                trace_id = _trace_id(row.get("trace_id"), f"{here} trace_id")
                parent = _span_id(row["observation_id"], f"{here} observation_id")
                scope.spans.append(_score_span(row, here, trace_id, parent))
            elif _filled(row.get("trace_id")):
                join._hold(len(json.dumps(row)), here)
                join.pending.append((row, here))
            else:  # a session's score judges no trace: counted, said, not imported
                join.unmatched += 1
        else:
            raise InputError(f"{here}: not a Langfuse observation, trace or score row")
    return request

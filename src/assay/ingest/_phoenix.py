"""Arize Phoenix trace datasets (``trace_dataset-*.parquet``) and their evaluations → OTLP.

``TraceDataset.save()`` writes the spans as one Parquet table, a row a span: ``context.trace_id``,
``context.span_id``, ``parent_id`` (hex), ``name``, ``span_kind`` (OpenInference's kind),
``start_time`` / ``end_time`` (timestamps), ``status_code``, ``status_message``, ``events``
(``name``, ``timestamp``, ``attributes``) and one ``attributes.<key>`` column per attribute in
OpenInference keys. Its schema metadata (``arize``) names the evaluations saved beside it,
``evaluations-<id>.parquet``: ``context.span_id`` (or ``span_id``), ``label``, ``score``,
``explanation``, with the evaluation's name in their own ``arize`` metadata.

The dataset is read 1024 rows at a time, each batch bounded by the message limit. Its
evaluations are read whole (a few columns a span) and put on the spans they name as
``gen_ai.evaluation.result`` events. An evaluations file met on its own is read with the dataset
beside it that names it, and refused when there is none.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from assay.conventions import EVALUATION_SOURCE, EVALUATION_SOURCE_HUMAN
from assay.errors import InputError
from assay.ingest._build import FORMAT_ATTRIBUTE, bytes_id, key_value

__all__ = ["PARQUET_MAGIC", "phoenix_requests"]

PARQUET_MAGIC = b"PAR1"
_ATTRIBUTE_PREFIX = "attributes."
_TRACE = "context.trace_id"
_SPAN = "context.span_id"
_KIND = "openinference.span.kind"
_STATUS = {"OK": Status.STATUS_CODE_OK, "ERROR": Status.STATUS_CODE_ERROR}
_EVALUATION = "gen_ai.evaluation.result"
_BATCH_ROWS = 1024
"""Rows decoded at once; together they must fit the message limit."""


def _arize(schema: pa.Schema) -> dict[str, Any]:
    """The ``arize`` schema metadata Phoenix writes (empty when absent or not JSON)."""
    raw = (schema.metadata or {}).get(b"arize")
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _open(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: not a readable Parquet file ({exc})") from exc


def _evaluation_rows(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """``(name, rows)`` of a Phoenix evaluations file."""
    table = _open(path).read()
    metadata = _arize(table.schema)
    name = metadata.get("eval_name")
    if not isinstance(name, str) or not name:
        raise InputError(f"{path}: a Phoenix evaluations file without its eval_name")
    if metadata.get("eval_type", "SpanEvaluations") != "SpanEvaluations":
        raise InputError(
            f"{path}: {metadata.get('eval_type')} are not read (only SpanEvaluations name spans)"
        )
    key = _SPAN if _SPAN in table.column_names else "span_id"
    if key not in table.column_names:
        raise InputError(f"{path}: evaluations without a context.span_id column")
    wanted = [
        c
        for c in (key, "label", "score", "explanation", "annotator_kind")
        if c in table.column_names
    ]
    rows = table.select(wanted).rename_columns([_SPAN, *wanted[1:]]).to_pylist()
    return name, rows


def _evaluations(dataset: Path, metadata: dict[str, Any]) -> dict[bytes, list[list[Any]]]:
    """The evaluations saved beside ``dataset``, as event attributes by span id."""
    by_span: dict[bytes, list[list[Any]]] = {}
    for eval_id in metadata.get("eval_ids") or []:
        path = dataset.parent / f"evaluations-{eval_id}.parquet"
        if not path.is_file():
            raise InputError(f"{dataset}: names evaluations {path.name}, which is not beside it")
        name, rows = _evaluation_rows(path)
        for i, row in enumerate(rows):
            span_id = bytes_id(row[_SPAN], 8, f"{path}: row {i} context.span_id")
            attributes = [key_value("gen_ai.evaluation.name", name)]
            if row.get("label") is not None:
                attributes.append(key_value("gen_ai.evaluation.score.label", str(row["label"])))
            score = row.get("score")
            if isinstance(score, int | float) and not math.isnan(score):
                attributes.append(key_value("gen_ai.evaluation.score.value", float(score)))
            if row.get("explanation"):
                attributes.append(
                    key_value("gen_ai.evaluation.explanation", str(row["explanation"]))
                )
            if str(row.get("annotator_kind") or "").upper() == "HUMAN":
                # A person's annotation: a label of the judge, not the judge's record.
                attributes.append(key_value(EVALUATION_SOURCE, EVALUATION_SOURCE_HUMAN))
            by_span.setdefault(span_id, []).append(attributes)
    return by_span


def _nanos(value: Any, where: str) -> int:
    if isinstance(value, datetime):
        return int(value.timestamp()) * 1_000_000_000 + value.microsecond * 1000
    if isinstance(value, str):
        try:
            return _nanos(datetime.fromisoformat(value.replace("Z", "+00:00")), where)
        except ValueError:
            pass
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InputError(f"{where} {value!r} is not a time")


def _present(value: Any) -> bool:
    """A value the row holds (pandas writes a missing number as NaN, a missing object as None)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _flattened(key: str, value: Any) -> Iterator[tuple[str, Any]]:
    """``(dotted key, value)`` of each leaf: Phoenix nests attributes by their dotted names.

    ``attributes.gen_ai = {"operation": {"name": "chat"}, "usage": {...}}`` is
    ``gen_ai.operation.name = chat`` and so on (OpenTelemetry attribute values are never maps,
    so a struct is always such nesting); absent leaves (None, NaN) are no attribute.
    """
    if isinstance(value, dict):
        for part, inner in value.items():
            yield from _flattened(f"{key}.{part}", inner)
    elif _present(value):
        yield key, value


def _span(row: dict[str, Any], where: str, evaluations: dict[bytes, list[list[Any]]]) -> Span:
    span = Span()
    span.trace_id = bytes_id(row.get(_TRACE), 16, f"{where} {_TRACE}")
    span.span_id = bytes_id(row.get(_SPAN), 8, f"{where} {_SPAN}")
    if row.get("parent_id"):
        span.parent_span_id = bytes_id(row["parent_id"], 8, f"{where} parent_id")
    span.name = str(row.get("name") or "")
    span.start_time_unix_nano = _nanos(row.get("start_time"), f"{where} start_time")
    end = row.get("end_time")
    span.end_time_unix_nano = (
        _nanos(end, f"{where} end_time") if end is not None else span.start_time_unix_nano
    )
    code = str(row.get("status_code") or "").upper()
    if code in _STATUS:
        span.status.code = _STATUS[code]
    if row.get("status_message"):
        span.status.message = str(row["status_message"])
    keys = set()
    for column, value in row.items():
        if column.startswith(_ATTRIBUTE_PREFIX):
            for key, leaf in _flattened(column[len(_ATTRIBUTE_PREFIX) :], value):
                keys.add(key)
                span.attributes.append(key_value(key, leaf))
    if row.get("span_kind") and _KIND not in keys:
        span.attributes.append(key_value(_KIND, str(row["span_kind"])))
    for i, event in enumerate(row.get("events") or []):
        if not isinstance(event, dict):
            raise InputError(f"{where} events[{i}] is not a struct")
        added = span.events.add()
        added.name = str(event.get("name") or "")
        added.time_unix_nano = _nanos(event.get("timestamp"), f"{where} events[{i}].timestamp")
        attributes = event.get("attributes") or {}
        if isinstance(attributes, str):  # some versions keep them as JSON text
            try:
                attributes = json.loads(attributes)
            except ValueError:
                attributes = {"message": attributes}
        if isinstance(attributes, dict):
            added.attributes.extend(
                key_value(str(k), v) for k, v in attributes.items() if _present(v)
            )
    for attributes in evaluations.get(span.span_id, ()):
        evaluation = span.events.add()
        evaluation.name = _EVALUATION
        evaluation.time_unix_nano = span.end_time_unix_nano  # Phoenix keeps no time for it
        evaluation.attributes.extend(attributes)
    return span


def phoenix_requests(path: Path, max_batch_bytes: int) -> Iterator[ExportTraceServiceRequest]:
    """The spans of a Phoenix trace dataset, a request per record batch; none for evaluations.

    Raises:
        InputError: Not a Phoenix file, a batch of rows over ``max_batch_bytes`` once
            decoded, a missing evaluations file, or an invalid field (named).
    """
    parquet = _open(path)
    metadata = _arize(parquet.schema_arrow)
    if "eval_name" in metadata:
        _check_named(path, metadata)
        return
    names = parquet.schema_arrow.names
    if _TRACE not in names or _SPAN not in names:
        raise InputError(
            f"{path}: a Parquet file that is neither a spans table of assay's (it would be read "
            "as one, not imported) nor a Phoenix trace dataset (no context.trace_id)"
        )
    evaluations = _evaluations(path, metadata)
    row = 0
    for batch in parquet.iter_batches(batch_size=_BATCH_ROWS):
        if batch.nbytes > max_batch_bytes:
            raise InputError(
                f"{path}: rows {row}-{row + batch.num_rows - 1} hold {batch.nbytes // (1 << 20)} "
                f"MB, over the {max_batch_bytes // (1 << 20)} MB limit (raise it with "
                "--max-message-mb)"
            )
        request = ExportTraceServiceRequest()
        resource = request.resource_spans.add()
        resource.resource.attributes.append(key_value(FORMAT_ATTRIBUTE, "phoenix"))
        scope = resource.scope_spans.add()
        for values in batch.to_pylist():
            scope.spans.append(_span(values, f"{path}: row {row}", evaluations))
            row += 1
        yield request


def _check_named(path: Path, metadata: dict[str, Any]) -> None:
    """An evaluations file is read with its dataset: refuse one no dataset beside it names."""
    eval_id = metadata.get("eval_id")
    for dataset in sorted(path.parent.glob("trace_dataset-*.parquet")):
        if eval_id in (_arize(_open(dataset).schema_arrow).get("eval_ids") or []):
            return
    raise InputError(
        f"{path}: Phoenix evaluations are read with the trace dataset that names them "
        "(trace_dataset-*.parquet beside it); none here does"
    )

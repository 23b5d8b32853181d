"""Which trace format a JSON document is, told by its content (never by the file's name).

One table of the formats ``assay import`` reads, each with what it cannot tell (said by
``assay import`` and ``assay describe``, never filled in), and the dispatch from a parsed JSON
document to the spans it holds. Every foreign format is translated into an OTLP request and
decoded like the collector's input (``_otlp``), so one validation rule applies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import InputError
from assay.ingest._jaeger import is_jaeger, jaeger_to_request
from assay.ingest._langfuse import LangfuseJoin, is_langfuse, langfuse_to_request
from assay.ingest._logs import logs_to_table, parse_logs_json
from assay.ingest._mlflow import is_mlflow, mlflow_to_request
from assay.ingest._otlp import DecodedSpans, parse_traces_json, traces_to_table
from assay.ingest._tempo import otlp_wrapped, wrapped_to_request
from assay.ingest._zipkin import is_zipkin, zipkin_to_request

__all__ = [
    "FORMATS",
    "LANGFUSE",
    "OTLP",
    "PHOENIX",
    "SourceFormat",
    "decode_document",
    "format_named",
    "whole",
]


@dataclass(frozen=True, slots=True)
class SourceFormat:
    """A trace format ``assay import`` reads."""

    key: str
    """Its name in the ``assay.import.format`` resource attribute (``jaeger``, ``zipkin``)."""
    label: str
    """Its name for people (``Jaeger JSON``)."""
    cannot_tell: tuple[str, ...] = ()
    """What the format does not record, so that no trace read from it shows it."""
    mapped: tuple[str, ...] = ()
    """What assay derived from the format's own fields (said where the user looks)."""


OTLP = SourceFormat("otlp", "OTLP (JSON lines or protobuf)")
JAEGER = SourceFormat(
    "jaeger",
    "Jaeger JSON",
    (
        "array and map attribute values (exporters write them as text)",
        "the instrumentation scope where no otel.scope.name tag kept it",
    ),
)
JAEGER_V3 = SourceFormat("jaeger-v3", "Jaeger API v3 (OTLP/JSON under result)")
TEMPO = SourceFormat("tempo", "Tempo trace query result (OTLP/JSON)")
ZIPKIN = SourceFormat(
    "zipkin",
    "Zipkin v2 JSON",
    (
        "span links",
        "resource attributes apart from the service (exporters write them as span tags)",
        "attribute types (tag values are text; typed columns read numbers from the text)",
    ),
)
MLFLOW = SourceFormat(
    "mlflow",
    "MLflow 3 traces",
    ("the service (MLflow traces have no resource attributes)",),
    (
        "tool, LLM, agent and embedding spans from mlflow.spanType (as gen_ai.operation.name)",
        "tokens from mlflow.chat.tokenUsage",
        "the trace's tags and metadata onto its root span",
        "feedback assessments as gen_ai.evaluation.result events",
    ),
)
PHOENIX = SourceFormat(
    "phoenix",
    "Arize Phoenix trace dataset (Parquet)",
    (
        "the service and resource attributes",
        "the OpenTelemetry span kind (Phoenix keeps OpenInference's)",
        "when an evaluation was made (its event takes the span's end)",
    ),
    (
        "span_kind as openinference.span.kind",
        "evaluations files as gen_ai.evaluation.result events",
    ),
)
LANGFUSE = SourceFormat(
    "langfuse",
    "Langfuse blob-storage export",
    (
        "span kinds, resource attributes and span events",
        "the end of an in-progress observation or an event (taken as its start)",
    ),
    (
        "observation types GENERATION, TOOL, AGENT, EMBEDDING as GenAI operations",
        "usage_details as gen_ai.usage.*",
        "scores as gen_ai.evaluation.result spans under the observation or trace they judge",
    ),
)
FORMATS = (OTLP, JAEGER, JAEGER_V3, TEMPO, ZIPKIN, MLFLOW, PHOENIX, LANGFUSE)
"""Every format read, OTLP first."""


def format_named(key: str) -> SourceFormat | None:
    """The format whose :attr:`SourceFormat.key` is ``key``, or None."""
    return next((f for f in FORMATS if f.key == key), None)


def whole(decoded: DecodedSpans) -> DecodedSpans:
    """``decoded`` if every span could be stored; a file is not a sender.

    Raises:
        InputError: A span the spans table cannot hold (``_validate``), named.
    """
    if decoded.rejected:
        raise InputError(f"{decoded.rejected} invalid span(s); the first: {decoded.problem}")
    return decoded


_OTLP_KEYS = (
    ("OTLP/JSON traces", ("resourceSpans", "resource_spans")),
    ("OTLP/JSON logs", ("resourceLogs", "resource_logs")),
    ("OTLP/JSON metrics", ("resourceMetrics", "resource_metrics")),
)


def _matching(document: Any) -> list[str]:
    """Every format whose fields ``document`` has (more than one: it is none of them surely).

    A document with both ``resourceSpans`` and Jaeger's ``data`` was once read as OTLP alone:
    "imported 0 spans", exit 0.
    """
    found: list[str] = []
    if isinstance(document, dict):
        found += [name for name, keys in _OTLP_KEYS if any(k in document for k in keys)]
        wrapped = otlp_wrapped(document)
        if wrapped is not None:
            found.append(TEMPO.label if wrapped[0] == TEMPO.key else JAEGER_V3.label)
        if is_jaeger(document):
            found.append(JAEGER.label)
    if is_langfuse(document):
        found.append(LANGFUSE.label)
    if is_mlflow(document):
        found.append(MLFLOW.label)
    if is_zipkin(document):
        found.append(ZIPKIN.label)
    return found


def decode_document(
    document: Any, join: LangfuseJoin | None = None, where: str = ""
) -> tuple[SourceFormat, DecodedSpans] | None:
    """The spans of one parsed JSON document and the format they were read from.

    OTLP traces requests, OTLP logs requests (their GenAI evaluation results), Jaeger JSON,
    Jaeger API v3 and Tempo results (OTLP/JSON wrapped), Zipkin v2 JSON and MLflow 3 traces
    are recognised by their fields. None for an OTLP metrics request (the file exporter mixes
    signals).

    Raises:
        InputError: None of these, or a field of the format is invalid (named).
    """
    matched = _matching(document)
    if len(matched) > 1:
        raise InputError(
            f"the document matches {len(matched)} formats ({', '.join(matched)}): assay cannot "
            "tell which it is, so it reads neither"
        )
    if isinstance(document, dict):
        if "resourceSpans" in document or "resource_spans" in document:
            return OTLP, whole(traces_to_table(parse_traces_json(document)))
        if "resourceLogs" in document or "resource_logs" in document:
            return OTLP, DecodedSpans(logs_to_table(parse_logs_json(document)).table, 0)
        if "resourceMetrics" in document or "resource_metrics" in document:
            return None
        wrapped = otlp_wrapped(document)
        if wrapped is not None:
            source = TEMPO if wrapped[0] == TEMPO.key else JAEGER_V3
            return source, whole(traces_to_table(wrapped_to_request(*wrapped)))
        if is_jaeger(document):
            return JAEGER, whole(traces_to_table(jaeger_to_request(document)))
    if is_langfuse(document):
        if join is None:
            raise InputError("Langfuse rows are read by assay import (they join across files)")
        rows = document if isinstance(document, list) else [document]
        return LANGFUSE, whole(traces_to_table(langfuse_to_request(rows, where, join)))
    if is_mlflow(document):
        return MLFLOW, whole(traces_to_table(mlflow_to_request(document)))
    if is_zipkin(document):
        return ZIPKIN, whole(traces_to_table(zipkin_to_request(document)))
    raise InputError(
        "not an OTLP/JSON request nor another trace format assay reads (Jaeger JSON, Tempo, "
        "Zipkin v2 JSON, MLflow: docs/integrations.md)"
    )

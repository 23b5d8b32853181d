"""The spans table: one pyarrow schema shared by every writer and reader.

Columns are named after the OTLP fields so that DuckDB, Spark or Trino users can query the files
too. Every attribute is kept losslessly, with its type, in ``attributes`` /
``resource_attributes`` (a list of typed key/value structs). The attributes that analysis reads
on every span are *also* promoted to typed top-level columns, named after the attribute with dots
replaced by underscores (``assay.test.id`` → ``assay_test_id``), so that an analysis reads a few
narrow columns instead of decoding every attribute list.
"""

from __future__ import annotations

from typing import Final

import pyarrow as pa

from assay import conventions as c

#: Version of the spans table layout, stored in every file's metadata.
SCHEMA_VERSION: Final = 1
#: Parquet key-value metadata entry that carries :data:`SCHEMA_VERSION`.
SCHEMA_VERSION_KEY: Final = b"assay.schema_version"

# --- core columns -----------------------------------------------------------------------------
TRACE_ID: Final = "trace_id"
SPAN_ID: Final = "span_id"
PARENT_SPAN_ID: Final = "parent_span_id"
TRACE_STATE: Final = "trace_state"
NAME: Final = "name"
KIND: Final = "kind"
START_TIME: Final = "start_time_unix_nano"
END_TIME: Final = "end_time_unix_nano"
STATUS_CODE: Final = "status_code"
STATUS_MESSAGE: Final = "status_message"
SERVICE_NAME: Final = "service_name"
SCOPE_NAME: Final = "scope_name"
SCOPE_VERSION: Final = "scope_version"
ATTRIBUTES: Final = "attributes"
RESOURCE_ATTRIBUTES: Final = "resource_attributes"
EVENTS: Final = "events"
LINKS: Final = "links"

SPAN_KINDS: Final = ("INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUS_CODES: Final = ("UNSET", "OK", "ERROR")

#: One attribute: the key, its OTLP type, and the value in the field for that type.
#: ``type`` is one of ``string``, ``bool``, ``int``, ``double``, ``bytes``, ``string[]``,
#: ``bool[]``, ``int[]``, ``double[]`` (homogeneous arrays, value as a JSON array in
#: ``json_value``), ``array`` / ``kvlist`` (anything else, as OTLP/JSON ``AnyValue`` encoding in
#: ``json_value``) or ``empty``.
ATTRIBUTE_TYPE: Final = pa.struct(
    [
        pa.field("key", pa.string(), nullable=False),
        pa.field("type", pa.string(), nullable=False),
        pa.field("string_value", pa.string()),
        pa.field("bool_value", pa.bool_()),
        pa.field("int_value", pa.int64()),
        pa.field("double_value", pa.float64()),
        pa.field("bytes_value", pa.binary()),
        pa.field("json_value", pa.string()),
    ]
)
ATTRIBUTE_LIST_TYPE: Final = pa.list_(ATTRIBUTE_TYPE)

EVENT_TYPE: Final = pa.struct(
    [
        pa.field("time_unix_nano", pa.int64()),
        pa.field("name", pa.string()),
        pa.field("attributes", ATTRIBUTE_LIST_TYPE),
    ]
)
LINK_TYPE: Final = pa.struct(
    [
        pa.field("trace_id", pa.string()),
        pa.field("span_id", pa.string()),
        pa.field("trace_state", pa.string()),
        pa.field("attributes", ATTRIBUTE_LIST_TYPE),
    ]
)

# --- promoted attributes ----------------------------------------------------------------------
#: Attributes promoted to typed columns: attribute name → arrow type. The column name is
#: :func:`promoted_column` of the attribute name. A value of another type is coerced where that
#: is exact (``"12"`` → 12 for an int column) and left null otherwise; the attribute list keeps
#: the original either way.
PROMOTED_ATTRIBUTES: Final[dict[str, pa.DataType]] = {
    # the trial contract (docs/spans-table.md)
    "assay.test.id": pa.string(),
    "assay.suite": pa.string(),
    "assay.run.id": pa.string(),
    "assay.agent.version": pa.string(),
    "assay.trial.index": pa.int64(),
    "assay.trial.outcome": pa.string(),
    "assay.test.difficulty": pa.string(),
    # OpenTelemetry GenAI semantic conventions
    "gen_ai.operation.name": pa.string(),
    "gen_ai.tool.name": pa.string(),
    "gen_ai.agent.name": pa.string(),
    "gen_ai.request.model": pa.string(),
    "gen_ai.response.model": pa.string(),
    "gen_ai.usage.input_tokens": pa.int64(),
    "gen_ai.usage.output_tokens": pa.int64(),
    # OpenInference
    "openinference.span.kind": pa.string(),
    "tool.name": pa.string(),
    "llm.model_name": pa.string(),
    "llm.token_count.prompt": pa.int64(),
    "llm.token_count.completion": pa.int64(),
    # OpenLLMetry (Traceloop)
    "traceloop.span.kind": pa.string(),
    "traceloop.entity.name": pa.string(),
    "llm.request.type": pa.string(),
    "gen_ai.usage.prompt_tokens": pa.int64(),
    "gen_ai.usage.completion_tokens": pa.int64(),
    # agent names, handoffs and the natural test attributes of agent frameworks
    c.AGENT_NAME: pa.string(),
    c.OPENAI_AGENTS_SPAN_TYPE: pa.string(),
    c.OPENAI_AGENTS_HANDOFF_TO: pa.string(),
    c.OPENAI_AGENTS_WORKFLOW: pa.string(),
    c.TRACELOOP_WORKFLOW_NAME: pa.string(),
    c.OPENINFERENCE_SESSION_ID: pa.string(),
    # Vercel AI SDK
    c.AI_SDK_OPERATION: pa.string(),
    c.AI_SDK_TOOL_NAME: pa.string(),
    c.AI_SDK_INPUT_TOKENS: pa.int64(),
    c.AI_SDK_OUTPUT_TOKENS: pa.int64(),
    c.AI_SDK_PROMPT_TOKENS: pa.int64(),
    c.AI_SDK_COMPLETION_TOKENS: pa.int64(),
    c.AI_SDK_FUNCTION_ID: pa.string(),
}


def promoted_column(attribute: str) -> str:
    """Return the column name of a promoted attribute (dots become underscores)."""
    return attribute.replace(".", "_")


#: The spans table schema, in column order.
SPANS_SCHEMA: Final = pa.schema(
    [
        pa.field(TRACE_ID, pa.string(), nullable=False),
        pa.field(SPAN_ID, pa.string(), nullable=False),
        pa.field(PARENT_SPAN_ID, pa.string()),
        pa.field(TRACE_STATE, pa.string()),
        pa.field(NAME, pa.string(), nullable=False),
        pa.field(KIND, pa.string(), nullable=False),
        pa.field(START_TIME, pa.int64(), nullable=False),
        pa.field(END_TIME, pa.int64(), nullable=False),
        pa.field(STATUS_CODE, pa.string(), nullable=False),
        pa.field(STATUS_MESSAGE, pa.string()),
        pa.field(SERVICE_NAME, pa.string()),
        pa.field(SCOPE_NAME, pa.string()),
        pa.field(SCOPE_VERSION, pa.string()),
        *(pa.field(promoted_column(a), t) for a, t in PROMOTED_ATTRIBUTES.items()),
        pa.field(ATTRIBUTES, ATTRIBUTE_LIST_TYPE),
        pa.field(RESOURCE_ATTRIBUTES, ATTRIBUTE_LIST_TYPE),
        pa.field(EVENTS, pa.list_(EVENT_TYPE)),
        pa.field(LINKS, pa.list_(LINK_TYPE)),
    ],
    metadata={SCHEMA_VERSION_KEY: str(SCHEMA_VERSION).encode()},
)

#: Columns every spans file must have for a reader to accept it.
REQUIRED_COLUMNS: Final = (
    TRACE_ID,
    SPAN_ID,
    PARENT_SPAN_ID,
    NAME,
    KIND,
    START_TIME,
    END_TIME,
    STATUS_CODE,
    STATUS_MESSAGE,
    SERVICE_NAME,
    ATTRIBUTES,
    RESOURCE_ATTRIBUTES,
)

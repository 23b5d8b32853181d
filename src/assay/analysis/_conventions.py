"""Reading span conventions: which spans are tool calls and LLM calls, and their usage.

Three conventions are recognised (DESIGN.md): OpenTelemetry GenAI semantic conventions,
OpenInference and OpenLLMetry (Traceloop). Each expression reads the promoted columns of the
spans table, so no attribute list is decoded.
"""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.store import promoted_column as col_of


def _col(attribute: str) -> pl.Expr:
    return pl.col(col_of(attribute))


def tool_name() -> pl.Expr:
    """The tool a span calls, or null if the span is not a tool call."""
    return (
        pl.when(_col(c.GENAI_OPERATION) == c.GENAI_EXECUTE_TOOL)
        .then(pl.coalesce(_col(c.GENAI_TOOL_NAME), pl.col("name")))
        .when(_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_TOOL)
        .then(pl.coalesce(_col(c.OPENINFERENCE_TOOL_NAME), pl.col("name")))
        .when(_col(c.TRACELOOP_KIND) == c.TRACELOOP_TOOL)
        .then(pl.coalesce(_col(c.TRACELOOP_ENTITY), pl.col("name")))
        .otherwise(None)
    )


def is_llm_call() -> pl.Expr:
    """True for a span that is one call to a language model."""
    return (
        _col(c.GENAI_OPERATION).is_in(list(c.GENAI_LLM_OPERATIONS)).fill_null(False)
        | (_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_LLM).fill_null(False)
        | _col(c.LLM_REQUEST_TYPE).is_not_null()
    )


def input_tokens() -> pl.Expr:
    """Input (prompt) tokens of an LLM call, in whichever convention recorded them."""
    return pl.coalesce(
        _col(c.GENAI_INPUT_TOKENS),
        _col(c.OPENINFERENCE_PROMPT_TOKENS),
        _col(c.LEGACY_PROMPT_TOKENS),
    )


def output_tokens() -> pl.Expr:
    """Output (completion) tokens of an LLM call."""
    return pl.coalesce(
        _col(c.GENAI_OUTPUT_TOKENS),
        _col(c.OPENINFERENCE_COMPLETION_TOKENS),
        _col(c.LEGACY_COMPLETION_TOKENS),
    )


def model_name() -> pl.Expr:
    """The model that answered (response model, else the requested one)."""
    return pl.coalesce(
        _col(c.GENAI_RESPONSE_MODEL), _col(c.GENAI_REQUEST_MODEL), _col(c.OPENINFERENCE_MODEL)
    )


def recorded_cost() -> pl.Expr:
    """USD cost an instrumentation recorded on a span (``llm.cost.total``, ``gen_ai.usage.cost``).

    Not promoted columns: read from the span's attribute list, so use it on few spans.
    """
    values = []
    for attribute in c.RECORDED_COST_ATTRIBUTES:
        match = (
            pl.col("attributes")
            .list.eval(pl.element().filter(pl.element().struct.field("key") == attribute))
            .list.first()
        )
        values += [
            match.struct.field("double_value"),
            match.struct.field("int_value").cast(pl.Float64),
        ]
    return pl.coalesce(values)


#: Promoted columns the analysis reads from every span.
SPAN_COLUMNS = [
    "trace_id",
    "span_id",
    "parent_span_id",
    "name",
    "start_time_unix_nano",
    "end_time_unix_nano",
    "status_code",
    "status_message",
    *(
        col_of(a)
        for a in (
            c.TEST_ID,
            c.SUITE,
            c.RUN_ID,
            c.AGENT_VERSION,
            c.TRIAL_INDEX,
            c.TRIAL_OUTCOME,
            c.GENAI_OPERATION,
            c.GENAI_TOOL_NAME,
            c.GENAI_REQUEST_MODEL,
            c.GENAI_RESPONSE_MODEL,
            c.GENAI_INPUT_TOKENS,
            c.GENAI_OUTPUT_TOKENS,
            c.OPENINFERENCE_KIND,
            c.OPENINFERENCE_TOOL_NAME,
            c.OPENINFERENCE_MODEL,
            c.OPENINFERENCE_PROMPT_TOKENS,
            c.OPENINFERENCE_COMPLETION_TOKENS,
            c.TRACELOOP_KIND,
            c.TRACELOOP_ENTITY,
            c.LLM_REQUEST_TYPE,
            c.LEGACY_PROMPT_TOKENS,
            c.LEGACY_COMPLETION_TOKENS,
        )
    ),
]

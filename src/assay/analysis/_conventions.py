"""Reading span conventions: which spans are tool calls and LLM calls, and their usage.

The conventions recognised: OpenTelemetry GenAI semantic conventions, OpenInference,
OpenLLMetry (Traceloop), the OpenAI Agents bridge and the Vercel AI SDK's ``ai.*`` spans
(docs/integrations.md). Each expression reads the promoted columns of the spans table, so no
attribute list is decoded.
"""

from __future__ import annotations

import polars as pl

from assay import conventions as c
from assay.store import promoted_column as col_of


def _col(attribute: str) -> pl.Expr:
    return pl.col(col_of(attribute))


def _is_openinference_handoff() -> pl.Expr:
    return (_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_TOOL) & pl.col("name").str.starts_with(
        c.OPENINFERENCE_HANDOFF_PREFIX
    )


def handoff_target() -> pl.Expr:
    """The agent a span hands over to, or null if the span is not a handoff.

    A handoff is an agent transition, not a tool call: the OpenAI Agents SDK records one as a
    ``handoff`` span (openai-agents-opentelemetry) or a ``TOOL`` span named "handoff to X"
    (OpenInference). The target is an empty string when the span does not know it (the first
    bridge records "unknown" at span start); the trials table then names the next agent run.
    """
    target = _col(c.OPENAI_AGENTS_HANDOFF_TO)
    return (
        pl.when(_col(c.OPENAI_AGENTS_SPAN_TYPE) == c.OPENAI_AGENTS_HANDOFF)
        .then(
            pl.when(target.is_null() | (target == c.OPENAI_AGENTS_UNKNOWN))
            .then(pl.lit(""))
            .otherwise(target)
        )
        .when(_is_openinference_handoff())
        .then(pl.col("name").str.strip_prefix(c.OPENINFERENCE_HANDOFF_PREFIX))
        .otherwise(None)
    )


def is_agent_invocation() -> pl.Expr:
    """True for a span that is one run of an agent (an exception escaping it is an error).

    GenAI ``invoke_agent`` spans of either kind (a remote agent's CLIENT span, an in-process
    agent's INTERNAL span: v1.41) and workflow runs (``invoke_workflow``: a span of its own up to
    v1.41, an internal agent span since semantic-conventions-genai v0.1.0) count alike.
    """
    return (
        _col(c.GENAI_OPERATION)
        .is_in([c.GENAI_INVOKE_AGENT, c.GENAI_INVOKE_WORKFLOW])
        .fill_null(False)
        | (_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_AGENT).fill_null(False)
        | (_col(c.OPENAI_AGENTS_SPAN_TYPE) == c.OPENAI_AGENTS_AGENT).fill_null(False)
        | _col(c.TRACELOOP_KIND).is_in([c.TRACELOOP_AGENT, c.TRACELOOP_WORKFLOW]).fill_null(False)
    )


def agent_name() -> pl.Expr:
    """The named agent a span runs, or null.

    Only spans that name their agent count: an OpenInference ``AGENT`` span without
    ``agent.name`` (the OpenAI Agents bridge's workflow root), traceloop workflows and GenAI
    ``invoke_workflow`` spans are runs of no particular agent, so that a run lists the same
    agents under every bridge — and under both forms of the GenAI workflow span (since
    semantic-conventions-genai v0.1.0 its ``gen_ai.agent.name`` is the workflow's name, which
    ``gen_ai.workflow.name`` held before: not an agent of the run).
    """
    return (
        pl.when(_col(c.GENAI_OPERATION) == c.GENAI_INVOKE_AGENT)
        .then(pl.coalesce(_col(c.GENAI_AGENT_NAME), pl.col("name")))
        .when(
            (_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_AGENT)
            | (_col(c.OPENAI_AGENTS_SPAN_TYPE) == c.OPENAI_AGENTS_AGENT)
        )
        .then(_col(c.AGENT_NAME))
        .when(_col(c.TRACELOOP_KIND) == c.TRACELOOP_AGENT)
        .then(pl.coalesce(_col(c.TRACELOOP_ENTITY), pl.col("name")))
        .otherwise(None)
    )


def _is_ai_sdk_model_call() -> pl.Expr:
    operation = _col(c.AI_SDK_OPERATION)
    return (
        operation.str.starts_with("ai.")
        & pl.any_horizontal(operation.str.ends_with(s) for s in c.AI_SDK_MODEL_CALLS)
    ).fill_null(False)


def _is_summary_tool() -> pl.Expr:
    """A span a framework adds to sum up the tool calls of a turn, itself no call."""
    return pl.col("name").str.ends_with(c.SUMMARY_TOOL_SPAN_SUFFIX) | _col(c.GENAI_TOOL_NAME).is_in(
        list(c.SUMMARY_TOOL_NAMES)
    ).fill_null(False)


def tool_name() -> pl.Expr:
    """The tool a span calls, or null if the span is not a tool call.

    Handoffs are not tool calls, nor are the spans a framework adds to sum up the calls of a
    model turn (:data:`assay.conventions.SUMMARY_TOOL_NAMES`).
    """
    return (
        pl.when(_is_summary_tool())
        .then(None)
        .when(_col(c.AI_SDK_OPERATION) == c.AI_SDK_TOOL_CALL)
        .then(pl.coalesce(_col(c.AI_SDK_TOOL_NAME), pl.col("name")))
        .when(_col(c.GENAI_OPERATION) == c.GENAI_EXECUTE_TOOL)
        .then(pl.coalesce(_col(c.GENAI_TOOL_NAME), pl.col("name")))
        .when(_is_openinference_handoff())
        .then(None)
        .when(_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_TOOL)
        .then(pl.coalesce(_col(c.OPENINFERENCE_TOOL_NAME), pl.col("name")))
        .when(_col(c.TRACELOOP_KIND) == c.TRACELOOP_TOOL)
        .then(pl.coalesce(_col(c.TRACELOOP_ENTITY), pl.col("name")))
        .otherwise(None)
    )


def is_llm_call() -> pl.Expr:
    """True for a span of a call to a language model.

    Spans of one call nested in one another, and spans that made no request, are settled by
    :func:`assay.analysis._calls.settle_calls`.
    """
    return (
        _col(c.GENAI_OPERATION).is_in(list(c.GENAI_LLM_OPERATIONS)).fill_null(False)
        | (_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_LLM).fill_null(False)
        | _col(c.LLM_REQUEST_TYPE).is_not_null()
        | _is_ai_sdk_model_call()
    )


def input_tokens() -> pl.Expr:
    """Input (prompt) tokens of an LLM call, in whichever convention recorded them.

    Read on LLM calls only: the AI SDK's run span (``ai.generateText``) carries the same
    ``ai.usage.*`` attributes as the total of its model calls.
    """
    return pl.coalesce(
        _col(c.GENAI_INPUT_TOKENS),
        _col(c.OPENINFERENCE_PROMPT_TOKENS),
        _col(c.LEGACY_PROMPT_TOKENS),
        _col(c.AI_SDK_INPUT_TOKENS),
        _col(c.AI_SDK_PROMPT_TOKENS),
    )


def output_tokens() -> pl.Expr:
    """Output (completion) tokens of an LLM call."""
    return pl.coalesce(
        _col(c.GENAI_OUTPUT_TOKENS),
        _col(c.OPENINFERENCE_COMPLETION_TOKENS),
        _col(c.LEGACY_COMPLETION_TOKENS),
        _col(c.AI_SDK_OUTPUT_TOKENS),
        _col(c.AI_SDK_COMPLETION_TOKENS),
    )


def is_step() -> pl.Expr:
    """True for a span its convention classifies as a step, no call (OpenInference ``CHAIN``).

    Its name may look like work (``call_tool``, ``aggregate_tool_results``): the calls it runs
    or sums up are spans of their own, so it is not unclaimed work.
    """
    return (_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_CHAIN).fill_null(False)


def is_openinference_llm() -> pl.Expr:
    """True for an OpenInference ``LLM`` span (which may have made no request)."""
    return (_col(c.OPENINFERENCE_KIND) == c.OPENINFERENCE_LLM).fill_null(False)


def made_request() -> pl.Expr:
    """On the ``attributes`` list: the span records messages sent to or received from a model."""
    keys = pl.col("attributes").list.eval(pl.element().struct.field("key"))
    return keys.list.eval(
        pl.any_horizontal(pl.element().str.starts_with(p) for p in c.OPENINFERENCE_REQUEST_PREFIXES)
    ).list.any()


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
            c.AGENT_NAME,
            c.GENAI_AGENT_NAME,
            c.OPENAI_AGENTS_SPAN_TYPE,
            c.OPENAI_AGENTS_HANDOFF_TO,
            c.AI_SDK_OPERATION,
            c.AI_SDK_TOOL_NAME,
            c.AI_SDK_INPUT_TOKENS,
            c.AI_SDK_OUTPUT_TOKENS,
            c.AI_SDK_PROMPT_TOKENS,
            c.AI_SDK_COMPLETION_TOKENS,
        )
    ),
]

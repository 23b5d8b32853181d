"""Attribute and event names: the trial contract of assay and the conventions it reads.

Every name that appears in a span, an event or a Polars expression is defined here once.
"""

from __future__ import annotations

from typing import Final

# --- the trial contract (docs/spans-table.md) -----------------------------------------------
TEST_ID: Final = "assay.test.id"
SUITE: Final = "assay.suite"
RUN_ID: Final = "assay.run.id"
AGENT_VERSION: Final = "assay.agent.version"
TRIAL_INDEX: Final = "assay.trial.index"
TRIAL_OUTCOME: Final = "assay.trial.outcome"
TEST_DIFFICULTY: Final = "assay.test.difficulty"
TEST_TAGS: Final = "assay.test.tags"

OUTCOME_PASS: Final = "pass"
OUTCOME_FAIL: Final = "fail"
OUTCOME_ERROR: Final = "error"
OUTCOMES: Final = (OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_ERROR)

SCORE_EVENT: Final = "assay.score"
SCORE_NAME: Final = "assay.score.name"
SCORE_VALUE: Final = "assay.score.value"
SCORE_RANGE: Final = "assay.score.range"
"""The scale a score lies on, ``[low, high]`` (double array): ``watch`` bounds its mean by it."""
EVALVIEW_SCORE: Final = "evalview_score"
"""The score ``assay run`` records for an EvalView test (``run/_score.py``), always in [0, 100]."""
KNOWN_SCORE_RANGES: Final = {EVALVIEW_SCORE: (0.0, 100.0)}
"""Scores whose range assay knows because it records them: ``watch`` bounds them unasked."""
CHECK_EVENT: Final = "assay.check"
CHECK_NAME: Final = "assay.check.name"
CHECK_PASSED: Final = "assay.check.passed"

EARLIEST_START: Final = 946_684_800 * 1_000_000_000
"""2000-01-01T00:00:00Z in nanoseconds: no span of an AI agent starts before it. OTLP times are
nanoseconds since 1970, so a start before it is a time written in another unit (milliseconds,
microseconds or seconds land in January 1970), a broken clock or a sentinel."""

# --- OpenTelemetry exceptions (the span event ``record_exception`` adds) --------------------------
EXCEPTION_EVENT: Final = "exception"
EXCEPTION_TYPE: Final = "exception.type"
EXCEPTION_MESSAGE: Final = "exception.message"

# --- OpenTelemetry GenAI semantic conventions -------------------------------------------------
GENAI_OPERATION: Final = "gen_ai.operation.name"
GENAI_TOOL_NAME: Final = "gen_ai.tool.name"
GENAI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GENAI_AGENT_NAME: Final = "gen_ai.agent.name"
GENAI_SYSTEM: Final = "gen_ai.system"
GENAI_PROVIDER: Final = "gen_ai.provider.name"
GENAI_REQUEST_MODEL: Final = "gen_ai.request.model"
GENAI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GENAI_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GENAI_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GENAI_EXECUTE_TOOL: Final = "execute_tool"
GENAI_INVOKE_AGENT: Final = "invoke_agent"
GENAI_INVOKE_WORKFLOW: Final = "invoke_workflow"
"""A workflow run: its own span up to semantic-conventions v1.41 (named by
``gen_ai.workflow.name``), an internal ``invoke_agent`` span from semantic-conventions-genai v0.1.0
that keeps this operation name and names the workflow by ``gen_ai.agent.name``."""
GENAI_AGENT_VERSION: Final = "gen_ai.agent.version"
"""The agent's version (v1.40): read as the version under test where ``assay.agent.version`` is
absent from the trial span."""
GENAI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GENAI_LLM_OPERATIONS: Final = ("chat", "text_completion", "generate_content")
GENAI_WORKFLOW_NAME: Final = "gen_ai.workflow.name"
"""The workflow a run belongs to (Google ADK sets it on its ``invocation`` root span)."""
SUMMARY_TOOL_NAMES: Final = ("(merged tools)",)
"""Tool names a framework gives a span that sums up the tool calls of one model turn (Google
ADK's ``execute_tool (merged)``): the calls are their own spans, so this one is not a call."""
SUMMARY_TOOL_SPAN_SUFFIX: Final = " (merged)"
EVALUATION_EVENT: Final = "gen_ai.evaluation.result"
EVALUATION_NAME: Final = "gen_ai.evaluation.name"
EVALUATION_SCORE: Final = "gen_ai.evaluation.score.value"
EVALUATION_LABEL: Final = "gen_ai.evaluation.score.label"
EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"
EVALUATION_SCORE_RANGE: Final = "gen_ai.evaluation.score.range"
"""An evaluation score's scale (an open proposal, semantic-conventions-genai#39): read as a
``[low, high]`` number array or a string such as ``"[0, 100]"`` / ``"0-100"``."""
EVALUATION_SOURCE: Final = "assay.evaluation.source"
"""Who graded, on a ``gen_ai.evaluation.result`` event: ``human`` marks a person's label (read
as a label of the judge, never as the judge's own record); absent or anything else, the judge."""
EVALUATION_SOURCE_HUMAN: Final = "human"
EVALUATION_LABELLER: Final = "assay.evaluation.labeller"
"""Who the person was, on a human evaluation event (optional)."""
EVALUATION_JUDGE_MODEL: Final = "assay.evaluation.judge.model"
"""The model that graded, on a judge's evaluation event (optional; ``gen_ai.response.model`` and
``gen_ai.request.model`` on the event are read too)."""
EVALUATION_JUDGE_PROMPT: Final = "assay.evaluation.judge.prompt_version"
"""The version of the judge's prompt, on a judge's evaluation event (optional)."""

# --- OpenInference ----------------------------------------------------------------------------
OPENINFERENCE_KIND: Final = "openinference.span.kind"
OPENINFERENCE_TOOL_NAME: Final = "tool.name"
OPENINFERENCE_MODEL: Final = "llm.model_name"
OPENINFERENCE_PROMPT_TOKENS: Final = "llm.token_count.prompt"
OPENINFERENCE_COMPLETION_TOKENS: Final = "llm.token_count.completion"
OPENINFERENCE_TOOL: Final = "TOOL"
OPENINFERENCE_LLM: Final = "LLM"
OPENINFERENCE_AGENT: Final = "AGENT"
OPENINFERENCE_CHAIN: Final = "CHAIN"
"""A step of a framework's own (LlamaIndex's ``BaseWorkflowAgent.call_tool``): the convention
says it is no tool or model call; the calls are the ``TOOL`` and ``LLM`` spans inside."""
OPENINFERENCE_SESSION_ID: Final = "session.id"
OPENINFERENCE_REQUEST_PREFIXES: Final = ("llm.input_messages.", "llm.output_messages.")
"""What an OpenInference ``LLM`` span that made a request records (the messages sent or
received); one without them and without token counts only prepared a call (LlamaIndex's
``_prepare_chat_with_tools``)."""
AGENT_NAME: Final = "agent.name"
"""The agent's name on OpenInference ``AGENT`` spans and OpenAI Agents bridge ``agent`` spans."""
OPENINFERENCE_HANDOFF_PREFIX: Final = "handoff to "
"""OpenInference records an OpenAI Agents handoff as a ``TOOL`` span named "handoff to X"."""

# --- OpenAI Agents SDK through openai-agents-opentelemetry -------------------------------------
OPENAI_AGENTS_SPAN_TYPE: Final = "agent.span.type"
OPENAI_AGENTS_AGENT: Final = "agent"
OPENAI_AGENTS_HANDOFF: Final = "handoff"
OPENAI_AGENTS_HANDOFF_TO: Final = "agent.handoff.to"
OPENAI_AGENTS_UNKNOWN: Final = "unknown"
"""What the bridge records as a handoff's target when the span starts before the target is known."""
OPENAI_AGENTS_WORKFLOW: Final = "agent.workflow.name"
OPENINFERENCE_COST_TOTAL: Final = "llm.cost.total"
"""USD cost of one LLM call, as OpenInference instrumentations record it."""

# --- cost recorded by other instrumentations --------------------------------------------------
GENAI_USAGE_COST: Final = "gen_ai.usage.cost"
"""USD cost of one LLM call (not in the OTel GenAI conventions; Langfuse and LiteLLM write it)."""
RECORDED_COST_ATTRIBUTES: Final = (OPENINFERENCE_COST_TOTAL, GENAI_USAGE_COST)
"""Read in this order; a recorded cost wins over a price-table estimate (docs/reports.md)."""

# --- OpenLLMetry (Traceloop) ------------------------------------------------------------------
TRACELOOP_KIND: Final = "traceloop.span.kind"
TRACELOOP_ENTITY: Final = "traceloop.entity.name"
TRACELOOP_TOOL: Final = "tool"
TRACELOOP_AGENT: Final = "agent"
TRACELOOP_WORKFLOW: Final = "workflow"
TRACELOOP_WORKFLOW_NAME: Final = "traceloop.workflow.name"
LLM_REQUEST_TYPE: Final = "llm.request.type"
LEGACY_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"
LEGACY_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"

# --- Vercel AI SDK telemetry (ai 3 to 6; ai 7's LegacyOpenTelemetry option) ----------------
AI_SDK_OPERATION: Final = "ai.operationId"
"""What an ``ai.*`` span does: ``ai.generateText.doGenerate``, ``ai.toolCall``."""
AI_SDK_TOOL_CALL: Final = "ai.toolCall"
AI_SDK_TOOL_NAME: Final = "ai.toolCall.name"
AI_SDK_MODEL_CALLS: Final = (".doGenerate", ".doStream")
"""Suffixes of the operations that call the model once (``ai.streamText.doStream``…); the
operation they end (``ai.generateText``) carries the run's totals, never counted again.
``ai.embed.doEmbed`` is an embedding, not an LLM call, as GenAI's ``embeddings`` is not."""
AI_SDK_INPUT_TOKENS: Final = "ai.usage.inputTokens"
AI_SDK_OUTPUT_TOKENS: Final = "ai.usage.outputTokens"
AI_SDK_PROMPT_TOKENS: Final = "ai.usage.promptTokens"
"""ai 3 and 4's name of the input tokens."""
AI_SDK_COMPLETION_TOKENS: Final = "ai.usage.completionTokens"
"""ai 3 and 4's name of the output tokens."""
AI_SDK_FUNCTION_ID: Final = "ai.telemetry.functionId"
"""``experimental_telemetry.functionId``: the natural test attribute of an AI SDK agent."""
AI_SDK_METADATA_PREFIX: Final = "ai.telemetry.metadata."
"""``experimental_telemetry.metadata`` entries, each an attribute under this prefix."""

#: Attributes that name a test in traces assay did not frame (``assay describe`` lists them).
MAPPING_CANDIDATES: Final = (
    GENAI_AGENT_NAME,
    OPENAI_AGENTS_WORKFLOW,
    TRACELOOP_WORKFLOW_NAME,
    OPENINFERENCE_SESSION_ID,
    AGENT_NAME,
    AI_SDK_FUNCTION_ID,
    GENAI_WORKFLOW_NAME,
)
#: Prefixes of attributes that may name a test too (user metadata the framework copies).
MAPPING_CANDIDATE_PREFIXES: Final = (AI_SDK_METADATA_PREFIX,)

# --- written by the runner (assay run) --------------------------------------------------------
TRIAL_SEED: Final = "assay.trial.seed"

# --- the judgement, recorded on trial spans by assay run and the pytest plugin ----------------
# What decided the verdict when the trials were recorded, so that `assay analyze` on the traces
# reproduces it (docs/spans-table.md, "The judgement").
JUDGEMENT_THRESHOLD: Final = "assay.judgement.threshold"
JUDGEMENT_CONFIDENCE: Final = "assay.judgement.confidence"
JUDGEMENT_ERRORS: Final = "assay.judgement.errors"
JUDGEMENT_MIN_MEAN_SCORE: Final = "assay.judgement.min_mean_score"
JUDGEMENT_MAX_STD_DEV: Final = "assay.judgement.max_std_dev"
SEQUENTIAL_METHOD: Final = "assay.judgement.sequential.method"
SEQUENTIAL_P0: Final = "assay.judgement.sequential.p0"
SEQUENTIAL_P1: Final = "assay.judgement.sequential.p1"
SEQUENTIAL_DELTA: Final = "assay.judgement.sequential.delta"
SEQUENTIAL_ALPHA: Final = "assay.judgement.sequential.alpha"
SEQUENTIAL_BETA: Final = "assay.judgement.sequential.beta"
SEQUENTIAL_MAX_TRIALS: Final = "assay.judgement.sequential.max_trials"
SEQUENTIAL_PRIOR_STRENGTH: Final = "assay.judgement.sequential.prior_strength"
JUDGEMENT_PREFIX: Final = "assay.judgement."

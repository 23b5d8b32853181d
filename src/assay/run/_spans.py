"""Reading a trial's own spans while it runs: tool calls and LLM token usage.

An in-process OpenTelemetry ``SpanProcessor`` keeps, per watched trace, the tool calls and
LLM calls of the spans that end in it, recognised in the three conventions assay reads (OTel
GenAI, OpenInference, OpenLLMetry). The runner needs them live: for the checks on tool calls
and for the token and cost budgets.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from assay import conventions as c


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """Token usage of one LLM call."""

    model: str | None
    """The model that answered (response model, else requested model)."""
    input_tokens: int
    """Prompt tokens."""
    output_tokens: int
    """Completion tokens."""


@dataclass(slots=True)
class TrialSpans:
    """What a trial's descendants recorded."""

    tools: list[tuple[int, str]] = field(default_factory=list)
    """Tool calls as ``(start time in ns, tool name)``."""
    llm_calls: list[LLMUsage] = field(default_factory=list)
    """LLM calls with token usage."""

    @property
    def tool_sequence(self) -> list[str]:
        """Tool names in start-time order."""
        return [name for _, name in sorted(self.tools)]

    @property
    def input_tokens(self) -> int:
        """Total prompt tokens."""
        return sum(u.input_tokens for u in self.llm_calls)

    @property
    def output_tokens(self) -> int:
        """Total completion tokens."""
        return sum(u.output_tokens for u in self.llm_calls)


def tool_name(attributes: Mapping[str, Any]) -> str | None:
    """The tool name if these span attributes describe a tool call, in any convention."""
    if attributes.get(c.GENAI_OPERATION) == c.GENAI_EXECUTE_TOOL:
        name = attributes.get(c.GENAI_TOOL_NAME)
        return str(name) if name is not None else "?"
    if str(attributes.get(c.OPENINFERENCE_KIND, "")).upper() == c.OPENINFERENCE_TOOL:
        name = attributes.get(c.OPENINFERENCE_TOOL_NAME)
        return str(name) if name is not None else "?"
    if attributes.get(c.TRACELOOP_KIND) == c.TRACELOOP_TOOL:
        name = attributes.get(c.TRACELOOP_ENTITY)
        return str(name) if name is not None else "?"
    return None


def _int(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float):
        return max(0, int(value))
    return 0


def llm_usage(attributes: Mapping[str, Any]) -> LLMUsage | None:
    """Token usage of an LLM call (zero if it records none), in any convention; else None."""
    pairs = (
        (c.GENAI_INPUT_TOKENS, c.GENAI_OUTPUT_TOKENS),
        (c.OPENINFERENCE_PROMPT_TOKENS, c.OPENINFERENCE_COMPLETION_TOKENS),
        (c.LEGACY_PROMPT_TOKENS, c.LEGACY_COMPLETION_TOKENS),
    )
    for input_key, output_key in pairs:
        if input_key in attributes or output_key in attributes:
            model = (
                attributes.get(c.GENAI_RESPONSE_MODEL)
                or attributes.get(c.GENAI_REQUEST_MODEL)
                or attributes.get(c.OPENINFERENCE_MODEL)
            )
            return LLMUsage(
                str(model) if model is not None else None,
                _int(attributes.get(input_key)),
                _int(attributes.get(output_key)),
            )
    if (
        attributes.get(c.GENAI_OPERATION) in c.GENAI_LLM_OPERATIONS
        or str(attributes.get(c.OPENINFERENCE_KIND, "")).upper() == c.OPENINFERENCE_LLM
    ):
        model = attributes.get(c.GENAI_REQUEST_MODEL) or attributes.get(c.OPENINFERENCE_MODEL)
        return LLMUsage(str(model) if model is not None else None, 0, 0)
    return None


class TrialSpanCollector(SpanProcessor):
    """A span processor that gathers the tool and LLM calls of watched traces.

    ``watch(trace_id)`` before the trial's work starts, ``take(trace_id)`` after it ended.
    Spans of unwatched traces cost one dictionary lookup.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._traces: dict[int, TrialSpans] = {}
        self._closed = False

    def watch(self, trace_id: int) -> None:
        """Start collecting the spans of ``trace_id``."""
        with self._lock:
            self._traces[trace_id] = TrialSpans()

    def take(self, trace_id: int) -> TrialSpans:
        """Stop collecting ``trace_id`` and return what was collected."""
        with self._lock:
            return self._traces.pop(trace_id, None) or TrialSpans()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Record a finished span of a watched trace."""
        if self._closed or span.context is None:
            return
        with self._lock:
            spans = self._traces.get(span.context.trace_id)
            if spans is None:
                return
            attributes = span.attributes or {}
            name = tool_name(attributes)
            if name is not None:
                spans.tools.append((span.start_time or 0, name))
            usage = llm_usage(attributes)
            if usage is not None:
                spans.llm_calls.append(usage)

    def shutdown(self) -> None:
        """Stop collecting."""
        self._closed = True
        with self._lock:
            self._traces.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered."""
        return True

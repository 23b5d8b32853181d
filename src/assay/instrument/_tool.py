"""Spans for an agent's work: tool calls and LLM calls, per the OTel GenAI conventions."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from assay import conventions as c
from assay.errors import ConfigError
from assay.version import __version__


def _tracer() -> trace.Tracer:
    return trace.get_tracer("assay", __version__)


@contextmanager
def tool(name: str, *, arguments: Any = None, call_id: str | None = None) -> Iterator[Span]:
    """A tool call: an ``execute_tool {name}`` span (OTel GenAI semantic conventions).

    An exception inside marks the span ERROR and propagates. Use as ``with tool("search"):``.

    Args:
        name: ``gen_ai.tool.name``.
        arguments: Recorded as ``gen_ai.tool.call.arguments`` (JSON) when given.
        call_id: ``gen_ai.tool.call.id``.
    """
    attributes: dict[str, Any] = {c.GENAI_OPERATION: c.GENAI_EXECUTE_TOOL, c.GENAI_TOOL_NAME: name}
    if call_id is not None:
        attributes[c.GENAI_TOOL_CALL_ID] = call_id
    if arguments is not None:
        attributes["gen_ai.tool.call.arguments"] = json.dumps(arguments, default=str)
    with _tracer().start_as_current_span(
        f"{c.GENAI_EXECUTE_TOOL} {name}",
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=True,
        set_status_on_exception=True,
    ) as span:
        yield span


class LLMCall:
    """A running LLM call; record its token usage and the model that answered."""

    def __init__(self, span: Span) -> None:
        self.span = span
        """The call's span."""

    def usage(self, input_tokens: int, output_tokens: int) -> None:
        """Record ``gen_ai.usage.input_tokens`` and ``gen_ai.usage.output_tokens``."""
        self.span.set_attribute(c.GENAI_INPUT_TOKENS, int(input_tokens))
        self.span.set_attribute(c.GENAI_OUTPUT_TOKENS, int(output_tokens))

    def cost(self, usd: float) -> None:
        """Record what the call cost, in USD, as ``gen_ai.usage.cost``.

        LiteLLM and Langfuse write the same attribute; a recorded cost wins over assay's price
        table (docs/reports.md), so a model the table does not know is still costed.
        """
        if isinstance(usd, bool) or not isinstance(usd, int | float) or not math.isfinite(usd):
            raise ConfigError(f"cost: must be a finite number of USD (got {usd!r})")
        if usd < 0:
            raise ConfigError(f"cost: must not be negative (got {usd})")
        self.span.set_attribute(c.GENAI_USAGE_COST, float(usd))

    def response_model(self, model: str) -> None:
        """Record ``gen_ai.response.model``."""
        self.span.set_attribute(c.GENAI_RESPONSE_MODEL, model)


@contextmanager
def llm(model: str, *, operation: str = "chat", provider: str | None = None) -> Iterator[LLMCall]:
    """An LLM call: a ``{operation} {model}`` CLIENT span (OTel GenAI semantic conventions).

    Args:
        model: ``gen_ai.request.model``.
        operation: ``gen_ai.operation.name``: ``chat``, ``text_completion``, ...
        provider: ``gen_ai.provider.name`` (e.g. ``openai``).
    """
    attributes: dict[str, Any] = {c.GENAI_OPERATION: operation, c.GENAI_REQUEST_MODEL: model}
    if provider is not None:
        attributes[c.GENAI_PROVIDER] = provider
    with _tracer().start_as_current_span(
        f"{operation} {model}", kind=SpanKind.CLIENT, attributes=attributes
    ) as span:
        # start_as_current_span records an escaping exception and sets status ERROR.
        yield LLMCall(span)

"""Reading a trial's own spans while it runs: tool calls and LLM token usage.

An in-process OpenTelemetry ``SpanProcessor`` keeps, per watched trace, the spans that end in
it; when the trial's work is done they are read through the one table of span-convention rules
of ``assay.analysis`` (OTel GenAI, OpenInference, OpenLLMetry), exactly as ``assay analyze``
reads them from the trace set. The runner needs them live: for the checks on tool calls and for
the token and cost budgets.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import polars as pl
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from assay.analysis import conventions
from assay.instrument import spans_table


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """Token usage of one LLM call."""

    model: str | None
    """The model that answered (response model, else requested model)."""
    input_tokens: int
    """Prompt tokens (0 when the call recorded none: see ``metered``)."""
    output_tokens: int
    """Completion tokens (0 when the call recorded none: see ``metered``)."""
    metered: bool = True
    """False when a call that answered recorded no token count, as ``assay analyze`` rules
    (its tokens are then unknown, not 0); a failed call bills nothing and counts as metered."""


@dataclass(slots=True)
class TrialSpans:
    """What a trial's descendants recorded."""

    tools: list[tuple[int, str]] = field(default_factory=list)
    """Tool calls as ``(start time in ns, tool name)``."""
    llm_calls: list[LLMUsage] = field(default_factory=list)
    """LLM calls with token usage."""

    @property
    def unmetered(self) -> int:
        """LLM calls whose token usage is unknown: the budgets and the cost count them as 0."""
        return sum(not u.metered for u in self.llm_calls)

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


def read_spans(spans: list[ReadableSpan]) -> TrialSpans:
    """The tool calls and LLM calls among finished spans, by analysis's convention rules."""
    out = TrialSpans()
    if not spans:
        return out
    frame = pl.from_arrow(spans_table(spans))
    assert isinstance(frame, pl.DataFrame)
    calls = frame.select(
        pl.col("start_time_unix_nano").alias("start"),
        conventions.tool_name().alias("tool"),
        conventions.is_llm_call().alias("llm"),
        conventions.model_name().alias("model"),
        conventions.input_tokens().alias("input"),
        conventions.output_tokens().alias("output"),
        (pl.col("status_code") == "ERROR").alias("failed"),
    )
    for start, tool, llm, model, tokens_in, tokens_out, failed in calls.iter_rows():
        if tool is not None:
            out.tools.append((start, tool))
        if llm:
            # The rule of analysis's token totals (analysis/_work.py): a call that answered
            # without a count makes the usage unknown; a failed call bills none.
            metered = failed or (tokens_in is not None and tokens_out is not None)
            usage = LLMUsage(model, _count(tokens_in), _count(tokens_out), metered)
            out.llm_calls.append(usage)
    return out


def _count(tokens: int | None) -> int:
    return max(int(tokens), 0) if tokens is not None else 0


class TrialSpanCollector(SpanProcessor):
    """A span processor that gathers the tool and LLM calls of watched traces.

    ``watch(trace_id)`` before the trial's work starts, ``take(trace_id)`` after it ended.
    Spans of unwatched traces cost one dictionary lookup.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._traces: dict[int, list[ReadableSpan]] = {}
        self._closed = False

    def watch(self, trace_id: int) -> None:
        """Start collecting the spans of ``trace_id``."""
        with self._lock:
            self._traces[trace_id] = []

    def take(self, trace_id: int) -> TrialSpans:
        """Stop collecting ``trace_id`` and return its tool and LLM calls."""
        with self._lock:
            spans = self._traces.pop(trace_id, None) or []
        return read_spans(spans)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing to do when a span starts."""

    def on_end(self, span: ReadableSpan) -> None:
        """Record a finished span of a watched trace."""
        if self._closed or span.context is None:
            return
        with self._lock:
            spans = self._traces.get(span.context.trace_id)
            if spans is not None:
                spans.append(span)

    def shutdown(self) -> None:
        """Stop collecting."""
        self._closed = True
        with self._lock:
            self._traces.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered."""
        return True

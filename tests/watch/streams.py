"""Trials written the way an instrumented agent writes them: the OTel SDK, real Parquet files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.util.types import AttributeValue

from assay import conventions as c
from assay.instrument import ParquetSpanExporter


def send_trials(
    exporter: SpanExporter,
    outcomes: Sequence[bool],
    *,
    test: str = "support",
    version: str | None = None,
    first_index: int = 0,
    batch: bool = False,
    scores: Sequence[float] | None = None,
    score_name: str = "quality",
    tokens: int | None = None,
    extra: Mapping[str, AttributeValue] | None = None,
) -> None:
    """One trace per trial (a root trial span and a tool span), exported through ``exporter``.

    With ``batch``, spans go out in batches as an agent's SDK sends them (else one by one).
    ``scores`` records a ``score_name`` (``quality``) score per trial; ``tokens`` makes the
    child an LLM call of a priced model using that many input tokens.
    """
    provider = TracerProvider()
    processor = BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("assay.tests.watch")
    for i, passed in enumerate(outcomes):
        attributes: dict[str, AttributeValue] = {
            c.TEST_ID: test,
            c.TRIAL_INDEX: first_index + i,
            c.TRIAL_OUTCOME: c.OUTCOME_PASS if passed else c.OUTCOME_FAIL,
        }
        if version is not None:
            attributes[c.AGENT_VERSION] = version
        attributes.update(extra or {})
        with tracer.start_as_current_span("trial", attributes=attributes) as trial:
            if scores is not None:
                trial.add_event(c.SCORE_EVENT, {c.SCORE_NAME: score_name, c.SCORE_VALUE: scores[i]})
            child = {"gen_ai.tool.name": "search"}
            if tokens is not None:
                child = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.usage.input_tokens": tokens * (1 + i % 3),
                    "gen_ai.usage.output_tokens": 0,
                }
            with tracer.start_as_current_span(
                "tool" if tokens is None else "chat", attributes=child
            ):
                pass
    provider.shutdown()


def write_trials(out: Path, outcomes: Sequence[bool], **kwargs: object) -> None:
    """Write one Parquet file of trials into ``out`` (the instrument's exporter)."""
    exporter = ParquetSpanExporter(out, max_file_age_s=None, idle_flush_s=None)
    send_trials(exporter, outcomes, batch=True, **kwargs)  # type: ignore[arg-type]


class SplitExporter(SpanExporter):
    """Root spans to one exporter, the other spans to another: a trace split across files."""

    def __init__(self, roots: SpanExporter, children: SpanExporter) -> None:
        self.roots, self.children = roots, children

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            (self.children if span.parent is not None else self.roots).export([span])
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Each side is shut down (written) by the test, when it chooses."""

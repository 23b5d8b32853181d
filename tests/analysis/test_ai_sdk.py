"""The Vercel AI SDK's ``ai.*`` spans as the conventions read them, for the shapes the real-SDK
test (``tests/integrations/test_typescript.py``, ai 6 ``generateText``) does not make:
``streamText`` / ``doStream``, ai 4's ``promptTokens`` names, usage only under ``ai.usage.*``,
embeddings, and the run span's totals never counted twice."""

from __future__ import annotations

from opentelemetry.trace import Status, StatusCode

from assay import conventions as c
from assay.analysis import columns as tc
from assay.analysis import read_trials
from assay.store import open_trace_set

OPERATION = c.AI_SDK_OPERATION


def _stream_run(tracer, *, tokens: dict[str, int], fail_tool: bool) -> None:
    """One ``streamText`` run: two model calls, a tool call between them, an embedding."""
    totals = {key: 2 * value for key, value in tokens.items()}
    with tracer.start_as_current_span(
        "ai.streamText",
        attributes={OPERATION: "ai.streamText", c.AI_SDK_FUNCTION_ID: "news", **totals},
    ):
        for step in range(2):
            with tracer.start_as_current_span(
                "ai.streamText.doStream",
                attributes={
                    OPERATION: "ai.streamText.doStream",
                    c.AI_SDK_FUNCTION_ID: "news",
                    c.GENAI_REQUEST_MODEL: "m-1",
                    **tokens,
                },
            ):
                pass
            if step == 0:
                with tracer.start_as_current_span(
                    "ai.toolCall",
                    attributes={OPERATION: "ai.toolCall", c.AI_SDK_TOOL_NAME: "fetch"},
                ) as tool:
                    if fail_tool:
                        tool.set_status(Status(StatusCode.ERROR, "timeout"))
        with tracer.start_as_current_span(
            "ai.embed.doEmbed",
            attributes={OPERATION: "ai.embed.doEmbed", "ai.usage.tokens": 7},
        ):
            pass


def test_stream_runs_count_each_model_call_once(parquet_sink, tracer) -> None:
    ai6 = {c.AI_SDK_INPUT_TOKENS: 100, c.AI_SDK_OUTPUT_TOKENS: 10}
    ai4 = {c.AI_SDK_PROMPT_TOKENS: 30, c.AI_SDK_COMPLETION_TOKENS: 3}
    _stream_run(tracer, tokens=ai6, fail_tool=True)
    _stream_run(tracer, tokens=ai4, fail_tool=False)
    trials = read_trials(
        open_trace_set(parquet_sink.flush()).scan(), test_attribute=c.AI_SDK_FUNCTION_ID
    )
    rows = trials.table.sort(tc.START_TIME).to_dicts()
    got = [
        (r[tc.TOOL_SEQUENCE], r[tc.TOOL_ERRORS], r[tc.LLM_CALLS], r[tc.INPUT_TOKENS]) for r in rows
    ]
    # tokens of the two doStream calls only: not the run span's totals, not the embedding's
    assert got == [(["fetch"], 1, 2, 200), (["fetch"], 0, 2, 60)]
    assert [r[tc.OUTPUT_TOKENS] for r in rows] == [20, 6]
    assert [r[tc.OUTCOME] for r in rows] == ["pass", "pass"]  # the SDK recovers a tool error
    assert [r[tc.MODELS] for r in rows] == [["m-1"], ["m-1"]]
    assert not [f for f in trials.data_quality.findings if f.kind == "unclaimed_work"]
